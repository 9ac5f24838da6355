//! SQL of a memory's past versions (`memory_versions`), shared by the SQL backends.
//!
//! `memories` holds each memory as it is now. A supersede first copies that row, with its
//! vector, into `memory_versions`, closed at the time the change took effect; then the update
//! opens the next version. Deleting a memory deletes its versions in the same transaction, so
//! nothing forgotten stays readable through history.

use sqlx::{Database, Encode, QueryBuilder, Type};
use uuid::Uuid;

use crate::model::{MemoryFilter, Timestamp};
use crate::storage::filter::push_filter;
use crate::storage::rows::VERSION_COLUMNS;

/// Closes the current version of the record at `seq`: copies it and its vector into
/// `memory_versions`, valid until `valid_to`.
pub(crate) fn close_statement<DB>(seq: i64, valid_to: Timestamp) -> QueryBuilder<DB>
where
    DB: Database,
    DB::Arguments: Default,
    for<'t> i64: Encode<'t, DB> + Type<DB>,
{
    let mut builder = QueryBuilder::<DB>::new(
        "INSERT INTO memory_versions (tenant_id, memory_id, version, layer, scope_id, kind, \
         content, tags, metadata, content_hash, embedder_id, vector, created_at, updated_at, \
         valid_from, valid_to) \
         SELECT m.tenant_id, m.id, m.version, m.layer, m.scope_id, m.kind, m.content, m.tags, \
         m.metadata, m.content_hash, m.embedder_id, v.vector, m.created_at, m.updated_at, \
         m.valid_from, ",
    );
    builder.push_bind(valid_to);
    builder.push(" FROM memories m JOIN memory_vectors v ON v.memory_seq = m.seq WHERE m.seq = ");
    builder.push_bind(seq);
    builder
}

/// Deletes the closed versions of `id` numbered below `below`: what a memory keeps is bounded.
pub(crate) fn prune_statement<DB>(tenant_id: &str, id: Uuid, below: i64) -> QueryBuilder<DB>
where
    DB: Database,
    DB::Arguments: Default,
    for<'t> String: Encode<'t, DB> + Type<DB>,
    for<'t> i64: Encode<'t, DB> + Type<DB>,
{
    let mut builder = QueryBuilder::<DB>::new("DELETE FROM memory_versions WHERE tenant_id = ");
    builder.push_bind(tenant_id.to_owned());
    builder.push(" AND memory_id = ").push_bind(id.to_string());
    builder.push(" AND version < ").push_bind(below);
    builder
}

/// The closed versions of `id`, newest first, at most `limit`.
pub(crate) fn history_statement<DB>(tenant_id: &str, id: Uuid, limit: usize) -> QueryBuilder<DB>
where
    DB: Database,
    DB::Arguments: Default,
    for<'t> String: Encode<'t, DB> + Type<DB>,
    for<'t> i64: Encode<'t, DB> + Type<DB>,
{
    let mut builder = QueryBuilder::<DB>::new(format!(
        "SELECT {VERSION_COLUMNS} FROM memory_versions WHERE tenant_id = "
    ));
    builder.push_bind(tenant_id.to_owned());
    builder.push(" AND memory_id = ").push_bind(id.to_string());
    builder
        .push(" ORDER BY version DESC LIMIT ")
        .push_bind(limit as i64);
    builder
}

/// The closed versions in the filter's scopes and kinds that were valid at `at`, the most
/// recently closed first, at most `limit`. Tags are not filtered here: a version's tags are
/// its own (JSON), not the `memory_tags` rows of the memory as it is now.
pub(crate) fn valid_at_statement<DB>(
    tenant_id: &str,
    filter: &MemoryFilter,
    at: Timestamp,
    limit: usize,
) -> QueryBuilder<DB>
where
    DB: Database,
    DB::Arguments: Default,
    for<'t> String: Encode<'t, DB> + Type<DB>,
    for<'t> i64: Encode<'t, DB> + Type<DB>,
    for<'t> &'static str: Encode<'t, DB> + Type<DB>,
{
    let mut builder = QueryBuilder::<DB>::new(format!(
        "SELECT {VERSION_COLUMNS} FROM memory_versions m WHERE m.tenant_id = "
    ));
    builder.push_bind(tenant_id.to_owned());
    builder.push(" AND m.valid_from <= ").push_bind(at);
    builder.push(" AND m.valid_to > ").push_bind(at);
    let scopes_and_kinds = MemoryFilter {
        tags: Vec::new(),
        ..filter.clone()
    };
    push_filter(&mut builder, &scopes_and_kinds);
    builder
        .push(" ORDER BY m.valid_to DESC LIMIT ")
        .push_bind(limit as i64);
    builder
}

/// Deletes every closed version of the memories `ids`.
pub(crate) fn forget_many_statement<DB>(tenant_id: &str, ids: &[Uuid]) -> QueryBuilder<DB>
where
    DB: Database,
    DB::Arguments: Default,
    for<'t> String: Encode<'t, DB> + Type<DB>,
{
    let mut builder = QueryBuilder::<DB>::new("DELETE FROM memory_versions WHERE tenant_id = ");
    builder.push_bind(tenant_id.to_owned());
    builder.push(" AND memory_id IN (");
    let mut list = builder.separated(", ");
    for id in ids {
        list.push_bind(id.to_string());
    }
    builder.push(")");
    builder
}

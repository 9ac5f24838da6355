//! SQL shared by the SQL backends: conditions for a [`MemoryFilter`], appended to a query over
//! `memories m`, the `UPDATE` of a [`RecordChange`], the page query of a [`ListQuery`] and the
//! neighbours of records.
//! [`QueryBuilder`] writes each database's placeholders.

use sqlx::{Database, Encode, QueryBuilder, Type};

use crate::model::MemoryFilter;
use crate::storage::rows::{RECORD_COLUMNS, RECORD_COLUMNS_NO_CONTENT};
use crate::storage::{ListQuery, RecordChange, Selection};

/// One page of a tenant's records, newest first, with one row more than the page (it tells
/// whether another page follows; see [`crate::storage::rows::list_page`]).
pub(crate) fn list_statement<DB>(tenant_id: &str, query: &ListQuery) -> QueryBuilder<DB>
where
    DB: Database,
    DB::Arguments: Default,
    for<'t> String: Encode<'t, DB> + Type<DB>,
    for<'t> i64: Encode<'t, DB> + Type<DB>,
    for<'t> &'static str: Encode<'t, DB> + Type<DB>,
{
    let columns = if query.metadata_only {
        RECORD_COLUMNS_NO_CONTENT
    } else {
        RECORD_COLUMNS
    };
    let mut builder = QueryBuilder::<DB>::new(format!(
        "SELECT {columns} FROM memories m WHERE m.tenant_id = "
    ));
    builder.push_bind(tenant_id.to_string());
    if let Some(before) = query.before {
        builder.push(" AND m.seq < ").push_bind(before);
    }
    push_filter(&mut builder, &query.filter);
    builder
        .push(" ORDER BY m.seq DESC LIMIT ")
        .push_bind(query.limit as i64 + 1);
    builder
}

/// For each record of `ids`, the ids of the records of the same scope and kind written just
/// before and just after it (`id`, `previous`, `next`; absent neighbours are NULL). Each
/// neighbour is one step of the `(tenant_id, layer, scope_id, seq)` index.
pub(crate) fn adjacent_statement<DB>(tenant_id: &str, ids: &[uuid::Uuid]) -> QueryBuilder<DB>
where
    DB: Database,
    DB::Arguments: Default,
    for<'t> String: Encode<'t, DB> + Type<DB>,
{
    let neighbour = |name: &str, direction: &str, order: &str| {
        format!(
            "(SELECT {name}.id FROM memories {name} WHERE {name}.tenant_id = m.tenant_id \
             AND {name}.layer = m.layer AND {name}.scope_id = m.scope_id \
             AND {name}.kind = m.kind AND {name}.seq {direction} m.seq \
             ORDER BY {name}.seq {order} LIMIT 1)"
        )
    };
    let mut builder = QueryBuilder::<DB>::new(format!(
        "SELECT m.id, {}, {} FROM memories m WHERE m.tenant_id = ",
        neighbour("p", "<", "DESC"),
        neighbour("n", ">", "ASC"),
    ));
    builder.push_bind(tenant_id.to_string());
    builder.push(" AND m.id IN (");
    let mut list = builder.separated(", ");
    for id in ids {
        list.push_bind(id.to_string());
    }
    builder.push(")");
    builder
}

/// `UPDATE memories SET …` for the fields `change` sets, on the record at `seq`.
pub(crate) fn update_statement<DB>(change: &RecordChange, seq: i64) -> QueryBuilder<DB>
where
    DB: Database,
    DB::Arguments: Default,
    for<'t> String: Encode<'t, DB> + Type<DB>,
    for<'t> i64: Encode<'t, DB> + Type<DB>,
{
    let mut builder = QueryBuilder::<DB>::new("UPDATE memories SET updated_at = ");
    builder.push_bind(change.updated_at);
    if let Some(content) = &change.content {
        builder
            .push(", content = ")
            .push_bind(content.content.clone());
        builder
            .push(", content_hash = ")
            .push_bind(content.content_hash.clone());
    }
    if let Some(tags) = &change.tags {
        builder
            .push(", tags = ")
            .push_bind(serde_json::to_string(tags).expect("tags serialise"));
    }
    if let Some(metadata) = &change.metadata {
        builder
            .push(", metadata = ")
            .push_bind(metadata.to_string());
    }
    if let Some(next) = &change.new_version {
        builder
            .push(", version = version + 1, valid_from = ")
            .push_bind(next.valid_from);
    }
    builder.push(" WHERE seq = ").push_bind(seq);
    builder
}

/// Appends ` AND …` conditions restricting `m` to the filter's scopes (any of them), kinds
/// (any of them) and tags (all of them). Values are bound, never spliced into the SQL.
pub(crate) fn push_filter<DB>(builder: &mut QueryBuilder<DB>, filter: &MemoryFilter)
where
    DB: Database,
    for<'t> String: Encode<'t, DB> + Type<DB>,
    for<'t> &'static str: Encode<'t, DB> + Type<DB>,
{
    if !filter.scopes.is_empty() {
        builder.push(" AND (");
        for (i, scope) in filter.scopes.iter().enumerate() {
            if i > 0 {
                builder.push(" OR ");
            }
            builder.push("(m.layer = ");
            builder.push_bind(scope.layer.as_str());
            builder.push(" AND m.scope_id = ");
            builder.push_bind(scope.scope_id.clone());
            builder.push(")");
        }
        builder.push(")");
    }
    if !filter.kinds.is_empty() {
        builder.push(" AND m.kind IN (");
        let mut kinds = builder.separated(", ");
        for kind in &filter.kinds {
            kinds.push_bind(kind.clone());
        }
        builder.push(")");
    }
    for tag in &filter.tags {
        builder.push(
            " AND EXISTS (SELECT 1 FROM memory_tags t WHERE t.memory_seq = m.seq AND t.tag = ",
        );
        builder.push_bind(tag.clone());
        builder.push(")");
    }
}

/// The ids of the records `selection` matches in `tenant_id`, oldest first, at most `limit`.
pub(crate) fn select_statement<DB>(
    tenant_id: &str,
    selection: &Selection,
    limit: usize,
) -> QueryBuilder<DB>
where
    DB: Database,
    DB::Arguments: Default,
    for<'t> String: Encode<'t, DB> + Type<DB>,
    for<'t> i64: Encode<'t, DB> + Type<DB>,
    for<'t> &'static str: Encode<'t, DB> + Type<DB>,
{
    let mut builder = QueryBuilder::<DB>::new("SELECT m.id FROM memories m WHERE m.tenant_id = ");
    builder.push_bind(tenant_id.to_string());
    push_filter(&mut builder, &selection.filter);
    if !selection.layers.is_empty() {
        builder.push(" AND m.layer IN (");
        let mut layers = builder.separated(", ");
        for layer in &selection.layers {
            layers.push_bind(layer.as_str());
        }
        builder.push(")");
    }
    if !selection.ids.is_empty() {
        builder.push(" AND m.id IN (");
        let mut ids = builder.separated(", ");
        for id in &selection.ids {
            ids.push_bind(id.to_string());
        }
        builder.push(")");
    }
    if let Some(before) = selection.updated_before {
        builder.push(" AND m.updated_at < ").push_bind(before);
    }
    builder
        .push(" ORDER BY m.seq LIMIT ")
        .push_bind(limit as i64);
    builder
}

/// `DELETE` of the records of `ids` in `tenant_id`, returning them without their content.
/// `tenant_column` is how the backend names the tenant so that its planner keeps to the id
/// index (SQLite: `+tenant_id`).
pub(crate) fn delete_statement<DB>(
    tenant_column: &str,
    tenant_id: &str,
    ids: &[uuid::Uuid],
) -> QueryBuilder<DB>
where
    DB: Database,
    DB::Arguments: Default,
    for<'t> String: Encode<'t, DB> + Type<DB>,
{
    let mut builder =
        QueryBuilder::<DB>::new(format!("DELETE FROM memories WHERE {tenant_column} = "));
    builder.push_bind(tenant_id.to_string());
    builder.push(" AND id IN (");
    let mut list = builder.separated(", ");
    for id in ids {
        list.push_bind(id.to_string());
    }
    builder.push(format!(") RETURNING {RECORD_COLUMNS_NO_CONTENT}"));
    builder
}

/// Records of `layer` in every tenant last changed before `before`, oldest first: (tenant, id).
/// The one statement that crosses tenants: retention is the deployment's policy.
pub(crate) fn expired_statement<DB>(
    layer: crate::model::Layer,
    before: i64,
    limit: usize,
) -> QueryBuilder<DB>
where
    DB: Database,
    DB::Arguments: Default,
    for<'t> i64: Encode<'t, DB> + Type<DB>,
    for<'t> &'static str: Encode<'t, DB> + Type<DB>,
{
    let mut builder = QueryBuilder::<DB>::new("SELECT tenant_id, id FROM memories WHERE layer = ");
    builder.push_bind(layer.as_str());
    builder.push(" AND updated_at < ").push_bind(before);
    builder.push(" ORDER BY seq LIMIT ").push_bind(limit as i64);
    builder
}

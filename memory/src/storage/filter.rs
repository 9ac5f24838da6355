//! SQL conditions for a [`MemoryFilter`], appended to a query over `memories m`.

use sqlx::{Database, Encode, QueryBuilder, Type};

use crate::model::MemoryFilter;

/// Appends ` AND …` conditions restricting `m` to the filter's scopes (any of them), kinds
/// (any of them) and tags (all of them). Values are bound, never spliced into the SQL.
/// Shared by every SQL backend: [`QueryBuilder`] writes each database's placeholders.
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

//! Filter keys: the tokens `memories.filter_keys` holds and lexical searches match, so that
//! FTS5 itself restricts a search to the caller's scopes, kinds and tags
//! (`migrations/sqlite/0002_memories_fts_filter_keys.sql` computes the same in SQL).

use crate::model::{MemoryFilter, MemoryRecord, Scope};

/// `t<HEX(tenant)>`.
pub(super) fn tenant_key(tenant_id: &str) -> String {
    format!("t{}", hex::encode_upper(tenant_id))
}

/// `s<HEX(tenant ␟ layer ␟ scope_id)>`: injective, so no two scopes share a token.
pub(super) fn scope_key(tenant_id: &str, scope: &Scope) -> String {
    let raw = format!(
        "{tenant_id}\u{1f}{}\u{1f}{}",
        scope.layer.as_str(),
        scope.scope_id
    );
    format!("s{}", hex::encode_upper(raw))
}

pub(super) fn kind_key(kind: &str) -> String {
    format!("k{}", hex::encode_upper(kind))
}

pub(super) fn tag_key(tag: &str) -> String {
    format!("g{}", hex::encode_upper(tag))
}

/// The `filter_keys` column of `record`.
pub(super) fn filter_keys(record: &MemoryRecord) -> String {
    filter_keys_of(
        &record.tenant_id,
        &record.scope(),
        &record.kind,
        &record.tags,
    )
}

pub(super) fn filter_keys_of(
    tenant_id: &str,
    scope: &Scope,
    kind: &str,
    tags: &[String],
) -> String {
    let mut keys = vec![
        tenant_key(tenant_id),
        scope_key(tenant_id, scope),
        kind_key(kind),
    ];
    keys.extend(tags.iter().map(|tag| tag_key(tag)));
    keys.join(" ")
}

fn quoted(token: &str) -> String {
    format!("\"{}\"", token.replace('"', "\"\""))
}

fn any_of(tokens: impl Iterator<Item = String>) -> String {
    format!(
        "({})",
        tokens
            .map(|token| quoted(&token))
            .collect::<Vec<_>>()
            .join(" OR ")
    )
}

/// The FTS5 query: any of `terms` in the content, within the tenant and the filter's scopes,
/// kinds and tags. Every token is a quoted string, so no user input is parsed as FTS5 syntax.
pub(super) fn match_expression(tenant_id: &str, filter: &MemoryFilter, terms: &[&str]) -> String {
    let mut clauses = Vec::new();
    if filter.scopes.is_empty() {
        clauses.push(format!("filter_keys : {}", quoted(&tenant_key(tenant_id))));
    } else {
        clauses.push(format!(
            "filter_keys : {}",
            any_of(
                filter
                    .scopes
                    .iter()
                    .map(|scope| scope_key(tenant_id, scope))
            )
        ));
    }
    if !filter.kinds.is_empty() {
        clauses.push(format!(
            "filter_keys : {}",
            any_of(filter.kinds.iter().map(|kind| kind_key(kind)))
        ));
    }
    for tag in &filter.tags {
        clauses.push(format!("filter_keys : {}", quoted(&tag_key(tag))));
    }
    clauses.push(content_expression(terms));
    clauses.join(" AND ")
}

/// The FTS5 query for any of `terms` in the content, unfiltered.
pub(super) fn content_expression(terms: &[&str]) -> String {
    format!(
        "content : {}",
        any_of(terms.iter().map(|term| term.to_string()))
    )
}

/// The FTS5 query counting the records whose content contains `term`.
pub(super) fn term_expression(term: &str) -> String {
    format!("content : {}", quoted(term))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Layer;

    #[test]
    fn keys_are_hex_tokens_and_queries_quote_everything() {
        let scope = Scope::new(Layer::Project, "p1");
        assert_eq!(scope_key("acme", &scope), "s61636D651F70726F6A6563741F7031");
        assert_eq!(kind_key("memory"), "k6D656D6F7279");
        let filter = MemoryFilter {
            scopes: vec![scope],
            kinds: vec![],
            tags: vec!["rust".into()],
        };
        assert_eq!(
            match_expression("acme", &filter, &["pool", "say \"hi\""]),
            r#"filter_keys : ("s61636D651F70726F6A6563741F7031") AND filter_keys : "g72757374" AND content : ("pool" OR "say ""hi""")"#
        );
    }

    /// Databases created before migration 0002 get the same keys from its SQL backfill as new
    /// records get from this module, and their FTS index answers filtered queries.
    #[tokio::test]
    async fn the_migration_backfill_computes_the_same_keys() {
        use sqlx::sqlite::{SqliteConnectOptions, SqlitePool};

        let dir = tempfile::tempdir().unwrap();
        let options = SqliteConnectOptions::new()
            .filename(dir.path().join("old.db"))
            .create_if_missing(true);
        let pool = SqlitePool::connect_with(options).await.unwrap();
        super::super::MIGRATOR.run_to(1, &pool).await.unwrap();
        sqlx::query(
            "INSERT INTO memories (id, tenant_id, layer, scope_id, kind, content, tags, metadata, content_hash, \
             embedder_id, created_at, updated_at) VALUES ('x', 'acmé', 'project', 'p 1', 'note', 'hello world', \
             '[\"rust\",\"db ops\"]', '{}', 'h', 'e', 0, 0)",
        )
        .execute(&pool)
        .await
        .unwrap();
        super::super::MIGRATOR.run(&pool).await.unwrap();

        let keys: String = sqlx::query_scalar("SELECT filter_keys FROM memories")
            .fetch_one(&pool)
            .await
            .unwrap();
        let scope = Scope::new(Layer::Project, "p 1");
        let tags = vec!["rust".to_string(), "db ops".to_string()];
        assert_eq!(keys, filter_keys_of("acmé", &scope, "note", &tags));
        let count = |expression: String| {
            let pool = pool.clone();
            async move {
                sqlx::query_scalar::<_, i64>(
                    "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?",
                )
                .bind(expression)
                .fetch_one(&pool)
                .await
                .unwrap()
            }
        };
        let filter = MemoryFilter {
            scopes: vec![scope],
            kinds: vec!["note".into()],
            tags: vec!["db ops".into()],
        };
        assert_eq!(
            count(match_expression("acmé", &filter, &["hello"])).await,
            1
        );
        assert_eq!(
            count(match_expression("acme", &filter, &["hello"])).await,
            0
        );
        assert_eq!(
            count(match_expression(
                "acmé",
                &MemoryFilter::default(),
                &["world"]
            ))
            .await,
            1
        );
    }
}

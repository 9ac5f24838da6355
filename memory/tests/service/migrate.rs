//! `aeterna_memory::migrate`: an embedded deployment copied into the real PostgreSQL — records
//! with their ids, content, timestamps and vectors (found again by search on the target), the
//! agents' rows of every column type, keyset paging across batches, per-tenant counts, and a
//! second run after losing part of the target filling in only what is missing.

use aeterna_memory::migrate::{Progress, copy_to_postgres};
use aeterna_memory::storage::postgres::PgDatabase;
use aeterna_memory::{Identity, Layer, MemoryConfig, MemoryService, SearchRequest};
use aeterna_testkit::profile::{database_url, test_schema};

use crate::{alice, memory};

/// Memories of "acme": more than two of the copy's batches.
const ACME_MEMORIES: usize = 1_100;
/// Token-usage rows per tenant: more than two batches under a three-column primary key.
const USAGE_ROWS: i64 = 1_050;

fn search(query: &str) -> SearchRequest {
    SearchRequest {
        query: query.into(),
        layers: None,
        tags: Vec::new(),
        kinds: Vec::new(),
        limit: 5,
        min_score: 0.0,
        explain: false,
        as_of: None,
    }
}

fn bob() -> Identity {
    Identity {
        tenant_id: "beta".into(),
        project_id: Some("ledger".into()),
        ..Identity::default()
    }
}

async fn embedded_deployment(dir: &std::path::Path) -> MemoryService {
    let service = MemoryService::open_embedded(
        dir,
        MemoryConfig::default(),
        std::sync::Arc::new(aeterna_memory::embed::HashingEmbedder::default()),
    )
    .await
    .expect("open the embedded profile");
    for chunk in (0..ACME_MEMORIES).collect::<Vec<_>>().chunks(100) {
        let items = chunk
            .iter()
            .map(|i| {
                memory(
                    Layer::Project,
                    &format!("Deploy note {i}: the canary runs before step {i}."),
                )
            })
            .collect();
        service.add_batch(&alice(), items).await.expect("add");
    }
    for content in [
        "Ledger exports run nightly",
        "Ledger imports retry three times",
    ] {
        service
            .add(&bob(), memory(Layer::Project, content))
            .await
            .expect("add");
    }
    let pool = &service.sqlite().expect("embedded").pool;
    for tenant in ["acme", "beta"] {
        for hour in 0..USAGE_ROWS {
            sqlx::query(
                "INSERT INTO llm_token_usage (tenant_id, role, hour, input_tokens, output_tokens, \
                 calls) VALUES ($1, 'summarize', $2, $3, 7, 1)",
            )
            .bind(tenant)
            .bind(hour)
            .bind(hour * 10)
            .execute(pool)
            .await
            .expect("usage row");
        }
    }
    // Every column type: TEXT, INTEGER, REAL, BLOB and NULLs.
    sqlx::query(
        "INSERT INTO hindsight_signatures (tenant_id, id, layer, scope_id, language, error_type, \
         message_pattern, fingerprint, embedding, embedder_id, sample, first_seen_at, \
         last_seen_at) VALUES ('acme', 'sig-1', 'project', 'aeterna', 'rust', 'E0308', \
         'mismatched types', 'f1', $1, NULL, 'error[E0308]', 1, 2)",
    )
    .bind(vec![0u8, 0, 128, 63])
    .execute(pool)
    .await
    .expect("signature");
    sqlx::query(
        "INSERT INTO hindsight_promotions (tenant_id, id, resolution_id, from_layer, from_scope, \
         to_layer, to_scope, status, success_rate, application_count, requested_by, \
         requested_at) VALUES ('acme', 'p-1', 'r-1', 'project', 'aeterna', 'team', 'core', \
         'pending', 0.75, 4, 'alice', 3)",
    )
    .execute(pool)
    .await
    .expect("promotion");
    service
}

#[tokio::test]
async fn an_embedded_deployment_is_copied_whole_and_a_second_run_fills_only_the_gaps() {
    if crate::backend() != crate::Backend::Sqlite {
        return; // The copy always goes from SQLite to PostgreSQL: one run covers it.
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let source_service = embedded_deployment(dir.path()).await;
    let source = source_service.sqlite().expect("embedded").clone();
    let canary = source_service
        .search(&alice(), search("deploy note 777 canary step 777"))
        .await
        .expect("search the source")[0]
        .record
        .clone();

    let mut config = MemoryConfig::default();
    config.postgres.schema = test_schema(&dir.path().join("target"));
    let target = PgDatabase::connect(&database_url(), &config.postgres)
        .await
        .expect("connect");
    let mut seen = Vec::new();
    let report = copy_to_postgres(
        &source,
        &config.sqlite,
        &target,
        &config.postgres,
        |p: Progress<'_>| {
            seen.push((p.table.to_owned(), p.copied, p.total));
        },
    )
    .await
    .expect("copy");
    assert!(
        report.is_complete(),
        "{:?}",
        report.missing().collect::<Vec<_>>()
    );
    let count = |table: &str, tenant: &str| {
        report
            .counts
            .iter()
            .find(|c| c.table == table && c.tenant_id == tenant)
            .map(|c| (c.source, c.target))
    };
    assert_eq!(count("memories", "acme"), Some((1_100, 1_100)));
    assert_eq!(count("memories", "beta"), Some((2, 2)));
    assert_eq!(count("llm_token_usage", "beta"), Some((1_050, 1_050)));
    assert_eq!(count("hindsight_promotions", "acme"), Some((1, 1)));
    assert!(
        seen.contains(&("memories".to_owned(), 1_102, 1_102))
            && seen.contains(&("llm_token_usage".to_owned(), 2_100, 2_100)),
        "progress reaches every total: {seen:?}"
    );

    // The target serves the same records, found by the same search.
    let copied = MemoryService::open_postgres(
        target.clone(),
        config.clone(),
        std::sync::Arc::new(aeterna_memory::embed::HashingEmbedder::default()),
    )
    .await
    .expect("open the copy");
    let found = copied
        .search(&alice(), search("deploy note 777 canary step 777"))
        .await
        .expect("search the copy");
    assert_eq!(
        found[0].record, canary,
        "same id, content, timestamps and scope"
    );
    assert!(
        copied.get(&bob(), canary.id).await.is_err(),
        "tenants stay apart"
    );
    let (blob, rate): (Vec<u8>, f64) = sqlx::query_as(
        "SELECT s.embedding, p.success_rate FROM hindsight_signatures s, hindsight_promotions p \
         WHERE s.tenant_id = 'acme' AND p.tenant_id = 'acme'",
    )
    .fetch_one(&target.pool)
    .await
    .expect("typed columns");
    assert_eq!((blob, rate), (vec![0, 0, 128, 63], 0.75));

    // Part of the target lost (as if the first run had stopped early): the second run copies
    // only what is missing, so every count matches exactly.
    for sql in [
        "DELETE FROM memories WHERE tenant_id = 'acme' AND seq % 2 = 0",
        "DELETE FROM llm_token_usage WHERE hour > 500",
    ] {
        sqlx::query(sql).execute(&target.pool).await.expect(sql);
    }
    let report = copy_to_postgres(&source, &config.sqlite, &target, &config.postgres, |_| {})
        .await
        .expect("second copy");
    assert!(
        report.counts.iter().all(|c| c.source == c.target),
        "{:?}",
        report.counts
    );
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "DROP SCHEMA \"{}\" CASCADE",
        config.postgres.schema
    )))
    .execute(&target.pool)
    .await
    .expect("drop the target schema");
}

//! `aeterna_memory::bundle`: a tenant exported from the selected backend and imported into a
//! fresh SQLite and a fresh PostgreSQL — ids, contents, versions, history, agent rows of every
//! column type, search — with another tenant's data never in the bundle; a second import that
//! adds nothing; `--tenant` rewriting; damaged, newer and oversized bundles refused before
//! anything is written; the Markdown export; the importers from other tools.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use aeterna_memory::bundle::{
    ImportOptions, ImportReport, Progress, export_bundle, export_markdown, import_bundle,
};
use aeterna_memory::embed::{Embedder, HashingEmbedder};
use aeterna_memory::storage::Database;
use aeterna_memory::storage::postgres::PgDatabase;
use aeterna_memory::{
    Identity, Layer, MemoryConfig, MemoryPatch, MemoryService, SearchRequest, UpdateMode, with_pool,
};
use aeterna_testkit::profile::{database_url, test_schema};
use serde_json::{Value, json};

use crate::{alice, memory, open_with_embedder};

/// More than two export pages and two import batches.
const ACME_MEMORIES: usize = 1_100;

fn bob() -> Identity {
    Identity {
        tenant_id: "beta".into(),
        project_id: Some("ledger".into()),
        ..Identity::default()
    }
}

fn search(query: &str) -> SearchRequest {
    SearchRequest {
        query: query.into(),
        limit: 5,
        ..Default::default()
    }
}

fn hashing() -> Arc<dyn Embedder> {
    Arc::new(HashingEmbedder::default())
}

/// Runs `sql` with `binds` (text) on either backend.
async fn exec(db: &Database, sql: &str, binds: &[&str]) {
    with_pool!(db, |pool| {
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql.to_owned()));
        for bind in binds {
            query = query.bind(bind.to_string());
        }
        query.execute(pool).await.map(drop)
    })
    .unwrap_or_else(|error| panic!("{sql}: {error}"));
}

/// The ids of acme's superseded memory and of a memory found by a search, after filling
/// `service` with two tenants' memories and agent rows.
async fn fill(service: &MemoryService) -> (uuid::Uuid, uuid::Uuid) {
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
    let fact = service
        .add(
            &alice(),
            memory(Layer::User, "Alice lives in Paris, near the Seine."),
        )
        .await
        .unwrap()
        .record;
    tokio::time::sleep(std::time::Duration::from_millis(3)).await;
    service
        .update(
            &alice(),
            fact.id,
            MemoryPatch {
                content: Some("Alice lives in Berlin, near the Spree.".into()),
                mode: Some(UpdateMode::Supersede),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let mut note = memory(
        Layer::Project,
        "Note: flaky tests come from the shared tmp dir.",
    );
    note.kind = Some("note".into());
    note.tags = vec!["testing".into()];
    note.metadata = json!({"links": [{"to": fact.id.to_string(), "rel": "see-also"}]});
    let note = service.add(&alice(), note).await.unwrap().record;
    for content in [
        "Ledger exports run nightly",
        "Ledger imports retry three times",
    ] {
        service
            .add(&bob(), memory(Layer::Project, content))
            .await
            .unwrap();
    }
    let db = service.database();
    for tenant in ["acme", "beta"] {
        exec(
            db,
            "INSERT INTO context_summaries (tenant_id, layer, scope_id, depth, content, \
             token_count, source_hash, source_count, generator, generated_at) \
             VALUES ($1, 'project', 'aeterna', 'sentence', $2, 5, 'h1', 3, 'extractive-v1', 42)",
            &[tenant, &format!("{tenant} summary of the canary")],
        )
        .await;
        exec(
            db,
            "INSERT INTO llm_token_usage (tenant_id, role, hour, input_tokens, output_tokens, \
             calls) VALUES ($1, 'summarize', 7, 100, 7, 1)",
            &[tenant],
        )
        .await;
    }
    // BLOB, NULL and REAL columns.
    with_pool!(db, |pool| {
        sqlx::query(
            "INSERT INTO hindsight_signatures (tenant_id, id, layer, scope_id, language, \
             error_type, message_pattern, fingerprint, embedding, embedder_id, sample, \
             first_seen_at, last_seen_at) VALUES ('acme', 'sig-1', 'project', 'aeterna', \
             'rust', 'E0308', 'mismatched types', 'f1', $1, NULL, 'error[E0308]', 1, 2)",
        )
        .bind(vec![0u8, 0, 128, 63])
        .execute(pool)
        .await
        .map(drop)
    })
    .unwrap();
    exec(
        db,
        "INSERT INTO hindsight_promotions (tenant_id, id, resolution_id, from_layer, from_scope, \
         to_layer, to_scope, status, success_rate, application_count, requested_by, \
         requested_at) VALUES ('acme', 'p-1', 'r-1', 'project', 'aeterna', 'team', 'core', \
         'pending', 0.75, 4, 'alice', 3)",
        &[],
    )
    .await;
    exec(
        db,
        "INSERT INTO hindsight_resolutions (tenant_id, id, signature_id, layer, scope_id, \
         description, changes, origin_id, created_by, created_at, updated_at, note_id) \
         VALUES ('acme', 'r-1', 'sig-1', 'project', 'aeterna', 'use the shared tmp dir', '{}', \
         'r-1', 'alice', 1, 2, $1)",
        &[&note.id.to_string()],
    )
    .await;
    exec(
        db,
        "INSERT INTO meta_loops (tenant_id, id, state, driver, identity, record, created_at, \
         updated_at) VALUES ('acme', 'loop-1', 'done', 'client', $1, '{}', 1, 2)",
        &[r#"{"tenant_id":"acme","user_id":"alice"}"#],
    )
    .await;
    (fact.id, note.id)
}

fn lines_of(bundle: &Path) -> Vec<Value> {
    let mut text = String::new();
    zstd::Decoder::new(std::fs::File::open(bundle).unwrap())
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn write_lines(to: &Path, lines: &[String]) {
    let mut encoder = zstd::Encoder::new(std::fs::File::create(to).unwrap(), 3).unwrap();
    for line in lines {
        encoder.write_all(line.as_bytes()).unwrap();
        encoder.write_all(b"\n").unwrap();
    }
    encoder.finish().unwrap();
}

/// A fresh PostgreSQL service in the schema of `dir`.
async fn postgres_target(dir: &Path, embedder: Arc<dyn Embedder>) -> (PgDatabase, MemoryService) {
    let mut config = MemoryConfig::default();
    config.postgres.schema = test_schema(dir);
    let db = PgDatabase::connect(&database_url(), &config.postgres)
        .await
        .expect("connect");
    let service = MemoryService::open_postgres(db.clone(), config, embedder)
        .await
        .expect("open the target");
    (db, service)
}

async fn drop_schema(db: &PgDatabase, dir: &Path) {
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "DROP SCHEMA \"{}\" CASCADE",
        test_schema(dir)
    )))
    .execute(&db.pool)
    .await
    .expect("drop the target schema");
}

async fn import(service: &MemoryService, bundle: &Path, tenant: Option<&str>) -> ImportReport {
    import_bundle(
        service,
        bundle,
        &ImportOptions {
            tenant: tenant.map(str::to_owned),
            ..ImportOptions::default()
        },
        |_| {},
    )
    .await
    .expect("import")
}

async fn export(service: &MemoryService, tenant: &str, dir: &Path) -> PathBuf {
    let to = dir.join(format!("{tenant}.aeterna"));
    let mut seen = Vec::new();
    let report = export_bundle(service.database(), tenant, &to, |p: Progress<'_>| {
        seen.push((p.table.to_owned(), p.done, p.total))
    })
    .await
    .expect("export");
    assert!(to.exists() && !dir.join(format!("{tenant}.aeterna.partial")).exists());
    assert!(report.bytes > 0);
    assert!(
        seen.contains(&(
            "memories".into(),
            report.counts["memories"],
            report.counts["memories"]
        )),
        "{seen:?}"
    );
    to
}

/// What a target must hold after importing acme's bundle (under `tenant`).
async fn check_target(service: &MemoryService, tenant: &str, fact: uuid::Uuid, same_ids: bool) {
    let who = Identity {
        tenant_id: tenant.into(),
        ..alice()
    };
    let hits = service
        .search(&who, search("deploy note 777 canary step 777"))
        .await
        .expect("search");
    let hit = &hits[0].record;
    assert_eq!(
        hit.content.as_deref(),
        Some("Deploy note 777: the canary runs before step 777.")
    );
    assert_eq!(hit.tenant_id, tenant);
    let berlin = service
        .search(&who, search("where does Alice live"))
        .await
        .unwrap();
    let current = berlin
        .iter()
        .find(|h| h.record.content.as_deref().unwrap().contains("Berlin"))
        .expect("the current version is found")
        .record
        .clone();
    assert_eq!(current.version, 2);
    if same_ids {
        assert_eq!(current.id, fact);
    }
    let history = service.history(&who, current.id).await.expect("history");
    assert_eq!(history.versions.len(), 2, "{history:?}");
    assert!(
        history.versions[1]
            .content
            .as_deref()
            .unwrap()
            .contains("Paris")
    );
    assert_eq!(history.versions[1].valid_to, Some(current.valid_from));
    assert!(
        service
            .search(&bob(), search("Ledger exports"))
            .await
            .unwrap()
            .is_empty(),
        "beta's memories are not in acme's bundle"
    );
}

async fn count_rows(db: &Database, table: &str, tenant: &str) -> i64 {
    let sql = format!("SELECT count(*) FROM {table} WHERE tenant_id = $1");
    with_pool!(db, |pool| sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .bind(tenant)
        .fetch_one(pool)
        .await)
    .unwrap()
}

#[tokio::test]
async fn a_tenant_moves_through_a_bundle_into_fresh_sqlite_and_postgresql_and_only_once() {
    let dir = tempfile::tempdir().unwrap();
    let source = open_with_embedder(
        &dir.path().join("source"),
        MemoryConfig::default(),
        hashing(),
    )
    .await
    .expect("open the source");
    let (fact, note) = fill(&source).await;
    let bundle = export(&source, "acme", dir.path()).await;

    // What the bundle holds: acme only, every kind, an exact trailer.
    let lines = lines_of(&bundle);
    let header = &lines[0];
    assert_eq!(
        (&header["format"], &header["version"], &header["tenant_id"]),
        (&json!("aeterna-bundle"), &json!(1), &json!("acme"))
    );
    assert_eq!(header["embedder"], "hash-v1-384");
    let text = lines.iter().map(Value::to_string).collect::<String>();
    assert!(
        !text.contains("beta") && !text.contains("Ledger"),
        "no trace of beta"
    );
    let end = lines.last().unwrap();
    assert_eq!(end["kind"], "end");
    assert_eq!(end["counts"]["memories"], json!(ACME_MEMORIES + 2));
    assert_eq!(end["counts"]["memory_versions"], json!(1));
    assert_eq!(end["counts"]["context_summaries"], json!(1));
    assert_eq!(end["counts"]["hindsight_signatures"], json!(1));
    let signature = lines
        .iter()
        .find(|l| l["table"] == "hindsight_signatures")
        .unwrap();
    assert_eq!(
        signature["row"]["embedding"],
        json!({"$base64": "AACAPw=="})
    );
    assert_eq!(signature["row"]["embedder_id"], Value::Null);
    assert_eq!(signature["row"]["first_seen_at"], json!(1));
    let promotion = lines
        .iter()
        .find(|l| l["table"] == "hindsight_promotions")
        .unwrap();
    assert_eq!(promotion["row"]["success_rate"], json!(0.75));
    let memory_line = lines.iter().find(|l| l["kind"] == "memory").unwrap();
    assert_eq!(
        memory_line["vector"].as_str().unwrap().len(),
        2048,
        "384 f32s in base64"
    );

    // Into a fresh SQLite, whose embedder is another: every vector is computed again.
    let sqlite_dir = dir.path().join("sqlite-target");
    let other = || -> Arc<dyn Embedder> { Arc::new(HashingEmbedder::new(128)) };
    let target = MemoryService::open_embedded(&sqlite_dir, MemoryConfig::default(), other())
        .await
        .unwrap();
    let report = import(&target, &bundle, None).await;
    assert_eq!(report.tenant_id, "acme");
    let memories = report.counts["memories"];
    assert_eq!(
        (memories.read, memories.inserted, memories.present),
        (1_102, 1_102, 0)
    );
    assert_eq!(report.counts["memory_versions"].inserted, 1);
    assert_eq!(
        report.reembedded, 1_103,
        "every memory and the past version"
    );
    assert_eq!(report.total().inserted, report.total().read);
    let again = import(&target, &bundle, None).await;
    assert_eq!(again.total().inserted, 0, "{again:?}");
    assert_eq!(again.total().present, again.total().read);
    drop(target);
    let target = MemoryService::open_embedded(&sqlite_dir, MemoryConfig::default(), other())
        .await
        .unwrap();
    check_target(&target, "acme", fact, true).await;
    let db = target.database();
    assert_eq!(count_rows(db, "hindsight_promotions", "acme").await, 1);
    let (blob, rate): (Vec<u8>, f64) = with_pool!(db, |pool| {
        sqlx::query_as(
        "SELECT s.embedding, p.success_rate FROM hindsight_signatures s, hindsight_promotions p \
         WHERE s.tenant_id = 'acme' AND p.tenant_id = 'acme'",
    )
    .fetch_one(pool)
    .await
    })
    .unwrap();
    assert_eq!((blob, rate), (vec![0, 0, 128, 63], 0.75));

    // Under another tenant, beside acme in the same database: new ids that keep their
    // references, the stored identity moved along.
    let gamma = import(&target, &bundle, Some("gamma")).await;
    assert_eq!(gamma.tenant_id, "gamma");
    assert_eq!(gamma.counts["memories"].inserted, 1_102);
    assert_eq!(
        import(&target, &bundle, Some("gamma"))
            .await
            .total()
            .inserted,
        0
    );
    drop(target);
    let target = MemoryService::open_embedded(&sqlite_dir, MemoryConfig::default(), other())
        .await
        .unwrap();
    check_target(&target, "gamma", fact, false).await;
    let db = target.database();
    let (identity, note_id): (String, String) = with_pool!(db, |pool| sqlx::query_as(
        "SELECT l.identity, r.note_id FROM meta_loops l, hindsight_resolutions r \
         WHERE l.tenant_id = 'gamma' AND r.tenant_id = 'gamma'",
    )
    .fetch_one(pool)
    .await)
    .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&identity).unwrap()["tenant_id"],
        "gamma"
    );
    let gamma_who = Identity {
        tenant_id: "gamma".into(),
        ..alice()
    };
    let gamma_note = target
        .get(&gamma_who, note_id.parse().unwrap())
        .await
        .unwrap();
    assert_ne!(gamma_note.id, note);
    assert_eq!(gamma_note.kind, "note");
    assert_eq!(
        count_rows(db, "memories", "acme").await,
        1_102,
        "acme is untouched"
    );
    drop(target);

    // Into a fresh PostgreSQL with the same embedder: the bundled vectors are kept.
    let pg_dir = dir.path().join("pg-target");
    std::fs::create_dir_all(&pg_dir).unwrap();
    let (pg, target) = postgres_target(&pg_dir, hashing()).await;
    let report = import(&target, &bundle, None).await;
    assert_eq!(report.reembedded, 0);
    assert_eq!(report.counts["memories"].inserted, 1_102);
    assert_eq!(report.counts["hindsight_resolutions"].inserted, 1);
    assert_eq!(import(&target, &bundle, None).await.total().inserted, 0);
    let (_, reopened) = postgres_target(&pg_dir, hashing()).await;
    check_target(&reopened, "acme", fact, true).await;
    let who = alice();
    let copied = reopened.get(&who, note).await.unwrap();
    assert_eq!(
        copied,
        source.get(&who, note).await.unwrap(),
        "the same record, field for field"
    );
    // Exported again from PostgreSQL: the same items (the header's time aside).
    let again = export(&reopened, "acme", &pg_dir).await;
    let mut first: Vec<String> = lines.iter().skip(1).map(Value::to_string).collect();
    let mut second: Vec<String> = lines_of(&again)
        .iter()
        .skip(1)
        .map(Value::to_string)
        .collect();
    first.sort();
    second.sort();
    assert!(first == second, "the round trip changes nothing");
    drop_schema(&pg, &pg_dir).await;
}

async fn refused(service: &MemoryService, bundle: &Path, options: &ImportOptions) -> String {
    import_bundle(service, bundle, options, |_| {})
        .await
        .expect_err("refused")
        .to_string()
}

#[tokio::test]
async fn damaged_newer_and_oversized_bundles_are_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let source = open_with_embedder(
        &dir.path().join("source"),
        MemoryConfig::default(),
        hashing(),
    )
    .await
    .unwrap();
    for i in 0..20 {
        source
            .add(
                &alice(),
                memory(Layer::Project, &format!("memory number {i}")),
            )
            .await
            .unwrap();
    }
    let bundle = export(&source, "acme", dir.path()).await;
    let target =
        MemoryService::open_embedded(&dir.path().join("t"), MemoryConfig::default(), hashing())
            .await
            .unwrap();
    let options = ImportOptions::default();
    let lines: Vec<String> = lines_of(&bundle).iter().map(Value::to_string).collect();

    // Cut short: the compressed file halved, or the end line missing.
    let bytes = std::fs::read(&bundle).unwrap();
    let cut = dir.path().join("cut.aeterna");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let error = refused(&target, &cut, &options).await;
    assert!(error.contains("incomplete"), "{error}");
    let no_end = dir.path().join("no-end.aeterna");
    write_lines(&no_end, &lines[..lines.len() - 1]);
    let error = refused(&target, &no_end, &options).await;
    assert!(
        error.contains("incomplete") && error.contains("after 20 items"),
        "{error}"
    );

    // A corrupt line, named by its number.
    let mut corrupt = lines.clone();
    corrupt[4] = r#"{"kind":"memory","record":{"id": broken"#.into();
    let path = dir.path().join("corrupt.aeterna");
    write_lines(&path, &corrupt);
    let error = refused(&target, &path, &options).await;
    assert!(
        error.contains("line 5") && error.contains("corrupt"),
        "{error}"
    );

    // Newer than this build reads.
    let mut newer = lines.clone();
    newer[0] = newer[0].replace("\"version\":1", "\"version\":2");
    let path = dir.path().join("v2.aeterna");
    write_lines(&path, &newer);
    let error = refused(&target, &path, &options).await;
    assert!(
        error.contains("version 2") && error.contains("newer aeterna"),
        "{error}"
    );

    // A line over the limit, found while reading it.
    let error = refused(
        &target,
        &bundle,
        &ImportOptions {
            max_line_bytes: 300,
            ..ImportOptions::default()
        },
    )
    .await;
    assert!(
        error.contains("line 2") && error.contains("limit of 300 bytes"),
        "{error}"
    );

    // Not a bundle at all.
    let path = dir.path().join("notes.txt");
    std::fs::write(&path, "just some notes\n").unwrap();
    let error = refused(&target, &path, &options).await;
    assert!(error.contains("not an aeterna bundle"), "{error}");

    // A row of a table aeterna does not keep, or of another tenant.
    let mut foreign = lines.clone();
    foreign.insert(
        3,
        json!({"kind": "row", "table": "memory_audit", "row": {"tenant_id": "acme"}}).to_string(),
    );
    let end = foreign.len() - 1;
    foreign[end] = foreign[end].replace("\"memories\":20", "\"memories\":21");
    let path = dir.path().join("foreign.aeterna");
    write_lines(&path, &foreign);
    let error = refused(&target, &path, &options).await;
    assert!(
        error.contains("line 4") && error.contains("does not keep"),
        "{error}"
    );

    let listed = target.stats().await.unwrap().records;
    assert_eq!(listed, 0, "nothing was written: {error}");

    // The export refuses to overwrite.
    let error = export_bundle(source.database(), "acme", &bundle, |_| {})
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("already exists"), "{error}");
}

#[tokio::test]
async fn the_markdown_export_writes_one_readable_file_per_memory() {
    let dir = tempfile::tempdir().unwrap();
    let source = open_with_embedder(
        &dir.path().join("source"),
        MemoryConfig::default(),
        hashing(),
    )
    .await
    .unwrap();
    let (fact, _) = fill(&source).await;
    let to = dir.path().join("markdown");
    let report = export_markdown(source.database(), "acme", &to, |_| {})
        .await
        .expect("markdown export");
    assert_eq!(report.files, ACME_MEMORIES as u64 + 2);
    assert!(!dir.path().join("markdown.partial").exists());
    let user_dir = to.join("user").join("alice");
    let files: Vec<_> = std::fs::read_dir(&user_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let name = files[0].file_name().unwrap().to_str().unwrap().to_owned();
    let suffix = fact.simple().to_string();
    assert_eq!(
        name,
        format!("alice-lives-in-berlin-near-the-spree-{}.md", &suffix[24..])
    );
    let text = std::fs::read_to_string(&files[0]).unwrap();
    let (front, body) = text
        .strip_prefix("---\n")
        .and_then(|rest| rest.split_once("\n---\n"))
        .expect("front matter");
    let front: serde_yaml_ng::Value = serde_yaml_ng::from_str(front).expect("YAML");
    assert_eq!(front["id"].as_str(), Some(fact.to_string().as_str()));
    assert_eq!(front["layer"].as_str(), Some("user"));
    assert_eq!(front["version"].as_u64(), Some(2));
    assert!(front["created_at"].as_str().unwrap().ends_with('Z'));
    assert_eq!(body, "Alice lives in Berlin, near the Spree.\n");
    let project = std::fs::read_dir(to.join("project").join("aeterna"))
        .unwrap()
        .count();
    assert_eq!(project, ACME_MEMORIES + 1);
    let note = std::fs::read_dir(to.join("project").join("aeterna"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .find(|t| t.contains("kind: \"note\""))
        .unwrap();
    assert!(note.contains("tags: [\"testing\"]"), "{note}");
    let front = note
        .strip_prefix("---\n")
        .unwrap()
        .split_once("\n---\n")
        .unwrap()
        .0;
    let front: serde_yaml_ng::Value = serde_yaml_ng::from_str(front).expect("YAML");
    assert_eq!(
        front["metadata"]["links"][0]["rel"].as_str(),
        Some("see-also")
    );
    assert_eq!(front["tags"][0].as_str(), Some("testing"));
}

/// The official MCP memory server's file, as `@modelcontextprotocol/server-memory` saves it.
const MCP_MEMORY: &str = r#"{"type":"entity","name":"John_Smith","entityType":"person","observations":["Speaks fluent Spanish","Graduated in 2019"]}
{"type":"entity","name":"Anthropic","entityType":"organization","observations":["Makes Claude"]}
{"type":"relation","from":"John_Smith","to":"Anthropic","relationType":"works_at"}
"#;

/// Mem0's export (`client.get_all()` / the export API): `results`.
const MEM0: &str = r#"{"results": [
  {"id": "892db2ae-06d9-49e5-8b3e-585ef9b85b8e", "memory": "Prefers dark roast coffee in the morning",
   "user_id": "alex", "agent_id": null, "hash": "a1", "metadata": {"origin": "chat"},
   "categories": ["food", "preferences"], "created_at": "2024-07-20T01:30:00.000000-07:00",
   "updated_at": null},
  {"id": "2", "memory": "Is allergic to peanuts", "user_id": "alex",
   "created_at": "2024-07-21T09:00:00-07:00", "categories": ["health"]}
], "relations": []}"#;

async fn import_file(
    service: &MemoryService,
    who: &Identity,
    source: aeterna_memory::bundle::importers::Source,
    from: &Path,
) -> aeterna_memory::Result<aeterna_memory::bundle::importers::ForeignReport> {
    aeterna_memory::bundle::importers::import(service, who, Layer::Project, source, from, |_| {})
        .await
}

#[tokio::test]
async fn other_tools_memories_are_imported_searchable_once_and_bad_entries_are_named() {
    use aeterna_memory::bundle::importers::Source;
    let dir = tempfile::tempdir().unwrap();
    let service = open_with_embedder(&dir.path().join("db"), MemoryConfig::default(), hashing())
        .await
        .unwrap();
    let who = Identity {
        tenant_id: "acme".into(),
        project_id: Some("imported".into()),
        ..Identity::default()
    };
    let found = |hits: &[aeterna_memory::SearchHit], text: &str| {
        hits.iter().any(|h| {
            h.record
                .content
                .as_deref()
                .unwrap_or_default()
                .contains(text)
        })
    };

    // The MCP memory server's graph: entities and relations.
    let path = dir.path().join("memory.jsonl");
    std::fs::write(&path, MCP_MEMORY).unwrap();
    let report = import_file(&service, &who, Source::McpMemory, &path)
        .await
        .unwrap();
    assert_eq!((report.read, report.added, report.duplicates), (3, 3, 0));
    let again = import_file(&service, &who, Source::McpMemory, &path)
        .await
        .unwrap();
    assert_eq!((again.added, again.duplicates), (0, 3), "nothing twice");
    let hits = service
        .search(&who, search("Spanish speaker"))
        .await
        .unwrap();
    assert!(
        found(&hits, "John_Smith (person)\n- Speaks fluent Spanish"),
        "{hits:?}"
    );
    let hit = hits.iter().find(|h| h.record.tags == ["person"]).unwrap();
    assert_eq!(hit.record.metadata["source"], "mcp-memory");
    let hits = service
        .search(&who, search("where does John work"))
        .await
        .unwrap();
    assert!(found(&hits, "John_Smith works_at Anthropic"), "{hits:?}");
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(
        &bad,
        format!("{MCP_MEMORY}{{\"type\":\"entity\",\"entityType\":\"x\"}}\n"),
    )
    .unwrap();
    let error = import_file(&service, &who, Source::McpMemory, &bad)
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("bad.jsonl line 4: `name`"),
        "{error}"
    );

    // A basic-memory project folder.
    let notes = dir.path().join("basic-memory");
    std::fs::create_dir_all(notes.join("coffee")).unwrap();
    std::fs::create_dir_all(notes.join(".basic-memory")).unwrap();
    std::fs::write(
        notes.join("coffee").join("coffee-brewing-methods.md"),
        "---\ntitle: Coffee Brewing Methods\ntype: note\npermalink: coffee/coffee-brewing-methods\n\
         tags:\n- '#coffee'\n- '#brewing'\n---\n\n# Coffee Brewing Methods\n\n## Observations\n\
         - [method] Pour over provides more clarity and highlights subtle flavors #brewing\n\
         - [technique] Water temperature at 205°F (96°C) extracts optimal compounds\n\n\
         ## Relations\n- relates_to [[Coffee Bean Origins]]\n- requires [[Proper Grinding Technique]]\n",
    )
    .unwrap();
    std::fs::write(
        notes.join("standup.md"),
        "---\ntitle: Standup 2025-03-02\ntype: note\npermalink: standup-2025-03-02\ntags: [team]\n---\n\
         - [decision] The release train leaves every Thursday\n",
    )
    .unwrap();
    std::fs::write(notes.join(".basic-memory").join("config.md"), "hidden").unwrap();
    let report = import_file(&service, &who, Source::BasicMemory, &notes)
        .await
        .unwrap();
    assert_eq!((report.read, report.added), (2, 2));
    let hits = service
        .search(&who, search("pour over water temperature"))
        .await
        .unwrap();
    let coffee = hits
        .iter()
        .find(|h| h.record.metadata["source"] == "basic-memory")
        .expect("the coffee note is found")
        .record
        .clone();
    assert_eq!(coffee.tags, ["coffee", "brewing"]);
    assert_eq!(coffee.metadata["path"], "coffee/coffee-brewing-methods.md");
    assert_eq!(
        coffee.metadata["relations"][0]["target"],
        "Coffee Bean Origins"
    );
    let hits = service
        .search(&who, search("when does the release train leave"))
        .await
        .unwrap();
    assert!(
        found(
            &hits,
            "# Standup 2025-03-02\n\n- [decision] The release train"
        ),
        "{hits:?}"
    );
    std::fs::write(notes.join("broken.md"), "---\ntitle: [unclosed\n---\nbody").unwrap();
    let error = import_file(&service, &who, Source::BasicMemory, &notes)
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("broken.md: the front matter is not YAML"),
        "{error}"
    );

    // Mem0's export, and its bare list.
    let path = dir.path().join("mem0.json");
    std::fs::write(&path, MEM0).unwrap();
    let report = import_file(&service, &who, Source::Mem0, &path)
        .await
        .unwrap();
    assert_eq!((report.read, report.added), (2, 2));
    let hits = service
        .search(&who, search("coffee in the morning"))
        .await
        .unwrap();
    let roast = hits
        .iter()
        .find(|h| h.record.metadata["source"] == "mem0")
        .expect("the Mem0 memory is found")
        .record
        .clone();
    assert_eq!(roast.tags, ["food", "preferences"]);
    assert_eq!(
        roast.metadata["created_at"],
        "2024-07-20T01:30:00.000000-07:00"
    );
    assert_eq!(roast.metadata["origin"], "chat");
    let list = dir.path().join("list.json");
    std::fs::write(
        &list,
        r#"[{"memory": "Works remotely on Fridays", "user_id": "alex"}, {"memory": ""}]"#,
    )
    .unwrap();
    let error = import_file(&service, &who, Source::Mem0, &list)
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("list.json entry 1: `memory`"),
        "{error}"
    );
    let not_json = dir.path().join("notes.txt");
    std::fs::write(&not_json, "remember the milk").unwrap();
    let error = import_file(&service, &who, Source::Mem0, &not_json)
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("is not a Mem0 export"),
        "{error}"
    );

    // A content over the limit names the entry and the field.
    let huge = dir.path().join("huge.json");
    let config = MemoryConfig::default();
    std::fs::write(
        &huge,
        json!([{"memory": "x".repeat(config.max_content_bytes + 1)}]).to_string(),
    )
    .unwrap();
    let error = import_file(&service, &who, Source::Mem0, &huge)
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("huge.json entry 0: `content` is"),
        "{error}"
    );
}

/// Fills the data dir `AETERNA_BENCH_DIR` (SQLite, the static embedder `aeterna` uses by
/// default) with `AETERNA_BENCH_COUNT` (100,000) small memories of one tenant, for timing
/// `aeterna export` / `aeterna import` on it (`/usr/bin/time -v`). Run it alone:
/// `AETERNA_BENCH_DIR=/tmp/bench cargo test -p aeterna-memory --test service fill_a_data_dir_for_timing -- --ignored`.
#[tokio::test]
#[ignore = "a fixture for measuring export and import, not a test"]
async fn fill_a_data_dir_for_timing() {
    let dir = PathBuf::from(std::env::var("AETERNA_BENCH_DIR").expect("AETERNA_BENCH_DIR"));
    let count: usize = std::env::var("AETERNA_BENCH_COUNT")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000);
    let service = MemoryService::open_embedded(
        &dir,
        MemoryConfig::default(),
        Arc::new(aeterna_memory::embed::StaticEmbedder::new()),
    )
    .await
    .unwrap();
    let started = std::time::Instant::now();
    let words = [
        "deploy", "canary", "rollback", "schema", "index", "cache", "queue", "retry",
    ];
    for chunk in (0..count).collect::<Vec<_>>().chunks(500) {
        let items = chunk
            .iter()
            .map(|&i| {
                memory(
                    Layer::Project,
                    &format!(
                        "Note {i}: the {} step runs after the {} check on host-{}.",
                        words[i % 8],
                        words[(i / 8) % 8],
                        i % 97
                    ),
                )
            })
            .collect();
        service.add_batch(&alice(), items).await.unwrap();
    }
    service.flush().await.unwrap();
    eprintln!("{count} memories written in {:?}", started.elapsed());
}

//! `aeterna export` / `aeterna import` through the real binary: a tenant exported from an
//! embedded data dir and imported into a fresh data dir and into PostgreSQL (the migration
//! path), the second import adding nothing, a cut bundle refused with a non-zero exit, the
//! Markdown export, and another tool's memory imported under a tenant and project.

use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;

use aeterna_memory::embed::StaticEmbedder;
use aeterna_memory::storage::postgres::PgDatabase;
use aeterna_memory::{
    Identity, Layer, MemoryConfig, MemoryPatch, MemoryService, NewMemory, SearchRequest,
};
use aeterna_testkit::profile::{database_url, test_schema};

fn aeterna(args: &[&str], data_dir: &Path, env: &[(&str, String)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_aeterna"));
    command
        .args(args)
        .arg("--data-dir")
        .arg(data_dir)
        .env("AETERNA_LOG", "error")
        .env_remove("AETERNA_CONFIG")
        .env_remove("AETERNA_DATABASE_URL");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().expect("the aeterna binary runs")
}

fn succeeded(output: &Output) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

fn failed(output: &Output) -> String {
    assert!(
        !output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn who(tenant: &str) -> Identity {
    Identity {
        tenant_id: tenant.into(),
        user_id: Some("ann".into()),
        project_id: Some("p1".into()),
        ..Identity::default()
    }
}

fn memory(layer: Layer, content: &str) -> NewMemory {
    NewMemory {
        layer,
        content: content.into(),
        tags: Vec::new(),
        metadata: serde_json::Value::Null,
        kind: None,
    }
}

fn search(query: &str) -> SearchRequest {
    SearchRequest {
        query: query.into(),
        limit: 5,
        ..Default::default()
    }
}

/// The server's default embedder, so a bundle's vectors are used as they are.
async fn embedded(dir: &Path) -> MemoryService {
    MemoryService::open_embedded(
        dir,
        MemoryConfig::default(),
        Arc::new(StaticEmbedder::new()),
    )
    .await
    .expect("open the data dir")
}

/// What a target holds after importing alpha's bundle.
async fn check(service: &MemoryService, fact: uuid::Uuid) {
    let hits = service
        .search(
            &who("alpha"),
            search("which port does the staging server use"),
        )
        .await
        .unwrap();
    assert!(
        hits.iter().any(
            |h| h.record.content.as_deref() == Some("The staging server listens on port 8443.")
        ),
        "{hits:?}"
    );
    let history = service.history(&who("alpha"), fact).await.expect("history");
    assert_eq!(history.versions.len(), 2);
    assert_eq!(
        history.versions[0].content.as_deref(),
        Some("Ann moved to the platform team.")
    );
    assert!(
        service
            .search(&who("beta"), search("beta secret plans"))
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn a_tenant_moves_between_installs_and_into_postgresql_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("source");
    let fact = {
        let service = embedded(&source).await;
        let items = (0..30)
            .map(|i| {
                memory(
                    Layer::Project,
                    &format!("Release checklist item {i} is done."),
                )
            })
            .chain([memory(
                Layer::Project,
                "The staging server listens on port 8443.",
            )])
            .collect();
        service.add_batch(&who("alpha"), items).await.unwrap();
        let fact = service
            .add(
                &who("alpha"),
                memory(Layer::User, "Ann works on the search team."),
            )
            .await
            .unwrap()
            .record;
        service
            .update(
                &who("alpha"),
                fact.id,
                MemoryPatch {
                    content: Some("Ann moved to the platform team.".into()),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        service
            .add(&who("beta"), memory(Layer::Project, "beta secret plans"))
            .await
            .unwrap();
        service.flush().await.unwrap();
        fact.id
    };

    let bundle = dir.path().join("alpha.aeterna");
    let bundle_arg = bundle.to_str().unwrap();
    let out = succeeded(&aeterna(
        &["export", "--tenant", "alpha", "--to", bundle_arg],
        &source,
        &[],
    ));
    assert!(
        out.contains("exported tenant `alpha`") && out.contains("32 memories and 1 agent rows"),
        "{out}"
    );
    let error = failed(&aeterna(
        &["export", "--tenant", "alpha", "--to", bundle_arg],
        &source,
        &[],
    ));
    assert!(error.contains("already exists"), "{error}");

    // Into a fresh data dir, twice.
    let copy = dir.path().join("copy");
    let out = succeeded(&aeterna(&["import", "--from", bundle_arg], &copy, &[]));
    assert!(
        out.contains("into tenant `alpha`: 33 of 33 items written"),
        "{out}"
    );
    assert!(out.contains("memory_versions"), "per kind: {out}");
    let out = succeeded(&aeterna(&["import", "--from", bundle_arg], &copy, &[]));
    assert!(
        out.contains("0 of 33 items written, 33 already there"),
        "{out}"
    );
    check(&embedded(&copy).await, fact).await;

    // Into PostgreSQL: the configuration names it, the data dir holds nothing.
    let pg_dir = dir.path().join("pg");
    let schema = test_schema(&pg_dir);
    let env = [
        ("AETERNA_DATABASE_URL", database_url()),
        ("AETERNA_MEMORY__POSTGRES__SCHEMA", schema.clone()),
    ];
    let out = succeeded(&aeterna(&["import", "--from", bundle_arg], &pg_dir, &env));
    assert!(out.contains("33 of 33 items written"), "{out}");
    let mut config = MemoryConfig::default();
    config.postgres.schema = schema.clone();
    let db = PgDatabase::connect(&database_url(), &config.postgres)
        .await
        .unwrap();
    let service = MemoryService::open_postgres(db.clone(), config, Arc::new(StaticEmbedder::new()))
        .await
        .unwrap();
    check(&service, fact).await;
    // And back out of PostgreSQL.
    let back = dir.path().join("back.aeterna");
    let out = succeeded(&aeterna(
        &[
            "export",
            "--tenant",
            "alpha",
            "--to",
            back.to_str().unwrap(),
        ],
        &pg_dir,
        &env,
    ));
    assert!(out.contains("32 memories and 1 agent rows"), "{out}");
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "DROP SCHEMA \"{schema}\" CASCADE"
    )))
    .execute(&db.pool)
    .await
    .unwrap();

    // A bundle cut short is refused, and says so.
    let bytes = std::fs::read(&bundle).unwrap();
    let cut = dir.path().join("cut.aeterna");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let error = failed(&aeterna(
        &["import", "--from", cut.to_str().unwrap()],
        &copy,
        &[],
    ));
    assert!(error.contains("incomplete"), "{error}");

    // Markdown to read.
    let markdown = dir.path().join("markdown");
    let out = succeeded(&aeterna(
        &[
            "export",
            "--tenant",
            "alpha",
            "--format",
            "markdown",
            "--to",
            markdown.to_str().unwrap(),
        ],
        &source,
        &[],
    ));
    assert!(out.contains("32 Markdown files"), "{out}");
    let user_files: Vec<_> = std::fs::read_dir(markdown.join("user").join("ann"))
        .unwrap()
        .collect();
    assert_eq!(user_files.len(), 1);

    // Another tool's memory, under a tenant and project.
    let graph = dir.path().join("memory.jsonl");
    std::fs::write(
        &graph,
        "{\"type\":\"entity\",\"name\":\"Staging\",\"entityType\":\"server\",\"observations\":[\"Runs Debian 12\"]}\n",
    )
    .unwrap();
    let graph_arg = graph.to_str().unwrap();
    let out = succeeded(&aeterna(
        &[
            "import",
            "--format",
            "mcp-memory",
            "--from",
            graph_arg,
            "--tenant",
            "alpha",
            "--project",
            "p1",
        ],
        &copy,
        &[],
    ));
    assert!(out.contains("1 memories added from 1 items"), "{out}");
    let error = failed(&aeterna(
        &["import", "--format", "mcp-memory", "--from", graph_arg],
        &copy,
        &[],
    ));
    assert!(error.contains("--tenant is required"), "{error}");
    let service = embedded(&copy).await;
    let hits = service
        .search(&who("alpha"), search("which OS does staging run"))
        .await
        .unwrap();
    assert!(
        hits.iter()
            .any(|h| h.record.content.as_deref() == Some("Staging (server)\n- Runs Debian 12")),
        "{hits:?}"
    );
}

//! The domain functions behind the MCP tools and the REST API, called directly against a real
//! embedded memory service (SQLite + vector index in a temp dir), without HTTP.

use aeterna_memory::MemoryError;
use aeterna_server::auth::Principal;
use aeterna_server::config::{Config, IdentityFields};
use aeterna_server::domain::compat::{self, IngestRequest, RetrieveRequest};
use aeterna_server::domain::memory::{self, AddArgs, IdArgs, ListArgs, SearchArgs, UpdateArgs};
use aeterna_server::domain::{hindsight, notes};
use aeterna_server::state::AppState;
use serde_json::json;

async fn state(edit: impl FnOnce(&mut Config)) -> (AppState, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config = Config {
        data_dir: Some(dir.path().to_path_buf()),
        ..Config::default()
    };
    edit(&mut config);
    (AppState::open(config).await.expect("open stores"), dir)
}

/// A caller of `tenant` whose token configures a user, a project and a session.
fn who(tenant: &str) -> Principal {
    Principal::new(
        tenant,
        IdentityFields {
            user_id: Some("ann".into()),
            project_id: Some("p1".into()),
            session_id: Some("s1".into()),
            ..IdentityFields::default()
        },
    )
}

/// A caller of `tenant` without identity defaults.
fn bare(tenant: &str) -> Principal {
    Principal::new(tenant, IdentityFields::default())
}

fn add_args(content: &str, layer: &str) -> AddArgs {
    serde_json::from_value(json!({ "content": content, "layer": layer, "tags": ["rust"] }))
        .expect("valid add args")
}

fn search_args(query: &str) -> SearchArgs {
    serde_json::from_value(json!({ "query": query })).expect("valid search args")
}

fn id_args(id: impl ToString) -> IdArgs {
    IdArgs {
        id: id.to_string(),
        identity: IdentityFields::default(),
    }
}

#[tokio::test]
async fn add_search_get_update_list_delete() {
    let (state, _dir) = state(|_| {}).await;
    let memory = &state.memory;
    let alpha = who("alpha");

    let added = memory::add(
        memory,
        &alpha,
        add_args("Use sqlx migrations for schema changes", "project"),
    )
    .await
    .expect("add")
    .outcome;
    assert!(!added.deduplicated);
    assert_eq!(added.record.tenant_id, "alpha");
    assert_eq!(added.record.scope_id, "p1");
    let id = added.record.id;

    let again = memory::add(
        memory,
        &alpha,
        add_args("Use sqlx migrations for schema changes", "project"),
    )
    .await
    .expect("add duplicate");
    let again = again.outcome;
    assert!(again.deduplicated);
    assert_eq!(again.record.id, id);

    let found = memory::search(memory, &alpha, search_args("schema migrations"))
        .await
        .expect("search");
    assert_eq!(found.hits.first().map(|hit| hit.record.id), Some(id));

    let record = memory::get(memory, &alpha, id_args(id)).await.expect("get");
    assert_eq!(
        record.content.as_deref(),
        Some("Use sqlx migrations for schema changes")
    );

    let update: UpdateArgs = serde_json::from_value(json!({
        "id": id.to_string(), "content": "Use sqlx migrations; never edit the schema by hand",
        "metadata": { "source": "review" }
    }))
    .expect("update args");
    let updated = memory::update(memory, &alpha, update)
        .await
        .expect("update");
    assert_eq!(updated.metadata, json!({ "source": "review" }));
    let found = memory::search(memory, &alpha, search_args("edit the schema by hand"))
        .await
        .expect("search");
    assert_eq!(found.hits.first().map(|hit| hit.record.id), Some(id));

    let list: ListArgs =
        serde_json::from_value(json!({ "metadata_only": true })).expect("list args");
    let page = memory::list(memory, &alpha, list).await.expect("list");
    assert_eq!(page.items.len(), 1);
    assert_eq!(
        page.items[0].content, None,
        "metadata_only leaves the content out"
    );

    let deleted = memory::delete(memory, &alpha, id_args(id))
        .await
        .expect("delete");
    assert!(deleted.deleted);
    let error = memory::get(memory, &alpha, id_args(id))
        .await
        .expect_err("gone");
    assert!(matches!(error, MemoryError::NotFound(_)), "{error}");
}

#[tokio::test]
async fn another_tenant_sees_nothing() {
    let (state, _dir) = state(|_| {}).await;
    let memory = &state.memory;
    let (alpha, beta) = (who("alpha"), who("beta"));
    let id = memory::add(
        memory,
        &alpha,
        add_args("alpha's deployment password rotation runbook", "project"),
    )
    .await
    .expect("add")
    .outcome
    .record
    .id;

    let found = memory::search(
        memory,
        &beta,
        search_args("deployment password rotation runbook"),
    )
    .await
    .expect("search");
    assert!(
        found.hits.is_empty(),
        "beta found alpha's memory: {:?}",
        found.hits
    );
    let page = memory::list(
        memory,
        &beta,
        serde_json::from_value(json!({})).expect("args"),
    )
    .await
    .expect("list");
    assert!(page.items.is_empty());
    assert!(matches!(
        memory::get(memory, &beta, id_args(id)).await,
        Err(MemoryError::NotFound(_))
    ));
    let update: UpdateArgs =
        serde_json::from_value(json!({ "id": id.to_string(), "content": "pwned" })).expect("args");
    assert!(matches!(
        memory::update(memory, &beta, update).await,
        Err(MemoryError::NotFound(_))
    ));
    assert!(matches!(
        memory::delete(memory, &beta, id_args(id)).await,
        Err(MemoryError::NotFound(_))
    ));
    let retrieved = compat::retrieve(
        memory,
        100,
        &beta,
        RetrieveRequest {
            query: "deployment password rotation".into(),
            user_id: None,
            session_id: None,
            project_id: None,
            top_k: Some(50),
            filter_metadata: None,
        },
    )
    .await
    .expect("retrieve");
    assert!(retrieved.context_chunks.is_empty());

    // Alpha's memory is untouched.
    let record = memory::get(memory, &alpha, id_args(id))
        .await
        .expect("alpha still has it");
    assert_eq!(
        record.content.as_deref(),
        Some("alpha's deployment password rotation runbook")
    );
}

#[tokio::test]
async fn bad_arguments_say_what_to_fix() {
    let (state, _dir) = state(|config| config.memory.max_content_bytes = 64).await;
    let memory = &state.memory;
    let alpha = who("alpha");
    let message = |error: MemoryError| error.to_string();

    let error = memory::get(memory, &alpha, id_args("not-a-uuid"))
        .await
        .expect_err("bad id");
    assert!(message(error).contains("`id`"));
    let error = memory::add(memory, &alpha, add_args("x", "galaxy"))
        .await
        .expect_err("bad layer");
    assert!(message(error).contains("unknown layer `galaxy`"));
    let error = memory::add(memory, &bare("alpha"), add_args("x", "session"))
        .await
        .expect_err("no session id");
    assert!(message(error).contains("session_id"));
    let error = memory::add(memory, &alpha, add_args(&"y".repeat(65), "user"))
        .await
        .expect_err("too long");
    assert!(matches!(error, MemoryError::InvalidInput(_)), "{error}");
    let error = memory::search(memory, &alpha, search_args("  "))
        .await
        .expect_err("empty query");
    assert!(message(error).contains("`query`"));
    let bad_score: SearchArgs =
        serde_json::from_value(json!({ "query": "q", "min_score": 2.0 })).expect("args");
    let error = memory::search(memory, &alpha, bad_score)
        .await
        .expect_err("score");
    assert!(message(error).contains("min_score"));
    let empty_update: UpdateArgs =
        serde_json::from_value(json!({ "id": uuid::Uuid::now_v7().to_string() })).expect("args");
    let error = memory::update(memory, &alpha, empty_update)
        .await
        .expect_err("no change");
    assert!(message(error).contains("nothing to update"));
}

#[tokio::test]
async fn compat_ingest_and_retrieve() {
    let (state, _dir) = state(|_| {}).await;
    let memory = &state.memory;
    let alpha = Principal::new(
        "alpha",
        IdentityFields {
            session_id: Some("s9".into()),
            ..IdentityFields::default()
        },
    );
    let ingest = |content: &str, source: &str| IngestRequest {
        content: content.into(),
        user_id: None,
        session_id: Some("s9".into()),
        project_id: None,
        layer: None,
        tags: Vec::new(),
        metadata: json!({ "source": source }).as_object().cloned(),
    };
    let stored = compat::ingest(
        memory,
        &alpha,
        ingest("The CI cache key includes Cargo.lock", "ci"),
    )
    .await
    .expect("ingest");
    assert_eq!(
        stored.layer,
        aeterna_memory::Layer::Session,
        "session_id picks the session layer"
    );
    compat::ingest(
        memory,
        &alpha,
        ingest("The CI cache is restored before the build", "chat"),
    )
    .await
    .expect("ingest");

    let retrieve = |top_k, filter: Option<serde_json::Value>| RetrieveRequest {
        query: "CI cache".into(),
        user_id: None,
        session_id: Some("s9".into()),
        project_id: None,
        top_k,
        filter_metadata: filter.and_then(|f| f.as_object().cloned()),
    };
    let all = compat::retrieve(memory, 100, &alpha, retrieve(Some(10), None))
        .await
        .expect("retrieve");
    assert_eq!(all.context_chunks.len(), 2);
    assert!(
        all.context_chunks
            .iter()
            .all(|chunk| (0.0..=1.0).contains(&chunk.relevance_score))
    );
    let filtered = compat::retrieve(
        memory,
        100,
        &alpha,
        retrieve(Some(10), Some(json!({ "source": "ci" }))),
    )
    .await
    .expect("retrieve");
    assert_eq!(filtered.context_chunks.len(), 1);
    assert_eq!(filtered.context_chunks[0].id, stored.id);

    for top_k in [0, 51] {
        let error = compat::retrieve(memory, 100, &alpha, retrieve(Some(top_k), None))
            .await
            .expect_err("top_k out of range");
        assert!(error.to_string().contains("top_k"), "{error}");
    }
    let unscoped = IngestRequest {
        session_id: None,
        ..ingest("x", "y")
    };
    let error = compat::ingest(memory, &bare("alpha"), unscoped)
        .await
        .expect_err("an identity without scopes has nowhere to store");
    assert!(error.to_string().contains("session_id"), "{error}");
}

/// Identity fields are checked in one place for every tool: an over-long id is refused by
/// name before anything is stored, by Hindsight and the Note-Taking agent as by memory.
#[tokio::test]
async fn every_tool_refuses_an_overlong_identity_field_by_name() {
    let (state, _dir) = state(|_| {}).await;
    let alpha = who("alpha");
    let huge = "p".repeat(1 << 20);

    let capture: hindsight::CaptureArgs = serde_json::from_value(json!({
        "error_text": "error[E0308]: mismatched types",
        "project_id": huge,
    }))
    .expect("capture args");
    let error = hindsight::capture(&state.hindsight, &alpha, capture)
        .await
        .expect_err("a 1 MiB project_id");
    assert!(
        error.to_string().contains("`project_id` is 1048576 bytes"),
        "{error}"
    );
    let query: hindsight::QueryArgs = serde_json::from_value(json!({
        "error_text": "error[E0308]: mismatched types",
    }))
    .expect("query args");
    let found = hindsight::query(&state.hindsight, &alpha, query)
        .await
        .expect("query");
    let found = serde_json::to_value(&found).expect("json");
    assert_eq!(
        (&found["matched"], &found["related"]),
        (&json!([]), &json!([])),
        "the refused capture stored nothing"
    );

    let error = memory::add(
        &state.memory,
        &alpha,
        serde_json::from_value(json!({ "content": "x", "layer": "user", "user_id": huge }))
            .expect("add args"),
    )
    .await
    .expect_err("a 1 MiB user_id");
    assert!(error.to_string().contains("`user_id`"), "{error}");

    let batch: notes::CaptureArgs = serde_json::from_value(json!({
        "session_id": "s1",
        "events": [
            { "tool_name": "bash", "success": true },
            { "tool_name": "bash", "success": true, "session_id": huge },
        ]
    }))
    .expect("trajectory args");
    let error = notes::capture(&state.notes, &alpha, batch).expect_err("a 1 MiB session_id");
    assert!(
        error.to_string().contains("`events[1]`: `session_id`"),
        "{error}"
    );
}

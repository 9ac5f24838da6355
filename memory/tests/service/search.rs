use aeterna_memory::{Layer, MemoryService, NewMemory, SearchHit, SearchRequest};

use super::*;

const CORPUS: &[&str] = &[
    "The CI pipeline caches the cargo registry and target directory between builds to cut build times.",
    "Database connection pool: max_connections is 20 in production; raise it when requests queue up.",
    "To rotate the TLS certificates, run `make certs` and restart the ingress controller.",
    "Flaky integration tests were caused by a shared temp directory; each test now gets its own.",
    "The frontend uses React with Vite; run `npm run dev` to start the dev server on port 5173.",
    "Error E0502 (cannot borrow as mutable because it is also borrowed as immutable) in the parser was fixed by cloning the token.",
    "Deployments to production require two approvals and go through the staging cluster first.",
    "Logs are shipped to Loki; query them in Grafana with the label app=aeterna.",
    "Use British spelling in user-facing documentation strings.",
    "The API rate limit is 100 requests per minute per token; exceeding it returns HTTP 429.",
    "Python dependencies are managed with uv; run `uv sync` after pulling.",
    "Memory leak in the websocket handler: connections were never removed from the registry map.",
    "Backups of the Postgres database run nightly at 02:00 UTC and are kept for 30 days.",
    "Feature flags are read from LaunchDarkly at startup and cached for five minutes.",
    "Alice prefers short commit messages in the imperative mood.",
    "Kubernetes pods are autoscaled on CPU above 70 percent.",
    "Secrets are stored in Vault under kv/aeterna; never commit .env files.",
    "The code review checklist: tests, docs, changelog entry, and no unwrap in library code.",
    "Benchmarks run with criterion; compare against the main branch baseline before merging.",
];

/// (paraphrased question, index of the memory that answers it)
const QUESTIONS: &[(&str, usize)] = &[
    ("how long do we retain the database backups?", 12),
    ("why were the integration tests flaky", 3),
    ("how do I renew the TLS certificate", 2),
    ("getting too many requests errors from the API", 9),
    ("caching cargo builds in CI", 0),
    ("deploying to prod needs approval", 6),
    ("autoscaling pods by cpu", 15),
    ("how big is the db connection pool in production", 1),
    ("where can I query the logs", 7),
    ("fix for borrowed as mutable error E0502", 5),
];

/// Scores are calibrated probabilities of relevance: a memory that answers a paraphrased
/// question scores at least this ...
const RELEVANT: f32 = 0.15;
/// ... and memories about something else entirely stay under this (the Context Architect's
/// default `min_relevance`).
const OFF_TOPIC: f32 = 0.1;

fn query(text: &str, limit: usize) -> SearchRequest {
    SearchRequest {
        query: text.into(),
        layers: None,
        tags: vec![],
        kinds: vec![],
        limit,
        min_score: 0.0,
        explain: false,
        as_of: None,
    }
}

/// The corpus in a service with the product's default embedder, whose scores these tests are
/// about.
async fn corpus_service() -> (tempfile::TempDir, MemoryService, Vec<uuid::Uuid>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let service = open_with_embedder(
        dir.path(),
        aeterna_memory::MemoryConfig::default(),
        std::sync::Arc::new(aeterna_memory::embed::StaticEmbedder::new()),
    )
    .await
    .expect("open");
    let who = alice();
    let layers = [
        Layer::Project,
        Layer::Team,
        Layer::Session,
        Layer::User,
        Layer::Org,
    ];
    let items: Vec<NewMemory> = CORPUS
        .iter()
        .enumerate()
        .map(|(i, text)| memory(layers[i % layers.len()], text))
        .collect();
    let ids = service
        .add_batch(&who, items)
        .await
        .unwrap()
        .into_iter()
        .map(|o| o.record.id)
        .collect();
    (dir, service, ids)
}

#[tokio::test]
async fn paraphrased_questions_find_their_memory_first_with_meaningful_scores() {
    let (_dir, service, ids) = corpus_service().await;
    let who = alice();
    for (question, expected) in QUESTIONS {
        let hits = service.search(&who, query(question, 5)).await.unwrap();
        let summary: Vec<(f32, &str)> = hits
            .iter()
            .map(|h| (h.score, h.record.content.as_deref().unwrap_or_default()))
            .collect();
        assert_eq!(
            hits[0].record.id, ids[*expected],
            "{question:?} ranked {summary:#?}"
        );
        assert!(
            hits[0].score >= RELEVANT,
            "{question:?}: relevant hit scored {}",
            hits[0].score
        );
        assert!(
            hits.windows(2)
                .all(|w| w[0].score >= 0.0 && w[0].score <= 1.0)
        );
        // Memories about something else score clearly lower than the answer.
        for other in &hits[1..] {
            assert!(other.score < hits[0].score, "{question:?}: {summary:#?}");
        }
        assert_eq!(hits[0].layer, hits[0].record.layer);
    }
}

#[tokio::test]
async fn off_topic_queries_score_below_the_usual_threshold() {
    let (_dir, service, _) = corpus_service().await;
    let who = alice();
    for question in [
        "chocolate cake recipe with strawberries",
        "who won the football match yesterday",
    ] {
        let hits = service.search(&who, query(question, 10)).await.unwrap();
        assert!(
            hits.iter().all(|hit| hit.score < OFF_TOPIC),
            "{question:?}: {:?}",
            scores(&hits)
        );
        let filtered = service
            .search(
                &who,
                SearchRequest {
                    min_score: OFF_TOPIC,
                    ..query(question, 10)
                },
            )
            .await
            .unwrap();
        assert!(filtered.is_empty());
    }
}

fn scores(hits: &[SearchHit]) -> Vec<(f32, String)> {
    hits.iter()
        .map(|h| (h.score, h.record.content.clone().unwrap_or_default()))
        .collect()
}

#[tokio::test]
async fn fts_syntax_in_queries_is_searched_as_text_never_parsed() {
    let (_dir, service, ids) = corpus_service().await;
    let who = alice();
    let hostile = [
        "\"",
        "\"unbalanced",
        "((((",
        "))",
        "*",
        "pool*",
        "NEAR(database pool)",
        "database AND",
        "OR",
        "NOT tests",
        "content: pool",
        "^start",
        "-minus",
        "a:b:c",
        "'; DROP TABLE memories; --",
        "{col1 col2}: x",
        "x + y",
        "\u{0}",
        "%_\\",
        "database\" OR \"pool",
        "🚀 deploy",
        "ﬁ ligature",
        "ÅNGSTRÖM",
    ];
    for text in hostile {
        let result = service.search(&who, query(text, 5)).await;
        assert!(result.is_ok(), "{text:?}: {result:?}");
    }
    // Operators are plain words: `database AND` finds the database memories.
    let hits = service
        .search(&who, query("database\" OR \"pool", 3))
        .await
        .unwrap();
    assert!(hits.iter().any(|hit| hit.record.id == ids[1]));
    for punctuation in ["!!!", "...", "\"\"\"", "*** ((( ) ^ :", "   ", "-- /* */"] {
        assert!(
            service
                .search(&who, query(punctuation, 5))
                .await
                .unwrap()
                .is_empty(),
            "{punctuation:?}"
        );
    }
    // Nothing was dropped.
    assert_eq!(service.stats().await.unwrap().records, CORPUS.len() as u64);
}

#[tokio::test]
async fn searches_filter_by_layers_tags_and_kinds() {
    let (_dir, service) = open_temp().await;
    let who = alice();
    let item = |layer, tags: &[&str], kind: Option<&str>| NewMemory {
        layer,
        content: format!("retry the flaky upload with backoff ({layer}, {tags:?}, {kind:?})"),
        tags: tags.iter().map(|t| t.to_string()).collect(),
        metadata: serde_json::Value::Null,
        kind: kind.map(str::to_string),
    };
    service
        .add_batch(
            &who,
            vec![
                item(Layer::Project, &["net"], None),
                item(Layer::Project, &["net", "s3"], Some("hindsight")),
                item(Layer::Session, &["s3"], None),
                item(Layer::Team, &[], Some("note")),
            ],
        )
        .await
        .unwrap();
    let layers_of = |hits: Vec<SearchHit>| {
        let mut found: Vec<(Layer, String)> =
            hits.into_iter().map(|h| (h.layer, h.record.kind)).collect();
        found.sort();
        found
    };
    let base = query("flaky upload retry", 10);
    assert_eq!(service.search(&who, base.clone()).await.unwrap().len(), 4);
    let project = SearchRequest {
        layers: Some(vec![Layer::Project]),
        ..base.clone()
    };
    assert_eq!(
        layers_of(service.search(&who, project).await.unwrap()),
        [
            (Layer::Project, "hindsight".into()),
            (Layer::Project, "memory".into())
        ]
    );
    let s3 = SearchRequest {
        tags: vec!["s3".into()],
        ..base.clone()
    };
    assert_eq!(
        layers_of(service.search(&who, s3).await.unwrap()),
        [
            (Layer::Session, "memory".into()),
            (Layer::Project, "hindsight".into())
        ]
        .into_iter()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect::<Vec<_>>()
    );
    let net_s3 = SearchRequest {
        tags: vec!["s3".into(), "net".into()],
        ..base.clone()
    };
    assert_eq!(
        layers_of(service.search(&who, net_s3).await.unwrap()),
        [(Layer::Project, "hindsight".into())]
    );
    let notes = SearchRequest {
        kinds: vec!["note".into()],
        ..base.clone()
    };
    assert_eq!(
        layers_of(service.search(&who, notes).await.unwrap()),
        [(Layer::Team, "note".into())]
    );
    let session_notes = SearchRequest {
        kinds: vec!["note".into()],
        layers: Some(vec![Layer::Session]),
        ..base
    };
    assert!(
        service
            .search(&who, session_notes)
            .await
            .unwrap()
            .is_empty()
    );
}

/// A service whose lexical search reads at most `rows` matches, on either profile.
async fn open_with_lexical_budget(rows: usize) -> (tempfile::TempDir, MemoryService) {
    let dir = tempfile::tempdir().unwrap();
    let mut config = aeterna_memory::MemoryConfig::default();
    config.sqlite.lexical_max_postings = rows;
    config.postgres.lexical_max_rows = rows;
    let service = open(dir.path(), config).await;
    (dir, service)
}

#[tokio::test]
async fn common_words_are_left_to_the_vector_search_and_rare_ones_still_match() {
    let (_dir, service) = open_with_lexical_budget(5).await;
    let who = alice();
    let mut items: Vec<NewMemory> = (0..30)
        .map(|i| {
            memory(
                Layer::Project,
                &format!("deployment note {i}: the deployment went fine"),
            )
        })
        .collect();
    items.push(memory(
        Layer::Project,
        "deployment of the zebra service needs a manual approval",
    ));
    service.add_batch(&who, items).await.unwrap();

    // `deployment` is in 31 records, over the budget of 5: only `zebra` is searched lexically.
    let hits = service
        .search(&who, query("zebra deployment", 5))
        .await
        .unwrap();
    assert!(
        hits[0].record.content.as_deref().unwrap().contains("zebra"),
        "{:?}",
        scores(&hits)
    );
    // A query of only common words still finds records, through their vectors.
    let hits = service.search(&who, query("deployment", 5)).await.unwrap();
    assert_eq!(hits.len(), 5);
}

/// The word statistics lexical ranking reads (document frequencies per tenant) follow every
/// insert, delete and content update, and another tenant's records do not count.
#[tokio::test]
async fn word_statistics_follow_deletes_updates_and_stay_per_tenant() {
    let (_dir, service) = open_with_lexical_budget(5).await;
    let who = alice();
    let other_tenant = aeterna_memory::Identity {
        tenant_id: "globex".into(),
        ..alice()
    };
    let zebras = |n: usize, what: &str| -> Vec<NewMemory> {
        (0..n)
            .map(|i| {
                memory(
                    Layer::Project,
                    &format!("{what} {i}: a zebra crossed the road"),
                )
            })
            .collect()
    };
    service
        .add_batch(&other_tenant, zebras(20, "globex"))
        .await
        .unwrap();
    let added = service.add_batch(&who, zebras(7, "acme")).await.unwrap();
    let ids: Vec<uuid::Uuid> = added.iter().map(|outcome| outcome.record.id).collect();
    let lexical = |words: &[&str]| {
        let terms: Vec<String> = words.iter().map(|word| word.to_string()).collect();
        let records = service.records().clone();
        async move {
            records
                .lexical_search("acme", &terms, &Default::default(), 20)
                .await
                .unwrap()
                .len()
        }
    };

    // 7 of acme's records hold `zebra`, over the budget of 5: it is left to the vectors.
    assert_eq!(lexical(&["zebra"]).await, 0);
    service.delete(&who, ids[0]).await.unwrap();
    service.delete(&who, ids[1]).await.unwrap();
    // 5: within the budget (globex's 20 do not count).
    assert_eq!(lexical(&["zebra"]).await, 5);
    let rewrite = |id: uuid::Uuid, content: &str| {
        let patch = aeterna_memory::MemoryPatch {
            content: Some(content.into()),
            ..Default::default()
        };
        let (service, who) = (&service, &who);
        async move { service.update(who, id, patch).await.unwrap() }
    };
    rewrite(ids[2], "an okapi crossed the road").await;
    assert_eq!(lexical(&["zebra"]).await, 4);
    assert_eq!(lexical(&["okapi"]).await, 1);
    // A word no record holds any more is gone from the statistics, and comes back.
    rewrite(ids[2], "a zebra crossed the road again").await;
    assert_eq!(lexical(&["okapi"]).await, 0);
    assert_eq!(lexical(&["zebra"]).await, 5);
    // An update that keeps the content's words changes no count.
    rewrite(ids[3], "a zebra crossed the road: acme 3").await;
    assert_eq!(lexical(&["zebra"]).await, 5);
}

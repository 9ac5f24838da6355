//! Several services on one shared store (PostgreSQL): each instance's vector index follows the
//! others' writes. Skipped, with a message, on the embedded profile, which one process owns.

use std::time::Duration;

use aeterna_memory::{
    Layer, ListRequest, MemoryConfig, MemoryPatch, MemoryService, NewMemory, SearchRequest,
};

use super::*;

fn search(text: &str) -> SearchRequest {
    SearchRequest {
        query: text.into(),
        layers: None,
        tags: Vec::new(),
        kinds: Vec::new(),
        limit: 5,
        min_score: 0.0,
        explain: false,
        as_of: None,
    }
}

/// Two services over the same schema, or `None` (with a message) on SQLite.
async fn two_instances(dir: &tempfile::TempDir) -> Option<(MemoryService, MemoryService)> {
    if backend() != Backend::Postgres {
        eprintln!("SKIPPED: several instances share a store only on PostgreSQL");
        return None;
    }
    let mut config = MemoryConfig::default();
    config.follow.interval_ms = 20;
    let a = open(dir.path(), config.clone()).await;
    let b = open(dir.path(), config).await;
    Some((a, b))
}

#[tokio::test]
async fn a_write_on_one_instance_is_searchable_on_the_other() {
    let dir = tempfile::tempdir().unwrap();
    let Some((a, b)) = two_instances(&dir).await else {
        return;
    };
    let who = alice();
    let added = a
        .add(
            &who,
            memory(
                Layer::Project,
                "Replica lag alarms fire above thirty seconds of delay.",
            ),
        )
        .await
        .unwrap();
    // Found by B: the vector side comes from B's own index, which learnt it from the log.
    let hits = b.search(&who, search("replica lag alarms")).await.unwrap();
    assert_eq!(hits.first().map(|h| h.record.id), Some(added.record.id));
    let similarities_only = b
        .search(&who, search("lag alarm replicas delay"))
        .await
        .unwrap();
    assert!(
        similarities_only
            .iter()
            .any(|h| h.record.id == added.record.id)
    );

    // An update on A changes what B finds; a delete on A removes it from B.
    a.update(
        &who,
        added.record.id,
        MemoryPatch {
            content: Some("Disk usage alerts page the on-call engineer at ninety percent.".into()),
            tags: None,
            metadata: None,
            mode: None,
            valid_from: None,
        },
    )
    .await
    .unwrap();
    let hits = b
        .search(&who, search("disk usage alerts on-call"))
        .await
        .unwrap();
    assert_eq!(hits.first().map(|h| h.record.id), Some(added.record.id));
    a.delete(&who, added.record.id).await.unwrap();
    let hits = b
        .search(&who, search("disk usage alerts on-call"))
        .await
        .unwrap();
    assert!(
        hits.iter().all(|h| h.record.id != added.record.id),
        "{hits:?}"
    );
}

#[tokio::test]
async fn another_instances_write_reaches_subscribers_without_a_search() {
    let dir = tempfile::tempdir().unwrap();
    let Some((a, b)) = two_instances(&dir).await else {
        return;
    };
    let b = std::sync::Arc::new(b);
    let _following = b
        .follow_in_background()
        .expect("a shared store is followed");
    let mut changes = b.subscribe();
    let who = alice();
    a.add(
        &who,
        memory(Layer::Session, "The staging cluster restarts nightly."),
    )
    .await
    .unwrap();
    let change = tokio::time::timeout(Duration::from_secs(5), changes.recv())
        .await
        .expect("B announces A's write")
        .unwrap();
    assert_eq!(change.tenant_id, "acme");
    assert_eq!(change.scope.layer, Layer::Session);
}

#[tokio::test]
async fn concurrent_writes_through_two_instances_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let Some((a, b)) = two_instances(&dir).await else {
        return;
    };
    async fn write(service: &MemoryService, side: &str) {
        for i in 0..40 {
            let text = format!("{side} instance note {i} about shard {i} rebalancing");
            service
                .add(&alice(), memory(Layer::Project, &text))
                .await
                .unwrap();
        }
    }
    tokio::join!(write(&a, "first"), write(&b, "second"));
    for service in [&a, &b] {
        assert_eq!(service.stats().await.unwrap().records, 80);
        service.catch_up().await.unwrap();
        assert_eq!(service.stats().await.unwrap().vectors, 80);
    }
}

/// Two instances adding (batches sharing contents, in opposite orders), updating and deleting
/// at once: nothing deadlocks or is lost, and the word statistics lexical search ranks by stay
/// exact — a search scores as it does over the same records written by one instance alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writes_keep_the_word_statistics_exact() {
    let dir = tempfile::tempdir().unwrap();
    let Some((a, b)) = two_instances(&dir).await else {
        return;
    };
    let shared: Vec<String> = (0..12)
        .map(|i| format!("Runbook step {i}: restart the ingest workers after a lag alarm."))
        .collect();
    async fn write(service: &MemoryService, side: &str, shared: Vec<String>) {
        let who = alice();
        for round in 0..6 {
            let mut batch: Vec<NewMemory> = (0..8)
                .map(|i| {
                    let text = format!("{side} round {round} note {i}: ingest lag on shard {i}.");
                    memory(Layer::Project, &text)
                })
                .collect();
            batch.extend(shared.iter().map(|text| memory(Layer::Project, text)));
            let added = service.add_batch(&who, batch).await.unwrap();
            let rewritten = format!("{side} round {round}: the ingest backlog cleared overnight.");
            let patch = MemoryPatch {
                content: Some(rewritten),
                tags: None,
                metadata: None,
                mode: None,
                valid_from: None,
            };
            service
                .update(&who, added[0].record.id, patch)
                .await
                .unwrap();
            service.delete(&who, added[1].record.id).await.unwrap();
        }
    }
    let reversed = shared.iter().rev().cloned().collect();
    tokio::join!(write(&a, "first", shared), write(&b, "second", reversed));

    let who = alice();
    let mut contents = Vec::new();
    let mut cursor = None;
    loop {
        let request = ListRequest {
            layers: None,
            tags: Vec::new(),
            kinds: Vec::new(),
            cursor,
            limit: 50,
            metadata_only: false,
        };
        let page = a.list(&who, request).await.unwrap();
        contents.extend(page.items.into_iter().map(|record| record.content.unwrap()));
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(
        contents.len(),
        2 * 6 * 7 + 12,
        "every surviving write, once"
    );

    let alone_dir = tempfile::tempdir().unwrap();
    let alone = open(alone_dir.path(), MemoryConfig::default()).await;
    let batch = contents
        .iter()
        .map(|text| memory(Layer::Project, text))
        .collect();
    alone.add_batch(&who, batch).await.unwrap();
    for query in [
        "ingest lag shard",
        "restart workers alarm",
        "backlog cleared overnight",
    ] {
        let explained = SearchRequest {
            explain: true,
            limit: 20,
            ..search(query)
        };
        let concurrent = a.search(&who, explained.clone()).await.unwrap();
        let sequential = alone.search(&who, explained).await.unwrap();
        // The word statistics are what must be exact: each record's BM25 signal. (Final scores
        // also weigh first-stage ranks, and equal BM25 scores may rank in another order: ties
        // go to the newer record.)
        let lexical =
            |hit: &aeterna_memory::SearchHit| hit.explain.as_ref().unwrap().signals.lexical;
        let ranked = |hits: &[aeterna_memory::SearchHit]| -> Vec<f32> {
            let mut scores: Vec<f32> = hits.iter().map(lexical).collect();
            scores.sort_by(|a, b| b.total_cmp(a));
            scores
        };
        assert!(!concurrent.is_empty(), "{query}");
        assert_eq!(ranked(&concurrent), ranked(&sequential), "{query}");
        for hit in &concurrent {
            if let Some(same) = sequential
                .iter()
                .find(|other| other.record.content == hit.record.content)
            {
                assert_eq!(
                    lexical(hit),
                    lexical(same),
                    "{query}: {:?}",
                    hit.record.content
                );
            }
        }
    }
}

#[tokio::test]
async fn instances_starting_at_once_migrate_once() {
    if backend() != Backend::Postgres {
        eprintln!("SKIPPED: migrations of a shared database are PostgreSQL's");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let opened =
        futures::future::join_all((0..4).map(|_| open(dir.path(), MemoryConfig::default()))).await;
    let who = alice();
    opened[0]
        .add(
            &who,
            memory(Layer::Project, "Four instances started together."),
        )
        .await
        .unwrap();
    for service in &opened {
        assert_eq!(service.stats().await.unwrap().records, 1);
    }
}

/// A TCP relay to PostgreSQL that can be cut (every connection closed, new ones refused) and
/// restored: the database going away and coming back, as the service sees it.
struct Relay {
    port: u16,
    up: std::sync::Arc<std::sync::atomic::AtomicBool>,
    generation: std::sync::Arc<tokio::sync::watch::Sender<u64>>,
}

impl Relay {
    async fn start(target: &str) -> Relay {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let up = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let (generation, _) = tokio::sync::watch::channel(0u64);
        let generation = std::sync::Arc::new(generation);
        let target = target.to_string();
        let (up2, generation2) = (up.clone(), generation.clone());
        tokio::spawn(async move {
            loop {
                let (mut client, _) = listener.accept().await.unwrap();
                if !up2.load(std::sync::atomic::Ordering::SeqCst) {
                    continue; // dropped: refused
                }
                let target = target.clone();
                let mut cut = generation2.subscribe();
                tokio::spawn(async move {
                    let Ok(mut server) = tokio::net::TcpStream::connect(&target).await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                        _ = cut.changed() => {}
                    }
                });
            }
        });
        Relay {
            port,
            up,
            generation,
        }
    }

    fn cut(&self) {
        self.up.store(false, std::sync::atomic::Ordering::SeqCst);
        self.generation.send_modify(|g| *g += 1);
    }

    fn restore(&self) {
        self.up.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

#[tokio::test]
async fn requests_fail_clearly_while_the_database_is_down_then_recover() {
    if backend() != Backend::Postgres {
        eprintln!("SKIPPED: the database going away is tested on PostgreSQL");
        return;
    }
    let relay = Relay::start("127.0.0.1:5432").await;
    let url = format!("postgres://postgres@127.0.0.1:{}/test", relay.port);
    let dir = tempfile::tempdir().unwrap();
    let mut config = MemoryConfig::default();
    config.postgres.acquire_timeout_ms = 500;
    config.postgres.schema = test_schema(dir.path());
    let db = aeterna_memory::storage::postgres::PgDatabase::connect(&url, &config.postgres)
        .await
        .unwrap();
    let service = MemoryService::open_postgres(
        db,
        config,
        std::sync::Arc::new(aeterna_memory::embed::HashingEmbedder::default()),
    )
    .await
    .unwrap();
    let who = alice();
    service
        .add(&who, memory(Layer::Project, "Before the outage."))
        .await
        .unwrap();

    relay.cut();
    let started = std::time::Instant::now();
    let error = service
        .add(&who, memory(Layer::Project, "During the outage."))
        .await
        .expect_err("the database is down");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "failed within the acquire timeout"
    );
    let message = error.to_string();
    assert!(
        message.contains("storage unavailable") && message.contains("nothing was written"),
        "{message}"
    );
    assert!(service.ready().await.is_err());

    relay.restore();
    let mut recovered = None;
    for _ in 0..50 {
        match service
            .add(
                &who,
                memory(
                    Layer::Project,
                    "Replication resumed once the link was back.",
                ),
            )
            .await
        {
            Ok(added) => {
                recovered = Some(added);
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    let added = recovered.expect("writes work again once the database is back");
    let hits = service
        .search(&who, search("replication resumed"))
        .await
        .unwrap();
    assert_eq!(hits.first().map(|h| h.record.id), Some(added.record.id));
    assert_eq!(
        service.stats().await.unwrap().records,
        2,
        "the write during the outage was not stored"
    );
}

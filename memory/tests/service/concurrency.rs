use aeterna_memory::{Layer, ListRequest, SearchRequest};

use super::*;

/// Many clients adding at once (with searches in between) lose nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_adds_lose_nothing() {
    let (_dir, service) = open_temp().await;
    let service = Arc::new(service);
    let clients = 8;
    let per_client = 40;
    let mut tasks = Vec::new();
    for client in 0..clients {
        let service = service.clone();
        tasks.push(tokio::spawn(async move {
            let who = alice();
            let mut ids = Vec::new();
            for i in 0..per_client {
                let text = format!("client {client} wrote memory {i} about retry budgets");
                ids.push(
                    service
                        .add(&who, memory(Layer::Project, &text))
                        .await
                        .unwrap()
                        .record
                        .id,
                );
                if i % 10 == 0 {
                    let request = SearchRequest {
                        query: "retry budgets".into(),
                        layers: None,
                        tags: vec![],
                        kinds: vec![],
                        limit: 5,
                        min_score: 0.0,
                        explain: false,
                        as_of: None,
                    };
                    service.search(&who, request).await.unwrap();
                }
            }
            ids
        }));
    }
    let mut ids = Vec::new();
    for task in tasks {
        ids.extend(task.await.unwrap());
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), clients * per_client);
    assert_eq!(
        service.stats().await.unwrap(),
        aeterna_memory::StoreStats {
            records: ids.len() as u64,
            vectors: ids.len() as u64,
            vector_repairs: Default::default(),
        }
    );
    let mut listed = Vec::new();
    let mut cursor = None;
    loop {
        let request = ListRequest {
            layers: None,
            tags: vec![],
            kinds: vec![],
            cursor,
            limit: 100,
            metadata_only: true,
        };
        let page = service.list(&alice(), request).await.unwrap();
        listed.extend(page.items.into_iter().map(|r| r.id));
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
    }
    listed.sort();
    assert_eq!(listed, ids);
}

/// Adds racing with the same content (committed together or not) store it once, and every
/// caller gets that one record.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_duplicates_are_stored_once() {
    let (_dir, service) = open_temp().await;
    let service = Arc::new(service);
    let tasks: Vec<_> = (0..16)
        .map(|i| {
            let service = service.clone();
            tokio::spawn(async move {
                let text = format!("shared memory {}", i % 4);
                service
                    .add(&alice(), memory(Layer::Project, &text))
                    .await
                    .unwrap()
            })
        })
        .collect();
    let mut outcomes = Vec::new();
    for task in tasks {
        outcomes.push(task.await.unwrap());
    }
    assert_eq!(outcomes.iter().filter(|o| !o.deduplicated).count(), 4);
    for i in 0..4 {
        let text = format!("shared memory {i}");
        let ids: std::collections::HashSet<_> = outcomes
            .iter()
            .filter(|o| o.record.content.as_deref() == Some(text.as_str()))
            .map(|o| o.record.id)
            .collect();
        assert_eq!(ids.len(), 1, "{text}");
    }
    assert_eq!(service.stats().await.unwrap().records, 4);
}

/// Readers hammering a record while it is updated: right after each update returns, a read
/// sees it. (On the embedded profile reads are served from a cache that a read racing a write
/// must not fill with the version it read before the write.)
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn reads_racing_updates_see_each_update_once_it_returns() {
    use std::sync::atomic::{AtomicBool, Ordering};

    let (_dir, service) = open_temp().await;
    let service = Arc::new(service);
    let who = alice();
    let id = service
        .add(
            &who,
            memory(Layer::Project, "The build cache lives in target/."),
        )
        .await
        .unwrap()
        .record
        .id;
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..4)
        .map(|_| {
            let (service, stop, who) = (service.clone(), stop.clone(), who.clone());
            tokio::spawn(async move {
                let mut reads = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    service.get(&who, id).await.unwrap();
                    reads += 1;
                    // A read served from memory never waits: let the writer run.
                    tokio::task::yield_now().await;
                }
                reads
            })
        })
        .collect();

    for version in 1..=100 {
        let patch = aeterna_memory::MemoryPatch {
            metadata: Some(serde_json::json!({ "version": version })),
            ..Default::default()
        };
        service.update(&who, id, patch).await.unwrap();
        let read = service.get(&who, id).await.unwrap();
        assert_eq!(
            read.metadata["version"], version,
            "read after update {version}"
        );
    }
    stop.store(true, Ordering::Relaxed);
    let mut reads = 0;
    for reader in readers {
        reads += reader.await.unwrap();
    }
    assert!(reads > 100, "the readers ran alongside ({reads} reads)");
}

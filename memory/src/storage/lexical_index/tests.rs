use super::*;
use crate::model::Layer;

fn id(n: u128) -> Uuid {
    Uuid::from_u128(n)
}

fn add(index: &LexicalIndex, tenant: &str, n: u128, scope: &str, tags: &[&str], content: &str) {
    let scope = Scope::new(Layer::Project, scope);
    let tags: Vec<String> = tags.iter().map(|tag| tag.to_string()).collect();
    index.upsert(IndexedText {
        tenant_id: tenant,
        id: id(n),
        scope: &scope,
        kind: "memory",
        tags: &tags,
        content,
    });
}

fn query(words: &[&str]) -> Vec<String> {
    words.iter().map(|word| word.to_string()).collect()
}

fn ids(hits: &[LexicalHit]) -> Vec<u128> {
    hits.iter().map(|hit| hit.id.as_u128()).collect()
}

fn all() -> MemoryFilter {
    MemoryFilter::default()
}

#[test]
fn rare_terms_and_repeats_rank_first_and_relevance_is_normalised() {
    let index = LexicalIndex::new();
    add(&index, "a", 1, "p", &[], "the pool size of the database");
    add(&index, "a", 2, "p", &[], "database database database");
    add(&index, "a", 3, "p", &[], "the cache warms up slowly");
    add(&index, "a", 4, "p", &[], "database migrations and the pool");
    add(&index, "a", 5, "p", &[], "unrelated words only here");

    let hits = index.search("a", &query(&["pool", "database"]), &all(), 10, 5_000);
    let mut best = ids(&hits)[..2].to_vec();
    best.sort_unstable();
    assert_eq!(best, [1, 4], "both terms beat one term repeated");
    assert!(ids(&hits).contains(&2) && !ids(&hits).contains(&3));
    assert!(hits.windows(2).all(|w| w[0].relevance >= w[1].relevance));
    assert!(hits.iter().all(|hit| (0.0..=1.0).contains(&hit.relevance)));

    // An unknown term counts in the divisor: covering half the query scores less.
    let half = index.search("a", &query(&["pool", "zzz"]), &all(), 10, 5_000);
    let full = index.search("a", &query(&["pool"]), &all(), 10, 5_000);
    assert_eq!(ids(&half), ids(&full));
    assert!(half[0].relevance < full[0].relevance * 0.8);
    assert!(
        index
            .search("a", &query(&["zzz"]), &all(), 10, 5_000)
            .is_empty()
    );
}

#[test]
fn filters_and_tenants_are_applied_per_record() {
    let index = LexicalIndex::new();
    add(&index, "a", 1, "p1", &["rust"], "connection pool");
    add(&index, "a", 2, "p2", &["rust", "db"], "connection pool");
    add(&index, "b", 3, "p1", &["rust"], "connection pool");
    let terms = query(&["pool"]);
    assert_eq!(ids(&index.search("a", &terms, &all(), 10, 5_000)), [1, 2]);
    assert_eq!(ids(&index.search("b", &terms, &all(), 10, 5_000)), [3]);
    assert!(index.search("c", &terms, &all(), 10, 5_000).is_empty());

    let p2 = MemoryFilter {
        scopes: vec![Scope::new(Layer::Project, "p2")],
        ..Default::default()
    };
    assert_eq!(ids(&index.search("a", &terms, &p2, 10, 5_000)), [2]);
    let unknown_scope = MemoryFilter {
        scopes: vec![Scope::new(Layer::Session, "p2")],
        ..Default::default()
    };
    assert!(
        index
            .search("a", &terms, &unknown_scope, 10, 5_000)
            .is_empty()
    );
    let tagged = MemoryFilter {
        tags: vec!["rust".into(), "db".into()],
        ..Default::default()
    };
    assert_eq!(ids(&index.search("a", &terms, &tagged, 10, 5_000)), [2]);
    let other_kind = MemoryFilter {
        kinds: vec!["note".into()],
        ..Default::default()
    };
    assert!(index.search("a", &terms, &other_kind, 10, 5_000).is_empty());
}

#[test]
fn updates_replace_and_removals_forget_their_terms() {
    let index = LexicalIndex::new();
    add(&index, "a", 1, "p", &[], "alpha beta");
    add(&index, "a", 2, "p", &[], "beta gamma");
    add(&index, "a", 1, "p", &[], "delta");
    assert!(
        index
            .search("a", &query(&["alpha"]), &all(), 10, 5_000)
            .is_empty()
    );
    assert_eq!(
        ids(&index.search("a", &query(&["delta"]), &all(), 10, 5_000)),
        [1]
    );
    assert_eq!(index.len(), 2);

    index.remove("a", id(2));
    index.remove("a", id(2));
    assert!(
        index
            .search("a", &query(&["gamma"]), &all(), 10, 5_000)
            .is_empty()
    );
    let tenant = index.tenant("a").unwrap();
    let tenant = tenant.read();
    assert_eq!(tenant.vocabulary.len(), 1, "only `delta` is left");
    assert_eq!(tenant.total_length, 1);
    drop(tenant);

    // Freed slots and term ids are reused.
    add(&index, "a", 3, "p", &[], "epsilon");
    assert_eq!(
        ids(&index.search("a", &query(&["epsilon"]), &all(), 10, 5_000)),
        [3]
    );
    assert_eq!(index.tenant("a").unwrap().read().docs.len(), 2);
}

#[test]
fn terms_are_folded_and_the_budget_keeps_the_rarest() {
    let index = LexicalIndex::new();
    add(&index, "a", 1, "p", &[], "Café au lait");
    assert_eq!(
        ids(&index.search("a", &query(&["cafe"]), &all(), 10, 5_000)),
        [1]
    );
    assert_eq!(
        ids(&index.search("a", &query(&["café"]), &all(), 10, 5_000)),
        [1]
    );

    for n in 10..30 {
        add(&index, "a", n, "p", &[], "common word");
    }
    add(&index, "a", 40, "p", &[], "common rare");
    // `common` (21 records) is over the budget of 5: only `rare` is searched.
    let hits = index.search("a", &query(&["common", "rare"]), &all(), 10, 5);
    assert_eq!(ids(&hits), [40]);
    // With room for both, the record with both terms is first of 21.
    let hits = index.search("a", &query(&["common", "rare"]), &all(), 100, 5_000);
    assert_eq!(hits.len(), 21);
    assert_eq!(hits[0].id, id(40));
    // `limit` keeps the best.
    let hits = index.search("a", &query(&["common", "rare"]), &all(), 3, 5_000);
    assert_eq!(hits.len(), 3);
    assert_eq!(hits[0].id, id(40));
}

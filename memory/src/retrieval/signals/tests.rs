use super::*;
use crate::model::MemoryRecord;

fn record(content: &str, metadata: serde_json::Value) -> MemoryRecord {
    crate::retrieval::test_record(content, metadata, 0)
}

fn of(query: &str, content: &str, metadata: serde_json::Value) -> Signals {
    // 2026-12-02, for relative time phrases.
    let analysis = QueryAnalysis::new(query, 1_796_169_600_000, 32);
    let model = StaticModel::shared();
    let prepared = PreparedQuery::new(&analysis, &model);
    signals(&prepared, &record(content, metadata), FirstStage::default())
}

#[test]
fn coverage_matches_stems_and_weighs_rare_words_more() {
    let s = of(
        "When did Maya paint the sunrise?",
        "Maya: I painted a sunrise last week!",
        serde_json::json!({}),
    );
    assert_eq!(s.coverage, 1.0);
    let partial = of(
        "Maya sunrise",
        "I watched the sunrise",
        serde_json::json!({}),
    );
    let other = of("Maya sunrise", "Maya said hello", serde_json::json!({}));
    assert!(partial.coverage > 0.0 && partial.coverage < 1.0);
    // Both cover one of two words; the rarer one weighs more.
    assert!((partial.coverage - other.coverage).abs() > 0.0);
    assert_eq!(
        of("Maya sunrise", "nothing here", serde_json::json!({})).coverage,
        0.0
    );
}

#[test]
fn proximity_rewards_the_query_words_standing_together() {
    let together = of(
        "connection pool size",
        "the connection pool size is 20",
        serde_json::json!({}),
    );
    let apart = of(
        "connection pool size",
        "size matters; the pool of workers holds every connection",
        serde_json::json!({}),
    );
    assert_eq!(together.proximity, 1.0);
    assert!(apart.proximity < together.proximity);
    assert_eq!(of("pool", "pool", serde_json::json!({})).proximity, 0.0);
}

#[test]
fn names_and_speakers_are_recognised() {
    let q = "What instrument does Jon play?";
    let said = of(q, "Jon: I finally bought a cello.", serde_json::json!({}));
    let mentioned = of(q, "Maya: Jon bought a cello.", serde_json::json!({}));
    let by_metadata = of(
        q,
        "I finally bought a cello.",
        serde_json::json!({"speaker": "Jon"}),
    );
    let other = of(q, "Maya: I bought a violin.", serde_json::json!({}));
    assert_eq!((said.entity, said.speaker), (0.0, 1.0));
    assert_eq!((mentioned.entity, mentioned.speaker), (1.0, 0.0));
    assert_eq!((by_metadata.entity, by_metadata.speaker), (0.0, 1.0));
    assert_eq!((other.entity, other.speaker), (0.0, 0.0));
    // A name inside a word is not a mention.
    assert_eq!(of(q, "Jonas plays", serde_json::json!({})).entity, 0.0);
}

#[test]
fn time_compares_the_memory_date_with_the_query() {
    let q = "What did Maya bake in May 2023?";
    let may = of(
        q,
        "Maya: banana bread!",
        serde_json::json!({"date": "2023-05-20T10:00:00"}),
    );
    let july = of(
        q,
        "Maya: banana bread!",
        serde_json::json!({"date": "2023-07-20T10:00:00"}),
    );
    assert_eq!(may.time, 1.0);
    assert!(july.time < 0.1);
    assert_eq!(
        of(
            "What did Maya bake?",
            "x",
            serde_json::json!({"date": "2023-05-20"})
        )
        .time,
        0.0
    );
}

#[test]
fn interaction_finds_meaning_and_brevity_marks_bare_replies() {
    let q = "What breed is the dog?";
    let puppy = of(q, "We got a beagle puppy", serde_json::json!({}));
    let car = of(q, "We got a new car", serde_json::json!({}));
    assert!(puppy.interaction > car.interaction);
    assert_eq!(of(q, "Haha, yes!", serde_json::json!({})).brevity, 1.0);
    assert_eq!(
        of(
            q,
            "one two three four five six seven eight nine ten eleven",
            serde_json::json!({})
        )
        .brevity,
        0.0
    );
}

#[test]
fn every_signal_stays_in_range_on_hostile_text() {
    let long = "Ana: ".to_string() + &"naïve 東京 ### 2023-05-08 ".repeat(5000);
    let s = of(
        "Ana naïve 東京 in May 2023?",
        &long,
        serde_json::json!({"date": [1, 2, {"x": null}]}),
    );
    for (name, value) in Signals::NAMES.iter().zip(s.values()) {
        assert!((0.0..=1.0).contains(&value), "{name} = {value}");
    }
}

#[test]
fn only_capitalised_names_are_speaker_labels() {
    assert_eq!(speaker_label("Mary Ann: hi"), Some(("Mary Ann", 9)));
    assert_eq!(speaker_label("Database connection pool: 20"), None);
    assert_eq!(speaker_label("no label here"), None);
}

use super::*;
use crate::model::Layer;

fn scored(content: &str, created_at: i64, score: f32) -> Scored {
    Scored {
        record: crate::retrieval::test_record(content, serde_json::json!({}), created_at),
        signals: Signals::default(),
        score,
        lexical_rank: None,
        semantic_rank: None,
        duplicates: Vec::new(),
    }
}

#[test]
fn the_score_is_a_logistic_of_the_weighted_signals() {
    let weights = SignalWeights {
        bias: -1.0,
        semantic: 2.0,
        ..SignalWeights::default()
    };
    let none = Signals::default();
    let some = Signals {
        semantic: 0.5,
        ..Signals::default()
    };
    assert!((weights.logit(&some) - 0.0).abs() < 1e-6);
    assert!((weights.score(&some) - 0.5).abs() < 1e-6);
    assert!(weights.score(&none) < 0.5);
    let contributions = weights.contributions(&some);
    assert_eq!(contributions[0], ("semantic", 1.0));
    assert_eq!(contributions.len(), Signals::NAMES.len());
}

#[test]
fn copies_fold_onto_the_original_even_from_below_the_limit() {
    let model = StaticModel::shared();
    let original = scored("The staging database is Postgres 15 on db-stg-2.", 10, 0.5);
    let copies = [
        scored(
            "Note: the staging database is Postgres 15 on db-stg-2",
            20,
            0.9,
        ),
        scored(
            "I think the staging database is Postgres 15 on db-stg-2.",
            30,
            0.8,
        ),
    ];
    let other = scored("Ana prefers squash merges for feature branches.", 5, 0.7);
    let original_id = original.record.id;
    let copy_ids: Vec<Uuid> = copies.iter().map(|c| c.record.id).collect();
    let mut ranked: Vec<Scored> = copies.into_iter().collect();
    ranked.push(other);
    ranked.push(original);
    order(&mut ranked);
    let hits = collapse_duplicates(ranked, &model, 0.92, 2);
    assert_eq!(hits.len(), 2);
    assert_eq!(hits[0].record.id, original_id, "the original shows");
    assert_eq!(hits[0].score, 0.9, "with its best copy's score");
    let mut folded = hits[0].duplicates.clone();
    folded.sort();
    assert_eq!(folded, copy_ids);
    assert!(hits[1].duplicates.is_empty());
}

#[test]
fn texts_that_differ_in_a_detail_are_not_folded() {
    let model = StaticModel::shared();
    let ranked = vec![
        scored("The connection pool size is 50 in production.", 2, 0.9),
        scored("The connection pool size is 20 in production.", 1, 0.8),
        scored(
            "The connection pool size is 20 in production, says Ana.",
            3,
            0.7,
        ),
    ];
    let hits = collapse_duplicates(ranked, &model, 0.92, 10);
    assert_eq!(
        hits.len(),
        3,
        "{:?}",
        hits.iter().map(|h| &h.record.content).collect::<Vec<_>>()
    );
    assert!(hits.iter().all(|h| h.duplicates.is_empty()));
    // Folding off.
    let ranked = vec![scored("same text", 2, 0.9), scored("same text!", 1, 0.8)];
    assert_eq!(collapse_duplicates(ranked, &model, 1.01, 10).len(), 2);
}

#[test]
fn the_same_words_in_another_scope_or_without_text_are_not_folded() {
    let model = StaticModel::shared();
    let team = scored("Migrate billing to Postgres before the audit.", 1, 0.9);
    let mut user = scored("Migrate billing to Postgres before the audit.", 2, 0.8);
    user.record.layer = Layer::User;
    let mut other_project = scored("Migrate billing to Postgres before the audit.", 3, 0.7);
    other_project.record.scope_id = "q".into();
    let mut empty = [scored("", 4, 0.6), scored("", 5, 0.5)];
    empty[1].record.content = None;
    let ranked = [team, user, other_project]
        .into_iter()
        .chain(empty)
        .collect();
    let hits = collapse_duplicates(ranked, &model, 0.92, 10);
    assert_eq!(hits.len(), 5);
    assert!(hits.iter().all(|h| h.duplicates.is_empty()));
}

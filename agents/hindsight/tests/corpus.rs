//! Matching accuracy on the fixture corpus of real tool outputs.
//!
//! For each round k, variant k of every error class is captured and given a resolution; every
//! other variant is then queried through the service. A query is
//! * a **top-1 hit** when the best-scoring stored signature is its own class;
//! * a **match** when that hit also scores at or above the threshold (its resolution is
//!   returned);
//! * a **false match** when a signature of another class scores at or above the threshold.
//!
//! The numbers are printed (`cargo test -p aeterna-hindsight --test corpus -- --nocapture`).

mod support;

use std::collections::HashMap;

use aeterna_hindsight::{
    CaptureRequest, HindsightConfig, QueryRequest, QueryStatus, ResolveRequest,
};
use support::{corpus, harness, identity};

#[tokio::test]
async fn same_class_matches_and_other_classes_do_not() {
    let corpus = corpus();
    assert!(
        corpus.len() >= 50,
        "the corpus has {} classes",
        corpus.len()
    );
    let rounds = corpus.values().map(Vec::len).min().expect("classes");
    let config = HindsightConfig {
        max_matches: 100,
        ..HindsightConfig::default()
    };
    let threshold = config.match_threshold;

    let (mut queries, mut top1, mut matched, mut false_matches) = (0, 0, 0, 0);
    let mut misses: Vec<String> = Vec::new();
    for round in 0..rounds {
        let h = harness(config.clone()).await;
        let who = identity("acme", "shop", Some("core"));
        let mut class_of = HashMap::new();
        for (class, variants) in &corpus {
            let (_, text) = &variants[round];
            let captured = h
                .hindsight
                .capture(
                    &who,
                    CaptureRequest {
                        error_text: text.clone(),
                        layer: None,
                    },
                )
                .await
                .unwrap_or_else(|e| panic!("{class}: {e}"));
            assert_eq!(captured.signatures.len(), 1, "{class}: {captured:?}");
            let id = captured.signatures[0].signature_id;
            class_of.insert(id, class.clone());
            h.hindsight
                .resolve(
                    &who,
                    ResolveRequest {
                        signature_id: Some(id),
                        error_text: None,
                        description: format!("fix for {class}"),
                        changes: Default::default(),
                        layer: None,
                    },
                )
                .await
                .unwrap_or_else(|e| panic!("{class}: {e}"));
        }
        for (class, variants) in &corpus {
            for (index, (variant, text)) in variants.iter().enumerate() {
                if index == round {
                    continue;
                }
                queries += 1;
                let outcome = h
                    .hindsight
                    .query(
                        &who,
                        QueryRequest {
                            error_text: Some(text.clone()),
                            threshold: Some(0.0),
                            limit: Some(100),
                            ..QueryRequest::default()
                        },
                    )
                    .await
                    .unwrap_or_else(|e| panic!("{class}/{variant}: {e}"));
                let best = outcome
                    .matches
                    .first()
                    .expect("threshold 0 returns the best candidate");
                let best_class = &class_of[&best.signature_id];
                if best_class == class {
                    top1 += 1;
                    if best.score >= threshold {
                        matched += 1;
                        assert_eq!(best.resolutions[0].description, format!("fix for {class}"));
                    } else {
                        misses.push(format!(
                            "{class}/{variant}: {:.3} {:?}",
                            best.score, best.breakdown
                        ));
                    }
                } else {
                    misses.push(format!(
                        "{class}/{variant}: top-1 is {best_class} ({:.3})",
                        best.score
                    ));
                }
                if outcome
                    .matches
                    .iter()
                    .any(|m| &class_of[&m.signature_id] != class && m.score >= threshold)
                {
                    false_matches += 1;
                    let other = outcome
                        .matches
                        .iter()
                        .find(|m| &class_of[&m.signature_id] != class)
                        .expect("one");
                    misses.push(format!(
                        "{class}/{variant}: FALSE match {} ({:.3})",
                        class_of[&other.signature_id], other.score
                    ));
                }
            }
        }
    }
    let rate = |n: usize| n as f64 / queries as f64;
    println!(
        "hindsight corpus: {} classes, {queries} queries over {rounds} rounds: top-1 accuracy {:.3}, \
         match rate at {threshold} {:.3}, false-match rate {:.3}",
        corpus.len(),
        rate(top1),
        rate(matched),
        rate(false_matches)
    );
    for miss in &misses {
        println!("  {miss}");
    }
    assert!(rate(top1) >= 0.95, "top-1 accuracy {:.3}", rate(top1));
    assert!(rate(matched) >= 0.85, "match rate {:.3}", rate(matched));
    assert!(
        rate(false_matches) <= 0.01,
        "false-match rate {:.3}",
        rate(false_matches)
    );
}

#[tokio::test]
async fn an_unknown_error_class_has_no_known_resolution() {
    // Leave-one-class-out: with every class but one stored, no variant of the missing class
    // may be presented as a match.
    let corpus = corpus();
    let h = harness(HindsightConfig::default()).await;
    let who = identity("acme", "shop", None);
    let held_out = [
        "python/KeyError",
        "rust/E0502-borrow-conflict",
        "go/panic-nil-map",
        "java/missing-return",
    ];
    for (class, variants) in &corpus {
        if held_out.contains(&class.as_str()) {
            continue;
        }
        h.hindsight
            .capture(
                &who,
                CaptureRequest {
                    error_text: variants[0].1.clone(),
                    layer: None,
                },
            )
            .await
            .expect("capture");
    }
    for class in held_out {
        for (variant, text) in &corpus[class] {
            let outcome = h
                .hindsight
                .query(
                    &who,
                    QueryRequest {
                        error_text: Some(text.clone()),
                        ..QueryRequest::default()
                    },
                )
                .await
                .expect("query");
            assert_eq!(
                outcome.status,
                QueryStatus::NoKnownResolution,
                "{class}/{variant}: {:?}",
                outcome.matches
            );
            assert!(outcome.matches.is_empty());
            assert!(outcome.closest_score.is_some_and(|s| s < 0.8));
        }
    }
}

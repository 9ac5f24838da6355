//! The recall protocol shared by `tests/recall.rs` (the tuned corpus) and
//! `tests/recall_heldout.rs` (the held-out corpus): four folds with classes held out, raw /
//! message / description queries, and the metrics (top-1, MRR@5, matched, wrong, false-match)
//! re-decided at any threshold from what each query returned.
//!
//! Protocol: the classes are split into four folds. For each fold, the other three folds'
//! classes are stored — one example each (the first variant in the class's first wording),
//! resolved with the class's hand-written fix — and every variant not stored (raw and message)
//! and every description is queried. Held-out classes measure false matches: none of their
//! queries may be presented as `matched`. For stored classes:
//! * **top-1**: the best answer (first `matched`, else first `related`) is the class;
//! * **MRR@5**: the mean reciprocal rank of the class within the first five answers;
//! * **matched**: the class is the best answer *and* presented as `matched`;
//! * **wrong**: another class is presented as `matched`.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use aeterna_hindsight::{
    CaptureRequest, HindsightConfig, HindsightService, QueryOutcome, QueryRequest, ResolveRequest,
};
use aeterna_memory::MemoryConfig;
use aeterna_memory::embed::Embedder;
use uuid::Uuid;

use super::{Described, identity};

pub const FOLDS: usize = 4;
pub const FORMS: [&str; 3] = ["raw", "message", "description"];

/// A corpus to measure: its classes' outputs, their hand-written companions, and how the
/// message form of an output is made.
pub struct Corpus {
    /// `toolchain/class` → variant outputs (sorted by name).
    pub classes: BTreeMap<String, Vec<(String, String)>>,
    /// `toolchain/class` → description, fix and second wordings.
    pub described: BTreeMap<String, Described>,
    /// The message form of an output of a class: `(class, output) → message`.
    pub message: fn(&str, &str) -> String,
}

impl Corpus {
    pub fn class_names(&self) -> Vec<String> {
        self.classes.keys().cloned().collect()
    }
}

/// What one query returned, enough to evaluate any threshold afterwards.
#[derive(Debug, Clone)]
pub struct Observation {
    pub form: &'static str,
    pub class: String,
    pub query: String,
    pub held_out: bool,
    /// 1-based rank of the class among the answers (best first), if listed.
    pub rank: Option<usize>,
    /// The score of the class's best answer.
    pub correct_score: Option<f32>,
    /// The best score of an answer of another class.
    pub wrong_score: Option<f32>,
    /// What the service reported at its configured threshold.
    pub presented_correct: bool,
    pub presented_wrong: bool,
    pub understood: String,
}

impl Observation {
    /// The toolchain: the class's first path segment.
    pub fn toolchain(&self) -> &str {
        self.class.split('/').next().unwrap_or_default()
    }
}

/// Every query's observation, and the classes that could not be stored as the protocol
/// expects (capture refused the text, or found other than exactly one error in it).
pub struct Observed {
    pub observations: Vec<Observation>,
    /// `(class, what happened)`, once per fold in which the class was to be stored.
    pub capture_problems: Vec<(String, String)>,
}

/// The first variant of a class in its first wording: what gets stored.
pub fn stored_variant(variants: &[(String, String)], described: &Described) -> usize {
    variants
        .iter()
        .position(|(name, _)| !described.second_wording.contains(name))
        .expect("a first-wording variant")
}

async fn service(dir: &std::path::Path, embedder: Arc<dyn Embedder>) -> HindsightService {
    let memory = aeterna_testkit::profile::open_memory(dir, MemoryConfig::default(), embedder)
        .await
        .expect("memory service opens");
    let config = HindsightConfig {
        max_matches: 100,
        ..HindsightConfig::default()
    };
    HindsightService::new(Arc::new(memory), config).expect("hindsight starts")
}

/// Runs every fold and returns one observation per query.
///
/// A class whose stored example is refused by capture (no error recognised) stays out of the
/// store but is still queried as a stored class: its queries count as misses. When capture
/// finds several errors in the example, each is resolved with the class's fix and counts as
/// the class. Both are recorded in `capture_problems`.
pub async fn observe(corpus: &Corpus, embedder: Arc<dyn Embedder>) -> Observed {
    let described = &corpus.described;
    let classes: Vec<&String> = corpus.classes.keys().collect();
    for class in &classes {
        assert!(described.contains_key(*class), "{class} has no description");
    }
    assert_eq!(
        described.len(),
        classes.len(),
        "descriptions of unknown classes"
    );
    let who = identity("acme", "shop", Some("core"));
    let mut observations = Vec::new();
    let mut capture_problems = Vec::new();
    for fold in 0..FOLDS {
        let dir = tempfile::tempdir().expect("temp dir");
        let hindsight = service(dir.path(), embedder.clone()).await;
        let held_out = |i: usize| i % FOLDS == fold;
        let mut class_of: HashMap<Uuid, String> = HashMap::new();
        for (i, class) in classes.iter().enumerate() {
            if held_out(i) {
                continue;
            }
            let variants = &corpus.classes[*class];
            let (_, text) = &variants[stored_variant(variants, &described[*class])];
            let captured = match hindsight
                .capture(
                    &who,
                    CaptureRequest {
                        error_text: text.clone(),
                        layer: None,
                    },
                )
                .await
            {
                Ok(captured) => captured,
                Err(e) => {
                    capture_problems.push((class.to_string(), format!("capture: {e}")));
                    continue;
                }
            };
            if captured.signatures.len() != 1 {
                capture_problems.push((
                    class.to_string(),
                    format!("{} signatures: {captured:?}", captured.signatures.len()),
                ));
            }
            for signature in &captured.signatures {
                class_of.insert(signature.signature_id, class.to_string());
                hindsight
                    .resolve(
                        &who,
                        ResolveRequest {
                            signature_id: Some(signature.signature_id),
                            description: described[*class].fix.clone(),
                            ..ResolveRequest::default()
                        },
                    )
                    .await
                    .unwrap_or_else(|e| panic!("{class}: {e}"));
            }
        }
        for (i, class) in classes.iter().enumerate() {
            let variants = &corpus.classes[*class];
            let stored = stored_variant(variants, &described[*class]);
            let mut queries: Vec<(&'static str, String)> = Vec::new();
            for (v, (_, text)) in variants.iter().enumerate() {
                if v == stored && !held_out(i) {
                    continue;
                }
                queries.push(("raw", text.clone()));
                queries.push(("message", (corpus.message)(class, text)));
            }
            queries.push(("description", described[*class].description.clone()));
            for (form, text) in queries {
                let outcome = hindsight
                    .query(
                        &who,
                        QueryRequest {
                            error_text: Some(text.clone()),
                            limit: Some(100),
                            ..QueryRequest::default()
                        },
                    )
                    .await
                    .unwrap_or_else(|e| panic!("{class} ({form}): {e}\n{text}"));
                observations.push(observation(
                    form,
                    class,
                    text,
                    held_out(i),
                    &outcome,
                    &class_of,
                ));
            }
        }
    }
    Observed {
        observations,
        capture_problems,
    }
}

fn observation(
    form: &'static str,
    class: &str,
    query: String,
    held_out: bool,
    outcome: &QueryOutcome,
    class_of: &HashMap<Uuid, String>,
) -> Observation {
    let answers: Vec<_> = outcome.matched.iter().chain(&outcome.related).collect();
    let is_class = |id: &Uuid| class_of.get(id).map(String::as_str) == Some(class);
    let rank = answers
        .iter()
        .position(|m| is_class(&m.signature_id))
        .map(|p| p + 1);
    let correct_score = answers
        .iter()
        .filter(|m| is_class(&m.signature_id))
        .map(|m| m.score)
        .reduce(f32::max);
    let wrong_score = answers
        .iter()
        .filter(|m| !is_class(&m.signature_id))
        .map(|m| m.score)
        .reduce(f32::max);
    Observation {
        form,
        class: class.to_string(),
        query,
        held_out,
        rank,
        correct_score,
        wrong_score,
        presented_correct: outcome
            .matched
            .first()
            .is_some_and(|m| is_class(&m.signature_id)),
        presented_wrong: outcome.matched.iter().any(|m| !is_class(&m.signature_id)),
        understood: outcome.form.as_str().to_string(),
    }
}

/// The rates of one form at a threshold.
#[derive(Debug, Clone, Copy, Default)]
pub struct Rates {
    pub queries: usize,
    pub top1: f64,
    pub mrr5: f64,
    pub matched: f64,
    pub wrong: f64,
    pub held_out_queries: usize,
    pub false_match: f64,
}

/// Rates at `threshold`, from the observations (re-deciding `matched` by score).
pub fn rates(observations: &[&Observation], threshold: f32) -> Rates {
    let stored: Vec<_> = observations.iter().filter(|o| !o.held_out).collect();
    let held: Vec<_> = observations.iter().filter(|o| o.held_out).collect();
    let share = |n: usize, of: usize| if of == 0 { 0.0 } else { n as f64 / of as f64 };
    let top1 = stored.iter().filter(|o| o.rank == Some(1)).count();
    let mrr: f64 = stored
        .iter()
        .filter_map(|o| o.rank.filter(|r| *r <= 5))
        .map(|r| 1.0 / r as f64)
        .sum::<f64>()
        // An empty sum is -0.0.
        + 0.0;
    let matched = stored
        .iter()
        .filter(|o| o.rank == Some(1) && o.correct_score.is_some_and(|s| s >= threshold))
        .count();
    let wrong = stored
        .iter()
        .filter(|o| o.wrong_score.is_some_and(|s| s >= threshold))
        .count();
    let false_match = held
        .iter()
        .filter(|o| o.wrong_score.is_some_and(|s| s >= threshold))
        .count();
    Rates {
        queries: stored.len(),
        top1: share(top1, stored.len()),
        mrr5: if stored.is_empty() {
            0.0
        } else {
            mrr / stored.len() as f64
        },
        matched: share(matched, stored.len()),
        wrong: share(wrong, stored.len()),
        held_out_queries: held.len(),
        false_match: share(false_match, held.len()),
    }
}

/// The rates of each form at `threshold`.
pub fn rates_by_form(
    observations: &[Observation],
    threshold: f32,
) -> BTreeMap<&'static str, Rates> {
    FORMS
        .iter()
        .map(|form| {
            let of_form: Vec<_> = observations.iter().filter(|o| o.form == *form).collect();
            (*form, rates(&of_form, threshold))
        })
        .collect()
}

/// The calibration half: every other class in sorted order.
pub fn in_calibration_half(class: &str, classes: &[String]) -> bool {
    classes.iter().position(|c| c == class).expect("known") % 2 == 0
}

/// The lowest threshold (in steps of 0.01) at which at most `budget` of the held-out queries
/// (all forms pooled) are falsely matched and at most `budget` of the stored classes' queries
/// get another class as a match.
pub fn calibrate(observations: &[Observation], budget: f64) -> f32 {
    let all: Vec<&Observation> = observations.iter().collect();
    (40..=99)
        .map(|t| t as f32 / 100.0)
        .find(|t| {
            let r = rates(&all, *t);
            r.false_match <= budget && r.wrong <= budget
        })
        .unwrap_or(1.0)
}

/// Prints the table of each form's rates at `threshold` and returns them.
pub fn report(
    label: &str,
    observations: &[Observation],
    threshold: f32,
) -> BTreeMap<&'static str, Rates> {
    println!("\n{label} (threshold {threshold:.2}):");
    println!(
        "  {:<12} {:>7} {:>6} {:>6} {:>8} {:>6} {:>9} {:>11}",
        "form", "queries", "top-1", "MRR@5", "matched", "wrong", "held-out", "false-match"
    );
    let out = rates_by_form(observations, threshold);
    for form in FORMS {
        let r = &out[form];
        println!(
            "  {form:<12} {:>7} {:>6.3} {:>6.3} {:>8.3} {:>6.3} {:>9} {:>11.3}",
            r.queries, r.top1, r.mrr5, r.matched, r.wrong, r.held_out_queries, r.false_match
        );
    }
    out
}

/// Prints the false-match / wrong / matched rates of each form at thresholds 0.50–0.90.
pub fn print_curve(label: &str, observations: &[Observation]) {
    println!("  threshold curve on {label} (false-match / wrong / matched):");
    for t in [0.5f32, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9] {
        let cells: Vec<String> = FORMS
            .iter()
            .map(|form| {
                let of: Vec<_> = observations.iter().filter(|o| o.form == *form).collect();
                let r = rates(&of, t);
                format!(
                    "{form} {:.3}/{:.3}/{:.3}",
                    r.false_match, r.wrong, r.matched
                )
            })
            .collect();
        println!("    {t:.2}: {}", cells.join("  "));
    }
}

/// The service's own decision agrees with re-deciding by score at its threshold.
pub fn assert_consistent(observations: &[Observation]) {
    let configured = HindsightConfig::default().match_threshold;
    for o in observations {
        assert_eq!(
            o.presented_wrong,
            o.wrong_score.is_some_and(|s| s >= configured),
            "{o:?}"
        );
        assert_eq!(
            o.presented_correct,
            o.rank == Some(1) && o.correct_score.is_some_and(|s| s >= configured),
            "{o:?}"
        );
    }
}

/// Queries whose form the service read otherwise than they were made: a description not read
/// as one, raw output not read as tool output (a message may be read as either).
pub fn misunderstood(observations: &[Observation]) -> Vec<&Observation> {
    observations
        .iter()
        .filter(|o| {
            let expected = match o.form {
                "raw" => "tool_output",
                "message" => o.understood.as_str(),
                _ => "description",
            };
            o.understood != expected
        })
        .collect()
}

/// Prints up to `limit` of the misunderstood queries.
pub fn print_misunderstood(misread: &[&Observation], limit: usize) {
    println!("  forms misunderstood: {}", misread.len());
    for o in misread.iter().take(limit) {
        println!(
            "    {} {} as {}: {:?}",
            o.class, o.form, o.understood, o.query
        );
    }
}

/// Prints the misses at `threshold`: stored classes not first, wrong or false matches, and raw
/// outputs of stored classes not matched.
pub fn print_misses(observations: &[Observation], threshold: f32) {
    println!("  misses (stored classes not first, or wrong matches):");
    for o in observations.iter().filter(|o| {
        (!o.held_out && o.rank != Some(1))
            || o.wrong_score.is_some_and(|s| s >= threshold)
            || (o.form == "raw" && o.correct_score.is_some_and(|s| s < threshold))
    }) {
        let query: String = o.query.chars().take(90).collect();
        println!(
            "    [{}] {}{} rank {:?} correct {:?} wrong {:?}: {:?}",
            o.form,
            o.class,
            if o.held_out { " (held out)" } else { "" },
            o.rank,
            o.correct_score,
            o.wrong_score,
            query
        );
    }
}

/// What `evaluate` found: the rates on all classes at the configured threshold and the
/// queries whose form was misread.
pub struct Evaluation<'a> {
    pub all: BTreeMap<&'static str, Rates>,
    pub misunderstood: Vec<&'a Observation>,
}

/// Calibrates on one half of the classes, reports on the other half and on all, prints the
/// misreadings and the misses, and returns the rates on all classes at the configured
/// threshold.
pub fn evaluate<'a>(
    label: &str,
    observations: &'a [Observation],
    classes: &[String],
) -> Evaluation<'a> {
    let configured = HindsightConfig::default().match_threshold;
    let (calibration, evaluation): (Vec<Observation>, Vec<Observation>) = observations
        .iter()
        .cloned()
        .partition(|o| in_calibration_half(&o.class, classes));
    assert_consistent(observations);
    let calibrated = calibrate(&calibration, 0.05);
    println!(
        "\n{label}: threshold calibrated on half the classes (false and wrong matches ≤ 5%, \
         forms pooled): {calibrated:.2}; configured: {configured:.2}"
    );
    print_curve("the calibration half", &calibration);
    report(
        &format!("{label}, evaluation half"),
        &evaluation,
        configured,
    );
    let all = report(&format!("{label}, all classes"), observations, configured);
    let misread = misunderstood(observations);
    print_misunderstood(&misread, 10);
    print_misses(observations, configured);
    Evaluation {
        all,
        misunderstood: misread,
    }
}

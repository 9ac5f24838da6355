use std::collections::HashSet;

use proptest::prelude::*;

use super::*;

const HOUR: i64 = 3_600_000;
const NOW: i64 = 1_700_000_000_000;

fn tokenizer() -> Tokenizer {
    Tokenizer::get().expect("bpe")
}

fn params(budget: usize) -> FitParams {
    FitParams {
        budget,
        min_relevance: 0.3,
        high_relevance: 0.75,
        recency_weight: 0.15,
        recency_half_life_ms: 168.0 * HOUR as f64,
        dedup_containment: 0.8,
        summary_share: 0.25,
        knowledge_share: 0.0,
        now: NOW,
    }
}

fn candidate(id: &str, layer: Layer, score: f32, content: &str) -> Candidate {
    Candidate {
        id: id.into(),
        layer,
        scope_id: format!("{layer}-scope"),
        content: content.into(),
        content_hash: None,
        score,
        updated_at: NOW,
        tokens: tokenizer().count(&render::item(content)),
        knowledge: false,
    }
}

fn summary(layer: Layer, depth: Depth, content: &str) -> SummaryOption {
    SummaryOption {
        layer,
        scope_id: format!("{layer}-scope"),
        depth,
        content: content.into(),
        tokens: tokenizer().count(&render::summary(content)),
    }
}

fn run(candidates: Vec<Candidate>, summaries: &[SummaryOption], budget: usize) -> AssembledContext {
    fit(candidates, summaries, &[], &params(budget), tokenizer()).into_context(budget, tokenizer())
}

fn ids(context: &AssembledContext) -> Vec<&str> {
    context.sources.iter().map(|s| s.id.as_str()).collect()
}

/// Distinct filler text: `n` sentences about topic `topic`.
fn prose(topic: usize, n: usize) -> String {
    (0..n)
        .map(|i| format!("Topic {topic} fact {i} concerns module m{topic}x{i} and its tests."))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn everything_relevant_fits_when_the_budget_allows() {
    let context = run(
        vec![
            candidate(
                "a",
                Layer::Session,
                0.9,
                "Session fact about the failing build.",
            ),
            candidate("b", Layer::Project, 0.5, "Project uses sqlx with SQLite."),
            candidate(
                "c",
                Layer::Company,
                0.1,
                "Company boilerplate about holidays.",
            ),
        ],
        &[],
        4000,
    );
    assert_eq!(ids(&context), vec!["a", "b"]);
    assert_eq!(
        context.layers_included,
        vec![Layer::Session, Layer::Project]
    );
    assert!(!context.truncated);
    assert!(
        context
            .content
            .starts_with("## Session · session-scope\n\n- Session fact")
    );
    assert_eq!(context.total_tokens, tokenizer().count(&context.content));
}

#[test]
fn the_more_relevant_item_wins_when_only_one_fits() {
    let long_a = prose(1, 8);
    let long_b = prose(2, 8);
    let one = tokenizer().count(&render::item(&long_a));
    let budget = one + one / 2 + 20;
    let context = run(
        vec![
            candidate("low", Layer::Project, 0.5, &long_b),
            candidate("high", Layer::Team, 0.6, &long_a),
        ],
        &[],
        budget,
    );
    assert_eq!(ids(&context), vec!["high"]);
    assert!(context.truncated);
}

#[test]
fn recency_breaks_near_ties() {
    let mut old = candidate("old", Layer::Project, 0.6, &prose(1, 8));
    old.updated_at = NOW - 24 * 30 * HOUR;
    let new = candidate("new", Layer::Project, 0.58, &prose(2, 8));
    let budget = new.tokens + 40;
    let context = run(vec![old, new], &[], budget);
    assert_eq!(ids(&context), vec!["new"]);
}

#[test]
fn near_duplicates_across_layers_appear_once() {
    let text = "Always run cargo nextest for the integration suite; the plain runner times out.";
    let context = run(
        vec![
            candidate("project-copy", Layer::Project, 0.7, text),
            candidate("team-copy", Layer::Team, 0.6, &format!("{text}!")),
            candidate("other", Layer::Team, 0.5, "Team standup is at 9:30."),
        ],
        &[],
        4000,
    );
    assert_eq!(ids(&context), vec!["project-copy", "other"]);
    assert_eq!(context.content.matches("nextest").count(), 1);
}

#[test]
fn an_overflowing_layer_is_represented_by_its_deepest_fitting_summary() {
    let items: Vec<Candidate> = (0..40)
        .map(|i| candidate(&format!("p{i}"), Layer::Project, 0.5, &prose(i, 3)))
        .collect();
    let summaries = [
        summary(
            Layer::Project,
            Depth::Sentence,
            "Project overview in one sentence.",
        ),
        summary(
            Layer::Project,
            Depth::Paragraph,
            &format!("Paragraph overview. {}", prose(900, 4)),
        ),
        summary(
            Layer::Project,
            Depth::Detailed,
            &format!("Detailed overview. {}", prose(901, 40)),
        ),
    ];
    let context = run(items, &summaries, 800);
    let summary_sources: Vec<&Source> = context
        .sources
        .iter()
        .filter(|s| s.depth != SourceDepth::Full)
        .collect();
    assert_eq!(summary_sources.len(), 1, "{:?}", context.sources);
    assert_eq!(
        summary_sources[0].depth,
        SourceDepth::Paragraph,
        "the detailed one is too big"
    );
    assert_eq!(summary_sources[0].id, "summary:project:project-scope");
    assert!(context.content.contains("> Paragraph overview."));
    assert!(
        context
            .sources
            .iter()
            .filter(|s| s.depth == SourceDepth::Full)
            .count()
            > 3
    );
    assert!(context.truncated);
    assert!(context.total_tokens <= 800);
    assert!(
        context.total_tokens > 600,
        "the budget is used: {}",
        context.total_tokens
    );
}

#[test]
fn a_saturated_layer_gets_its_summary_even_when_its_fetched_items_fit() {
    let items = vec![candidate(
        "a",
        Layer::Project,
        0.5,
        "One of many project memories.",
    )];
    let summaries = [summary(
        Layer::Project,
        Depth::Paragraph,
        "All the other project memories.",
    )];
    let saturated = [(Layer::Project, "project-scope".to_owned())];
    let fitted = fit(items, &summaries, &saturated, &params(4000), tokenizer());
    let context = fitted.into_context(4000, tokenizer());
    assert_eq!(ids(&context), vec!["a", "summary:project:project-scope"]);
    assert!(
        context
            .content
            .contains("> All the other project memories.")
    );
}

#[test]
fn layers_whose_items_all_fit_get_no_summary() {
    let context = run(
        vec![candidate(
            "a",
            Layer::Project,
            0.5,
            "The only project memory.",
        )],
        &[summary(
            Layer::Project,
            Depth::Sentence,
            "A project summary.",
        )],
        4000,
    );
    assert_eq!(ids(&context), vec!["a"]);
}

#[test]
fn high_relevance_items_that_fill_the_budget_end_assembly_early() {
    let mut candidates: Vec<Candidate> = (0..30)
        .map(|i| candidate(&format!("h{i}"), Layer::Session, 0.9, &prose(i, 2)))
        .collect();
    candidates.push(candidate("low", Layer::Company, 0.4, "Short company note."));
    let summaries = [summary(Layer::Company, Depth::Sentence, "Company summary.")];
    let fitted = fit(candidates, &summaries, &[], &params(300), tokenizer());
    assert!(fitted.terminated_early);
    let context = fitted.into_context(300, tokenizer());
    assert!(
        context.sources.iter().all(|s| s.id.starts_with('h')),
        "{:?}",
        context.sources
    );
    assert!(context.truncated);
}

#[test]
fn without_high_relevance_items_no_early_termination() {
    let candidates: Vec<Candidate> = (0..30)
        .map(|i| candidate(&format!("m{i}"), Layer::Session, 0.6, &prose(i, 2)))
        .collect();
    let fitted = fit(candidates, &[], &[], &params(300), tokenizer());
    assert!(!fitted.terminated_early);
}

#[test]
fn nothing_relevant_gives_an_empty_context() {
    let context = run(
        vec![candidate("c", Layer::Company, 0.05, "Boilerplate.")],
        &[],
        100,
    );
    assert_eq!(context, AssembledContext::empty(100));
}

#[test]
fn an_item_larger_than_the_budget_is_left_out_not_cut() {
    let context = run(
        vec![candidate("big", Layer::Project, 0.9, &prose(1, 60))],
        &[],
        100,
    );
    assert!(context.sources.is_empty());
    assert!(context.truncated);
}

const LAYERS: [Layer; 5] = [
    Layer::Session,
    Layer::Project,
    Layer::Team,
    Layer::Org,
    Layer::Company,
];

fn corpus() -> impl Strategy<Value = (Vec<Candidate>, Vec<SummaryOption>)> {
    let item = (
        0usize..5,
        0.0f32..1.0,
        0usize..400,
        1usize..12,
        0i64..2000,
        any::<bool>(),
    );
    (
        prop::collection::vec(item, 0..60),
        prop::collection::vec((0usize..5, 1usize..40), 0..8),
    )
        .prop_map(|(items, summaries)| {
            let mut candidates = Vec::new();
            for (index, (layer, score, topic, sentences, age_hours, copy)) in
                items.into_iter().enumerate()
            {
                // Copies of an earlier candidate's text in another layer exercise dedup.
                let text = match candidates.last() {
                    Some(previous) if copy => Candidate::clone(previous).content,
                    _ => prose(topic, sentences),
                };
                let mut c = candidate(&format!("m{index}"), LAYERS[layer], score, &text);
                c.updated_at = NOW - age_hours * HOUR;
                candidates.push(c);
            }
            let summaries = summaries
                .into_iter()
                .map(|(layer, sentences)| {
                    let depth = Depth::ALL[sentences % 3];
                    summary(LAYERS[layer], depth, &prose(1000 + sentences, sentences))
                })
                .collect();
            (candidates, summaries)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn never_over_budget_and_no_source_twice(
        (candidates, summaries) in corpus(),
        budget in 100usize..=32_000,
    ) {
        let known: HashSet<String> = candidates.iter().map(|c| c.id.clone()).collect();
        let context = run(candidates, &summaries, budget);
        prop_assert!(context.total_tokens <= budget);
        prop_assert_eq!(context.total_tokens, tokenizer().count(&context.content));
        prop_assert_eq!(context.token_budget, budget);
        let mut seen = HashSet::new();
        for source in &context.sources {
            prop_assert!(seen.insert(source.id.clone()), "{} twice", source.id);
            prop_assert!(source.score >= 0.3);
            if source.depth == SourceDepth::Full {
                prop_assert!(known.contains(&source.id));
            }
        }
        let layers: HashSet<Layer> = context.sources.iter().map(|s| s.layer).collect();
        prop_assert_eq!(layers.len(), context.layers_included.len());
        for pair in context.sources.windows(2) {
            prop_assert!(pair[0].score >= pair[1].score);
        }
    }
}

#[test]
fn reviewed_knowledge_keeps_its_share_when_other_memories_would_fill_the_budget() {
    // Forty distinct session memories (no two share a word), each more relevant than the
    // policy.
    let filler = |i: usize| {
        (0..20)
            .map(|j| format!("s{i}w{j}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut candidates: Vec<Candidate> = (0..40)
        .map(|i| candidate(&format!("s{i}"), Layer::Session, 0.9, &filler(i)))
        .collect();
    // Larger than any session memory, so it never fits the room they leave over.
    let policy_text = format!(
        "Policy: deploys run only from the main branch after review. {}",
        (0..30)
            .map(|j| format!("k{j}p"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let mut policy = candidate("k", Layer::Team, 0.4, &policy_text);
    policy.knowledge = true;
    assert!(policy.tokens > candidates[0].tokens + 10);
    candidates.push(policy);
    let mut with_share = params(1000);
    with_share.knowledge_share = 0.2;
    let chosen = |params: &FitParams| -> Vec<String> {
        fit(candidates.clone(), &[], &[], params, tokenizer())
            .into_context(params.budget, tokenizer())
            .sources
            .into_iter()
            .map(|source| source.id)
            .collect()
    };
    assert!(chosen(&with_share).contains(&"k".to_string()));
    // Without a share the higher-scoring session memories take all the room.
    assert!(!chosen(&params(1000)).contains(&"k".to_string()));
}

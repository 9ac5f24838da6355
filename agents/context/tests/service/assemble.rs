//! `assemble`: relevance, budgets, dedup and input validation.

use std::collections::HashSet;

use aeterna_context::{AssembleRequest, ContextConfig, ContextError, SourceDepth, Tokenizer};
use aeterna_memory::{Identity, Layer};

use crate::{Lcg, add, alice, globex, open_temp};

fn request(query: &str, budget: usize) -> AssembleRequest {
    AssembleRequest {
        query: query.into(),
        token_budget: Some(budget),
        ..AssembleRequest::default()
    }
}

const BOILERPLATE: &[&str] = &[
    "Our company values are integrity, customer focus and teamwork.",
    "The holiday calendar is published by HR every December.",
    "All employees must complete the annual code of conduct training.",
    "Expense reports are due on the fifth business day of each month.",
    "The office kitchen is cleaned every Friday afternoon.",
    "Parking permits are issued by the facilities team on request.",
    "Company all-hands meetings take place on the first Monday of the quarter.",
    "Use the travel portal to book flights and hotels for business trips.",
];

#[tokio::test]
async fn relevant_session_and_project_memories_come_before_company_boilerplate() {
    let (_dir, architect) = open_temp(ContextConfig::default()).await;
    let who = alice();
    let session = add(
        &architect,
        &who,
        Layer::Session,
        &[
            "The payment retry test is flaky because the retry backoff uses the wall clock.",
            "Fixed the flaky payment retry test by injecting a fake clock into the backoff.",
        ],
    )
    .await;
    let project = add(
        &architect,
        &who,
        Layer::Project,
        &[
            "Payment retries use exponential backoff with jitter, capped at five attempts.",
            "The payments service retry logic lives in src/retry.rs and is covered by retry_test.",
        ],
    )
    .await;
    let company = add(&architect, &who, Layer::Company, BOILERPLATE).await;

    let context = architect
        .assemble(&who, request("why is the payment retry test flaky", 4000))
        .await
        .expect("assemble");

    let position = |id: &str| context.sources.iter().position(|s| s.id == id);
    for id in session.iter().chain(&project) {
        assert!(
            position(id).is_some(),
            "relevant memory {id} missing: {:#?}",
            context.sources
        );
    }
    let last_relevant = session
        .iter()
        .chain(&project)
        .filter_map(|id| position(id))
        .max()
        .unwrap();
    for id in &company {
        if let Some(at) = position(id) {
            assert!(
                at > last_relevant,
                "boilerplate {id} ranked above relevant memories"
            );
        }
    }
    let layer_rank = |layer| context.layers_included.iter().position(|l| *l == layer);
    assert!(layer_rank(Layer::Session).is_some() && layer_rank(Layer::Project).is_some());
    if let Some(company_rank) = layer_rank(Layer::Company) {
        assert!(company_rank > layer_rank(Layer::Session).unwrap());
        assert!(company_rank > layer_rank(Layer::Project).unwrap());
    }
    assert!(context.content.contains("fake clock"));
    let session_at = context.content.find("## Session").expect("session section");
    assert!(
        context
            .content
            .find("## Company")
            .is_none_or(|at| at > session_at)
    );
}

#[tokio::test]
async fn budgets_are_never_exceeded_and_sources_never_repeat() {
    let tokenizer = Tokenizer::get().expect("bpe");
    const WORDS: &[&str] = &[
        "cargo",
        "build",
        "retry",
        "payment",
        "cache",
        "token",
        "budget",
        "layer",
        "sqlite",
        "index",
        "vector",
        "summary",
        "session",
        "deploy",
        "migration",
        "flaky",
        "test",
        "clock",
        "tenant",
        "schema",
        "query",
        "latency",
        "memory",
        "context",
        "agent",
        "review",
    ];
    for seed in [1u64, 2, 3] {
        let (_dir, architect) = open_temp(ContextConfig::default()).await;
        let who = alice();
        let mut rng = Lcg(seed);
        for layer in [
            Layer::Session,
            Layer::Project,
            Layer::Team,
            Layer::Org,
            Layer::Company,
        ] {
            let texts: Vec<String> = (0..40)
                .map(|_| {
                    let sentences = 1 + rng.below(12);
                    (0..sentences)
                        .map(|_| {
                            let words: Vec<&str> = (0..4 + rng.below(14))
                                .map(|_| WORDS[rng.below(WORDS.len() as u64) as usize])
                                .collect();
                            format!("{}.", words.join(" "))
                        })
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect();
            // Copies across layers exercise the dedup.
            let mut texts: Vec<&str> = texts.iter().map(String::as_str).collect();
            texts.push("Deploys run the sqlite migration before the cache warms up.");
            add(&architect, &who, layer, &texts).await;
        }
        architect.refresh(&who, None).await.expect("summaries");
        for round in 0..25 {
            let budget = match round {
                0 => 100,
                1 => 32_000,
                _ => 100 + rng.below(8000) as usize,
            };
            let query = format!(
                "{} {} {}",
                WORDS[round % 26],
                WORDS[(round * 7) % 26],
                WORDS[(round * 11) % 26]
            );
            let request = AssembleRequest {
                query,
                token_budget: Some(budget),
                min_relevance: Some([0.0, 0.1, 0.3][round % 3]),
                ..AssembleRequest::default()
            };
            let context = architect.assemble(&who, request).await.expect("assemble");
            assert!(
                context.total_tokens <= budget,
                "seed {seed} budget {budget}: {}",
                context.total_tokens
            );
            assert_eq!(context.total_tokens, tokenizer.count(&context.content));
            let mut seen = HashSet::new();
            for source in &context.sources {
                assert!(
                    seen.insert(&source.id),
                    "seed {seed} budget {budget}: {} twice",
                    source.id
                );
            }
            assert!(
                context
                    .content
                    .matches("Deploys run the sqlite migration")
                    .count()
                    <= 1
            );
        }
    }
}

#[tokio::test]
async fn a_tight_budget_uses_summaries_for_layers_that_overflow() {
    // Only perfect matches count as high relevance here, so the budget is not simply filled by
    // the first items (early termination) and the fitter has to choose a summary depth.
    let config = ContextConfig {
        high_relevance: 1.0,
        ..ContextConfig::default()
    };
    let (_dir, architect) = open_temp(config).await;
    let who = alice();
    let texts: Vec<String> = (0..60)
        .map(|i| format!("Payment retry incident {i}: the retry worker {i} timed out talking to the ledger service after a deploy."))
        .collect();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    add(&architect, &who, Layer::Project, &texts).await;
    architect
        .refresh(&who, Some(&[Layer::Project]))
        .await
        .expect("refresh");
    let context = architect
        .assemble(
            &who,
            request(
                "why did the payment worker time out during the nightly batch",
                600,
            ),
        )
        .await
        .expect("assemble");
    assert!(context.truncated);
    assert!(context.total_tokens <= 600);
    let summary = context
        .sources
        .iter()
        .find(|s| s.depth != SourceDepth::Full);
    assert!(
        summary.is_some(),
        "expected a project summary: {:#?}",
        context.sources
    );
    assert!(context.sources.iter().any(|s| s.depth == SourceDepth::Full));
}

#[tokio::test]
async fn nothing_relevant_gives_an_empty_context() {
    let (_dir, architect) = open_temp(ContextConfig::default()).await;
    let who = alice();
    add(&architect, &who, Layer::Company, BOILERPLATE).await;
    let context = architect
        .assemble(
            &who,
            request("kubernetes ingress certificate rotation", 4000),
        )
        .await
        .expect("assemble");
    assert!(context.sources.is_empty(), "{:#?}", context.sources);
    assert_eq!(context.total_tokens, 0);
}

#[tokio::test]
async fn tenants_never_see_each_other() {
    let (_dir, architect) = open_temp(ContextConfig::default()).await;
    let who = alice();
    add(
        &architect,
        &who,
        Layer::Project,
        &["The payment retry secret sauce is a fake clock."],
    )
    .await;
    let other = globex();
    let context = architect
        .assemble(&other, request("payment retry fake clock", 4000))
        .await
        .expect("assemble");
    assert!(context.sources.is_empty());
    let summary = architect
        .summary(&other, Layer::Project, aeterna_context::Depth::Detailed)
        .await
        .unwrap();
    assert!(summary.content.is_empty() && summary.source_count == 0);
}

#[tokio::test]
async fn bad_input_is_refused_with_the_argument_named() {
    let (_dir, architect) = open_temp(ContextConfig::default()).await;
    let who = alice();
    let cases = [
        (request("q", 99), "token_budget"),
        (request("q", 32_001), "token_budget"),
        (request("   ", 4000), "query"),
        (
            AssembleRequest {
                min_relevance: Some(1.5),
                ..request("q", 4000)
            },
            "min_relevance",
        ),
        (
            AssembleRequest {
                min_relevance: Some(f32::NAN),
                ..request("q", 4000)
            },
            "min_relevance",
        ),
        (
            AssembleRequest {
                layers: Some(vec![]),
                ..request("q", 4000)
            },
            "layers",
        ),
        (request(&"x".repeat(100_000), 4000), "query"),
    ];
    for (request, field) in cases {
        let error = architect.assemble(&who, request).await.unwrap_err();
        assert!(matches!(error, ContextError::InvalidInput(_)), "{error:?}");
        assert!(error.to_string().contains(field), "{error}");
    }
    let no_session = Identity {
        session_id: None,
        ..alice()
    };
    let error = architect
        .assemble(
            &no_session,
            AssembleRequest {
                layers: Some(vec![Layer::Session]),
                ..request("q", 4000)
            },
        )
        .await
        .unwrap_err();
    assert!(error.to_string().contains("session_id"), "{error}");
    let no_tenant = Identity {
        tenant_id: String::new(),
        ..alice()
    };
    assert!(
        architect
            .assemble(&no_tenant, request("q", 4000))
            .await
            .is_err()
    );
}

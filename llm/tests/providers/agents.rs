//! The agents with the provider layer wired in, over a real `MemoryService` on SQLite: an
//! LLM-written summary and note are stored within their budgets and found by
//! `context_assemble`; with every provider down every agent still answers correctly.

use std::sync::Arc;

use aeterna_context::{AssembleRequest, ContextArchitect, ContextConfig, Depth, SourceDepth};
use aeterna_llm::{Api, ErrorKind, LlmConfig, LlmRoles, Role};
use aeterna_memory::embed::HashingEmbedder;
use aeterna_memory::{Identity, Layer, MemoryConfig, MemoryService, NewMemory};
use aeterna_notes::{DistillerChain, NotesConfig, NotesService, TrajectoryEvent};
use serde_json::{Value, json};

use crate::resilience::analyze_input;
use crate::standin::{Reply, Seen, StandIn};
use crate::{config, provider};

/// The memory service, the provider layer and both agents over one data dir.
struct Stack {
    _dir: tempfile::TempDir,
    memory: Arc<MemoryService>,
    llm: Arc<LlmRoles>,
    context: Arc<ContextArchitect>,
    notes: Arc<NotesService>,
}

impl Stack {
    async fn open(llm: LlmConfig) -> Stack {
        let dir = tempfile::tempdir().unwrap();
        let memory = Arc::new(
            aeterna_testkit::profile::open_memory(
                dir.path(),
                MemoryConfig::default(),
                Arc::new(HashingEmbedder::default()),
            )
            .await
            .unwrap(),
        );
        let llm = LlmRoles::start(llm, Some(memory.database().clone())).unwrap();
        let context = ContextArchitect::start_with(
            memory.clone(),
            ContextConfig {
                // As in the Context Architect's own tests: only perfect matches end assembly
                // early, so a tight budget makes the fitter use the layer's summary.
                high_relevance: 1.0,
                ..ContextConfig::default()
            },
            llm.summarizer(),
        )
        .unwrap();
        let mut notes_config = NotesConfig::default();
        notes_config.distill.threshold = 0;
        let notes = NotesService::start_with(
            notes_config,
            memory.clone(),
            DistillerChain::new(llm.distillers().unwrap()),
        )
        .unwrap();
        Stack {
            _dir: dir,
            memory,
            llm,
            context,
            notes,
        }
    }

    async fn close(self) {
        self.notes.shutdown().await;
        self.llm.shutdown().await;
        self.memory.flush().await.unwrap();
    }
}

fn alice() -> Identity {
    Identity {
        tenant_id: "acme".into(),
        agent_id: None,
        user_id: Some("alice".into()),
        session_id: Some("s-1".into()),
        project_id: Some("payments".into()),
        team_id: None,
        org_id: None,
        grants: Default::default(),
    }
}

/// 60 project memories about one incident, so a tight budget needs the layer summary.
async fn add_incident_memories(stack: &Stack, who: &Identity) {
    for i in 0..60 {
        let content = format!(
            "Payment retry incident {i}: the retry worker {i} timed out talking to the ledger \
             service after a deploy."
        );
        stack
            .memory
            .add(
                who,
                NewMemory {
                    layer: Layer::Project,
                    content,
                    tags: vec![],
                    metadata: Value::Null,
                    kind: None,
                },
            )
            .await
            .unwrap();
    }
}

/// search → read → edit → test fails → fix → test passes.
fn trajectory() -> Vec<TrajectoryEvent> {
    let events = json!([
        {"tool_name": "grep", "description": "Find the ledger client", "input": {"pattern": "LedgerClient"},
         "output": "src/ledger.rs:8: pub struct LedgerClient", "success": true},
        {"tool_name": "edit_file", "description": "Raise the ledger timeout to 30 s",
         "input": {"path": "src/ledger.rs"}, "output": "edited", "success": true},
        {"tool_name": "bash", "description": "Run the ledger tests", "input": {"command": "cargo test ledger"},
         "output": "test ledger::tests::retries_on_timeout ... FAILED\nthread panicked at src/ledger.rs:40: timed out after 5s\ntest result: FAILED. 3 passed; 1 failed",
         "success": false},
        {"tool_name": "edit_file", "description": "Read the timeout from the config instead of the constant",
         "input": {"path": "src/ledger.rs"}, "output": "edited", "success": true},
        {"tool_name": "bash", "description": "Run the ledger tests again", "input": {"command": "cargo test ledger"},
         "output": "test result: ok. 4 passed; 0 failed", "success": true}
    ]);
    serde_json::from_value(events).unwrap()
}

fn capture(stack: &Stack, who: &Identity) {
    let events = trajectory()
        .into_iter()
        .map(|event| (who.clone(), event))
        .collect();
    let receipt = stack.notes.capture(events).unwrap();
    assert_eq!(receipt.accepted, 5);
}

const SUMMARY: &str = "Ledger timeouts after deploys make the payment retry worker fail.";
const NOTE_TITLE: &str = "Ledger client timeout read from config fixes retries_on_timeout";

/// Answers like a capable model: summaries, notes and analyses by what the prompt asks.
fn model(seen: &Seen) -> Reply {
    let prompt = seen.prompt();
    if prompt.contains("summarise the shared memory") {
        // Fenced, with a remark after it, as small models do.
        return Reply::text(format!(
            "```json\n{}\n```\nI kept it short.",
            json!({
                "sentence": SUMMARY,
                "paragraph": format!("{SUMMARY} Sixty incidents were recorded; each retry worker \
                    timed out talking to the ledger service right after a deploy."),
                "detailed": format!("{SUMMARY}\n- 60 incidents, one per retry worker.\n- The \
                    ledger service is slow to answer after a deploy.")
            })
        ));
    }
    if prompt.contains("engineering notes") {
        return Reply::json(json!({
            "worth_a_note": true,
            "title": NOTE_TITLE,
            "description": "cargo test ledger failed with a 5 s timeout; reading the timeout from the config fixed it.",
            "keywords": ["ledger", "timeout", "retries_on_timeout", "src/ledger.rs"],
            "problem": ["`cargo test ledger` failed: retries_on_timeout timed out after 5s"],
            "solution": ["Read the timeout from the config in src/ledger.rs", "`cargo test ledger` passed"],
            "tags": ["Rust", "ledger"]
        }));
    }
    Reply::status(500)
}

#[tokio::test]
async fn llm_summaries_and_notes_are_stored_within_budget_and_assembled() {
    let stand_in = StandIn::start(Reply::status(500)).await;
    stand_in.respond_with(model);
    let stack = Stack::open(config(vec![(
        "local",
        provider(Api::OpenAi, &stand_in.base_url()),
    )]))
    .await;
    let who = alice();
    add_incident_memories(&stack, &who).await;

    // The summary: written by the model, within each depth's budget, recorded as such.
    let refreshed = stack
        .context
        .refresh(&who, Some(&[Layer::Project]))
        .await
        .unwrap();
    assert_eq!(refreshed[0].generator, "llm:local/test-model summarize-v1");
    assert_eq!(refreshed[0].fallback, None);
    let budgets = &stack.context.config().summaries;
    for depth in Depth::ALL {
        let summary = stack
            .context
            .summary(&who, Layer::Project, depth)
            .await
            .unwrap();
        assert!(
            summary.content.starts_with(SUMMARY),
            "{depth}: {}",
            summary.content
        );
        assert!(
            summary.token_count <= budgets.budget(depth),
            "{depth} over budget"
        );
    }
    // (Background refreshes may have summarised fewer memories while they were added.)
    let prompt = stand_in.seen().last().unwrap().prompt();
    assert!(prompt.contains("the 60 memories"), "{prompt}");
    let newest = prompt.find("retry worker 59").expect("the newest memory");
    let oldest = prompt.find("retry worker 0 ").expect("the oldest memory");
    assert!(newest < oldest, "newest first");

    // The note: written by the model over the deterministic scaffold.
    capture(&stack, &who);
    let outcome = stack.notes.distill(&who).await.unwrap();
    assert_eq!(outcome.notes.len(), 1, "{outcome:?}");
    let summary = &outcome.notes[0];
    assert_eq!(summary.title, NOTE_TITLE);
    assert_eq!(summary.distiller, "llm:local/test-model distill-v1");
    assert_eq!(summary.tags, ["rust", "ledger"]);
    assert_eq!(summary.keywords[0], "ledger");
    let note = stack.notes.get(&who, summary.id).await.unwrap();
    assert!(
        note.markdown
            .starts_with(&format!("---\nid: {}\ntitle: \"{NOTE_TITLE}\"", summary.id)),
        "{}",
        note.markdown
    );
    assert!(note.markdown.contains("## Related notes"));
    let tokenizer = aeterna_context::Tokenizer::get().unwrap();
    let sections = note.sections.clone().expect("sections");
    assert_eq!(sections.solution.len(), 2);
    assert!(
        tokenizer.count(&note.markdown) <= stack.llm.config().limits.max_note_tokens + 200,
        "the note stays near its budget"
    );
    let distill_prompt = stand_in
        .seen()
        .iter()
        .find(|seen| seen.prompt().contains("engineering notes"))
        .unwrap()
        .prompt();
    assert!(
        distill_prompt.contains("timed out after 5s"),
        "the trajectory is in the prompt"
    );
    assert!(
        distill_prompt.contains("## Problem"),
        "the deterministic analysis is the scaffold"
    );

    // Both are found by context_assemble.
    let context = stack
        .context
        .assemble(
            &who,
            AssembleRequest {
                query: "why did the payment worker time out during the nightly batch".into(),
                token_budget: Some(600),
                layers: None,
                min_relevance: None,
            },
        )
        .await
        .unwrap();
    assert!(context.total_tokens <= 600);
    assert!(
        context.sources.iter().any(|s| s.depth != SourceDepth::Full),
        "{:#?}",
        context.sources
    );
    assert!(context.content.contains(SUMMARY), "{}", context.content);
    let context = stack
        .context
        .assemble(
            &who,
            AssembleRequest {
                query: "ledger client timeout retries_on_timeout test failure".into(),
                token_budget: Some(2_000),
                layers: Some(vec![Layer::Project]),
                min_relevance: None,
            },
        )
        .await
        .unwrap();
    assert!(
        context
            .sources
            .iter()
            .any(|s| s.id == summary.id.to_string()),
        "{:#?}",
        context.sources
    );
    assert!(context.content.contains(NOTE_TITLE));
    stack.close().await;
}

#[tokio::test]
async fn an_over_budget_or_declining_model_is_handled() {
    let stand_in = StandIn::start(Reply::status(500)).await;
    let stack = Stack::open(config(vec![(
        "local",
        provider(Api::OpenAi, &stand_in.base_url()),
    )]))
    .await;
    let who = alice();

    // A rambling note over max_note_tokens: the deterministic note is stored, and says why.
    let ramble: Vec<String> = (0..12)
        .map(|n| format!("step {n} {}", "blah ".repeat(55)))
        .collect();
    stand_in.set_default(Reply::json(json!({
        "title": "Long", "problem": ramble.clone(), "solution": ramble, "patterns": ["p"]
    })));
    capture(&stack, &who);
    let outcome = stack.notes.distill(&who).await.unwrap();
    let note = stack.notes.get(&who, outcome.notes[0].id).await.unwrap();
    assert_eq!(note.summary.distiller, "deterministic-v1");
    assert!(
        note.markdown
            .contains("over its budget of 1000 (llm.limits.max_note_tokens)"),
        "{}",
        note.markdown
    );

    // A model may decline: the events are marked, no note is written, and the call says why.
    stand_in.set_default(Reply::json(
        json!({"worth_a_note": false, "reason": "Only a routine test run."}),
    ));
    capture(&stack, &who);
    let outcome = stack.notes.distill(&who).await.unwrap();
    assert!(outcome.notes.is_empty());
    assert_eq!(outcome.declined.len(), 1);
    assert_eq!(outcome.declined[0].events, 5);
    assert_eq!(outcome.declined[0].reason, "Only a routine test run.");
    assert_eq!(
        outcome.declined[0].distiller,
        "llm:local/test-model distill-v1"
    );
    let again = stack.notes.distill(&who).await.unwrap();
    assert!(
        again.notes.is_empty() && again.declined.is_empty(),
        "nothing left pending"
    );
    assert_eq!(again.session_notes.len(), 1, "declined events have no note");
    assert_eq!(stack.notes.snapshot().distill.events_declined, 5);
    stack.close().await;
}

#[tokio::test]
async fn every_agent_answers_correctly_with_every_provider_down() {
    let failing = StandIn::start(Reply::status(503)).await;
    let mut unreachable = provider(Api::Anthropic, "http://127.0.0.1:9/v1");
    unreachable.connect_timeout_ms = 200;
    let mut config = config(vec![
        ("openai", provider(Api::OpenAi, &failing.base_url())),
        ("claude", unreachable),
    ]);
    config.retry = crate::fast_retry(1);
    let stack = Stack::open(config).await;
    let who = alice();
    add_incident_memories(&stack, &who).await;

    // Context Architect: the extractive summaries, with the reasons recorded.
    let refreshed = stack
        .context
        .refresh(&who, Some(&[Layer::Project]))
        .await
        .unwrap();
    assert_eq!(refreshed[0].generator, "extractive-v1");
    let reason = refreshed[0].fallback.as_deref().unwrap_or_default();
    assert!(
        reason.contains("openai (upstream)") && reason.contains("claude (connection)"),
        "{reason}"
    );
    let summary = stack
        .context
        .summary(&who, Layer::Project, Depth::Paragraph)
        .await
        .unwrap();
    assert!(
        summary.content.contains("retry worker"),
        "{}",
        summary.content
    );
    let context = stack
        .context
        .assemble(
            &who,
            AssembleRequest {
                query: "payment retry worker ledger timeout".into(),
                token_budget: Some(1_000),
                layers: None,
                min_relevance: None,
            },
        )
        .await
        .unwrap();
    assert!(!context.sources.is_empty() && context.total_tokens <= 1_000);

    // Note-Taking: the deterministic note, naming the providers that did not serve.
    capture(&stack, &who);
    let outcome = stack.notes.distill(&who).await.unwrap();
    let note = stack.notes.get(&who, outcome.notes[0].id).await.unwrap();
    assert_eq!(note.summary.distiller, "deterministic-v1");
    assert_eq!(
        note.summary.title,
        "Fix for failing test `ledger::tests::retries_on_timeout` in `src/ledger.rs`"
    );
    assert!(
        note.markdown.contains("openai (upstream)"),
        "{}",
        note.markdown
    );

    // The analyze role: no provider served, and why; the Meta-Agent decides by its rules.
    let exhausted = stack
        .llm
        .analyze("acme", &analyze_input())
        .await
        .unwrap_err();
    let kinds: Vec<ErrorKind> = exhausted.skipped.iter().map(|s| s.kind).collect();
    assert_eq!(kinds, [ErrorKind::Upstream, ErrorKind::Connection]);
    assert_eq!(exhausted.role, Role::Analyze);
    stack.close().await;
}

#[tokio::test]
async fn a_later_provider_serves_and_the_skipped_ones_are_recorded() {
    let refusing = StandIn::start(Reply::status(401)).await;
    let working = StandIn::start(Reply::status(500)).await;
    working.respond_with(model);
    let stack = Stack::open(config(vec![
        ("first", provider(Api::OpenAi, &refusing.base_url())),
        ("second", provider(Api::Anthropic, &working.base_url())),
    ]))
    .await;
    let who = alice();
    add_incident_memories(&stack, &who).await;
    let refreshed = stack
        .context
        .refresh(&who, Some(&[Layer::Project]))
        .await
        .unwrap();
    assert_eq!(refreshed[0].generator, "llm:second/test-model summarize-v1");
    let skipped = refreshed[0].fallback.as_deref().unwrap_or_default();
    assert!(skipped.starts_with("first (auth): "), "{skipped}");

    capture(&stack, &who);
    let outcome = stack.notes.distill(&who).await.unwrap();
    let note = stack.notes.get(&who, outcome.notes[0].id).await.unwrap();
    assert_eq!(note.summary.distiller, "llm:second/test-model distill-v1");
    assert!(
        note.markdown
            .contains("distilled by llm:second/test-model distill-v1 (before it: first (auth): "),
        "{}",
        note.markdown
    );
    stack.close().await;
}

//! Notes reach agents through the Context Architect: `context_assemble` returns a distilled
//! note for a related query.

use aeterna_context::{AssembleRequest, ContextArchitect, ContextConfig};

use crate::{Agent, alice, for_whom, manual, realistic_trajectory};

#[tokio::test]
async fn context_assemble_returns_the_note_for_a_related_query() {
    let dir = tempfile::tempdir().unwrap();
    let agent = Agent::open(dir.path(), manual()).await;
    let who = alice();
    agent
        .notes
        .capture(for_whom(&who, realistic_trajectory()))
        .unwrap();
    let note = agent.notes.distill(&who).await.unwrap().notes[0].id;

    let architect =
        ContextArchitect::start(agent.memory.clone(), ContextConfig::default()).unwrap();
    let context = architect
        .assemble(
            &who,
            AssembleRequest {
                query: "the parser panics with index out of bounds on empty input".into(),
                token_budget: Some(2000),
                layers: None,
                min_relevance: None,
            },
        )
        .await
        .unwrap();
    assert!(
        context
            .sources
            .iter()
            .any(|source| source.id == note.to_string()),
        "sources: {:?}",
        context.sources
    );
    assert!(
        context.content.contains("parses_empty_input"),
        "{}",
        context.content
    );
    agent.close().await;
}

//! What the agents learn that deserves a reviewed file: the outlet between the agents that
//! learn (Hindsight's promotions, the Note-Taking agent's distilled notes) and whatever keeps
//! reviewed knowledge (the knowledge repositories, `aeterna-knowledge`).
//!
//! The agents only announce; the sink decides by its own rules whether and where the lesson
//! goes, and never fails the agent's call: what is learned is already safe in memory, the
//! reviewed copy is a second home.

use crate::Scope;

/// What kind of thing was learned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LearnedKind {
    /// A fix that proved itself and was promoted (automatically or by an approver) into a
    /// broader layer.
    Lesson,
    /// A note distilled from a session's tool calls.
    Note,
}

/// Where a learned thing came from: `resolution`, `signature`, `promotion`, `note`, `memory`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LearnedSource {
    pub kind: &'static str,
    pub id: String,
}

/// One learned thing, as text a reviewer reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Learned {
    pub kind: LearnedKind,
    pub tenant_id: String,
    /// The scope it now belongs to (a promotion's target, a note's project).
    pub scope: Scope,
    /// Stable across announcements of the same thing (a lineage, a note id), so announcing
    /// twice proposes one item.
    pub key: String,
    pub title: String,
    /// One or two sentences from which a reader decides whether it applies.
    pub description: Option<String>,
    /// Markdown.
    pub body: String,
    pub tags: Vec<String>,
    pub sources: Vec<LearnedSource>,
    /// Why it deserves review: the commit message's body.
    pub why: String,
    /// Who caused it (an approver, the agent's caller).
    pub by: String,
    /// How complete and specific it is, 0..1, when its maker says (notes do).
    pub quality: Option<f32>,
}

/// Receives what the agents learn. Implementations must not block the caller for long and
/// must not fail it: they report their own problems.
#[async_trait::async_trait]
pub trait LearnedSink: Send + Sync {
    async fn learned(&self, learned: Learned);
}

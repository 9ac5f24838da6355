//! [`Role`]: what a model is asked to do. Each role has its own provider chain and budget.

use std::fmt;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Layer summaries of the Context Architect (three depths).
    Summarize,
    /// Notes of the Note-Taking agent, from a session's trajectory.
    Distill,
    /// The Meta-Agent's IMPROVE step: retry, refine or escalate.
    Analyze,
    /// Embedding vectors for memories.
    Embed,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::Summarize, Role::Distill, Role::Analyze, Role::Embed];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Summarize => "summarize",
            Role::Distill => "distill",
            Role::Analyze => "analyze",
            Role::Embed => "embed",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

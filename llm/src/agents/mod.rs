//! The agents' hooks implemented over role chains: the Context Architect's
//! [`Summarizer`](aeterna_context::Summarizer) and the Note-Taking agent's
//! [`Distiller`](aeterna_notes::Distiller).

mod distill;
mod summarize;

pub use distill::LlmDistiller;
pub use summarize::LlmSummarizer;

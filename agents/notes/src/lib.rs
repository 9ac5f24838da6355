//! Aeterna's Note-Taking agent: captures tool-call trajectories and distils them into notes.
//!
//! [`NotesService`] is the entry point the MCP tools use.
//!
//! * Capture stays out of the agent's way: [`CapturedEvent::build`] validates and truncates an
//!   event, the [`CapturePolicy`] applies the tenant's or project's [`CaptureMode`], and
//!   [`CaptureQueue::try_enqueue`] hands it to a writer task without waiting. The writer
//!   redacts secrets (`aeterna-redact`) and stores events in batches in the shared SQLite
//!   database ([`store::TrajectoryStore`]), retries while the store fails, and drains the
//!   queue on shutdown.
//! * Distillation turns a session's uncovered events into a Markdown note ([`distill`]) with
//!   front matter and links to related earlier notes, automatically at a threshold or on
//!   demand, and stores it through [`aeterna_memory::MemoryService::add_with_id`] as a
//!   project-layer memory of kind `note`, so search and context assembly find it. Covered
//!   events are marked, so re-distilling never duplicates a note; a distiller may decline
//!   events that hold nothing worth a note.

mod auto;
pub mod capture;
pub mod config;
pub mod distill;
mod distillery;
pub mod error;
pub mod event;
mod metrics;
pub mod note;
pub mod queue;
mod redaction;
mod service;
mod spill;
pub mod store;
mod writer;

pub use capture::{CaptureMode, CapturePolicy, Sampler, Verdict};
pub use config::{CaptureConfig, DistillConfig, EventLimits, NotesConfig, QueueConfig};
pub use distill::{
    Declined, DeterministicDistiller, DistillInput, Distillation, DistilledNote, Distiller,
    DistillerChain, RelatedNote,
};
pub use distillery::{DeclinedEvents, DistillSnapshot, note_id, note_layer};
pub use error::{NotesError, Result};
pub use event::{CapturedEvent, SessionKey, TrajectoryEvent};
pub use note::{Note, NoteSummary, Sections};
pub use queue::{CaptureQueue, CaptureSnapshot, DrainReport, RedactFn, Refusal, TrajectorySink};
pub use redaction::{redact_event, redactor};
pub use service::{
    CaptureReceipt, CaptureResult, CaptureStatus, DistillOutcome, NoteListRequest, NotePage,
    NotesService, NotesSnapshot, SessionNote,
};

//! Aeterna's Note-Taking agent: captures tool-call trajectories and distils them into notes.
//!
//! The capture path is built to stay out of the agent's way: [`CapturedEvent::build`] validates
//! and truncates an event, the [`CapturePolicy`] applies the tenant's or project's capture mode,
//! and [`CaptureQueue::try_enqueue`] hands the event to a writer task without waiting. The
//! writer redacts secrets and stores events in batches, retrying while the store fails, and
//! drains the queue on shutdown.

pub mod capture;
pub mod config;
pub mod distill;
pub mod error;
pub mod event;
pub mod queue;
mod writer;

pub use capture::{CaptureMode, CapturePolicy, Sampler, Verdict};
pub use config::{CaptureConfig, DistillConfig, EventLimits, NotesConfig, QueueConfig};
pub use distill::{DeterministicDistiller, DistillInput, DistilledNote, Distiller, DistillerChain};
pub use error::{NotesError, Result};
pub use event::{CapturedEvent, SessionKey, TrajectoryEvent};
pub use queue::{CaptureQueue, CaptureSnapshot, DrainReport, RedactFn, Refusal, TrajectorySink};

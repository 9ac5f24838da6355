//! Runs one callback of one extension in a fresh Store, under its limits, and classifies how it
//! ended.
//!
//! Every callback gets a new `Store` (a trap poisons a Store, so none is ever reused), its fuel
//! and epoch deadline are set before instantiation, and the instance comes from the extension's
//! `InstancePre`, linked once at load time. State writes are committed only after an `ok` result.
//!
//! What a guest hands the host in one go (a hook's result, the arguments of one import call) is
//! bounded before the host copies it: the Store's hostcall fuel is `max_run_output_bytes`, so a
//! larger value fails the copy instead of allocating. A result is then checked against what is
//! left of the run's output budget. Values that break the canonical ABI (a string that is not
//! UTF-8, a pointer outside memory) are the guest's fault (`invalid-output`), not the host's.

use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::{PoolConcurrencyLimitError, Store, Trap, UpdateDeadline, WasmBacktrace};

use crate::bindings::{Extension, ExtensionPre, wit_types};
use crate::config::Limits;
use crate::imports::{GuestEnv, HostFailure, StoreData};
use crate::report::{Fault, FaultKind};
use crate::sandbox::{Dropped, MemoryLimiter, OutputCap, OutputSink};
use crate::state::overlay::StateOverlay;
use crate::types::CallContext;

/// Extra time granted past the deadline before the host abandons a callback stuck in a host
/// call (the epoch deadline only interrupts running wasm).
const HOST_CALL_GRACE: Duration = Duration::from_millis(500);

/// Longest fault message kept (wasm backtraces can be long), and longest `ext-error` code.
const MAX_FAULT_MESSAGE: usize = 4096;
const MAX_ERROR_CODE: usize = 128;

/// Which export to call, with its arguments (borrowed: the chain keeps its value for fail-open).
pub(crate) enum Call<'a> {
    Register,
    InputMessages(&'a [wit_types::Message]),
    PlainText(&'a str),
    Tag {
        tag: &'a str,
        attributes: &'a [wit_types::Attribute],
        content: &'a str,
    },
    LlmOutput(&'a str),
}

impl Call<'_> {
    /// Bytes of input the guest receives: what its fuel grows with.
    fn input_bytes(&self) -> usize {
        match self {
            Call::Register => 0,
            Call::InputMessages(messages) => messages
                .iter()
                .map(|m| m.role.len() + m.content.len())
                .sum(),
            Call::PlainText(text) | Call::LlmOutput(text) => text.len(),
            Call::Tag {
                tag,
                attributes,
                content,
            } => {
                tag.len()
                    + content.len()
                    + attributes
                        .iter()
                        .map(|a| a.name.len() + a.value.len())
                        .sum::<usize>()
            }
        }
    }
}

/// What an export returned.
pub(crate) enum Returned {
    Registration(wit_types::Registration),
    Messages(Vec<wit_types::Message>),
    Text(String),
}

/// Everything one callback needs besides the call itself.
pub(crate) struct CallbackSpec<'a> {
    pub(crate) pre: &'a ExtensionPre<StoreData>,
    pub(crate) extension: &'a Arc<str>,
    pub(crate) limits: Limits,
    pub(crate) config: Arc<[(String, String)]>,
    pub(crate) call: Option<Arc<CallContext>>,
    pub(crate) state: Option<StateOverlay>,
    pub(crate) output_cap: OutputCap,
    /// The most bytes one copy out of the guest may take (`max_run_output_bytes`).
    pub(crate) max_copy_bytes: usize,
    /// The most bytes the result may take (what is left of the run's output budget).
    pub(crate) max_output_bytes: usize,
}

/// How one callback went.
pub(crate) struct CallbackResult {
    pub(crate) result: Result<Returned, Fault>,
    /// Instantiation, the call, reading the result and committing state; not the freeing of the
    /// Store and of discarded state, which happens after.
    pub(crate) duration: Duration,
    pub(crate) fuel_used: u64,
    pub(crate) output_dropped: Dropped,
}

/// The epoch deadline callback's error: the callback ran past its wall-clock limit.
#[derive(Debug, thiserror::Error)]
#[error("the callback ran past its {0:?} deadline")]
struct DeadlineExceeded(Duration);

/// Where a wasmtime error came from: before the guest's code could run, or during the call.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Instantiate,
    Call,
}

pub(crate) async fn run(spec: CallbackSpec<'_>, call: Call<'_>) -> CallbackResult {
    let started = Instant::now();
    let limits = spec.limits;
    let fuel = limits.fuel_for_input(call.input_bytes());
    let (pre, max_output_bytes) = (spec.pre, spec.max_output_bytes);
    let output = Arc::new(OutputSink::new(spec.extension.clone(), spec.output_cap));
    let guest = GuestEnv {
        config: spec.config,
        call: spec.call,
        state: spec.state,
        output: output.clone(),
    };
    let mut store = Store::new(
        spec.pre.engine(),
        StoreData::new(MemoryLimiter::new(limits.memory_bytes()), guest),
    );
    store.limiter(|data| &mut data.limiter);
    store.set_hostcall_fuel(spec.max_copy_bytes);

    let outcome = match arm(&mut store, fuel, limits.timeout(), started) {
        Ok(()) => {
            let guarded = tokio::time::timeout(
                limits.timeout() + HOST_CALL_GRACE,
                instantiate_and_call(pre, &mut store, call, max_output_bytes),
            );
            match guarded.await {
                Ok(Ok(Ok(returned))) => Ok(returned),
                Ok(Ok(Err(fault))) => Err(fault),
                Ok(Err((phase, error))) => Err(classify(
                    &error,
                    phase,
                    store.data().limiter.refused,
                    &output,
                )),
                Err(_elapsed) => Err(Fault {
                    kind: FaultKind::Timeout,
                    code: None,
                    message: format!(
                        "the callback was still waiting on a host call {:?} after its deadline",
                        HOST_CALL_GRACE
                    ),
                }),
            }
        }
        Err(error) => Err(Fault {
            kind: FaultKind::Host,
            code: None,
            message: format!("cannot prepare the store: {error:#}"),
        }),
    };
    let fuel_used = fuel.saturating_sub(store.get_fuel().unwrap_or(fuel));
    output.finish();

    // Commit state only for a successful callback; on a fault the overlay is dropped unread.
    let overlay = store.data_mut().guest.state.take();
    let (result, discarded) = match (outcome, overlay) {
        (Ok(returned), Some(overlay)) => match overlay.commit().await {
            Ok(()) => (Ok(returned), None),
            Err(error) => (
                Err(Fault {
                    kind: FaultKind::Host,
                    code: None,
                    message: format!(
                        "the callback succeeded but its state could not be committed: {error}"
                    ),
                }),
                None,
            ),
        },
        (outcome, overlay) => (outcome, overlay),
    };
    let duration = started.elapsed();
    // Freeing the Store (its instance goes back to the pool) and discarded writes is the host's
    // housekeeping, not the callback's time.
    drop(store);
    drop(discarded);
    CallbackResult {
        result,
        duration,
        fuel_used,
        output_dropped: output.dropped(),
    }
}

/// Sets fuel and the epoch deadline. Must happen before instantiation: start functions and
/// initialisers run wasm too.
fn arm(
    store: &mut Store<StoreData>,
    fuel: u64,
    timeout: Duration,
    started: Instant,
) -> wasmtime::Result<()> {
    store.set_fuel(fuel)?;
    let deadline = started + timeout;
    store.set_epoch_deadline(1);
    // Each epoch tick checks the clock: past the deadline the guest traps; before it, the guest
    // yields to the async executor so a long callback never starves other tasks on the thread.
    store.epoch_deadline_callback(move |_| {
        if Instant::now() >= deadline {
            Err(wasmtime::Error::new(DeadlineExceeded(timeout)))
        } else {
            Ok(UpdateDeadline::Yield(1))
        }
    });
    Ok(())
}

/// Instantiates and calls; an `ext-error` (or a result over `max_output_bytes`) is the inner
/// `Err`, a wasmtime error the outer one (tagged with the phase it happened in).
async fn instantiate_and_call(
    pre: &ExtensionPre<StoreData>,
    store: &mut Store<StoreData>,
    call: Call<'_>,
    max_output_bytes: usize,
) -> Result<Result<Returned, Fault>, (Phase, wasmtime::Error)> {
    let instance: Extension = pre
        .instantiate_async(&mut *store)
        .await
        .map_err(|error| (Phase::Instantiate, error))?;
    let returned = match call {
        Call::Register => instance
            .call_register(&mut *store)
            .await
            .map(|registration| Ok(Returned::Registration(registration))),
        Call::InputMessages(messages) => instance
            .call_on_input_messages(&mut *store, messages)
            .await
            .map(|result| result.map(Returned::Messages)),
        Call::PlainText(text) => instance
            .call_on_plain_text(&mut *store, text)
            .await
            .map(|result| result.map(Returned::Text)),
        Call::Tag {
            tag,
            attributes,
            content,
        } => instance
            .call_on_tag(&mut *store, tag, attributes, content)
            .await
            .map(|result| result.map(Returned::Text)),
        Call::LlmOutput(text) => instance
            .call_on_llm_output(&mut *store, text)
            .await
            .map(|result| result.map(Returned::Text)),
    };
    match returned {
        Ok(Ok(returned)) => Ok(check_size(returned, max_output_bytes)),
        Ok(Err(error)) => Ok(Err(ext_error(error))),
        Err(error) => Err((Phase::Call, error)),
    }
}

/// Refuses a result over what is left of the run's output budget. (The copy itself was bounded
/// by the hostcall fuel.)
fn check_size(returned: Returned, max: usize) -> Result<Returned, Fault> {
    let size = match &returned {
        Returned::Registration(_) => 0,
        Returned::Text(text) => text.len(),
        // Each message counts its text and the host's own bookkeeping for it, so a list of
        // millions of empty messages is bounded too.
        Returned::Messages(messages) => messages
            .iter()
            .map(|m| size_of::<wit_types::Message>() + m.role.len() + m.content.len())
            .sum(),
    };
    if size > max {
        return Err(Fault {
            kind: FaultKind::OutputLimit,
            code: None,
            message: format!(
                "the callback returned {size} bytes of output, but only {max} bytes are left of \
                 the run's output bound (`max_run_output_bytes`)"
            ),
        });
    }
    Ok(returned)
}

/// An `ext-error` as a fault, its code and message cut to a sane length.
fn ext_error(error: wit_types::ExtError) -> Fault {
    Fault {
        kind: FaultKind::ExtError,
        code: Some(truncate(&error.code, MAX_ERROR_CODE)),
        message: truncate(&error.message, MAX_FAULT_MESSAGE),
    }
}

/// Whether `error` is wasmtime refusing to copy more than the hostcall fuel out of the guest.
fn is_copy_bound(error: &wasmtime::Error) -> bool {
    // The error type is private to wasmtime; its name is what identifies it.
    format!("{:?}", error.root_cause()) == "HostcallFuelExhausted"
}

/// Turns a wasmtime error into a fault with a distinct kind. Guest faults carry the guest's last
/// stderr output, where a panic message or an uncaught exception usually is.
fn classify(
    error: &wasmtime::Error,
    phase: Phase,
    memory_refused: bool,
    output: &OutputSink,
) -> Fault {
    let kind = if error.downcast_ref::<DeadlineExceeded>().is_some() {
        FaultKind::Timeout
    } else if error.downcast_ref::<HostFailure>().is_some()
        || error.downcast_ref::<PoolConcurrencyLimitError>().is_some()
    {
        FaultKind::Host
    } else if error.downcast_ref::<wasmtime_wasi::I32Exit>().is_some() {
        FaultKind::Exit
    } else if phase == Phase::Call
        && error.downcast_ref::<WasmBacktrace>().is_none()
        && is_copy_bound(error)
    {
        // Without wasm frames the guest had returned: its result was over the copy bound.
        FaultKind::OutputLimit
    } else {
        match error.downcast_ref::<Trap>() {
            Some(Trap::OutOfFuel) => FaultKind::FuelExhausted,
            Some(Trap::StackOverflow) => FaultKind::StackOverflow,
            Some(Trap::Interrupt) => FaultKind::Timeout,
            _ if memory_refused => FaultKind::MemoryLimit,
            Some(_) => FaultKind::Trap,
            // Not a trap, before the guest ran: the host could not instantiate it (for example
            // no free pool slot).
            None if phase == Phase::Instantiate => FaultKind::Host,
            // Not a trap, during the call: the canonical ABI refused what the guest handed over
            // (a pointer out of bounds, a bad realloc, too much data) or a WASI import refused
            // its request; host failures are tagged above.
            None => FaultKind::InvalidOutput,
        }
    };
    let headline = match error.downcast_ref::<wasmtime_wasi::I32Exit>() {
        Some(exit) => format!("the guest called exit with status {}", exit.0),
        None if kind == FaultKind::OutputLimit => format!(
            "the callback's result is over the run's output bound (`max_run_output_bytes`): {}",
            error.root_cause()
        ),
        None => error.root_cause().to_string(),
    };
    let guest_fault = !matches!(kind, FaultKind::Host | FaultKind::Timeout);
    let mut message = headline;
    if guest_fault && let Some(stderr) = output.stderr_tail() {
        message.push_str("; the guest's last stderr output: ");
        message.push_str(&stderr);
    }
    let full = format!("{error:#}");
    if !full.is_empty() && full != message {
        message.push('\n');
        message.push_str(&full);
    }
    Fault {
        kind,
        code: None,
        message: truncate(&message, MAX_FAULT_MESSAGE),
    }
}

/// `text` cut to at most `max` bytes on a char boundary, with `…` when cut.
fn truncate(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}…", &text[..cut])
}

//! Runs one callback of one extension in a fresh Store, under its limits, and classifies how it
//! ended.
//!
//! Every callback gets a new `Store` (a trap poisons a Store, so none is ever reused), its fuel
//! and epoch deadline are set before instantiation, and the instance comes from the extension's
//! `InstancePre`, linked once at load time. State writes are committed only after an `ok` result.

use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::{Store, Trap, UpdateDeadline};

use crate::bindings::{Extension, ExtensionPre, wit_types};
use crate::config::Limits;
use crate::imports::{GuestEnv, HostFailure, StoreData};
use crate::report::{Fault, FaultKind};
use crate::sandbox::{MemoryLimiter, OutputSink};
use crate::state::overlay::StateOverlay;
use crate::types::CallContext;

/// Extra time granted past the deadline before the host abandons a callback stuck in a host
/// call (the epoch deadline only interrupts running wasm).
const HOST_CALL_GRACE: Duration = Duration::from_millis(500);

/// Longest fault message kept (wasm backtraces can be long).
const MAX_FAULT_MESSAGE: usize = 2048;

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
    pub(crate) output_cap_bytes: usize,
}

/// How one callback went.
pub(crate) struct CallbackResult {
    pub(crate) result: Result<Returned, Fault>,
    pub(crate) duration: Duration,
    pub(crate) fuel_used: u64,
    pub(crate) output_dropped_bytes: u64,
}

/// The epoch deadline callback's error: the callback ran past its wall-clock limit.
#[derive(Debug, thiserror::Error)]
#[error("the callback ran past its {0:?} deadline")]
struct DeadlineExceeded(Duration);

pub(crate) async fn run(spec: CallbackSpec<'_>, call: Call<'_>) -> CallbackResult {
    let started = Instant::now();
    let limits = spec.limits;
    let output = Arc::new(OutputSink::new(
        spec.extension.clone(),
        spec.output_cap_bytes,
    ));
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

    let outcome = match arm(&mut store, limits, started) {
        Ok(()) => {
            let guarded = tokio::time::timeout(
                limits.timeout() + HOST_CALL_GRACE,
                instantiate_and_call(spec.pre, &mut store, call),
            );
            match guarded.await {
                Ok(Ok(Ok(returned))) => Ok(returned),
                Ok(Ok(Err(ext_error))) => Err(Fault {
                    kind: FaultKind::ExtError,
                    code: Some(ext_error.code),
                    message: ext_error.message,
                }),
                Ok(Err(error)) => Err(classify(&error, store.data().limiter.refused)),
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
    let fuel_used = limits
        .fuel
        .saturating_sub(store.get_fuel().unwrap_or(limits.fuel));
    output.finish();

    // Commit state only for a successful callback; on a fault the overlay is dropped unread.
    let overlay = store.data_mut().guest.state.take();
    drop(store);
    let result = match (outcome, overlay) {
        (Ok(returned), Some(overlay)) => match overlay.commit().await {
            Ok(()) => Ok(returned),
            Err(error) => Err(Fault {
                kind: FaultKind::Host,
                code: None,
                message: format!(
                    "the callback succeeded but its state could not be committed: {error}"
                ),
            }),
        },
        (outcome, _) => outcome,
    };
    CallbackResult {
        result,
        duration: started.elapsed(),
        fuel_used,
        output_dropped_bytes: output.dropped(),
    }
}

/// Sets fuel and the epoch deadline. Must happen before instantiation: start functions and
/// initialisers run wasm too.
fn arm(store: &mut Store<StoreData>, limits: Limits, started: Instant) -> wasmtime::Result<()> {
    store.set_fuel(limits.fuel)?;
    let timeout = limits.timeout();
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

async fn instantiate_and_call(
    pre: &ExtensionPre<StoreData>,
    store: &mut Store<StoreData>,
    call: Call<'_>,
) -> wasmtime::Result<Result<Returned, wit_types::ExtError>> {
    let instance: Extension = pre.instantiate_async(&mut *store).await?;
    Ok(match call {
        Call::Register => Ok(Returned::Registration(
            instance.call_register(&mut *store).await?,
        )),
        Call::InputMessages(messages) => instance
            .call_on_input_messages(&mut *store, messages)
            .await?
            .map(Returned::Messages),
        Call::PlainText(text) => instance
            .call_on_plain_text(&mut *store, text)
            .await?
            .map(Returned::Text),
        Call::Tag {
            tag,
            attributes,
            content,
        } => instance
            .call_on_tag(&mut *store, tag, attributes, content)
            .await?
            .map(Returned::Text),
        Call::LlmOutput(text) => instance
            .call_on_llm_output(&mut *store, text)
            .await?
            .map(Returned::Text),
    })
}

/// Turns a wasmtime error into a fault with a distinct kind.
fn classify(error: &wasmtime::Error, memory_refused: bool) -> Fault {
    let message = truncate(format!("{error:#}"));
    let kind = if error.downcast_ref::<DeadlineExceeded>().is_some() {
        FaultKind::Timeout
    } else if error.downcast_ref::<HostFailure>().is_some() {
        FaultKind::Host
    } else {
        match error.downcast_ref::<Trap>() {
            Some(Trap::OutOfFuel) => FaultKind::FuelExhausted,
            Some(Trap::StackOverflow) => FaultKind::StackOverflow,
            Some(Trap::Interrupt) => FaultKind::Timeout,
            _ if memory_refused => FaultKind::MemoryLimit,
            Some(_) => FaultKind::Trap,
            // Not a trap: instantiation itself failed (for example no free pool slot).
            None => FaultKind::Host,
        }
    };
    Fault {
        kind,
        code: None,
        message,
    }
}

fn truncate(mut message: String) -> String {
    if message.len() > MAX_FAULT_MESSAGE {
        let mut cut = MAX_FAULT_MESSAGE;
        while !message.is_char_boundary(cut) {
            cut -= 1;
        }
        message.truncate(cut);
        message.push('…');
    }
    message
}

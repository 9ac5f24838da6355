//! Runs hooks through chains of extensions.
//!
//! Extensions handling a hook run in registry order (priority DESC, id ASC), each output feeding
//! the next. A fault is recorded for the extension; fail-open continues with the previous value,
//! fail-closed stops the chain with [`HostError::ChainStopped`]. Quarantined extensions are skipped
//! and reported as such.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tracing::Instrument;

use crate::bindings::wit_types;
use crate::callback::{self, Call, CallbackSpec, Returned};
use crate::error::{ChainStopped, HostError};
use crate::host::HostInner;
use crate::manifest::FailurePolicy;
use crate::registry::{LoadedExtension, Registry};
use crate::report::{Fault, FaultKind, Outcome, ReportRow, RunReport};
use crate::state::StateScope;
use crate::state::overlay::StateOverlay;
use crate::tags::{find_blocks, replace_blocks};
use crate::types::{CallContext, Hook, Message};

/// One run over one registry snapshot.
pub(crate) struct Executor<'h> {
    host: &'h HostInner,
    registry: Arc<Registry>,
    call: Arc<CallContext>,
    pub(crate) report: RunReport,
}

impl<'h> Executor<'h> {
    pub(crate) fn new(host: &'h HostInner, registry: Arc<Registry>, call: &CallContext) -> Self {
        Self {
            host,
            registry,
            call: Arc::new(call.clone()),
            report: RunReport::default(),
        }
    }

    pub(crate) async fn input_messages(
        &mut self,
        messages: Vec<Message>,
    ) -> Result<Vec<Message>, HostError> {
        let mut value: Vec<wit_types::Message> = messages
            .into_iter()
            .map(|m| wit_types::Message {
                role: m.role,
                content: m.content,
            })
            .collect();
        let registry = self.registry.clone();
        for ext in registry.handling(Hook::InputMessages) {
            if let Some(Returned::Messages(messages)) = self
                .step(ext, Hook::InputMessages, None, Call::InputMessages(&value))
                .await?
            {
                value = messages;
            }
        }
        Ok(value
            .into_iter()
            .map(|m| Message {
                role: m.role,
                content: m.content,
            })
            .collect())
    }

    /// The plain-text or llm-output chain.
    pub(crate) async fn text(
        &mut self,
        hook: Hook,
        mut value: String,
    ) -> Result<String, HostError> {
        let registry = self.registry.clone();
        for ext in registry.handling(hook) {
            let call = match hook {
                Hook::LlmOutput => Call::LlmOutput(&value),
                _ => Call::PlainText(&value),
            };
            if let Some(Returned::Text(text)) = self.step(ext, hook, None, call).await? {
                value = text;
            }
        }
        Ok(value)
    }

    /// Replaces every registered tag block with what its handlers return. Handlers of one tag
    /// name form a chain: each receives the previous handler's output as `content`. A block whose
    /// handlers all fault (or are quarantined) stays as it was.
    pub(crate) async fn tags(&mut self, text: &str) -> Result<String, HostError> {
        let registry = self.registry.clone();
        let names = registry.tag_names();
        let mut blocks = find_blocks(text, &names);
        let max_blocks = self.host.config().max_tag_blocks;
        if blocks.len() > max_blocks {
            tracing::warn!(
                blocks = blocks.len(),
                max_blocks,
                tenant = %self.call.tenant,
                session = %self.call.session,
                "too many tag blocks in one text; the rest are left as they are"
            );
            blocks.truncate(max_blocks);
        }
        if blocks.is_empty() {
            return Ok(text.to_owned());
        }
        let mut replacements = Vec::with_capacity(blocks.len());
        for block in &blocks {
            let attributes: Vec<wit_types::Attribute> = block
                .attributes
                .iter()
                .map(|a| wit_types::Attribute {
                    name: a.name.clone(),
                    value: a.value.clone(),
                })
                .collect();
            let mut replacement: Option<String> = None;
            let handlers = registry
                .handling(Hook::Tag)
                .filter(|ext| ext.registration.tags.iter().any(|tag| tag == block.name));
            for ext in handlers {
                let call = Call::Tag {
                    tag: block.name,
                    attributes: &attributes,
                    content: replacement.as_deref().unwrap_or(block.content),
                };
                if let Some(Returned::Text(text)) =
                    self.step(ext, Hook::Tag, Some(block.name), call).await?
                {
                    replacement = Some(text);
                }
            }
            replacements.push(replacement);
        }
        Ok(replace_blocks(text, &blocks, &replacements))
    }

    /// Runs one extension's callback (unless it is quarantined) and records the row. Returns the
    /// output on success, `None` when the chain goes on without it, an error to stop the chain.
    async fn step(
        &mut self,
        ext: &Arc<LoadedExtension>,
        hook: Hook,
        tag: Option<&str>,
        call: Call<'_>,
    ) -> Result<Option<Returned>, HostError> {
        let remaining = ext.health.lock().quarantined(Instant::now());
        if let Some(remaining) = remaining {
            let remaining_ms = millis(remaining);
            self.push(
                ext,
                hook,
                tag,
                Outcome::Quarantined { remaining_ms },
                Duration::ZERO,
                0,
                0,
            );
            // A fail-closed extension must not be bypassed: while it is quarantined, its chains
            // stop instead of running without it.
            if ext.failure == FailurePolicy::Closed {
                let fault = Fault {
                    kind: FaultKind::Quarantined,
                    code: None,
                    message: format!(
                        "in quarantine for another {remaining_ms} ms after consecutive faults"
                    ),
                };
                return Err(self.stop(ext, hook, fault));
            }
            return Ok(None);
        }

        let scope = StateScope::new(&*self.call.tenant, &*self.call.session, &*ext.id);
        let span = tracing::info_span!(
            "extension_callback",
            extension = &*ext.id,
            hook = hook.as_str(),
            tag,
            tenant = %self.call.tenant,
            session = %self.call.session,
        );
        let spec = CallbackSpec {
            pre: &ext.pre,
            extension: &ext.id,
            limits: ext.limits,
            config: ext.config.clone(),
            call: Some(self.call.clone()),
            state: Some(StateOverlay::new(self.host.state.clone(), scope)),
            output_cap_bytes: self.host.config().output_cap_bytes,
        };
        let result = callback::run(spec, call).instrument(span).await;

        let (outcome, output) = match result.result {
            Ok(returned) => {
                ext.health.lock().record_ok();
                (Outcome::Ok, Some(returned))
            }
            Err(fault) => {
                let quarantined = ext
                    .health
                    .lock()
                    .record_fault(Instant::now(), &self.host.config().quarantine);
                tracing::warn!(
                    extension = &*ext.id,
                    hook = hook.as_str(),
                    tenant = %self.call.tenant,
                    session = %self.call.session,
                    fault = %fault,
                    failure = ?ext.failure,
                    "extension callback faulted"
                );
                if quarantined {
                    tracing::warn!(
                        extension = &*ext.id,
                        cooldown_ms = self.host.config().quarantine.cooldown_ms,
                        "extension quarantined after consecutive faults"
                    );
                }
                (Outcome::Fault(fault), None)
            }
        };
        self.push(
            ext,
            hook,
            tag,
            outcome,
            result.duration,
            result.fuel_used,
            result.output_dropped_bytes,
        );

        if output.is_none() && ext.failure == FailurePolicy::Closed {
            let fault = self
                .report
                .rows
                .last()
                .and_then(|row| row.outcome.fault())
                .cloned();
            if let Some(fault) = fault {
                return Err(self.stop(ext, hook, fault));
            }
        }
        Ok(output)
    }

    fn stop(&mut self, ext: &LoadedExtension, hook: Hook, fault: Fault) -> HostError {
        HostError::ChainStopped(Box::new(ChainStopped {
            extension: ext.id.to_string(),
            hook,
            fault,
            report: std::mem::take(&mut self.report),
        }))
    }

    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        ext: &LoadedExtension,
        hook: Hook,
        tag: Option<&str>,
        outcome: Outcome,
        duration: Duration,
        fuel_used: u64,
        output_dropped_bytes: u64,
    ) {
        self.report.rows.push(ReportRow {
            extension: ext.id.to_string(),
            hook,
            tag: tag.map(str::to_owned),
            outcome,
            duration,
            fuel_used,
            output_dropped_bytes,
        });
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

//! Runs hooks through chains of extensions.
//!
//! Extensions handling a hook run in registry order (priority DESC, id ASC), each output feeding
//! the next. A fault is recorded for the extension; fail-open continues with the previous value,
//! fail-closed stops the chain with [`HostError::ChainStopped`]. Quarantined extensions are skipped
//! and reported as such.
//!
//! A whole LLM response goes through one priority-ordered pipeline of the extensions handling
//! `llm-output` or `tag`: an llm-output extension transforms the whole text, and consecutive tag
//! extensions form one tag stage over the current text. So an extension that must see the
//! response first (a redactor) runs before every tag handler by having a higher priority.
//!
//! Every run has an output budget (`max_run_output_bytes`): what the extensions' results take
//! while the run holds them. A chain holds one result at a time; a tag stage holds every block's
//! replacement until they are spliced in. A result that would cross the budget is refused before
//! it is copied out of the guest (fault `output-limit`).

use std::collections::HashSet;
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
use crate::sandbox::{Dropped, OutputCap};
use crate::state::StateScope;
use crate::state::overlay::StateOverlay;
use crate::tags::{TagLimits, find_blocks, replace_blocks};
use crate::types::{CallContext, Hook, Message};

/// One run over one registry snapshot.
pub(crate) struct Executor<'h> {
    host: &'h HostInner,
    registry: Arc<Registry>,
    call: Arc<CallContext>,
    /// Tag blocks that may still go to `on-tag` in this run.
    tag_blocks_left: usize,
    pub(crate) report: RunReport,
}

impl<'h> Executor<'h> {
    pub(crate) fn new(host: &'h HostInner, registry: Arc<Registry>, call: &CallContext) -> Self {
        Self {
            host,
            registry,
            call: Arc::new(call.clone()),
            tag_blocks_left: host.config().max_tag_blocks,
            report: RunReport::default(),
        }
    }

    fn max_output(&self) -> usize {
        self.host.config().max_run_output_bytes
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
            let step = Step {
                hook: Hook::InputMessages,
                tag: None,
                max_output_bytes: self.max_output(),
            };
            if let Some(Returned::Messages(messages)) =
                self.step(ext, step, Call::InputMessages(&value)).await?
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

    /// The plain-text chain, or the llm-output chain alone.
    pub(crate) async fn text(
        &mut self,
        hook: Hook,
        mut value: String,
    ) -> Result<String, HostError> {
        let registry = self.registry.clone();
        for ext in registry.handling(hook) {
            value = self.text_step(ext, hook, value).await?;
        }
        Ok(value)
    }

    /// A whole LLM response: the llm-output and tag extensions in one priority-ordered pipeline
    /// (see the module docs).
    pub(crate) async fn llm_output(&mut self, mut value: String) -> Result<String, HostError> {
        let registry = self.registry.clone();
        let mut stage: Vec<&Arc<LoadedExtension>> = Vec::new();
        for ext in registry.iter() {
            if ext.registration.handles(Hook::Tag) {
                stage.push(ext);
            }
            if ext.registration.handles(Hook::LlmOutput) {
                if !stage.is_empty() {
                    value = self.tag_stage(&value, &stage).await?;
                    stage.clear();
                }
                value = self.text_step(ext, Hook::LlmOutput, value).await?;
            }
        }
        if !stage.is_empty() {
            value = self.tag_stage(&value, &stage).await?;
        }
        Ok(value)
    }

    /// Every registered tag block of `text` through its handlers: one tag stage with every tag
    /// extension.
    pub(crate) async fn tags(&mut self, text: &str) -> Result<String, HostError> {
        let registry = self.registry.clone();
        let handlers: Vec<&Arc<LoadedExtension>> = registry.handling(Hook::Tag).collect();
        self.tag_stage(text, &handlers).await
    }

    async fn text_step(
        &mut self,
        ext: &Arc<LoadedExtension>,
        hook: Hook,
        value: String,
    ) -> Result<String, HostError> {
        let call = match hook {
            Hook::LlmOutput => Call::LlmOutput(&value),
            _ => Call::PlainText(&value),
        };
        let step = Step {
            hook,
            tag: None,
            max_output_bytes: self.max_output(),
        };
        Ok(match self.step(ext, step, call).await? {
            Some(Returned::Text(text)) => text,
            _ => value,
        })
    }

    /// Replaces every block of the `handlers`' tags with what its handlers return. Handlers of
    /// one tag name form a chain: each receives the previous handler's output as `content`. A
    /// block whose handlers all fault (or are quarantined) stays as it was.
    async fn tag_stage(
        &mut self,
        text: &str,
        handlers: &[&Arc<LoadedExtension>],
    ) -> Result<String, HostError> {
        let names: HashSet<&str> = handlers
            .iter()
            .flat_map(|ext| ext.registration.tags.iter().map(String::as_str))
            .collect();
        let limits = TagLimits {
            max_blocks: self.tag_blocks_left,
            ..self.host.config().tag_limits()
        };
        let found = find_blocks(text, &names, &limits);
        if found.truncated {
            tracing::warn!(
                blocks = found.blocks.len(),
                max_blocks = self.host.config().max_tag_blocks,
                tenant = %self.call.tenant,
                session = %self.call.session,
                "too many tags in one text; the rest are left as they are"
            );
        }
        self.tag_blocks_left -= found.blocks.len();
        if found.blocks.is_empty() {
            return Ok(text.to_owned());
        }
        // Bytes of replacements the stage holds, against the run's output budget.
        let mut held = 0usize;
        let mut replacements = Vec::with_capacity(found.blocks.len());
        for block in &found.blocks {
            let attributes: Vec<wit_types::Attribute> = block
                .attributes()
                .map(|(name, value)| wit_types::Attribute {
                    name: name.to_owned(),
                    value: value.to_owned(),
                })
                .collect();
            let mut replacement: Option<String> = None;
            for ext in handlers
                .iter()
                .filter(|ext| ext.registration.tags.iter().any(|tag| tag == block.name))
            {
                let current = replacement.as_ref().map_or(0, String::len);
                let step = Step {
                    hook: Hook::Tag,
                    tag: Some(block.name),
                    max_output_bytes: self.max_output().saturating_sub(held - current),
                };
                let call = Call::Tag {
                    tag: block.name,
                    attributes: &attributes,
                    content: replacement.as_deref().unwrap_or(block.content),
                };
                if let Some(Returned::Text(text)) = self.step(ext, step, call).await? {
                    held = held - current + text.len();
                    replacement = Some(text);
                }
            }
            replacements.push(replacement);
        }
        Ok(replace_blocks(text, &found.blocks, &replacements))
    }

    /// Runs one extension's callback (unless it is quarantined) and records the row. Returns the
    /// output on success, `None` when the chain goes on without it, an error to stop the chain.
    async fn step(
        &mut self,
        ext: &Arc<LoadedExtension>,
        step: Step<'_>,
        call: Call<'_>,
    ) -> Result<Option<Returned>, HostError> {
        let Step {
            hook,
            tag,
            max_output_bytes,
        } = step;
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
                Dropped::default(),
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
        let config = self.host.config();
        let spec = CallbackSpec {
            pre: &ext.linked.pre,
            extension: &ext.id,
            limits: ext.limits,
            config: ext.config.clone(),
            call: Some(self.call.clone()),
            state: Some(StateOverlay::new(self.host.state.clone(), scope)),
            output_cap: OutputCap {
                bytes: config.output_cap_bytes,
                records: config.output_cap_records,
            },
            max_copy_bytes: config.max_run_output_bytes,
            max_output_bytes,
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
            result.output_dropped,
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
        output_dropped: Dropped,
    ) {
        self.report.rows.push(ReportRow {
            extension: ext.id.to_string(),
            hook,
            tag: tag.map(str::to_owned),
            outcome,
            duration,
            fuel_used,
            output_dropped_bytes: output_dropped.bytes,
            output_dropped_records: output_dropped.records,
        });
    }
}

/// Which callback a step is, and how much output it may return.
struct Step<'a> {
    hook: Hook,
    tag: Option<&'a str>,
    max_output_bytes: usize,
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

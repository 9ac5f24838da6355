//! [`HindsightService`]: capture failures and keep the tenant indexes; attaching resolutions
//! is in [`crate::resolve`], finding them again in [`crate::query`], learning from feedback in
//! [`crate::promote`]. Transport-agnostic; the MCP tools are thin wrappers over these methods.
//!
//! Invariants:
//! * all text is redacted (secrets, tokens, e-mail addresses) before extraction and storage;
//! * every SQL statement filters by the caller's tenant, and the in-memory index holds one
//!   tenant, loaded by a tenant-filtered query;
//! * scopes: a caller sees signatures and resolutions only in the scopes of its identity.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use aeterna_memory::storage::{Database, Transaction};
use aeterna_memory::{Identity, Layer, MemoryPatch, MemoryService, Scope, now_millis};
use aeterna_redact::{Options, Redactor};
use parking_lot::{Mutex, RwLock};
use tracing::instrument;
use uuid::Uuid;

use crate::config::HindsightConfig;
use crate::error::{HindsightError, Result, failed};
use crate::index::{Entry, TenantIndex, fix_terms};
use crate::model::*;
use crate::search::{self, SearchSettings};
use crate::signature::{self, ErrorSignature, MAX_CONTEXT_PATTERNS, MAX_STACK_PATTERNS};
use crate::store::{self, examples, resolutions, signatures};
use crate::{notes, rank};

/// Longest stored sample of the error text.
pub(crate) const MAX_SAMPLE_BYTES: usize = 4 * 1024;

type IndexCell = Arc<tokio::sync::OnceCell<Arc<LoadedIndex>>>;

/// A tenant's index and the version of its tables it holds (`store::version`).
pub(crate) struct LoadedIndex {
    pub index: RwLock<TenantIndex>,
    version: AtomicI64,
}

impl LoadedIndex {
    fn version(&self) -> i64 {
        self.version.load(Ordering::Acquire)
    }

    /// This instance committed the write that took the tables to `version` and is applying it
    /// to the index: if the index held the version just before, it stays current. Otherwise
    /// another instance wrote in between, and the index is reloaded on its next use.
    fn applied(&self, version: i64) {
        let _ = self.version.compare_exchange(
            version - 1,
            version,
            Ordering::AcqRel,
            Ordering::Acquire,
        );
    }
}

/// Hindsight Learning over the deployment's database.
pub struct HindsightService {
    pub(crate) memory: Arc<MemoryService>,
    pub(crate) db: Database,
    pub(crate) config: HindsightConfig,
    redactor: &'static Redactor,
    indexes: Mutex<HashMap<String, IndexCell>>,
    /// Serialises captures, so that two near-duplicates arriving together merge.
    capture_lock: tokio::sync::Mutex<()>,
    /// Where promoted fixes are announced as lessons (see `learned.rs`).
    pub(crate) learned: std::sync::OnceLock<Arc<dyn aeterna_memory::learned::LearnedSink>>,
}

impl HindsightService {
    /// Hindsight on `memory`'s database.
    pub fn new(memory: Arc<MemoryService>, config: HindsightConfig) -> Result<Self> {
        config.validate().map_err(HindsightError::InvalidInput)?;
        Ok(HindsightService {
            db: memory.database().clone(),
            memory,
            config,
            redactor: Redactor::shared(Options { emails: true }),
            indexes: Mutex::new(HashMap::new()),
            capture_lock: tokio::sync::Mutex::new(()),
            learned: std::sync::OnceLock::new(),
        })
    }

    pub fn config(&self) -> &HindsightConfig {
        &self.config
    }

    /// Redacts secrets, tokens and e-mail addresses.
    pub(crate) fn redact(&self, text: &str) -> String {
        self.redactor.redact(text).into_text().into_owned()
    }

    /// The tenant's index, loaded on first use. On a shared database it is reloaded when
    /// another instance wrote the tenant's tables since it was loaded (one primary-key read of
    /// the tables' version per use).
    pub(crate) async fn index(&self, tenant_id: &str) -> Result<Arc<LoadedIndex>> {
        let stored = if self.db.shared() {
            Some(store::version(&self.db, tenant_id).await?)
        } else {
            None
        };
        let cell = {
            let mut indexes = self.indexes.lock();
            let cell = indexes.entry(tenant_id.to_string()).or_default();
            if let (Some(stored), Some(loaded)) = (stored, cell.get())
                && loaded.version() < stored
            {
                tracing::debug!(tenant = tenant_id, "hindsight index stale: reloading");
                *cell = IndexCell::default();
            }
            cell.clone()
        };
        let loaded = cell
            .get_or_try_init(|| async {
                // Read before the rows: a write in between makes the index look older than it
                // is (reloaded once more), never newer.
                let version = store::version(&self.db, tenant_id).await?;
                let rows = signatures::load_tenant(&self.db, tenant_id).await?;
                let fixes = examples::fix_texts(&self.db, tenant_id).await?;
                let embedder_id = self.memory.embedder().id().to_string();
                let mut index = TenantIndex::default();
                for row in rows {
                    index.upsert(
                        self.entry_of(row.stored, row.embedder_id.as_deref() == Some(&embedder_id)),
                    );
                }
                for fix in fixes {
                    let terms = fix_terms(&fix.text);
                    for id in fix.signature_ids {
                        index.add_fix(id, &terms);
                    }
                }
                tracing::debug!(
                    tenant = tenant_id,
                    signatures = index.len(),
                    version,
                    "hindsight index loaded"
                );
                Ok::<_, HindsightError>(Arc::new(LoadedIndex {
                    index: RwLock::new(index),
                    version: AtomicI64::new(version),
                }))
            })
            .await?;
        Ok(loaded.clone())
    }

    /// Bumps the tenant's version in `tx` and commits it; call [`Self::applied`] with the
    /// version returned, then apply the write to the index.
    pub(crate) async fn commit_indexed(
        &self,
        mut tx: Transaction,
        tenant_id: &str,
        what: &'static str,
    ) -> Result<i64> {
        let version = store::bump_version(&mut tx, tenant_id).await?;
        tx.commit().await.map_err(failed(what))?;
        Ok(version)
    }

    /// The write this instance committed at `version` is being applied to the tenant's loaded
    /// index (see [`LoadedIndex::applied`]).
    pub(crate) fn applied(&self, tenant_id: &str, version: i64) {
        if let Some(loaded) = self
            .indexes
            .lock()
            .get(tenant_id)
            .and_then(|cell| cell.get())
        {
            loaded.applied(version);
        }
    }

    pub(crate) fn entry_of(&self, stored: StoredSignature, same_embedder: bool) -> Entry {
        let mut signature = stored.signature;
        if !same_embedder {
            signature.embedding = None;
        }
        Entry::new(
            stored.id,
            Scope::new(stored.layer, stored.scope_id),
            stored.fingerprint,
            stored.occurrence_count,
            signature,
        )
    }

    /// How searches run with this configuration and embedder.
    pub(crate) fn search_settings(&self) -> SearchSettings<'_> {
        SearchSettings {
            weights: &self.config.weights,
            per_source: self.config.candidates_per_source,
            calibration: self.memory.embedder().calibration(),
        }
    }

    /// Embeds the signatures in one batch; on failure they go on without embeddings (the
    /// score then rests on type, text and context).
    pub(crate) async fn embed(&self, signatures: &mut [ErrorSignature]) -> Option<String> {
        let texts: Vec<String> = signatures
            .iter()
            .map(ErrorSignature::embedding_text)
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let embedder = self.memory.embedder();
        match embedder.embed(&refs).await {
            Ok(vectors) if vectors.len() == signatures.len() => {
                for (signature, vector) in signatures.iter_mut().zip(vectors) {
                    signature.embedding = Some(vector);
                }
                Some(embedder.id().to_string())
            }
            Ok(_) => {
                tracing::warn!(
                    embedder = embedder.id(),
                    "embedder returned the wrong number of vectors"
                );
                None
            }
            Err(error) => {
                tracing::warn!(embedder = embedder.id(), %error, "embedding signatures failed; matching without embeddings");
                None
            }
        }
    }

    /// Checks an error text's size and redacts it.
    pub(crate) fn checked_text(&self, error_text: &str) -> Result<String> {
        if error_text.trim().is_empty() {
            return Err(HindsightError::invalid(
                "`error_text` is empty; pass the failing output",
            ));
        }
        if error_text.len() > self.config.max_error_bytes {
            return Err(HindsightError::invalid(format!(
                "`error_text` is {} bytes; the limit is {} (pass the part around the first error)",
                error_text.len(),
                self.config.max_error_bytes
            )));
        }
        Ok(self.redact(error_text))
    }

    /// Redacts and extracts the signatures of an error text.
    pub(crate) fn signatures_of(&self, error_text: &str) -> Result<(String, Vec<ErrorSignature>)> {
        let redacted = self.checked_text(error_text)?;
        let mut found = signature::extract(&redacted);
        if found.is_empty() {
            return Err(HindsightError::NoErrorRecognised);
        }
        found.truncate(self.config.max_signatures_per_text);
        Ok((redacted, found))
    }

    pub(crate) fn scope_for(&self, who: &Identity, layer: Layer) -> Result<Scope> {
        check_tenant(who)?;
        who.scope(layer)
            .map(|id| Scope::new(layer, id))
            .ok_or(HindsightError::MissingScope {
                layer,
                field: layer.scope_field(),
            })
    }

    /// Records a failure: one signature per error in the text, merged into a near duplicate
    /// of the same scope when there is one (its occurrence count goes up).
    #[instrument(skip_all, fields(tenant = %who.tenant_id))]
    pub async fn capture(&self, who: &Identity, request: CaptureRequest) -> Result<CaptureOutcome> {
        let scope = self.scope_for(who, request.layer.unwrap_or(self.config.default_layer))?;
        let (redacted, mut found) = self.signatures_of(&request.error_text)?;
        let embedder_id = self.embed(&mut found).await;
        let sample = truncated(&redacted, MAX_SAMPLE_BYTES);
        let captured = self
            .store_signatures(who, &scope, found, embedder_id.as_deref(), sample)
            .await?;
        Ok(CaptureOutcome {
            signatures: captured.into_iter().map(|(c, _)| c).collect(),
        })
    }

    /// Stores already extracted signatures (redacting their text fields first).
    pub async fn capture_signatures(
        &self,
        who: &Identity,
        layer: Option<Layer>,
        signatures: Vec<ErrorSignature>,
    ) -> Result<Vec<CapturedSignature>> {
        let scope = self.scope_for(who, layer.unwrap_or(self.config.default_layer))?;
        let mut found: Vec<ErrorSignature> = signatures
            .into_iter()
            .map(|s| self.clean_signature(s))
            .collect::<Result<_>>()?;
        let embedder_id = self.embed(&mut found).await;
        let sample = found
            .iter()
            .map(|s| s.title())
            .collect::<Vec<_>>()
            .join("\n");
        let captured = self
            .store_signatures(who, &scope, found, embedder_id.as_deref(), &sample)
            .await?;
        Ok(captured.into_iter().map(|(c, _)| c).collect())
    }

    /// Validates and redacts a caller-supplied signature.
    pub(crate) fn clean_signature(&self, mut s: ErrorSignature) -> Result<ErrorSignature> {
        if s.error_type.trim().is_empty() || s.error_type.len() > 200 {
            return Err(HindsightError::invalid(
                "`signature.error_type` must be 1 to 200 bytes",
            ));
        }
        if s.message_pattern.len() > 2_000 {
            return Err(HindsightError::invalid(
                "`signature.message_pattern` is over 2000 bytes",
            ));
        }
        s.error_type = self.redact(s.error_type.trim());
        s.message_pattern = self.redact(&s.message_pattern);
        s.stack_patterns = s
            .stack_patterns
            .iter()
            .take(MAX_STACK_PATTERNS)
            .map(|p| self.redact(p))
            .collect();
        s.context_patterns = s
            .context_patterns
            .iter()
            .take(MAX_CONTEXT_PATTERNS)
            .map(|p| self.redact(p))
            .collect();
        s.embedding = None;
        Ok(s)
    }

    pub(crate) async fn store_signatures(
        &self,
        who: &Identity,
        scope: &Scope,
        found: Vec<ErrorSignature>,
        embedder_id: Option<&str>,
        sample: &str,
    ) -> Result<Vec<(CapturedSignature, StoredSignature)>> {
        let tenant = who.tenant_id.as_str();
        let loaded = self.index(tenant).await?;
        let _serial = self.capture_lock.lock().await;
        let now = now_millis();
        let mut tx = self
            .db
            .begin_write()
            .await
            .map_err(failed("starting a capture"))?;
        let mut stored = Vec::new();
        for signature in &found {
            let duplicate = {
                let index = loaded.index.read();
                let settings = self.search_settings();
                search::search(&index, signature, QueryForm::ToolOutput, &settings, |s| {
                    s == scope
                })
                .into_iter()
                .filter(|hit| hit.breakdown.total >= self.config.duplicate_threshold)
                .map(|hit| index.entry(hit.position).clone())
                .find(|entry| {
                    entry.signature.error_type == signature.error_type
                        && entry.signature.language == signature.language
                })
            };
            let row = match duplicate {
                Some(existing) => {
                    let mut merged = existing.signature.clone();
                    signature::merge_context(&mut merged, signature);
                    signatures::count_occurrence(
                        &mut tx,
                        tenant,
                        existing.id,
                        &merged.stack_patterns,
                        &merged.context_patterns,
                        now,
                    )
                    .await?
                }
                None => {
                    let new = signatures::NewSignature {
                        id: Uuid::now_v7(),
                        scope,
                        signature,
                        fingerprint: &signature.fingerprint(),
                        embedder_id,
                        sample,
                        now,
                    };
                    signatures::insert_or_count(&mut tx, tenant, new).await?
                }
            };
            stored.push(row);
        }
        let version = self
            .commit_indexed(tx, tenant, "committing a capture")
            .await?;
        loaded.applied(version);

        let current = self.memory.embedder().id().to_string();
        let mut index = loaded.index.write();
        let mut out = Vec::new();
        for row in stored {
            let same = row.embedder_id.as_deref() == Some(current.as_str());
            index.upsert(self.entry_of(row.stored.clone(), same));
            let s = &row.stored;
            let captured = CapturedSignature {
                signature_id: s.id,
                merged: s.occurrence_count > 1,
                occurrence_count: s.occurrence_count,
                layer: s.layer,
                scope_id: s.scope_id.clone(),
                error_type: s.signature.error_type.clone(),
                language: s.signature.language,
                message_pattern: s.signature.message_pattern.clone(),
            };
            out.push((captured, row.stored));
        }
        Ok(out)
    }

    /// A stored signature the caller can see.
    pub async fn signature(&self, who: &Identity, id: Uuid) -> Result<StoredSignature> {
        check_tenant(who)?;
        let mut reading = self
            .db
            .begin_read()
            .await
            .map_err(failed("reading a signature"))?;
        let row = signatures::get(&mut reading, &who.tenant_id, id).await?;
        row.map(|r| r.stored)
            .filter(|s| visible_to(who, s.layer, &s.scope_id))
            .ok_or(HindsightError::NotFound {
                what: "signature",
                id: id.to_string(),
                hint: "hindsight_capture or hindsight_query",
            })
    }

    /// Adds (or re-renders) the resolution's note; failures are logged, not fatal: the
    /// resolution itself is stored.
    pub(crate) async fn write_note(
        &self,
        who: &Identity,
        signature: &StoredSignature,
        resolution: &Resolution,
    ) -> Option<Uuid> {
        if !self.config.notes {
            return None;
        }
        let outcome = match resolution.note_id {
            Some(note_id) => {
                let memory = notes::memory(signature, resolution);
                let patch = MemoryPatch {
                    content: Some(memory.content),
                    tags: None,
                    metadata: Some(memory.metadata),
                    mode: None,
                    valid_from: None,
                };
                self.memory.update(who, note_id, patch).await.map(|r| r.id)
            }
            None => self
                .memory
                .add(who, notes::memory(signature, resolution))
                .await
                .map(|o| o.record.id),
        };
        match outcome {
            Ok(note_id) => {
                if resolution.note_id != Some(note_id)
                    && let Err(error) =
                        resolutions::set_note(&self.db, &who.tenant_id, resolution.id, note_id)
                            .await
                {
                    tracing::warn!(%error, resolution = %resolution.id, "cannot link the hindsight note");
                }
                Some(note_id)
            }
            Err(error) => {
                tracing::warn!(%error, resolution = %resolution.id, "cannot write the hindsight note");
                resolution.note_id
            }
        }
    }

    /// Adds a stored row to the tenant's index.
    pub(crate) async fn index_row(
        &self,
        tenant_id: &str,
        row: signatures::SignatureRow,
    ) -> Result<()> {
        let loaded = self.index(tenant_id).await?;
        let same = row.embedder_id.as_deref() == Some(self.memory.embedder().id());
        let entry = self.entry_of(row.stored, same);
        loaded.index.write().upsert(entry);
        Ok(())
    }

    /// A resolution the caller can see.
    pub(crate) async fn visible_resolution(&self, who: &Identity, id: Uuid) -> Result<Resolution> {
        check_tenant(who)?;
        let mut reading = self
            .db
            .begin_read()
            .await
            .map_err(failed("reading a resolution"))?;
        resolutions::get(&mut reading, &who.tenant_id, id)
            .await?
            .filter(|r| visible_to(who, r.layer, &r.scope_id))
            .ok_or(HindsightError::NotFound {
                what: "resolution",
                id: id.to_string(),
                hint: "hindsight_resolve or hindsight_query",
            })
    }
}

/// Best first: confidence (Wilson lower bound), then applications, then the broader layer.
/// Promoted copies of one lineage appear once, as the copy with the best record.
pub(crate) fn rank_resolutions(mut all: Vec<Resolution>) -> Vec<Resolution> {
    all.sort_by(|a, b| {
        b.confidence
            .total_cmp(&a.confidence)
            .then(b.application_count.cmp(&a.application_count))
            .then(b.layer.cmp(&a.layer))
            .then(a.created_at.cmp(&b.created_at))
    });
    let mut seen = HashSet::new();
    all.retain(|r| seen.insert(r.origin_id));
    all
}

pub(crate) fn check_tenant(who: &Identity) -> Result<()> {
    if who.tenant_id.trim().is_empty() {
        return Err(HindsightError::invalid(
            "the caller has no tenant; authenticate first",
        ));
    }
    Ok(())
}

pub(crate) fn visible_to(who: &Identity, layer: Layer, scope_id: &str) -> bool {
    who.scope(layer) == Some(scope_id)
}

/// Who did it, for the records: the user, else the agent, else the tenant.
pub(crate) fn actor(who: &Identity) -> String {
    who.user_id
        .clone()
        .or_else(|| who.agent_id.clone().map(|a| format!("agent:{a}")))
        .unwrap_or_else(|| format!("tenant:{}", who.tenant_id))
}

pub(crate) fn truncated(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let cut = (0..=max)
        .rev()
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(0);
    &text[..cut]
}

pub(crate) fn success_rate(resolution: &Resolution) -> f64 {
    rank::success_rate(resolution.success_count, resolution.application_count)
}

//! [`HindsightService::resolve`]: record what fixed an error, and grow a fix's lineage with
//! further examples.
//!
//! A compiler words one error class in several ways (`use of moved value` and `borrow of moved
//! value`). When a second wording is resolved by a fix already recorded — named by
//! `resolution_id`, or recognised because the new fix's text nearly duplicates one recorded for
//! an error of the same language in the same scope — the second signature joins that fix as
//! another example instead of starting a new, empty track record. Queries matching either
//! wording then find the fix, and feedback on it counts once.

use aeterna_memory::{Identity, Scope, now_millis};
use tracing::instrument;
use uuid::Uuid;

use crate::error::{HindsightError, Result, failed};
use crate::index::fix_terms;
use crate::model::*;
use crate::score::weighted_dice;
use crate::service::{HindsightService, MAX_SAMPLE_BYTES, actor, check_tenant, truncated};
use crate::store::examples::{self, fix_text};
use crate::store::resolutions;

/// Most further examples one fix collects; each is listed in the resolution's `examples`.
pub const MAX_EXAMPLES: usize = 100;

/// Fewest distinct terms a fix text needs before a near duplicate of it is trusted to be the
/// same fix (`fix the typo` is not specific enough).
const MIN_DUPLICATE_TERMS: usize = 5;

impl HindsightService {
    /// Attaches a fix to a signature (by id, or by error text, captured first) and renders
    /// its hindsight note; with `resolution_id`, or when the fix text nearly duplicates a fix
    /// recorded for a similar error, the signature joins that fix's lineage instead.
    #[instrument(skip_all, fields(tenant = %who.tenant_id))]
    pub async fn resolve(&self, who: &Identity, request: ResolveRequest) -> Result<ResolveOutcome> {
        check_tenant(who)?;
        let description = request.description.trim();
        let joining = request.resolution_id;
        match (joining.is_some(), description.is_empty()) {
            (false, true) => {
                return Err(HindsightError::invalid(
                    "`description` is empty; say what fixed the error (or pass `resolution_id` \
                     of a fix already recorded for another wording of it)",
                ));
            }
            (true, false) => {
                return Err(HindsightError::invalid(
                    "`resolution_id` names a fix already recorded; leave out `description` and \
                     `changes` to add this error to it, or leave out `resolution_id` to record a \
                     new fix",
                ));
            }
            _ => {}
        }
        if joining.is_some() && request.changes != Changes::default() {
            return Err(HindsightError::invalid(
                "`resolution_id` names a fix already recorded; leave out `changes`",
            ));
        }
        let size = description.len()
            + request.changes.diff.as_deref().map_or(0, str::len)
            + request
                .changes
                .files
                .iter()
                .map(|f| f.file.len() + f.summary.len())
                .sum::<usize>();
        if size > self.config.max_resolution_bytes {
            return Err(HindsightError::invalid(format!(
                "the resolution is {size} bytes (description + changes); the limit is {}",
                self.config.max_resolution_bytes
            )));
        }
        // Resolve the existing fix first: a wrong id must not capture anything.
        let existing = match joining {
            Some(id) => Some(self.visible_resolution(who, id).await?),
            None => None,
        };
        let signature = self.signature_to_resolve(who, &request).await?;
        let layer = match &existing {
            Some(fix) => fix.layer,
            None => request.layer.unwrap_or(signature.layer),
        };
        if let Some(requested) = request.layer
            && existing.is_some()
            && requested != layer
        {
            return Err(HindsightError::invalid(format!(
                "`layer` is {requested} but the resolution lives in {layer}; leave `layer` out"
            )));
        }
        let scope = match &existing {
            Some(fix) => Scope::new(fix.layer, fix.scope_id.clone()),
            None => self.scope_for(who, layer)?,
        };
        if layer < signature.layer {
            return Err(HindsightError::invalid(format!(
                "`layer` {layer} is narrower than the signature's layer {}; resolutions live in the \
                 signature's layer or a broader one",
                signature.layer
            )));
        }
        let signature = self.signature_in_scope(who, signature, &scope).await?;

        let description = self.redact(description);
        let changes = Changes {
            diff: request.changes.diff.as_deref().map(|d| self.redact(d)),
            files: request
                .changes
                .files
                .iter()
                .map(|f| FileChange {
                    file: self.redact(&f.file),
                    summary: self.redact(&f.summary),
                })
                .collect(),
        };
        let existing = match existing {
            Some(fix) => Some(fix),
            None => {
                self.near_duplicate_fix(who, &signature, &scope, &fix_text(&description, &changes))
                    .await?
            }
        };
        if let Some(fix) = existing {
            let resolution = self.join(who, fix, &signature).await?;
            return Ok(ResolveOutcome {
                resolution,
                joined: true,
            });
        }

        let now = now_millis();
        let id = Uuid::now_v7();
        let mut resolution = Resolution {
            id,
            signature_id: signature.id,
            layer: scope.layer,
            scope_id: scope.scope_id.clone(),
            description,
            changes,
            success_count: 0,
            application_count: 0,
            success_rate: 0.0,
            confidence: 0.0,
            examples: Vec::new(),
            origin_id: id,
            promoted_from: None,
            baseline_applications: 0,
            created_by: actor(who),
            created_at: now,
            updated_at: now,
            note_id: None,
        };
        let mut tx = self
            .db
            .begin_write()
            .await
            .map_err(failed("storing a resolution"))?;
        resolutions::insert(&mut tx, &who.tenant_id, &resolution).await?;
        let version = self
            .commit_indexed(tx, &who.tenant_id, "storing a resolution")
            .await?;
        self.applied(&who.tenant_id, version);
        self.index_fix(&who.tenant_id, &resolution, &[signature.id])
            .await?;
        resolution.note_id = self.write_note(who, &signature, &resolution).await;
        Ok(ResolveOutcome {
            resolution,
            joined: false,
        })
    }

    /// The signature a resolve request names: by id, or captured from its error text.
    async fn signature_to_resolve(
        &self,
        who: &Identity,
        request: &ResolveRequest,
    ) -> Result<StoredSignature> {
        match (request.signature_id, &request.error_text) {
            (Some(id), None) => self.signature(who, id).await,
            (None, Some(text)) => {
                let (redacted, mut found) = self.signatures_of(text)?;
                found.truncate(1);
                let embedder_id = self.embed(&mut found).await;
                let layer = request.layer.unwrap_or(self.config.default_layer);
                let scope = self.scope_for(who, layer)?;
                let sample = truncated(&redacted, MAX_SAMPLE_BYTES);
                let mut stored = self
                    .store_signatures(who, &scope, found, embedder_id.as_deref(), sample)
                    .await?;
                Ok(stored.remove(0).1)
            }
            _ => Err(HindsightError::invalid(
                "pass either `signature_id` or `error_text`",
            )),
        }
    }

    /// The signature as seen in `scope`: a resolution in a broader layer needs the signature
    /// visible there too, so it is copied (once) into that scope.
    async fn signature_in_scope(
        &self,
        who: &Identity,
        signature: StoredSignature,
        scope: &Scope,
    ) -> Result<StoredSignature> {
        if scope.layer == signature.layer && scope.scope_id == signature.scope_id {
            return Ok(signature);
        }
        let mut tx = self
            .db
            .begin_write()
            .await
            .map_err(failed("starting a resolution"))?;
        let copy =
            crate::promote::copy_signature(&mut tx, &who.tenant_id, &signature, scope).await?;
        let version = self
            .commit_indexed(tx, &who.tenant_id, "committing a resolution")
            .await?;
        self.applied(&who.tenant_id, version);
        let stored = copy.stored.clone();
        self.index_row(&who.tenant_id, copy).await?;
        Ok(stored)
    }

    /// A fix of the same scope, recorded for an error of the same language, whose text nearly
    /// duplicates `text` (stemmed words, Dice ≥ the duplicate threshold).
    async fn near_duplicate_fix(
        &self,
        who: &Identity,
        signature: &StoredSignature,
        scope: &Scope,
        text: &str,
    ) -> Result<Option<Resolution>> {
        let terms = fix_terms(text);
        if terms.len() < MIN_DUPLICATE_TERMS {
            return Ok(None);
        }
        let candidates: Vec<Uuid> = {
            let loaded = self.index(&who.tenant_id).await?;
            let index = loaded.index.read();
            let n = index.len();
            index
                .fix_postings
                .best(&terms, n, self.config.candidates_per_source, &|p| {
                    let entry = index.entry(p);
                    entry.scope == *scope
                        && entry.signature.language == signature.signature.language
                        && entry.id != signature.id
                })
                .into_iter()
                .map(|(p, _)| index.entry(p).id)
                .collect()
        };
        if candidates.is_empty() {
            return Ok(None);
        }
        let found = resolutions::for_signatures(
            &self.db,
            &who.tenant_id,
            &candidates,
            std::slice::from_ref(scope),
        )
        .await?;
        let best = found
            .into_iter()
            .map(|r| {
                let theirs = fix_terms(&fix_text(&r.description, &r.changes));
                (weighted_dice(&terms, &theirs, &|_| 1.0), r)
            })
            .filter(|(similarity, r)| {
                *similarity >= self.config.duplicate_fix_threshold
                    && r.examples.len() < MAX_EXAMPLES
            })
            .max_by(|a, b| {
                a.0.total_cmp(&b.0)
                    .then(b.1.created_at.cmp(&a.1.created_at))
            });
        Ok(best.map(|(_, r)| r))
    }

    /// Adds `signature` to the lineage of `fix` as another example (nothing to do when it is
    /// already one); returns the fix with its examples.
    async fn join(
        &self,
        who: &Identity,
        mut fix: Resolution,
        signature: &StoredSignature,
    ) -> Result<Resolution> {
        if fix.signature_id != signature.id && !fix.examples.contains(&signature.id) {
            if fix.examples.len() >= MAX_EXAMPLES {
                return Err(HindsightError::invalid(format!(
                    "resolution `{}` already has {MAX_EXAMPLES} examples, the most one fix keeps; \
                     record this error's fix as a new resolution (leave out `resolution_id`)",
                    fix.id
                )));
            }
            let mut tx = self
                .db
                .begin_write()
                .await
                .map_err(failed("adding an example to a resolution"))?;
            examples::add(
                &mut tx,
                &who.tenant_id,
                fix.id,
                signature.id,
                &actor(who),
                now_millis(),
            )
            .await?;
            let version = self
                .commit_indexed(tx, &who.tenant_id, "adding an example to a resolution")
                .await?;
            self.applied(&who.tenant_id, version);
            fix.examples.push(signature.id);
            tracing::info!(resolution = %fix.id, signature = %signature.id, "hindsight lineage grew");
        }
        self.index_fix(&who.tenant_id, &fix, &[signature.id])
            .await?;
        Ok(fix)
    }

    /// Tells the tenant's index that `fix` resolves `signature_ids`.
    pub(crate) async fn index_fix(
        &self,
        tenant_id: &str,
        fix: &Resolution,
        signature_ids: &[Uuid],
    ) -> Result<()> {
        let terms = fix_terms(&fix_text(&fix.description, &fix.changes));
        let loaded = self.index(tenant_id).await?;
        let mut index = loaded.index.write();
        for id in signature_ids {
            index.add_fix(*id, &terms);
        }
        Ok(())
    }
}

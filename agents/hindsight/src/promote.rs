//! Feedback and promotion.
//!
//! A resolution qualifies for promotion to the next broader layer (`Layer::broader`: project →
//! team → org → company) when its success rate is at least `min_success_rate` and it was
//! applied at least `min_applications` times at its current layer. Promotion copies it (and its
//! signature) into the caller's scope of the broader layer, with its track record; the copy
//! counts its own applications from there. Each (resolution, target layer) is promoted at most
//! once — a unique index makes concurrent feedback safe. Target layers listed in
//! `require_approval` queue the promotion for `hindsight_approve` instead.

use aeterna_memory::storage::Transaction;
use aeterna_memory::{Identity, Layer, Scope, now_millis};
use uuid::Uuid;

use crate::error::{HindsightError, Result, failed};
use crate::learned::Decided;
use crate::model::*;
use crate::service::{HindsightService, actor, check_tenant, success_rate, visible_to};
use crate::store::signatures::{self, SignatureRow};
use crate::store::{examples, promotions, resolutions};

/// Most promotions one listing returns.
pub const MAX_PROMOTIONS_LISTED: usize = 100;

impl HindsightService {
    /// Records that a resolution was applied and whether it worked; promotes it when it now
    /// qualifies.
    #[tracing::instrument(skip_all, fields(tenant = %who.tenant_id, resolution = %request.resolution_id))]
    pub async fn feedback(
        &self,
        who: &Identity,
        request: FeedbackRequest,
    ) -> Result<FeedbackOutcome> {
        let comment = request
            .comment
            .as_deref()
            .map(str::trim)
            .filter(|c| !c.is_empty());
        if comment.is_some_and(|c| c.len() > 4096) {
            return Err(HindsightError::invalid("`comment` is over 4096 bytes"));
        }
        let comment = comment.map(|c| self.redact(c));
        let before = self.visible_resolution(who, request.resolution_id).await?;
        let mut tx = self
            .db
            .begin_write()
            .await
            .map_err(failed("starting feedback"))?;
        let resolution = resolutions::record_feedback(
            &mut tx,
            &who.tenant_id,
            before.id,
            request.success,
            &actor(who),
            comment.as_deref(),
            now_millis(),
        )
        .await?;
        tx.commit().await.map_err(failed("committing feedback"))?;
        if let Ok(signature) = self.signature(who, resolution.signature_id).await {
            self.write_note(who, &signature, &resolution).await;
        }
        let promotion = self.maybe_promote(who, &resolution).await?;
        Ok(FeedbackOutcome {
            resolution,
            promotion,
        })
    }

    async fn maybe_promote(
        &self,
        who: &Identity,
        resolution: &Resolution,
    ) -> Result<Option<PromotionStep>> {
        let rules = &self.config.promotion;
        let here = resolution
            .application_count
            .saturating_sub(resolution.baseline_applications);
        if !rules.enabled
            || here < rules.min_applications
            || success_rate(resolution) < rules.min_success_rate
        {
            return Ok(None);
        }
        let Some(target) = resolution.layer.broader() else {
            return Ok(None);
        };
        let Some(to_scope) = who.scope(target) else {
            return Ok(Some(PromotionStep::NeedsScope {
                layer: target,
                field: target.scope_field().to_string(),
            }));
        };
        let now = now_millis();
        let pending = rules.require_approval.contains(&target);
        let mut promotion = Promotion {
            id: Uuid::now_v7(),
            resolution_id: resolution.id,
            from_layer: resolution.layer,
            from_scope: resolution.scope_id.clone(),
            to_layer: target,
            to_scope: to_scope.to_string(),
            status: if pending {
                PromotionStatus::Pending
            } else {
                PromotionStatus::Promoted
            },
            success_rate: resolution.success_rate,
            application_count: resolution.application_count,
            requested_by: actor(who),
            requested_at: now,
            decided_by: (!pending).then(|| "auto".to_string()),
            decided_at: (!pending).then_some(now),
            promoted_resolution_id: None,
        };
        let mut tx = self
            .db
            .begin_write()
            .await
            .map_err(failed("starting a promotion"))?;
        let mut copy = None;
        if !pending {
            let (resolution_copy, signature_row) = copy_resolution(
                &mut tx,
                &who.tenant_id,
                resolution,
                &Scope::new(target, to_scope),
                &actor(who),
            )
            .await?;
            promotion.promoted_resolution_id = Some(resolution_copy.id);
            copy = Some((resolution_copy, signature_row));
        }
        let (stored, inserted) =
            promotions::insert_once(&mut tx, &who.tenant_id, &promotion).await?;
        if !inserted {
            // Already promoted or queued from this resolution to that layer: nothing to do.
            tx.rollback()
                .await
                .map_err(failed("abandoning a promotion"))?;
            return Ok(None);
        }
        let version = self
            .commit_indexed(tx, &who.tenant_id, "committing a promotion")
            .await?;
        self.applied(&who.tenant_id, version);
        tracing::info!(promotion = %stored.id, from = %stored.from_layer, to = %stored.to_layer, status = stored.status.as_str(), "hindsight promotion");
        if let Some((resolution_copy, signature_row)) = copy {
            self.after_copy(who, resolution_copy, signature_row, Decided::Automatically)
                .await?;
            return Ok(Some(PromotionStep::Promoted { promotion: stored }));
        }
        Ok(Some(PromotionStep::Pending { promotion: stored }))
    }

    /// Indexes the copied signatures with the copy's fix, renders its note in its layer and
    /// announces it as a lesson.
    async fn after_copy(
        &self,
        who: &Identity,
        resolution: Resolution,
        signatures: Vec<SignatureRow>,
        decided: Decided<'_>,
    ) -> Result<()> {
        let stored = signatures[0].stored.clone();
        let ids: Vec<Uuid> = signatures.iter().map(|row| row.stored.id).collect();
        for row in signatures {
            self.index_row(&who.tenant_id, row).await?;
        }
        self.index_fix(&who.tenant_id, &resolution, &ids).await?;
        self.write_note(who, &stored, &resolution).await;
        self.announce_promoted(who, &stored, &resolution, decided)
            .await;
        Ok(())
    }

    /// Decides a pending promotion. Approving promotes the resolution; deciding twice returns
    /// the first decision unchanged. The caller needs the target scope
    /// (`team_id` for a promotion into a team).
    #[tracing::instrument(skip_all, fields(tenant = %who.tenant_id, promotion = %request.promotion_id))]
    pub async fn approve(&self, who: &Identity, request: ApproveRequest) -> Result<Promotion> {
        check_tenant(who)?;
        let tenant = who.tenant_id.as_str();
        let mut tx = self
            .db
            .begin_write()
            .await
            .map_err(failed("starting an approval"))?;
        let promotion = promotions::get(&mut tx, tenant, request.promotion_id)
            .await?
            .ok_or_else(|| HindsightError::NotFound {
                what: "promotion",
                id: request.promotion_id.to_string(),
                hint: "hindsight_feedback or hindsight_promotions",
            })?;
        if !visible_to(who, promotion.to_layer, &promotion.to_scope) {
            return Err(HindsightError::Forbidden(format!(
                "deciding a promotion into {} `{}` needs `{}` = `{}` in your identity",
                promotion.to_layer,
                promotion.to_scope,
                promotion.to_layer.scope_field(),
                promotion.to_scope
            )));
        }
        who.grants
            .check_approver(&Scope::new(promotion.to_layer, promotion.to_scope.clone()))?;
        if promotion.status != PromotionStatus::Pending {
            return Ok(promotion);
        }
        let now = now_millis();
        let mut copy = None;
        if request.approve {
            let resolution = resolutions::get(&mut tx, tenant, promotion.resolution_id)
                .await?
                .ok_or_else(|| HindsightError::NotFound {
                    what: "resolution",
                    id: promotion.resolution_id.to_string(),
                    hint: "hindsight_query",
                })?;
            let target = Scope::new(promotion.to_layer, promotion.to_scope.clone());
            copy = Some(copy_resolution(&mut tx, tenant, &resolution, &target, &actor(who)).await?);
        }
        let status = if request.approve {
            PromotionStatus::Promoted
        } else {
            PromotionStatus::Rejected
        };
        let promoted_id = copy.as_ref().map(|(r, _)| r.id);
        if !promotions::decide(
            &mut tx,
            tenant,
            promotion.id,
            status,
            &actor(who),
            now,
            promoted_id,
        )
        .await?
        {
            // Decided concurrently: report that decision.
            tx.rollback()
                .await
                .map_err(failed("abandoning an approval"))?;
            let mut reading = self
                .db
                .begin_read()
                .await
                .map_err(failed("reading a promotion"))?;
            return promotions::get(&mut reading, tenant, promotion.id)
                .await?
                .ok_or_else(|| {
                    HindsightError::storage(
                        "reading a promotion",
                        anyhow::anyhow!("promotion vanished"),
                    )
                });
        }
        let version = self
            .commit_indexed(tx, tenant, "committing an approval")
            .await?;
        self.applied(tenant, version);
        if let Some((resolution, signature)) = copy {
            let approver = actor(who);
            self.after_copy(who, resolution, signature, Decided::ApprovedBy(&approver))
                .await?;
        }
        let mut reading = self
            .db
            .begin_read()
            .await
            .map_err(failed("reading a promotion"))?;
        promotions::get(&mut reading, tenant, promotion.id)
            .await?
            .ok_or_else(|| {
                HindsightError::storage(
                    "reading a promotion",
                    anyhow::anyhow!("promotion vanished"),
                )
            })
    }

    /// Promotions into the caller's scopes, newest first (pending ones when `status` says so).
    pub async fn promotions(
        &self,
        who: &Identity,
        status: Option<PromotionStatus>,
        limit: usize,
    ) -> Result<Vec<Promotion>> {
        check_tenant(who)?;
        if limit == 0 || limit > MAX_PROMOTIONS_LISTED {
            return Err(HindsightError::invalid(format!(
                "`limit` is {limit}; ask for 1 to {MAX_PROMOTIONS_LISTED}"
            )));
        }
        let scopes: Vec<Scope> = who
            .visible_scopes()
            .into_iter()
            .filter(|s| s.layer >= Layer::Project)
            .collect();
        promotions::list(&self.db, &who.tenant_id, status, &scopes, limit).await
    }
}

/// Copies a signature into `scope` (or finds the copy already there); returns it.
pub(crate) async fn copy_signature(
    tx: &mut Transaction,
    tenant_id: &str,
    signature: &StoredSignature,
    scope: &Scope,
) -> Result<SignatureRow> {
    signatures::copy_to_scope(tx, tenant_id, signature, scope).await
}

/// Copies a resolution, with its track record and its examples, into `scope`; the copy's own
/// promotion counts applications from here. Reuses a copy of the same lineage already in that
/// scope. Returns the copy and the copied signatures (its own first, then its examples').
async fn copy_resolution(
    tx: &mut Transaction,
    tenant_id: &str,
    resolution: &Resolution,
    scope: &Scope,
    by: &str,
) -> Result<(Resolution, Vec<SignatureRow>)> {
    let mut copied = Vec::new();
    for id in std::iter::once(resolution.signature_id).chain(resolution.examples.iter().copied()) {
        let signature = signatures::get(tx, tenant_id, id).await?.ok_or_else(|| {
            HindsightError::storage(
                "promoting a resolution",
                anyhow::anyhow!("its signature {id} is missing"),
            )
        })?;
        copied.push(copy_signature(tx, tenant_id, &signature.stored, scope).await?);
    }
    let mut copy =
        match resolutions::in_scope_of_lineage(tx, tenant_id, resolution.origin_id, scope).await? {
            Some(existing) => existing,
            None => {
                let now = now_millis();
                let copy = Resolution {
                    id: Uuid::now_v7(),
                    signature_id: copied[0].stored.id,
                    layer: scope.layer,
                    scope_id: scope.scope_id.clone(),
                    examples: Vec::new(),
                    promoted_from: Some(resolution.id),
                    baseline_applications: resolution.application_count,
                    created_by: by.to_string(),
                    created_at: now,
                    updated_at: now,
                    note_id: None,
                    ..resolution.clone()
                };
                resolutions::insert(tx, tenant_id, &copy).await?;
                copy
            }
        };
    for row in &copied {
        let id = row.stored.id;
        if id != copy.signature_id
            && !copy.examples.contains(&id)
            && examples::add(tx, tenant_id, copy.id, id, by, now_millis()).await?
        {
            copy.examples.push(id);
        }
    }
    Ok((copy, copied))
}

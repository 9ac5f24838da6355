//! Forgetting: [`MemoryService::delete`] of one memory, [`MemoryService::forget`] by a filter
//! (with a dry run), per-layer retention ([`MemoryService::expire`]) and
//! [`MemoryService::purge_tenant`].
//!
//! One path removes memories for all of them: the records, tags, vectors (durable copy and
//! index, Qdrant too) and past versions go in one transaction per batch, the record cache and
//! the lexical index forget them, and a [`MemoryChange`] per scope tells every cache (context
//! summaries, other instances) to let go; notes that linked a forgotten note are rewritten
//! without the link. Each forget, retention pass and purge writes one
//! `memory_audit` row naming who, the selection and the ids — never the content.

use std::collections::BTreeSet;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::MemoryService;
use crate::error::{MemoryError, Result};
use crate::model::{
    Identity, Layer, MemoryChange, MemoryFilter, MemoryPatch, MemoryRecord, Scope, Timestamp,
    UpdateMode, kind, now_millis,
};
use crate::storage::{ListQuery, Selection};
use crate::validate;

/// Memories removed per transaction.
const BATCH: usize = 500;

/// Which memories to forget. Every condition given must hold; at least one must be given.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ForgetRequest {
    /// Only these layers (in the caller's scopes); every visible layer when `None`.
    pub layers: Option<Vec<Layer>>,
    /// Only memories carrying every one of these tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Only these kinds.
    #[serde(default)]
    pub kinds: Vec<String>,
    /// Only these memories.
    #[serde(default)]
    pub ids: Vec<Uuid>,
    /// Only memories last changed before this time (ms since the epoch).
    #[serde(default)]
    pub updated_before: Option<Timestamp>,
    /// Count what would be forgotten, and forget nothing.
    #[serde(default)]
    pub dry_run: bool,
}

/// What a forget did (or, in a dry run, would do).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ForgetOutcome {
    /// Memories the selection matched (at most `max_forget_per_call`).
    pub matched: usize,
    /// Memories forgotten: 0 in a dry run.
    pub forgotten: usize,
    pub dry_run: bool,
    /// More memories match than one call forgets (`max_forget_per_call`): call again.
    pub more: bool,
    /// The first ids matched (at most `max_page_size`), for a look before forgetting.
    pub ids: Vec<Uuid>,
    /// The scopes memories were forgotten from (empty in a dry run).
    pub scopes: Vec<Scope>,
}

/// What one retention pass forgot in one tenant.
#[derive(Debug, Clone, PartialEq)]
pub struct Expired {
    pub tenant_id: String,
    pub forgotten: usize,
    pub scopes: Vec<Scope>,
}

impl MemoryService {
    /// Deletes a record, its vector and its versions. Unknown ids are
    /// [`crate::MemoryError::NotFound`].
    pub async fn delete(&self, who: &Identity, id: Uuid) -> Result<()> {
        let tenant_id = validate::tenant(who)?;
        self.check_reach(who, id).await?;
        if self.remove(tenant_id, &[id]).await?.0 == 0 {
            return Err(MemoryError::NotFound(id.to_string()));
        }
        Ok(())
    }

    /// Forgets what `request` selects within the caller's scopes, at most
    /// `max_forget_per_call` memories per call; see the module documentation.
    pub async fn forget(&self, who: &Identity, request: ForgetRequest) -> Result<ForgetOutcome> {
        let tenant_id = validate::tenant(who)?;
        if request.layers.is_none()
            && request.tags.is_empty()
            && request.kinds.is_empty()
            && request.ids.is_empty()
            && request.updated_before.is_none()
        {
            return Err(MemoryError::invalid(
                "nothing selected: name `layers`, `tags`, `kinds`, `ids` or `updated_before`; \
                 to forget every memory you can see, name every layer",
            ));
        }
        let max_ids = self.config.max_page_size;
        if request.ids.len() > max_ids {
            return Err(MemoryError::invalid(format!(
                "`ids` has {} ids; the limit is {max_ids} per call (max_page_size)",
                request.ids.len()
            )));
        }
        let selection = Selection {
            filter: MemoryFilter {
                scopes: validate::scopes(who, request.layers.as_deref(), &self.config)?,
                tags: validate::tags("tags", &request.tags, &self.config)?,
                kinds: validate::kinds("kinds", &request.kinds, &self.config)?,
            },
            layers: Vec::new(),
            ids: request.ids.clone(),
            updated_before: request.updated_before,
        };
        if selection.filter.scopes.is_empty() {
            return Ok(ForgetOutcome {
                matched: 0,
                forgotten: 0,
                dry_run: request.dry_run,
                more: false,
                ids: Vec::new(),
                scopes: Vec::new(),
            });
        }
        let cap = self.config.max_forget_per_call;
        let mut ids = self.records.select(tenant_id, &selection, cap + 1).await?;
        let more = ids.len() > cap;
        ids.truncate(cap);
        // Ids the caller's grants do not reach are not the caller's to forget (nor to count).
        if !who.grants.reach_everything() && !ids.is_empty() {
            let reachable: BTreeSet<Uuid> = self
                .records
                .get_many(tenant_id, &ids)
                .await?
                .into_iter()
                .filter(|record| who.reaches(&record.scope()))
                .map(|record| record.id)
                .collect();
            ids.retain(|id| reachable.contains(id));
        }
        let (forgotten, scopes) = if request.dry_run {
            (0, BTreeSet::new())
        } else {
            let (forgotten, scopes) = self.remove(tenant_id, &ids).await?;
            let detail = serde_json::json!({
                "layers": request.layers,
                "tags": request.tags,
                "kinds": request.kinds,
                "updated_before": request.updated_before,
                "ids": ids,
            });
            self.audit(tenant_id, &actor(who), "forget", forgotten, detail)
                .await?;
            (forgotten, scopes)
        };
        Ok(ForgetOutcome {
            matched: ids.len(),
            forgotten,
            dry_run: request.dry_run,
            more,
            ids: ids.into_iter().take(max_ids).collect(),
            scopes: scopes.into_iter().collect(),
        })
    }

    /// One retention pass over every tenant: forgets the memories of each layer with a
    /// retention (`retention.days`) last changed longer ago, at most `max_forget_per_call`
    /// per layer. Returns what was forgotten, per tenant.
    pub async fn expire(&self) -> Result<Vec<Expired>> {
        let mut expired = Vec::new();
        for (&layer, &days) in &self.config.retention.days {
            let before = now_millis() - i64::from(days) * 86_400_000;
            let due = self
                .records
                .expired(layer, before, self.config.max_forget_per_call)
                .await?;
            let mut by_tenant: std::collections::BTreeMap<String, Vec<Uuid>> = Default::default();
            for (tenant_id, id) in due {
                by_tenant.entry(tenant_id).or_default().push(id);
            }
            for (tenant_id, ids) in by_tenant {
                let (forgotten, scopes) = self.remove(&tenant_id, &ids).await?;
                let detail = serde_json::json!({
                    "layer": layer,
                    "retention_days": days,
                    "updated_before": before,
                    "ids": ids,
                });
                self.audit(&tenant_id, "retention", "expire", forgotten, detail)
                    .await?;
                expired.push(Expired {
                    tenant_id,
                    forgotten,
                    scopes: scopes.into_iter().collect(),
                });
            }
        }
        Ok(expired)
    }

    /// Forgets everything `tenant_id` owns: every memory (in batches, each its own
    /// transaction: an interrupted purge resumes when run again), then its rows in every agent
    /// table (summaries, trajectories, Hindsight, loops, LLM usage). Returns how many memories.
    /// Only the audit row of the purge stays.
    pub async fn purge_tenant(&self, tenant_id: &str, actor: &str) -> Result<usize> {
        let selection = Selection::default();
        let mut total = 0;
        loop {
            let ids = self.records.select(tenant_id, &selection, BATCH).await?;
            if ids.is_empty() {
                break;
            }
            // Every note goes: nothing is left to unlink.
            total += self.remove_records(tenant_id, &ids).await?.0;
        }
        // Children first: the reverse of the order the tables are copied in.
        for table in crate::migrate::AGENT_TABLES.iter().rev() {
            let sql = format!("DELETE FROM {table} WHERE tenant_id = $1");
            crate::with_pool!(self.database(), |pool| sqlx::query(sqlx::AssertSqlSafe(
                sql.clone()
            ))
            .bind(tenant_id)
            .execute(pool)
            .await
            .map(drop))
            .map_err(|error| MemoryError::storage(format!("purging {table}"), error))?;
        }
        let detail = serde_json::json!({ "all": true });
        self.audit(tenant_id, actor, "purge", total, detail).await?;
        Ok(total)
    }

    /// Removes the records `ids` of `tenant_id` everywhere they are held; returns how many
    /// existed, and their scopes.
    /// Removes `ids`, then takes the links to the notes among them out of the notes left
    /// ([`unlink_notes`](Self::unlink_notes)).
    async fn remove(&self, tenant_id: &str, ids: &[Uuid]) -> Result<(usize, BTreeSet<Scope>)> {
        let (removed, touched, notes) = self.remove_records(tenant_id, ids).await?;
        if !notes.is_empty() {
            self.unlink_notes(tenant_id, &notes).await?;
        }
        Ok((removed, touched))
    }

    /// Removes `ids` (records, tags, vectors, versions); returns how many, their scopes and
    /// the notes among them.
    async fn remove_records(
        &self,
        tenant_id: &str,
        ids: &[Uuid],
    ) -> Result<(usize, BTreeSet<Scope>, Vec<(Uuid, Scope)>)> {
        let (mut removed, mut touched, mut notes) = (0, BTreeSet::new(), Vec::new());
        for batch in ids.chunks(BATCH) {
            let _write = self.writes.lock().await;
            let deleted = self.records.delete_many(tenant_id, batch).await?;
            if deleted.is_empty() {
                continue;
            }
            let gone: Vec<Uuid> = deleted.iter().map(|record| record.id).collect();
            self.writes
                .apply_to_vectors(self.vectors.remove(tenant_id, &gone))
                .await;
            drop(_write);
            removed += deleted.len();
            notes.extend(
                deleted
                    .iter()
                    .filter(|record| record.kind == kind::NOTE)
                    .map(|record| (record.id, record.scope())),
            );
            let scopes: BTreeSet<Scope> = deleted.iter().map(|record| record.scope()).collect();
            for scope in scopes {
                // Nobody listening is fine.
                let _ = self.changes.send(MemoryChange {
                    tenant_id: tenant_id.to_owned(),
                    scope: scope.clone(),
                });
                touched.insert(scope);
            }
        }
        Ok((removed, touched, notes))
    }

    /// Notes link earlier notes of their scope: the id in `metadata.related` and a "Related
    /// notes" line with the linked note's title and description. A forgotten note must not
    /// live on there, so every note of the scope that links one is rewritten without the
    /// link — as a fix, since a kept version would keep it. Returns how many were rewritten.
    async fn unlink_notes(&self, tenant_id: &str, forgotten: &[(Uuid, Scope)]) -> Result<usize> {
        let ids: BTreeSet<Uuid> = forgotten.iter().map(|(id, _)| *id).collect();
        let scopes: BTreeSet<&Scope> = forgotten.iter().map(|(_, scope)| scope).collect();
        let links = |record: &MemoryRecord| {
            record
                .metadata
                .get("related")
                .and_then(serde_json::Value::as_array)
                .is_some_and(|related| {
                    related.iter().any(|id| {
                        id.as_str()
                            .and_then(|id| id.parse::<Uuid>().ok())
                            .is_some_and(|id| ids.contains(&id))
                    })
                })
        };
        let mut rewritten = 0;
        for scope in scopes {
            let mut linking = Vec::new();
            let mut before = None;
            loop {
                let query = ListQuery {
                    filter: MemoryFilter {
                        scopes: vec![scope.clone()],
                        tags: Vec::new(),
                        kinds: vec![kind::NOTE.to_owned()],
                    },
                    before,
                    limit: BATCH,
                    metadata_only: true,
                };
                let page = self.records.list(tenant_id, &query).await?;
                linking.extend(
                    page.items
                        .iter()
                        .filter(|note| links(note))
                        .map(|note| note.id),
                );
                match page.next {
                    Some(next) => before = Some(next),
                    None => break,
                }
            }
            let owner = Identity::owning(tenant_id, scope);
            for id in linking {
                let Some(note) = self.records.get(tenant_id, id).await? else {
                    continue;
                };
                let content = note.content.as_deref().unwrap_or_default();
                let mut kept: String = content
                    .lines()
                    .filter(|line| !ids.iter().any(|id| line.contains(&id.to_string())))
                    .collect::<Vec<_>>()
                    .join("\n");
                if content.ends_with('\n') {
                    kept.push('\n');
                }
                let mut metadata = note.metadata.clone();
                if let Some(related) = metadata
                    .get_mut("related")
                    .and_then(serde_json::Value::as_array_mut)
                {
                    related.retain(|id| {
                        !id.as_str()
                            .and_then(|id| id.parse::<Uuid>().ok())
                            .is_some_and(|id| ids.contains(&id))
                    });
                }
                let patch = MemoryPatch {
                    content: Some(kept),
                    metadata: Some(metadata),
                    mode: Some(UpdateMode::Fix),
                    ..MemoryPatch::default()
                };
                match self.update(&owner, id, patch).await {
                    Ok(_) => rewritten += 1,
                    // Forgotten meanwhile: nothing links any more.
                    Err(MemoryError::NotFound(_)) => {}
                    // The forget itself is done; say which note still links.
                    Err(error) => tracing::warn!(
                        note = %id,
                        %error,
                        "cannot take a forgotten note's link out of this note; forget or edit it"
                    ),
                }
            }
        }
        if rewritten > 0 {
            tracing::info!(
                rewritten,
                "took forgotten notes out of the notes linking them"
            );
        }
        Ok(rewritten)
    }

    async fn audit(
        &self,
        tenant_id: &str,
        actor: &str,
        action: &str,
        count: usize,
        detail: serde_json::Value,
    ) -> Result<()> {
        crate::with_pool!(self.database(), |pool| sqlx::query(
            "INSERT INTO memory_audit (tenant_id, at, actor, action, count, detail) \
             VALUES ($1, $2, $3, $4, $5, $6)"
        )
        .bind(tenant_id)
        .bind(now_millis())
        .bind(actor)
        .bind(action)
        .bind(count as i64)
        .bind(detail.to_string())
        .execute(pool)
        .await
        .map(drop))
        .map_err(|error| MemoryError::storage("writing the audit log", error))
    }
}

/// Who is forgetting, for the audit log: the narrowest named identity of the caller.
fn actor(who: &Identity) -> String {
    [Layer::User, Layer::Agent, Layer::Session, Layer::Project]
        .into_iter()
        .find_map(|layer| {
            who.scope(layer)
                .map(|id| format!("{}:{id}", layer.scope_field().trim_end_matches("_id")))
        })
        .unwrap_or_else(|| "tenant".to_owned())
}

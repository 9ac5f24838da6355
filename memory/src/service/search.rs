//! [`MemoryService::search`]: the retrieval pipeline end to end (the pure parts are in
//! [`crate::retrieval`]).
//!
//! 1. Read the query once ([`QueryAnalysis`]): terms, stems, names, the time it names.
//! 2. First stage, concurrently: BM25 over the terms and the vector index over the query's
//!    embedding, `max(limit × candidates_per_hit, min_candidates)` each; reciprocal-rank
//!    fusion picks the best `rerank_depth` of their union.
//! 3. Second stage: every candidate's record is read (one `get_many`), its signals computed and
//!    weighed ([`rank`]) — a first pass; then, with `neighbours` on, the conversational turns
//!    adjacent to the best candidate turns join, and every turn learns its best neighbouring
//!    turn's first-pass score; the second pass gives the final score.
//! 4. Hits under `min_score` go, near-duplicates fold onto their original, `limit` are kept.
//!
//! `as_of` a past time, the versions valid then take their memories' places in the first stage
//! ([`super::as_of`]) and what took effect later is left out.

use std::collections::{HashMap, HashSet};

use uuid::Uuid;

use super::MemoryService;
use super::as_of::PastVersions;
use crate::embed::StaticModel;
use crate::error::{MemoryError, Result};
use crate::model::{
    MemoryFilter, MemoryRecord, SearchExplanation, SearchHit, SearchRequest, now_millis,
};
use crate::retrieval::rank::{self, Scored};
use crate::retrieval::signals::{self, FirstStage, PreparedQuery};
use crate::retrieval::{self, QueryAnalysis};
use crate::validate;

impl MemoryService {
    /// Hybrid retrieval with a second stage; see the module documentation. Scores are in 0..1
    /// and comparable across queries.
    pub async fn search(
        &self,
        who: &crate::model::Identity,
        request: SearchRequest,
    ) -> Result<Vec<SearchHit>> {
        let tenant_id = validate::tenant(who)?;
        let limit = validate::limit("limit", request.limit, &self.config)?;
        if request.query.len() > self.config.max_query_bytes {
            return Err(MemoryError::invalid(format!(
                "`query` is {} bytes; the limit is {} bytes (max_query_bytes)",
                request.query.len(),
                self.config.max_query_bytes
            )));
        }
        if !(0.0..=1.0).contains(&request.min_score) {
            return Err(MemoryError::invalid(format!(
                "`min_score` is {}; use a relevance between 0 and 1",
                request.min_score
            )));
        }
        let filter = MemoryFilter {
            scopes: validate::scopes(who, request.layers.as_deref(), &self.config)?,
            tags: validate::tags("tags", &request.tags, &self.config)?,
            kinds: validate::kinds("kinds", &request.kinds, &self.config)?,
        };
        if !retrieval::is_searchable(&request.query) || filter.scopes.is_empty() {
            return Ok(Vec::new());
        }
        self.catch_up().await?;

        let config = &self.config.retrieval;
        let analysis = QueryAnalysis::new(&request.query, now_millis(), config.max_query_terms);
        let per_list = (limit * config.candidates_per_hit).max(config.min_candidates);
        let vector_side = async {
            let query = self
                .embed(&[analysis.semantic_text.as_str()])
                .await?
                .pop()
                .expect("one vector");
            let hits = self
                .vectors
                .search(tenant_id, &query, &filter, per_list)
                .await?;
            Ok::<_, MemoryError>((query, hits))
        };
        let lexical_side =
            self.records
                .lexical_search(tenant_id, &analysis.terms, &filter, per_list);
        let ((query_vector, mut vector_hits), mut lexical_hits) =
            tokio::try_join!(vector_side, lexical_side)?;
        let past_time = request.as_of.filter(|&at| at < now_millis());
        let past = match past_time {
            Some(at) => {
                self.join_past_versions(
                    tenant_id,
                    &filter,
                    at,
                    &analysis,
                    &query_vector,
                    per_list,
                    &mut vector_hits,
                    &mut lexical_hits,
                )
                .await?
            }
            None => PastVersions::new(),
        };

        let mut fused = retrieval::fuse(&vector_hits, &lexical_hits, config);
        retrieval::order(&mut fused);
        fused.truncate(config.rerank_depth.max(limit));
        for candidate in &mut fused {
            if let Some((_, cosine)) = past.get(&candidate.id) {
                candidate.cosine = Some(*cosine);
            }
        }
        self.fill_cosines(tenant_id, &query_vector, &mut fused)
            .await?;

        let ids: Vec<Uuid> = fused
            .iter()
            .map(|c| c.id)
            .filter(|id| !past.contains_key(id))
            .collect();
        let mut records: HashMap<Uuid, MemoryRecord> = self
            .records
            .get_many(tenant_id, &ids)
            .await?
            .into_iter()
            // As of a past time, only what had taken effect by then.
            .filter(|r| past_time.is_none_or(|at| r.valid_from <= at))
            .map(|r| (r.id, r))
            .chain(past.into_iter().map(|(id, (record, _))| (id, record)))
            .collect();
        let model = StaticModel::shared();
        let prepared = PreparedQuery::new(&analysis, &model);
        let calibration = self.embedder.calibration();
        let weights = &config.weights;
        let mut scored: Vec<Scored> = fused
            .into_iter()
            .filter_map(|candidate| {
                // A record deleted since the candidates were found is skipped.
                let record = records.remove(&candidate.id)?;
                let first = FirstStage {
                    semantic: candidate.cosine.map_or(0.0, |c| calibration.relevance(c)),
                    lexical: candidate.lexical,
                    fused: candidate.fused_share(config),
                };
                let signals = signals::signals(&prepared, &record, first);
                Some(Scored {
                    score: weights.score(&signals),
                    record,
                    signals,
                    lexical_rank: candidate.lexical_rank,
                    semantic_rank: candidate.semantic_rank,
                    duplicates: Vec::new(),
                })
            })
            .collect();
        rank::order(&mut scored);
        // The neighbours step reads the turns as they are now; a past time leaves it out.
        if config.neighbours > 0 && past_time.is_none() {
            let joined = self
                .join_neighbours(tenant_id, &filter, &query_vector, &prepared, &mut scored)
                .await?;
            if joined {
                rank::order(&mut scored);
            }
        }
        scored.retain(|hit| hit.score >= request.min_score);
        let hits = rank::collapse_duplicates(scored, &model, config.duplicate_similarity, limit);
        Ok(hits
            .into_iter()
            .map(|hit| SearchHit {
                layer: hit.record.layer,
                score: hit.score,
                explain: request.explain.then(|| SearchExplanation {
                    signals: hit.signals,
                    lexical_rank: hit.lexical_rank,
                    semantic_rank: hit.semantic_rank,
                }),
                duplicates: hit.duplicates,
                record: hit.record,
            })
            .collect())
    }

    /// The neighbours step (see the module documentation): the conversational turns adjacent
    /// to the best `neighbours` candidates that are turns join `scored`, and every turn with a
    /// known neighbouring turn gets that neighbour's best first-pass score as its `neighbour`
    /// signal and is scored again. Memories that are not turns (notes, rules, lessons) have no
    /// neighbours: what was written just before them says nothing about them.
    /// Whether anything changed.
    async fn join_neighbours(
        &self,
        tenant_id: &str,
        filter: &MemoryFilter,
        query_vector: &[f32],
        prepared: &PreparedQuery<'_>,
        scored: &mut Vec<Scored>,
    ) -> Result<bool> {
        let config = &self.config.retrieval;
        let anchors: Vec<Uuid> = scored
            .iter()
            .filter(|hit| signals::is_turn(&hit.record))
            .take(config.neighbours)
            .map(|hit| hit.record.id)
            .collect();
        if anchors.is_empty() {
            return Ok(false);
        }
        let adjacent = self.records.adjacent(tenant_id, &anchors).await?;
        let mut edges: Vec<(Uuid, Uuid)> = Vec::with_capacity(adjacent.len() * 2);
        for row in &adjacent {
            for neighbour in [row.previous, row.next].into_iter().flatten() {
                edges.push((row.id, neighbour));
            }
        }
        if edges.is_empty() {
            return Ok(false);
        }
        let known: HashSet<Uuid> = scored.iter().map(|hit| hit.record.id).collect();
        let mut joining: Vec<Uuid> = edges
            .iter()
            .map(|&(_, neighbour)| neighbour)
            .filter(|id| !known.contains(id))
            .collect();
        joining.sort_unstable();
        joining.dedup();
        if !joining.is_empty() {
            let cosines = self
                .vectors
                .similarities(tenant_id, query_vector, &joining)
                .await?;
            let cosine_of: HashMap<Uuid, Option<f32>> =
                joining.iter().copied().zip(cosines).collect();
            let calibration = self.embedder.calibration();
            for record in self.records.get_many(tenant_id, &joining).await? {
                // Neighbours share the anchor's scope and kind; the tags must match too.
                if !signals::is_turn(&record)
                    || !filter.tags.iter().all(|tag| record.tags.contains(tag))
                {
                    continue;
                }
                let first = FirstStage {
                    semantic: cosine_of
                        .get(&record.id)
                        .copied()
                        .flatten()
                        .map_or(0.0, |c| calibration.relevance(c)),
                    ..FirstStage::default()
                };
                let signals = signals::signals(prepared, &record, first);
                scored.push(Scored {
                    score: config.weights.score(&signals),
                    record,
                    signals,
                    lexical_rank: None,
                    semantic_rank: None,
                    duplicates: Vec::new(),
                });
            }
        }
        // The first-pass scores are calibrated probabilities: a neighbour lends what it is
        // worth on its own, so an off-topic query's best guess lends its neighbours little.
        let first_pass: HashMap<Uuid, f32> = scored
            .iter()
            .filter(|hit| signals::is_turn(&hit.record))
            .map(|hit| (hit.record.id, hit.score))
            .collect();
        let mut best: HashMap<Uuid, f32> = HashMap::new();
        for &(a, b) in &edges {
            for (this, other) in [(a, b), (b, a)] {
                if let Some(&score) = first_pass.get(&other) {
                    let entry = best.entry(this).or_insert(0.0);
                    *entry = entry.max(score);
                }
            }
        }
        for hit in scored.iter_mut() {
            if !signals::is_turn(&hit.record) {
                continue;
            }
            if let Some(&neighbour) = best.get(&hit.record.id) {
                hit.signals.neighbour = neighbour;
                hit.score = config.weights.score(&hit.signals);
            }
        }
        Ok(true)
    }

    /// Exact cosines for the candidates only the lexical side found.
    async fn fill_cosines(
        &self,
        tenant_id: &str,
        query: &[f32],
        fused: &mut [retrieval::Candidate],
    ) -> Result<()> {
        let missing: Vec<Uuid> = fused
            .iter()
            .filter(|c| c.cosine.is_none())
            .map(|c| c.id)
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        let similarities = self
            .vectors
            .similarities(tenant_id, query, &missing)
            .await?;
        let by_id: HashMap<Uuid, Option<f32>> = missing.into_iter().zip(similarities).collect();
        for candidate in fused.iter_mut().filter(|c| c.cosine.is_none()) {
            candidate.cosine = by_id.get(&candidate.id).copied().flatten();
        }
        Ok(())
    }
}

//! A search `as_of` a past time: the first stage's evidence, as memory stood then.
//!
//! The indexes hold each memory as it is now. For a past time `at`, a memory whose current
//! version took effect after `at` was either different then (one of its closed versions was
//! valid) or not written yet. So the past versions valid at `at` (at most `as_of_versions`,
//! the most recently closed first) join both first-stage lists in place of their memories'
//! current versions: in the vector list by the cosine of their stored vector, in the lexical
//! list by the share of the query's terms they contain (they are not in the BM25 index). The
//! second stage scores them like any other candidate; current versions that took effect after
//! `at` are dropped when the records are read.

use std::collections::{HashMap, HashSet};

use uuid::Uuid;

use super::MemoryService;
use crate::embed::normalize;
use crate::error::Result;
use crate::model::{MemoryFilter, MemoryRecord, Timestamp};
use crate::retrieval::QueryAnalysis;
use crate::storage::LexicalHit;
use crate::text::words;
use crate::vector::VectorHit;

/// The versions valid at a past time that joined the first stage, by memory id, with the
/// cosine of each to the query.
pub(super) type PastVersions = HashMap<Uuid, (MemoryRecord, f32)>;

impl MemoryService {
    /// Puts the versions valid at `at` into the first stage's lists (see the module
    /// documentation); each list keeps its best `per_list`.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn join_past_versions(
        &self,
        tenant_id: &str,
        filter: &MemoryFilter,
        at: Timestamp,
        analysis: &QueryAnalysis,
        query_vector: &[f32],
        per_list: usize,
        vector_hits: &mut Vec<VectorHit>,
        lexical_hits: &mut Vec<LexicalHit>,
    ) -> Result<PastVersions> {
        let limit = self.config.retrieval.as_of_versions;
        let mut past: Vec<(MemoryRecord, Vec<f32>)> = self
            .records
            .versions_at(tenant_id, filter, at, limit)
            .await?
            .into_iter()
            .filter(|(record, _)| filter.tags.iter().all(|tag| record.tags.contains(tag)))
            .collect();
        self.reembed_foreign(&mut past).await?;

        let mut query = query_vector.to_vec();
        normalize(&mut query);
        let terms: HashSet<&str> = analysis.terms.iter().map(String::as_str).collect();
        let mut versions = PastVersions::with_capacity(past.len());
        let mut evidence = Vec::with_capacity(past.len());
        for (record, mut vector) in past {
            normalize(&mut vector);
            let cosine = if vector.len() == query.len() {
                query.iter().zip(&vector).map(|(a, b)| a * b).sum()
            } else {
                0.0
            };
            let content = record.content.as_deref().unwrap_or_default();
            let present: HashSet<String> = words(content, true).into_iter().collect();
            let found = terms.iter().filter(|term| present.contains(**term)).count();
            let relevance = found as f32 / terms.len().max(1) as f32;
            evidence.push((record.id, cosine, relevance));
            versions.insert(record.id, (record, cosine));
        }
        // The current version of a memory that had another version then is not evidence.
        vector_hits.retain(|hit| !versions.contains_key(&hit.id));
        lexical_hits.retain(|hit| !versions.contains_key(&hit.id));
        for (id, similarity, relevance) in evidence {
            vector_hits.push(VectorHit { id, similarity });
            if relevance > 0.0 {
                lexical_hits.push(LexicalHit { id, relevance });
            }
        }
        vector_hits.sort_by(|a, b| b.similarity.total_cmp(&a.similarity));
        vector_hits.truncate(per_list);
        lexical_hits.sort_by(|a, b| b.relevance.total_cmp(&a.relevance));
        lexical_hits.truncate(per_list);
        Ok(versions)
    }

    /// Vectors of versions kept before the embedder changed are recomputed: vectors of
    /// different embedders are never compared.
    async fn reembed_foreign(&self, past: &mut [(MemoryRecord, Vec<f32>)]) -> Result<()> {
        let embedder = self.embedder.id();
        let foreign: Vec<usize> = (0..past.len())
            .filter(|&i| past[i].0.embedder_id != embedder)
            .collect();
        if foreign.is_empty() {
            return Ok(());
        }
        let texts: Vec<&str> = foreign
            .iter()
            .map(|&i| past[i].0.content.as_deref().unwrap_or_default())
            .collect();
        let vectors = self.embed(&texts).await?;
        for (i, vector) in foreign.into_iter().zip(vectors) {
            past[i].1 = vector;
        }
        Ok(())
    }
}

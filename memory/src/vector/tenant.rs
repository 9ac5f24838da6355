//! One tenant's vectors, kept contiguous per scope.
//!
//! Each scope (session s-1, project aeterna, …) of the tenant owns a [`Segment`]: a row-major
//! `Vec<f32>` of its vectors, per-row kind and tag ids for filtering, and an int8 copy once the
//! tenant is large enough for the pre-scan to pay off. A search reads only the segments of the
//! scopes it may see, as contiguous memory; the common filter (by scope) costs nothing per row,
//! and a scan never strides over rows it will not score.

use foldhash::HashMap;

use uuid::Uuid;

use super::kernels::{self, QueryCodes};
use super::quant::Quantized;
use super::topk::{Scored, TopK};
use super::{VectorEntry, VectorHit, VectorIndexConfig};
use crate::intern::Interner;
use crate::model::{MemoryFilter, Scope};

/// The vectors of one scope, row-aligned across every field.
#[derive(Debug, Default)]
struct Segment {
    ids: Vec<Uuid>,
    /// `ids.len() × dims` floats; row `r` is `data[r*dims..(r+1)*dims]`.
    data: Vec<f32>,
    kind_of: Vec<u32>,
    tags_of: Vec<Box<[u32]>>,
    quantized: Option<Quantized>,
}

impl Segment {
    fn row(&self, row: usize, dims: usize) -> &[f32] {
        &self.data[row * dims..(row + 1) * dims]
    }
}

/// Per-row conditions beyond the scope: interned kinds (any) and tags (all).
struct RowFilter {
    kinds: Option<Vec<u32>>,
    tags: Vec<u32>,
}

impl RowFilter {
    fn is_trivial(&self) -> bool {
        self.kinds.is_none() && self.tags.is_empty()
    }

    fn admits(&self, segment: &Segment, row: usize) -> bool {
        if let Some(kinds) = &self.kinds
            && !kinds.contains(&segment.kind_of[row])
        {
            return false;
        }
        self.tags
            .iter()
            .all(|tag| segment.tags_of[row].contains(tag))
    }
}

/// Search keys carry the segment in the high half and the row in the low half.
fn key(segment: usize, row: usize) -> u64 {
    ((segment as u64) << 32) | row as u64
}

fn unkey(key: u64) -> (usize, usize) {
    ((key >> 32) as usize, (key & 0xffff_ffff) as usize)
}

#[derive(Debug, Default)]
pub(crate) struct TenantVectors {
    dims: usize,
    segments: Vec<Segment>,
    segment_of: HashMap<Scope, usize>,
    /// Where each vector lives: (segment, row).
    location: HashMap<Uuid, (u32, u32)>,
    kinds: Interner<String>,
    tags: Interner<String>,
    quantized: bool,
}

impl TenantVectors {
    pub fn new(dims: usize) -> Self {
        TenantVectors {
            dims,
            ..Default::default()
        }
    }

    pub fn len(&self) -> usize {
        self.location.len()
    }

    pub fn is_quantized(&self) -> bool {
        self.quantized
    }

    /// Inserts or replaces the vector and attributes of `entry.id`.
    pub fn upsert(&mut self, entry: &VectorEntry, config: &VectorIndexConfig) {
        debug_assert_eq!(entry.vector.len(), self.dims);
        let kind = self.kinds.intern(&entry.kind);
        let tags: Box<[u32]> = entry.tags.iter().map(|tag| self.tags.intern(tag)).collect();
        let target = self.segment_for(&entry.scope);
        match self.location.get(&entry.id).copied() {
            Some((segment, row)) if segment as usize == target => {
                let (dims, row) = (self.dims, row as usize);
                let segment = &mut self.segments[target];
                segment.data[row * dims..(row + 1) * dims].copy_from_slice(&entry.vector);
                segment.kind_of[row] = kind;
                segment.tags_of[row] = tags;
                if let Some(quantized) = &mut segment.quantized {
                    quantized.set(row, &entry.vector);
                }
            }
            existing => {
                if existing.is_some() {
                    // The record moved to another scope.
                    self.remove(&entry.id, config);
                }
                let segment = &mut self.segments[target];
                let row = segment.ids.len();
                segment.ids.push(entry.id);
                segment.data.extend_from_slice(&entry.vector);
                segment.kind_of.push(kind);
                segment.tags_of.push(tags);
                if let Some(quantized) = &mut segment.quantized {
                    quantized.push(&entry.vector);
                }
                self.location.insert(entry.id, (target as u32, row as u32));
            }
        }
        self.adjust_quantization(config);
    }

    fn segment_for(&mut self, scope: &Scope) -> usize {
        if let Some(&segment) = self.segment_of.get(scope) {
            return segment;
        }
        let mut segment = Segment::default();
        if self.quantized {
            segment.quantized = Some(Quantized::default());
        }
        self.segments.push(segment);
        self.segment_of
            .insert(scope.clone(), self.segments.len() - 1);
        self.segments.len() - 1
    }

    /// Replaces the tags of `id`, if present.
    pub fn retag(&mut self, id: &Uuid, tags: &[String]) {
        if let Some(&(segment, row)) = self.location.get(id) {
            let tags = tags.iter().map(|tag| self.tags.intern(tag)).collect();
            self.segments[segment as usize].tags_of[row as usize] = tags;
        }
    }

    /// Removes `id`; the segment's last row moves into its place, keeping rows contiguous.
    pub fn remove(&mut self, id: &Uuid, config: &VectorIndexConfig) -> bool {
        let Some((segment_index, row)) = self.location.remove(id) else {
            return false;
        };
        let (dims, row) = (self.dims, row as usize);
        let segment = &mut self.segments[segment_index as usize];
        let last = segment.ids.len() - 1;
        if row != last {
            let moved = segment.ids[last];
            segment
                .data
                .copy_within(last * dims..(last + 1) * dims, row * dims);
            self.location.insert(moved, (segment_index, row as u32));
        }
        segment.ids.swap_remove(row);
        segment.data.truncate(last * dims);
        segment.kind_of.swap_remove(row);
        segment.tags_of.swap_remove(row);
        if let Some(quantized) = &mut segment.quantized {
            quantized.swap_remove(row, dims);
        }
        if segment.ids.is_empty() {
            // Keep the (reusable) segment, not its memory.
            *segment = Segment {
                quantized: segment.quantized.take().map(|_| Quantized::default()),
                ..Default::default()
            };
        }
        self.adjust_quantization(config);
        true
    }

    /// Builds the int8 copies when the tenant reaches the threshold, and drops them (with
    /// hysteresis) when it shrinks well below.
    fn adjust_quantization(&mut self, config: &VectorIndexConfig) {
        let rows = self.len();
        if !self.quantized && rows >= config.quantize_min_rows {
            for segment in &mut self.segments {
                segment.quantized = Some(Quantized::build(&segment.data, self.dims));
            }
            self.quantized = true;
        } else if self.quantized && rows < config.quantize_min_rows / 2 {
            for segment in &mut self.segments {
                segment.quantized = None;
            }
            self.quantized = false;
        }
    }

    /// Cosine similarity of `query` (unit length) with the stored vector of each of `ids`
    /// (`None` for an unknown id).
    pub fn similarities(&self, query: &[f32], ids: &[Uuid]) -> Vec<Option<f32>> {
        let found: Vec<(usize, &[f32])> = ids
            .iter()
            .enumerate()
            .filter_map(|(index, id)| {
                let &(segment, row) = self.location.get(id)?;
                Some((
                    index,
                    self.segments[segment as usize].row(row as usize, self.dims),
                ))
            })
            .collect();
        let rows: Vec<&[f32]> = found.iter().map(|&(_, row)| row).collect();
        let mut similarities = vec![None; ids.len()];
        kernels::dot_f32_rows(query, &rows, |index, score| {
            similarities[found[index].0] = Some(score);
            true
        });
        similarities
    }

    /// The exact best `k` of `candidates`, which come best approximation first.
    ///
    /// The first `max(k, rescore_min)` are always rescored; this sample shows how far the
    /// int8 approximation strays on this tenant's vectors for this query. Past it, rescoring
    /// stops at the first candidate whose approximation lies more than twice the sample's
    /// largest error below the sample's k-th best exact score: to enter the top `k` it would
    /// need an error over twice any the sample showed. On the load bench's assemblies (k 400 of
    /// 800 candidates) this skips about a third of the rows, each a scattered read.
    fn rescore(
        &self,
        query: &[f32],
        candidates: &[Scored],
        k: usize,
        config: &VectorIndexConfig,
    ) -> TopK {
        let rows: Vec<&[f32]> = candidates
            .iter()
            .map(|candidate| {
                let (segment, row) = unkey(candidate.key);
                self.segments[segment].row(row, self.dims)
            })
            .collect();
        let sampled = candidates.len().min(k.max(config.rescore_min));
        let mut sample = Vec::with_capacity(sampled);
        let mut largest_error = 0.0f32;
        let mut floor = f32::NEG_INFINITY;
        let mut exact = TopK::new(k);
        kernels::dot_f32_rows(query, &rows, |index, score| {
            let candidate = candidates[index];
            exact.push(score, candidate.key);
            if index < sampled {
                largest_error = largest_error.max((score - candidate.score).abs());
                sample.push(score);
                if index + 1 == sampled && sample.len() >= k {
                    let (_, kth, _) = sample.select_nth_unstable_by(k - 1, |a, b| b.total_cmp(a));
                    floor = *kth - 2.0 * largest_error;
                }
            }
            candidates
                .get(index + 1)
                .is_some_and(|next| index + 1 < sampled || next.score >= floor)
        });
        exact
    }

    /// The segments of the scopes `filter` selects (every segment when it names none).
    fn segments_for(&self, filter: &MemoryFilter) -> Vec<usize> {
        if filter.scopes.is_empty() {
            return (0..self.segments.len()).collect();
        }
        let mut selected: Vec<usize> = filter
            .scopes
            .iter()
            .filter_map(|scope| self.segment_of.get(scope).copied())
            .collect();
        selected.sort_unstable();
        selected.dedup();
        selected
    }

    /// `None` when no row can match (an unknown kind or tag was required).
    fn row_filter(&self, filter: &MemoryFilter) -> Option<RowFilter> {
        let kinds = if filter.kinds.is_empty() {
            None
        } else {
            let ids: Vec<u32> = filter
                .kinds
                .iter()
                .filter_map(|kind| self.kinds.get(kind.as_str()))
                .collect();
            if ids.is_empty() {
                return None;
            }
            Some(ids)
        };
        let mut tags = Vec::with_capacity(filter.tags.len());
        for tag in &filter.tags {
            tags.push(self.tags.get(tag.as_str())?);
        }
        Some(RowFilter { kinds, tags })
    }

    /// The `k` rows most similar to `query` among those `filter` admits, best first.
    /// Exact f32 scan; above the quantisation threshold an int8 scan picks candidates that
    /// are rescored in f32.
    pub fn search(
        &self,
        query: &[f32],
        filter: &MemoryFilter,
        k: usize,
        config: &VectorIndexConfig,
    ) -> Vec<VectorHit> {
        if k == 0 || self.location.is_empty() || query.len() != self.dims {
            return Vec::new();
        }
        let Some(rows) = self.row_filter(filter) else {
            return Vec::new();
        };
        let segments = self.segments_for(filter);
        let best = if self.quantized {
            let candidates = (k * config.rescore_factor).max(config.rescore_min);
            let query_codes = QueryCodes::quantize(query);
            let mut approximate = TopK::new(candidates);
            for &index in &segments {
                let segment = &self.segments[index];
                let quantized = segment.quantized.as_ref().expect("quantized tenant");
                let predicate = |row: usize| rows.admits(segment, row);
                let admit: kernels::Admit<'_> = if rows.is_trivial() {
                    None
                } else {
                    Some(&predicate)
                };
                kernels::scan_u8(
                    &query_codes,
                    &quantized.codes,
                    &quantized.scales,
                    admit,
                    key(index, 0),
                    &mut approximate,
                );
            }
            self.rescore(query, &approximate.into_sorted(), k, config)
        } else {
            let mut exact = TopK::new(k);
            for &index in &segments {
                let segment = &self.segments[index];
                let predicate = |row: usize| rows.admits(segment, row);
                let admit: kernels::Admit<'_> = if rows.is_trivial() {
                    None
                } else {
                    Some(&predicate)
                };
                kernels::scan_f32(query, &segment.data, admit, key(index, 0), &mut exact);
            }
            exact
        };
        best.into_sorted()
            .into_iter()
            .map(|scored| {
                let (segment, row) = unkey(scored.key);
                VectorHit {
                    id: self.segments[segment].ids[row],
                    similarity: scored.score,
                }
            })
            .collect()
    }
}

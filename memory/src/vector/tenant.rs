//! One tenant's vectors: a contiguous row-major `Vec<f32>`, per-row filter attributes, and an
//! int8 copy once the tenant is large enough for it to pay off.

use std::collections::HashMap;
use std::hash::Hash;

use uuid::Uuid;

use super::kernels::{self, QueryCodes};
use super::quant::{Quantized, quantize_into};
use super::topk::TopK;
use super::{VectorEntry, VectorHit, VectorIndexConfig};
use crate::model::{MemoryFilter, Scope};

/// Gives small integer ids to repeated values (scopes, kinds, tags).
#[derive(Debug)]
struct Interner<T> {
    ids: HashMap<T, u32>,
}

impl<T> Default for Interner<T> {
    fn default() -> Self {
        Interner {
            ids: HashMap::new(),
        }
    }
}

impl<T: Hash + Eq + Clone> Interner<T> {
    fn intern(&mut self, value: &T) -> u32 {
        if let Some(id) = self.ids.get(value) {
            return *id;
        }
        let id = self.ids.len() as u32;
        self.ids.insert(value.clone(), id);
        id
    }

    fn get<Q>(&self, value: &Q) -> Option<u32>
    where
        T: std::borrow::Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.ids.get(value).copied()
    }

    fn len(&self) -> usize {
        self.ids.len()
    }
}

/// A compiled [`MemoryFilter`]: interned ids to compare per row.
struct RowFilter {
    /// Indexed by interned scope id; `None` admits every scope.
    scopes: Option<Vec<bool>>,
    kinds: Option<Vec<u32>>,
    tags: Vec<u32>,
}

impl RowFilter {
    fn admits_all(&self) -> bool {
        self.scopes.is_none() && self.kinds.is_none() && self.tags.is_empty()
    }
}

#[derive(Debug, Default)]
pub(crate) struct TenantVectors {
    dims: usize,
    ids: Vec<Uuid>,
    /// `ids.len() × dims` floats; row `r` is `data[r*dims..(r+1)*dims]`.
    data: Vec<f32>,
    scope_of: Vec<u32>,
    kind_of: Vec<u32>,
    tags_of: Vec<Box<[u32]>>,
    row_of: HashMap<Uuid, u32>,
    scopes: Interner<Scope>,
    kinds: Interner<String>,
    tags: Interner<String>,
    quantized: Option<Quantized>,
}

impl TenantVectors {
    pub fn new(dims: usize) -> Self {
        TenantVectors {
            dims,
            ..Default::default()
        }
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_quantized(&self) -> bool {
        self.quantized.is_some()
    }

    /// Inserts or replaces the vector and attributes of `entry.id`.
    pub fn upsert(&mut self, entry: &VectorEntry, config: &VectorIndexConfig) {
        debug_assert_eq!(entry.vector.len(), self.dims);
        let scope = self.scopes.intern(&entry.scope);
        let kind = self.kinds.intern(&entry.kind);
        let tags: Box<[u32]> = entry.tags.iter().map(|tag| self.tags.intern(tag)).collect();
        match self.row_of.get(&entry.id) {
            Some(&row) => {
                let row = row as usize;
                self.data[row * self.dims..(row + 1) * self.dims].copy_from_slice(&entry.vector);
                self.scope_of[row] = scope;
                self.kind_of[row] = kind;
                self.tags_of[row] = tags;
                if let Some(quantized) = &mut self.quantized {
                    quantized.set(row, &entry.vector);
                }
            }
            None => {
                self.row_of.insert(entry.id, self.ids.len() as u32);
                self.ids.push(entry.id);
                self.data.extend_from_slice(&entry.vector);
                self.scope_of.push(scope);
                self.kind_of.push(kind);
                self.tags_of.push(tags);
                if let Some(quantized) = &mut self.quantized {
                    quantized.push(&entry.vector);
                }
            }
        }
        self.adjust_quantization(config);
    }

    /// Replaces the tags of `id`, if present.
    pub fn retag(&mut self, id: &Uuid, tags: &[String]) {
        if let Some(&row) = self.row_of.get(id) {
            self.tags_of[row as usize] = tags.iter().map(|tag| self.tags.intern(tag)).collect();
        }
    }

    /// Removes `id`; the last row moves into its place, keeping the rows contiguous.
    pub fn remove(&mut self, id: &Uuid, config: &VectorIndexConfig) -> bool {
        let Some(row) = self.row_of.remove(id) else {
            return false;
        };
        let row = row as usize;
        let last = self.ids.len() - 1;
        if row != last {
            let moved = self.ids[last];
            self.data
                .copy_within(last * self.dims..(last + 1) * self.dims, row * self.dims);
            self.row_of.insert(moved, row as u32);
        }
        self.ids.swap_remove(row);
        self.data.truncate(last * self.dims);
        self.scope_of.swap_remove(row);
        self.kind_of.swap_remove(row);
        self.tags_of.swap_remove(row);
        if let Some(quantized) = &mut self.quantized {
            quantized.swap_remove(row, self.dims);
        }
        self.adjust_quantization(config);
        true
    }

    /// Builds the int8 copy when the tenant reaches the threshold, and drops it (with
    /// hysteresis) when it shrinks well below.
    fn adjust_quantization(&mut self, config: &VectorIndexConfig) {
        let rows = self.ids.len();
        match &self.quantized {
            None if rows >= config.quantize_min_rows => {
                self.quantized = Some(Quantized::build(&self.data, self.dims));
            }
            Some(_) if rows < config.quantize_min_rows / 2 => self.quantized = None,
            _ => {}
        }
    }

    fn row(&self, row: usize) -> &[f32] {
        &self.data[row * self.dims..(row + 1) * self.dims]
    }

    /// Cosine similarity of `query` (unit length) with the stored vector of `id`.
    pub fn similarity(&self, query: &[f32], id: &Uuid) -> Option<f32> {
        let row = *self.row_of.get(id)? as usize;
        Some(kernels::dot_f32(query, self.row(row)))
    }

    /// `None` when no row can match (an unknown scope, kind or tag was required).
    fn compile(&self, filter: &MemoryFilter) -> Option<RowFilter> {
        let scopes = if filter.scopes.is_empty() {
            None
        } else {
            let mut mask = vec![false; self.scopes.len()];
            let mut any = false;
            for scope in &filter.scopes {
                if let Some(id) = self.scopes.get(scope) {
                    mask[id as usize] = true;
                    any = true;
                }
            }
            if !any {
                return None;
            }
            Some(mask)
        };
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
        Some(RowFilter {
            scopes,
            kinds,
            tags,
        })
    }

    #[inline]
    fn admits(&self, filter: &RowFilter, row: usize) -> bool {
        if let Some(mask) = &filter.scopes
            && !mask[self.scope_of[row] as usize]
        {
            return false;
        }
        if let Some(kinds) = &filter.kinds
            && !kinds.contains(&self.kind_of[row])
        {
            return false;
        }
        filter
            .tags
            .iter()
            .all(|tag| self.tags_of[row].contains(tag))
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
        if k == 0 || self.ids.is_empty() || query.len() != self.dims {
            return Vec::new();
        }
        let Some(filter) = self.compile(filter) else {
            return Vec::new();
        };
        let predicate = |row: usize| self.admits(&filter, row);
        let admit: kernels::Admit<'_> = if filter.admits_all() {
            None
        } else {
            Some(&predicate)
        };
        let best = match &self.quantized {
            Some(quantized) => {
                let candidates = (k * config.rescore_factor).max(config.rescore_min);
                let mut codes = vec![0i8; self.dims];
                quantize_into(query, &mut codes);
                let mut approximate = TopK::new(candidates);
                kernels::scan_u8(
                    &QueryCodes::new(codes),
                    &quantized.codes,
                    &quantized.scales,
                    admit,
                    &mut approximate,
                );
                let mut exact = TopK::new(k);
                for candidate in approximate.into_sorted() {
                    exact.push(
                        kernels::dot_f32(query, self.row(candidate.row as usize)),
                        candidate.row,
                    );
                }
                exact
            }
            None => {
                let mut exact = TopK::new(k);
                kernels::scan_f32(query, &self.data, admit, &mut exact);
                exact
            }
        };
        best.into_sorted()
            .into_iter()
            .map(|scored| VectorHit {
                id: self.ids[scored.row as usize],
                similarity: scored.score,
            })
            .collect()
    }
}

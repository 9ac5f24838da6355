//! Keeps the `k` best-scoring entries of a scan, each named by a `u64` key.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

#[derive(Debug, Clone, Copy)]
pub(crate) struct Scored {
    pub score: f32,
    pub key: u64,
}

impl PartialEq for Scored {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Scored {}

impl PartialOrd for Scored {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Scored {
    /// By score, then by lower key first, so results are deterministic.
    fn cmp(&self, other: &Self) -> Ordering {
        self.score
            .total_cmp(&other.score)
            .then_with(|| other.key.cmp(&self.key))
    }
}

/// A bounded min-heap of the best `k` entries seen so far.
pub(crate) struct TopK {
    k: usize,
    heap: BinaryHeap<Reverse<Scored>>,
}

impl TopK {
    pub fn new(k: usize) -> Self {
        TopK {
            k,
            heap: BinaryHeap::with_capacity(k + 1),
        }
    }

    /// The score an entry must beat to enter (−∞ while not full).
    #[inline]
    pub fn threshold(&self) -> f32 {
        if self.heap.len() < self.k {
            f32::NEG_INFINITY
        } else {
            self.heap
                .peek()
                .map_or(f32::NEG_INFINITY, |Reverse(worst)| worst.score)
        }
    }

    #[inline]
    pub fn push(&mut self, score: f32, key: u64) {
        if self.k == 0 || score.is_nan() {
            return;
        }
        if self.heap.len() < self.k {
            self.heap.push(Reverse(Scored { score, key }));
        } else if score > self.threshold() {
            self.heap.pop();
            self.heap.push(Reverse(Scored { score, key }));
        }
    }

    /// Best first.
    pub fn into_sorted(self) -> Vec<Scored> {
        let mut items: Vec<Scored> = self
            .heap
            .into_iter()
            .map(|Reverse(scored)| scored)
            .collect();
        items.sort_unstable_by(|a, b| b.cmp(a));
        items
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_best_k_in_order() {
        let mut top = TopK::new(3);
        for (row, score) in [0.1, 0.9, 0.5, 0.7, f32::NAN, 0.2].into_iter().enumerate() {
            top.push(score, row as u64);
        }
        let rows: Vec<u64> = top.into_sorted().iter().map(|s| s.key).collect();
        assert_eq!(rows, [1, 3, 2]);
        let mut empty = TopK::new(0);
        empty.push(1.0, 0);
        assert!(empty.into_sorted().is_empty());
    }
}

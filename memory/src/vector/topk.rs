//! Keeps the `k` best-scoring entries of a scan, each named by a `u64` key.

use std::cmp::Ordering;

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

/// The best `k` entries seen so far.
///
/// Entries that beat the current threshold are appended to a buffer of up to `2k`; when it
/// fills, a linear-time selection keeps the best `k` and raises the threshold to the worst of
/// them. Each accepted entry costs amortised O(1), where a binary heap pays O(log k) twice (pop,
/// then push) — which dominated scans that keep thousands of candidates for rescoring.
pub(crate) struct TopK {
    k: usize,
    items: Vec<Scored>,
    /// Entries scoring at or below this cannot be among the best `k` (−∞ until `k` were kept).
    threshold: f32,
}

impl TopK {
    pub fn new(k: usize) -> Self {
        TopK {
            k,
            items: Vec::with_capacity(k.saturating_mul(2).min(1 << 16)),
            threshold: f32::NEG_INFINITY,
        }
    }

    #[inline]
    pub fn push(&mut self, score: f32, key: u64) {
        if self.k == 0 || score.is_nan() || score <= self.threshold {
            return;
        }
        self.items.push(Scored { score, key });
        if self.items.len() >= self.k * 2 {
            self.keep_best();
        }
    }

    /// Shrinks the buffer to its best `k` entries and raises the threshold to the worst of them.
    fn keep_best(&mut self) {
        if self.items.len() > self.k {
            self.items
                .select_nth_unstable_by(self.k - 1, |a, b| b.cmp(a));
            self.items.truncate(self.k);
        }
        if self.items.len() == self.k {
            self.threshold = self
                .items
                .iter()
                .map(|item| item.score)
                .fold(f32::INFINITY, f32::min);
        }
    }

    /// Best first.
    pub fn into_sorted(mut self) -> Vec<Scored> {
        self.keep_best();
        self.items.sort_unstable_by(|a, b| b.cmp(a));
        self.items
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

    /// Whatever the order and however many ties, the result is the first `k` of a full sort.
    #[test]
    fn matches_a_full_sort() {
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for k in [1, 2, 7, 100, 1000] {
            for n in [0, 1, k, 2 * k, 5 * k + 3] {
                // Few distinct scores, so ties cross every compaction boundary.
                let entries: Vec<Scored> = (0..n)
                    .map(|key| Scored {
                        score: (next() % 50) as f32 / 50.0,
                        key: key as u64,
                    })
                    .collect();
                let mut top = TopK::new(k);
                for entry in &entries {
                    top.push(entry.score, entry.key);
                }
                let mut expected = entries.clone();
                expected.sort_unstable_by(|a, b| b.cmp(a));
                expected.truncate(k);
                let got = top.into_sorted();
                assert_eq!(
                    got.iter().map(|s| s.key).collect::<Vec<_>>(),
                    expected.iter().map(|s| s.key).collect::<Vec<_>>(),
                    "k={k} n={n}"
                );
            }
        }
    }
}

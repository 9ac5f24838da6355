//! Scan kernels: score every (admitted) row of a slab against a query and keep the best.
//!
//! The whole scan loop runs inside one function compiled for the CPU's vector extensions
//! (chosen once per process): AVX-512 VNNI, else AVX2 + FMA, else portable Rust. Int8 rows
//! are stored offset by 128 as `u8`, the unsigned × signed operand order of VNNI's `vpdpbusd`
//! and AVX2's `vpmaddubsw`; the query stays `i8`, and `Σ (c + 128)·q = Σ c·q + 128·Σ q`
//! recovers the signed product.

use std::sync::OnceLock;

use super::quant::quantize_into;
use super::topk::TopK;

/// Which rows a scan scores; `None` scores them all.
pub(crate) type Admit<'a> = Option<&'a dyn Fn(usize) -> bool>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Portable,
    Avx2,
    Avx512Vnni,
}

fn level() -> Level {
    static LEVEL: OnceLock<Level> = OnceLock::new();
    *LEVEL.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            if has!("avx512f")
                && has!("avx512bw")
                && has!("avx512vnni")
                && has!("avx2")
                && has!("fma")
            {
                return Level::Avx512Vnni;
            }
            if has!("avx2") && has!("fma") {
                return Level::Avx2;
            }
        }
        Level::Portable
    })
}

impl Level {
    /// The largest query code this level's int8 kernel takes. AVX2's `vpmaddubsw` adds two
    /// u8 × i8 products into a saturating i16, so the query keeps 7 bits there (2·255·63 fits);
    /// the query's scale is the same for every row, so this only coarsens the pre-scan, which
    /// the f32 rescoring corrects.
    fn max_query_code(self) -> i8 {
        match self {
            Level::Avx2 => 63,
            Level::Portable | Level::Avx512Vnni => 127,
        }
    }
}

/// An int8 dot product: offset row codes against query codes.
#[cfg(test)]
type DotU8 = fn(&QueryCodes, &[u8]) -> i32;

/// A query quantised for the int8 scan.
pub(crate) struct QueryCodes {
    pub codes: Vec<i8>,
    /// `128 · Σ codes`, subtracted from the offset product.
    pub offset_correction: i32,
    /// What one unit of a code stands for: `query ≈ scale · codes`.
    pub scale: f32,
}

impl QueryCodes {
    /// `query` quantised for this CPU's int8 kernel.
    pub fn quantize(query: &[f32]) -> Self {
        let mut codes = vec![0i8; query.len()];
        let scale = quantize_into(query, &mut codes, level().max_query_code());
        QueryCodes::new(codes, scale)
    }

    fn new(codes: Vec<i8>, scale: f32) -> Self {
        let sum: i32 = codes.iter().map(|&c| c as i32).sum();
        QueryCodes {
            codes,
            offset_correction: 128 * sum,
            scale,
        }
    }
}

/// Dot product of two f32 vectors.
pub(crate) fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
    match level() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `level` detected AVX2 and FMA.
        Level::Avx2 | Level::Avx512Vnni => unsafe { x86::dot_f32(a, b) },
        _ => portable::dot_f32(a, b),
    }
}

/// Asks the CPU to start loading `row` into cache. Rescoring reads rows scattered across a
/// tenant's vectors, which the hardware prefetcher cannot predict: fetching the next rows
/// while one is scored overlaps their memory latency instead of paying it row after row. The
/// int8 scans read in order, but faster than the hardware prefetcher alone feeds them once
/// the codes have left the cache.
#[inline]
pub(crate) fn prefetch<T>(row: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let line_items = (64 / size_of::<T>().max(1)).max(1);
        for line in row.chunks(line_items) {
            // SAFETY: a prefetch is only a hint; it never faults, and `line` is in bounds.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(line.as_ptr().cast()) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = row;
}

/// Dot products of `query` with each of `rows` in order, each row fetched a few rows ahead
/// (see [`prefetch`]). `take` receives a row's index and score and returns whether to go on.
pub(crate) fn dot_f32_rows(
    query: &[f32],
    rows: &[&[f32]],
    mut take: impl FnMut(usize, f32) -> bool,
) {
    /// Rows in flight: two rows of 384 floats are 48 cache lines, about what a core keeps
    /// outstanding.
    const AHEAD: usize = 2;
    rows.iter().take(AHEAD).for_each(|row| prefetch(row));
    for (index, row) in rows.iter().enumerate() {
        if let Some(ahead) = rows.get(index + AHEAD) {
            prefetch(ahead);
        }
        if !take(index, dot_f32(query, row)) {
            return;
        }
    }
}

/// Pushes `(dot(query, row), base + row)` of every admitted row of `data` into `top`.
pub(crate) fn scan_f32(query: &[f32], data: &[f32], admit: Admit<'_>, base: u64, top: &mut TopK) {
    match level() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `level` detected AVX2 and FMA.
        Level::Avx2 | Level::Avx512Vnni => unsafe { x86::scan_f32(query, data, admit, base, top) },
        _ => portable::scan_f32(query, data, admit, base, top),
    }
}

/// Pushes `(approximate dot, base + row)` of every admitted int8 row into `top`; `codes`
/// holds rows of `query.codes.len()` offset codes, `scales` one scale per row. The
/// approximation is in the units of the f32 dot product (both scales applied).
pub(crate) fn scan_u8(
    query: &QueryCodes,
    codes: &[u8],
    scales: &[f32],
    admit: Admit<'_>,
    base: u64,
    top: &mut TopK,
) {
    match level() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `level` detected AVX-512 F/BW/VNNI.
        Level::Avx512Vnni => unsafe { x86::scan_u8_vnni(query, codes, scales, admit, base, top) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `level` detected AVX2.
        Level::Avx2 => unsafe { x86::scan_u8_avx2(query, codes, scales, admit, base, top) },
        _ => portable::scan_u8(query, codes, scales, admit, base, top),
    }
}

/// The generic scan loop; `score` is inlined into each instantiation.
#[inline(always)]
fn scan<T>(
    rows: std::slice::ChunksExact<'_, T>,
    admit: Admit<'_>,
    base: u64,
    top: &mut TopK,
    mut score: impl FnMut(usize, &[T]) -> f32,
) {
    match admit {
        None => {
            for (row, values) in rows.enumerate() {
                top.push(score(row, values), base + row as u64);
            }
        }
        Some(admit) => {
            for (row, values) in rows.enumerate() {
                if admit(row) {
                    top.push(score(row, values), base + row as u64);
                }
            }
        }
    }
}

mod portable {
    use super::*;

    /// Eight independent accumulators so the loop vectorises and pipelines.
    pub fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
        let n = a.len().min(b.len());
        let (a, b) = (&a[..n], &b[..n]);
        let mut lanes = [0.0f32; 8];
        let mut chunks_a = a.chunks_exact(8);
        let mut chunks_b = b.chunks_exact(8);
        for (ca, cb) in (&mut chunks_a).zip(&mut chunks_b) {
            for lane in 0..8 {
                lanes[lane] += ca[lane] * cb[lane];
            }
        }
        let tail: f32 = chunks_a
            .remainder()
            .iter()
            .zip(chunks_b.remainder())
            .map(|(x, y)| x * y)
            .sum();
        lanes.iter().sum::<f32>() + tail
    }

    pub fn dot_u8(query: &QueryCodes, row: &[u8]) -> i32 {
        let offset: i32 = query
            .codes
            .iter()
            .zip(row)
            .map(|(&q, &r)| q as i32 * r as i32)
            .sum();
        offset - query.offset_correction
    }

    pub fn scan_f32(query: &[f32], data: &[f32], admit: Admit<'_>, base: u64, top: &mut TopK) {
        scan(
            data.chunks_exact(query.len()),
            admit,
            base,
            top,
            |_, row| dot_f32(query, row),
        );
    }

    pub fn scan_u8(
        query: &QueryCodes,
        codes: &[u8],
        scales: &[f32],
        admit: Admit<'_>,
        base: u64,
        top: &mut TopK,
    ) {
        scan(
            codes.chunks_exact(query.codes.len()),
            admit,
            base,
            top,
            |row, values| dot_u8(query, values) as f32 * (scales[row] * query.scale),
        );
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::*;

    #[target_feature(enable = "avx2,fma")]
    #[inline]
    pub fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
        let n = a.len().min(b.len());
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        let mut acc = [_mm256_setzero_ps(); 4];
        let mut i = 0;
        // SAFETY: every load reads 8 floats at offsets below `n`, within both slices.
        unsafe {
            while i + 32 <= n {
                for (k, acc) in acc.iter_mut().enumerate() {
                    let x = _mm256_loadu_ps(pa.add(i + 8 * k));
                    let y = _mm256_loadu_ps(pb.add(i + 8 * k));
                    *acc = _mm256_fmadd_ps(x, y, *acc);
                }
                i += 32;
            }
            while i + 8 <= n {
                acc[0] = _mm256_fmadd_ps(
                    _mm256_loadu_ps(pa.add(i)),
                    _mm256_loadu_ps(pb.add(i)),
                    acc[0],
                );
                i += 8;
            }
        }
        let sum = _mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3]));
        let half = _mm_add_ps(_mm256_castps256_ps128(sum), _mm256_extractf128_ps(sum, 1));
        let quarter = _mm_add_ps(half, _mm_movehl_ps(half, half));
        let total = _mm_add_ss(quarter, _mm_shuffle_ps(quarter, quarter, 1));
        let mut result = _mm_cvtss_f32(total);
        for j in i..n {
            result += a[j] * b[j];
        }
        result
    }

    #[target_feature(enable = "avx2,fma")]
    pub fn scan_f32(query: &[f32], data: &[f32], admit: Admit<'_>, base: u64, top: &mut TopK) {
        scan(
            data.chunks_exact(query.len()),
            admit,
            base,
            top,
            |_, row| dot_f32(query, row),
        );
    }

    /// 32 offset codes times 32 query codes: `vpmaddubsw` into 16 i16 pair sums, which never
    /// saturate because AVX2 queries stay within ±63 (`Level::max_query_code`), then
    /// `vpmaddwd` widens them into 8 i32 lanes.
    ///
    /// # Safety
    /// Both pointers must be valid for reading 32 bytes.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn products_avx2(row: *const u8, query: *const i8) -> __m256i {
        // SAFETY: the caller's promise.
        let (r, q) = unsafe {
            (
                _mm256_loadu_si256(row.cast()),
                _mm256_loadu_si256(query.cast()),
            )
        };
        _mm256_madd_epi16(_mm256_maddubs_epi16(r, q), _mm256_set1_epi16(1))
    }

    /// The int8 dot product on AVX2. Its two accumulators are named variables, not an array
    /// indexed by the step: such an array lived on the stack, and every step paid a store and
    /// a reload.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn dot_u8_avx2(query: &QueryCodes, row: &[u8]) -> i32 {
        let n = query.codes.len().min(row.len());
        let (pq, pr) = (query.codes.as_ptr(), row.as_ptr());
        let (mut even, mut odd) = (_mm256_setzero_si256(), _mm256_setzero_si256());
        let mut i = 0;
        // SAFETY: every step reads 32 bytes at offsets below `n`, within both slices.
        unsafe {
            while i + 64 <= n {
                even = _mm256_add_epi32(even, products_avx2(pr.add(i), pq.add(i)));
                odd = _mm256_add_epi32(odd, products_avx2(pr.add(i + 32), pq.add(i + 32)));
                i += 64;
            }
            if i + 32 <= n {
                even = _mm256_add_epi32(even, products_avx2(pr.add(i), pq.add(i)));
                i += 32;
            }
        }
        let acc = _mm256_add_epi32(even, odd);
        let half = _mm_add_epi32(
            _mm256_castsi256_si128(acc),
            _mm256_extracti128_si256(acc, 1),
        );
        let quarter = _mm_add_epi32(half, _mm_shuffle_epi32(half, 0b01_00_11_10));
        let total = _mm_add_epi32(quarter, _mm_shuffle_epi32(quarter, 0b10_11_00_01));
        let mut result = _mm_cvtsi128_si32(total);
        for (&q, &r) in query.codes[i..n].iter().zip(&row[i..n]) {
            result += q as i32 * r as i32;
        }
        result - query.offset_correction
    }

    #[target_feature(enable = "avx2")]
    pub fn scan_u8_avx2(
        query: &QueryCodes,
        codes: &[u8],
        scales: &[f32],
        admit: Admit<'_>,
        base: u64,
        top: &mut TopK,
    ) {
        let dims = query.codes.len();
        scan(codes.chunks_exact(dims), admit, base, top, |row, values| {
            prefetch_row(codes, row + PREFETCH_ROWS_AHEAD, dims);
            dot_u8_avx2(query, values) as f32 * (scales[row] * query.scale)
        });
    }

    /// How far ahead of the row it scores an int8 scan asks for the next row's codes. A
    /// scan of a segment no longer in the cache is bound by memory: the hardware prefetcher
    /// alone leaves it waiting (measured on a Zen 3 whose L3 other tenants share: 29 ns a
    /// 384-byte row cold, 22–24 ns with the rows requested 4–8 ahead).
    const PREFETCH_ROWS_AHEAD: usize = 4;

    /// [`prefetch`](super::prefetch)es row `row` of `codes` (rows of `dims` bytes), if any.
    #[inline(always)]
    fn prefetch_row(codes: &[u8], row: usize, dims: usize) {
        if let Some(row) = codes.get(row * dims..(row + 1) * dims) {
            super::prefetch(row);
        }
    }

    /// `vpdpbusd`: 64 unsigned × signed byte products summed into 16 i32 lanes per step.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    #[inline]
    fn dot_u8_vnni(query: &QueryCodes, row: &[u8]) -> i32 {
        let n = query.codes.len().min(row.len());
        let (pq, pr) = (query.codes.as_ptr(), row.as_ptr());
        let (mut even, mut odd) = (_mm512_setzero_si512(), _mm512_setzero_si512());
        let mut i = 0;
        // SAFETY: every load reads 64 bytes at offsets below `n`, within both slices.
        unsafe {
            let row_at = |at: usize| _mm512_loadu_si512(pr.add(at).cast());
            let query_at = |at: usize| _mm512_loadu_si512(pq.add(at).cast());
            while i + 128 <= n {
                even = _mm512_dpbusd_epi32(even, row_at(i), query_at(i));
                odd = _mm512_dpbusd_epi32(odd, row_at(i + 64), query_at(i + 64));
                i += 128;
            }
            if i + 64 <= n {
                even = _mm512_dpbusd_epi32(even, row_at(i), query_at(i));
                i += 64;
            }
        }
        let mut result = _mm512_reduce_add_epi32(_mm512_add_epi32(even, odd));
        for (&q, &r) in query.codes[i..n].iter().zip(&row[i..n]) {
            result += q as i32 * r as i32;
        }
        result - query.offset_correction
    }

    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub fn scan_u8_vnni(
        query: &QueryCodes,
        codes: &[u8],
        scales: &[f32],
        admit: Admit<'_>,
        base: u64,
        top: &mut TopK,
    ) {
        let dims = query.codes.len();
        scan(codes.chunks_exact(dims), admit, base, top, |row, values| {
            prefetch_row(codes, row + PREFETCH_ROWS_AHEAD, dims);
            dot_u8_vnni(query, values) as f32 * (scales[row] * query.scale)
        });
    }

    /// Every int8 kernel this CPU can run, with the largest query code each takes.
    #[cfg(test)]
    pub fn dot_u8_kernels() -> Vec<(i8, DotU8)> {
        let mut kernels: Vec<(i8, DotU8)> = vec![(127, super::portable::dot_u8)];
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: detected just above.
            kernels.push((Level::Avx2.max_query_code(), |q, r| unsafe {
                dot_u8_avx2(q, r)
            }));
        }
        if level() == Level::Avx512Vnni {
            // SAFETY: detected by `level`.
            kernels.push((Level::Avx512Vnni.max_query_code(), |q, r| unsafe {
                dot_u8_vnni(q, r)
            }));
        }
        kernels
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pseudo_random(seed: u64, len: usize) -> Vec<f32> {
        let mut state = seed;
        (0..len)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
            })
            .collect()
    }

    #[test]
    fn every_kernel_agrees_with_exact_arithmetic_for_every_length() {
        for len in [0, 1, 7, 8, 31, 32, 33, 63, 64, 65, 100, 384, 1536] {
            let a = pseudo_random(1, len);
            let b = pseudo_random(2, len);
            let exact: f64 = a.iter().zip(&b).map(|(x, y)| *x as f64 * *y as f64).sum();
            assert!(
                (dot_f32(&a, &b) as f64 - exact).abs() < 1e-3,
                "f32 len {len}"
            );
            assert!(
                (portable::dot_f32(&a, &b) as f64 - exact).abs() < 1e-3,
                "f32 len {len}"
            );

            let row: Vec<u8> = b
                .iter()
                .map(|x| ((x * 127.0).round() as i32 + 128) as u8)
                .collect();
            for (max_code, kernel) in int8_kernels() {
                let mut codes = vec![0i8; len];
                quantize_into(&a, &mut codes, max_code);
                let query = QueryCodes::new(codes, 1.0);
                let exact: i32 = query
                    .codes
                    .iter()
                    .zip(&row)
                    .map(|(q, r)| *q as i32 * (*r as i32 - 128))
                    .sum();
                assert_eq!(kernel(&query, &row), exact, "±{max_code} kernel, len {len}");
            }
        }
    }

    /// The int8 kernels this CPU runs, with the largest query code each takes.
    fn int8_kernels() -> Vec<(i8, DotU8)> {
        #[cfg(target_arch = "x86_64")]
        return x86::dot_u8_kernels();
        #[cfg(not(target_arch = "x86_64"))]
        return vec![(127, portable::dot_u8)];
    }

    #[test]
    fn int8_extremes_do_not_saturate() {
        let low = vec![1u8; 64]; // code −127
        let high = vec![255u8; 64]; // code 127
        for (max_code, kernel) in int8_kernels() {
            let max = i32::from(max_code);
            for sign in [1, -1] {
                let query = QueryCodes::new(vec![(sign * max) as i8; 64], 1.0);
                assert_eq!(kernel(&query, &low), -sign * 127 * max * 64, "±{max_code}");
                assert_eq!(kernel(&query, &high), sign * 127 * max * 64, "±{max_code}");
            }
        }
    }

    /// Rescoring compares approximate scores with exact ones, so both must be in the same
    /// units: the int8 scan applies the row's and the query's scale.
    #[test]
    fn int8_scan_scores_approximate_the_exact_dot_products() {
        let dims = 384;
        let unit = |seed| {
            let mut vector = pseudo_random(seed, dims);
            let norm = dot_f32(&vector, &vector).sqrt();
            vector.iter_mut().for_each(|x| *x /= norm);
            vector
        };
        let data: Vec<f32> = (10..30).flat_map(unit).collect();
        let quantized = crate::vector::quant::Quantized::build(&data, dims);
        let query = unit(3);
        let mut exact = TopK::new(20);
        scan_f32(&query, &data, None, 0, &mut exact);
        let mut approximate = TopK::new(20);
        let codes = QueryCodes::quantize(&query);
        scan_u8(
            &codes,
            &quantized.codes,
            &quantized.scales,
            None,
            0,
            &mut approximate,
        );
        let mut approximate = approximate.into_sorted();
        approximate.sort_by_key(|scored| scored.key);
        let mut exact = exact.into_sorted();
        exact.sort_by_key(|scored| scored.key);
        assert_eq!(exact.len(), 20);
        for (exact, approximate) in exact.iter().zip(&approximate) {
            assert_eq!(exact.key, approximate.key);
            assert!(
                (exact.score - approximate.score).abs() < 0.01,
                "row {}: exact {} approximate {}",
                exact.key,
                exact.score,
                approximate.score
            );
        }
    }

    #[test]
    fn scans_honour_the_admit_filter() {
        let dims = 16;
        let data: Vec<f32> = (0..10).flat_map(|row| vec![row as f32; dims]).collect();
        let query = vec![1.0f32; dims];
        let mut top = TopK::new(3);
        scan_f32(&query, &data, Some(&|row| row % 2 == 0), 100, &mut top);
        let keys: Vec<u64> = top.into_sorted().iter().map(|s| s.key).collect();
        assert_eq!(keys, [108, 106, 104]);
        let mut top = TopK::new(2);
        portable::scan_f32(&query, &data, None, 0, &mut top);
        assert_eq!(
            top.into_sorted().iter().map(|s| s.key).collect::<Vec<_>>(),
            [9, 8]
        );
    }
}

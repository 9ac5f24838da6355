//! Dot products over f32 and int8 vectors: AVX2 (+FMA) when the CPU has it, portable code
//! otherwise. The choice is made once per process.

use std::sync::OnceLock;

/// The dot-product functions for this CPU.
#[derive(Clone, Copy)]
pub(crate) struct Kernels {
    pub dot_f32: fn(&[f32], &[f32]) -> f32,
    pub dot_i8: fn(&[i8], &[i8]) -> i32,
}

impl Kernels {
    /// The fastest kernels this CPU supports.
    pub fn get() -> &'static Kernels {
        static KERNELS: OnceLock<Kernels> = OnceLock::new();
        KERNELS.get_or_init(|| {
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                return Kernels {
                    dot_f32: x86::dot_f32,
                    dot_i8: x86::dot_i8,
                };
            }
            Kernels::portable()
        })
    }

    /// Plain Rust kernels (the compiler vectorises what the target allows).
    pub fn portable() -> Kernels {
        Kernels {
            dot_f32: portable::dot_f32,
            dot_i8: portable::dot_i8,
        }
    }
}

mod portable {
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

    pub fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
        a.iter().zip(b).map(|(&x, &y)| x as i32 * y as i32).sum()
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    pub fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
        // SAFETY: selected by `Kernels::get` only after detecting AVX2 and FMA.
        unsafe { dot_f32_avx2(a, b) }
    }

    pub fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
        // SAFETY: selected by `Kernels::get` only after detecting AVX2.
        unsafe { dot_i8_avx2(a, b) }
    }

    #[target_feature(enable = "avx2,fma")]
    fn dot_f32_avx2(a: &[f32], b: &[f32]) -> f32 {
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

    /// Codes must lie in -127..=127 (never -128): `maddubs` multiplies |a| by b·sign(a) into
    /// saturating i16 pairs, and 2·127·127 fits.
    #[target_feature(enable = "avx2")]
    fn dot_i8_avx2(a: &[i8], b: &[i8]) -> i32 {
        let n = a.len().min(b.len());
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        let ones = _mm256_set1_epi16(1);
        let mut acc = _mm256_setzero_si256();
        let mut i = 0;
        // SAFETY: every load reads 32 bytes at offsets below `n`, within both slices.
        unsafe {
            while i + 32 <= n {
                let x = _mm256_loadu_si256(pa.add(i).cast());
                let y = _mm256_loadu_si256(pb.add(i).cast());
                let pairs = _mm256_maddubs_epi16(_mm256_sign_epi8(x, x), _mm256_sign_epi8(y, x));
                acc = _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, ones));
                i += 32;
            }
        }
        let half = _mm_add_epi32(
            _mm256_castsi256_si128(acc),
            _mm256_extracti128_si256(acc, 1),
        );
        let quarter = _mm_add_epi32(half, _mm_shuffle_epi32(half, 0b01_00_11_10));
        let total = _mm_add_epi32(quarter, _mm_shuffle_epi32(quarter, 0b10_11_00_01));
        let mut result = _mm_cvtsi128_si32(total);
        for j in i..n {
            result += a[j] as i32 * b[j] as i32;
        }
        result
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
    fn simd_and_portable_kernels_agree_for_every_length() {
        let fast = Kernels::get();
        let slow = Kernels::portable();
        for len in [0, 1, 7, 8, 31, 32, 33, 100, 384, 1536] {
            let a = pseudo_random(1, len);
            let b = pseudo_random(2, len);
            let exact: f64 = a.iter().zip(&b).map(|(x, y)| *x as f64 * *y as f64).sum();
            assert!(
                ((fast.dot_f32)(&a, &b) as f64 - exact).abs() < 1e-3,
                "f32 len {len}"
            );
            assert!(
                ((slow.dot_f32)(&a, &b) as f64 - exact).abs() < 1e-3,
                "f32 len {len}"
            );

            let qa: Vec<i8> = a.iter().map(|x| (x * 127.0).round() as i8).collect();
            let qb: Vec<i8> = b.iter().map(|x| (x * 127.0).round() as i8).collect();
            let exact: i32 = qa.iter().zip(&qb).map(|(x, y)| *x as i32 * *y as i32).sum();
            assert_eq!((fast.dot_i8)(&qa, &qb), exact, "i8 len {len}");
            assert_eq!((slow.dot_i8)(&qa, &qb), exact, "i8 len {len}");
        }
    }

    #[test]
    fn int8_extremes_do_not_saturate() {
        let a = vec![127i8; 64];
        let b = vec![-127i8; 64];
        assert_eq!((Kernels::get().dot_i8)(&a, &b), -127 * 127 * 64);
        assert_eq!((Kernels::get().dot_i8)(&b, &b), 127 * 127 * 64);
    }
}

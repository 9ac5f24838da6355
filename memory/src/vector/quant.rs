//! Symmetric int8 quantisation, one scale per vector.
//!
//! A unit vector `x` is stored as codes `round(x / s)` with `s = max|x| / 127`, so every code
//! lies in -127..=127 and `x·y ≈ s_x · s_y · Σ code_x·code_y`. The error is small enough to
//! choose candidates, and the candidates are rescored with the f32 vectors. Stored rows keep
//! `code + 128` as `u8` (see [`super::kernels`]).

/// Quantises `vector` into `codes` (same length) within `-max_code..=max_code` (at most 127)
/// and returns its scale.
pub(crate) fn quantize_into(vector: &[f32], codes: &mut [i8], max_code: i8) -> f32 {
    quantize_with(vector, codes, max_code, |code| code as i8)
}

/// Quantises `vector` into offset codes `code + 128` and returns its scale.
fn quantize_offset_into(vector: &[f32], codes: &mut [u8]) -> f32 {
    quantize_with(vector, codes, 127, |code| (code as i16 + 128) as u8)
}

/// Symmetric quantisation within `±max_code`, each code stored through `store`.
fn quantize_with<T>(
    vector: &[f32],
    codes: &mut [T],
    max_code: i8,
    store: impl Fn(f32) -> T,
) -> f32 {
    let max = vector.iter().fold(0.0f32, |max, x| max.max(x.abs()));
    if max == 0.0 {
        codes.iter_mut().for_each(|code| *code = store(0.0));
        return 0.0;
    }
    let limit = f32::from(max_code.clamp(1, 127));
    let scale = max / limit;
    for (code, x) in codes.iter_mut().zip(vector) {
        *code = store((x / scale).round().clamp(-limit, limit));
    }
    scale
}

/// The int8 copy of a tenant's vectors, row-aligned with the f32 rows.
#[derive(Debug, Default)]
pub(crate) struct Quantized {
    /// Offset codes, `code + 128`.
    pub codes: Vec<u8>,
    pub scales: Vec<f32>,
}

impl Quantized {
    /// Quantises every row of `data` (`dims` floats each).
    pub fn build(data: &[f32], dims: usize) -> Quantized {
        let mut quantized = Quantized::default();
        for row in data.chunks_exact(dims) {
            quantized.push(row);
        }
        quantized
    }

    pub fn push(&mut self, vector: &[f32]) {
        let start = self.codes.len();
        self.codes.resize(start + vector.len(), 128);
        let scale = quantize_offset_into(vector, &mut self.codes[start..]);
        self.scales.push(scale);
    }

    pub fn set(&mut self, row: usize, vector: &[f32]) {
        let dims = vector.len();
        self.scales[row] =
            quantize_offset_into(vector, &mut self.codes[row * dims..(row + 1) * dims]);
    }

    /// Moves the last row into `row` and drops the last row, like `Vec::swap_remove`.
    pub fn swap_remove(&mut self, row: usize, dims: usize) {
        let last = self.scales.len() - 1;
        if row != last {
            self.codes
                .copy_within(last * dims..(last + 1) * dims, row * dims);
        }
        self.scales.swap_remove(row);
        self.codes.truncate(last * dims);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_stay_within_their_limit_and_reconstruct_closely() {
        let vector = [0.5f32, -0.5, 0.25, -0.7, 0.0];
        let mut codes = [0i8; 5];
        for max_code in [127, 63] {
            let scale = quantize_into(&vector, &mut codes, max_code);
            assert_eq!(codes[3], -max_code);
            assert!(codes.iter().all(|code| code.abs() <= max_code));
            for (code, x) in codes.iter().zip(vector) {
                assert!((*code as f32 * scale - x).abs() <= scale / 2.0 + 1e-6);
            }
        }
        assert_eq!(quantize_into(&[0.0; 5], &mut codes, 127), 0.0);
        assert_eq!(codes, [0; 5]);
    }

    #[test]
    fn swap_remove_keeps_rows_aligned() {
        let data = [1.0f32, 0.0, 0.0, 1.0, -1.0, 0.0];
        let mut quantized = Quantized::build(&data, 2);
        quantized.swap_remove(0, 2);
        assert_eq!(quantized.codes, [1, 128, 128, 255]);
        assert_eq!(quantized.scales.len(), 2);
    }
}

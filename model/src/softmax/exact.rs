//! Exact softmax reference for f32 rows, computed with MPFR (rug) and rounded once to f64.

use rug::Float;

use super::rows::{check_rows, softmax_each_row, RowShape};
use super::state::SoftmaxState;
use crate::ModelError;

/// Working precision (bits) of the exact reference. Each `x − m` is rounded to this precision
/// (relative error 2^-192), each exponential and the sum of up to 2^17 terms keep a relative
/// error below 2^-170; the final rounding to f64 is therefore the correct rounding of the real
/// softmax except when the real value lies within ~2^-170 (relative) of an f64 midpoint.
pub const EXACT_SOFTMAX_PRECISION: u32 = 192;

struct ExactRow {
    m: f32,
    /// e^(x − m) per logit at `EXACT_SOFTMAX_PRECISION`; `None` for masked logits.
    terms: Vec<Option<Float>>,
    d: Float,
}

fn exact_row(primitive: &'static str, row: &[f32]) -> Result<ExactRow, ModelError> {
    check_rows(primitive, row, RowShape { rows: 1, cols: row.len() })?;
    let m = row.iter().copied().filter(|x| *x != f32::NEG_INFINITY).fold(f32::NEG_INFINITY, f32::max);
    let mut d = Float::new(EXACT_SOFTMAX_PRECISION);
    let terms = row
        .iter()
        .map(|&x| {
            if x == f32::NEG_INFINITY {
                return None;
            }
            let mut t = Float::with_val(EXACT_SOFTMAX_PRECISION, x);
            t -= m;
            t.exp_mut();
            d += &t;
            Some(t)
        })
        .collect();
    Ok(ExactRow { m, terms, d })
}

/// Exact normaliser of an f32 row: `m` = the row maximum (exact, widened to f64) and `d` =
/// Σ e^(x − m) computed at [`EXACT_SOFTMAX_PRECISION`] bits and rounded to nearest f64.
/// Errors as [`softmax_exact_f32`].
pub fn normaliser_exact_f32(row: &[f32]) -> Result<SoftmaxState, ModelError> {
    let exact = exact_row("softmax_exact_f32", row)?;
    Ok(SoftmaxState { m: f64::from(exact.m), d: exact.d.to_f64() })
}

/// Exact softmax of an f32 row: each `p_i = e^(x_i − m) / Σ_j e^(x_j − m)` evaluated at
/// [`EXACT_SOFTMAX_PRECISION`] bits and rounded once to the nearest f64 (masked `-inf` → 0).
/// The harness compares f32 GPU outputs with these values in f32 ulps.
///
/// Errors: empty row → `EmptyInput`; NaN/`+inf` → `NonFinite` (first index); all masked →
/// `AllMasked { rows: [0] }` (primitive `"softmax_exact_f32"`).
pub fn softmax_exact_f32(row: &[f32]) -> Result<Vec<f64>, ModelError> {
    let exact = exact_row("softmax_exact_f32", row)?;
    Ok(exact
        .terms
        .iter()
        .map(|t| match t {
            None => 0.0,
            Some(t) => Float::with_val(EXACT_SOFTMAX_PRECISION, t / &exact.d).to_f64(),
        })
        .collect())
}

/// Row-wise [`softmax_exact_f32`] over a row-major `rows × cols` buffer. Errors as
/// `softmax::check_rows`: `BadShape`, `EmptyInput`, `NonFinite` (flat index), `AllMasked`
/// listing every all-masked row.
pub fn softmax_exact_rows_f32(data: &[f32], rows: usize, cols: usize) -> Result<Vec<f64>, ModelError> {
    softmax_each_row("softmax_exact_f32", data, RowShape { rows, cols }, softmax_exact_f32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_matches_seed_values() {
        let x = [3.0f32, -1.0, 4.0, 1.0, 5.0, -9.0, 2.0, 6.0];
        let s = normaliser_exact_f32(&x).unwrap();
        assert_eq!(s.m, 6.0);
        assert_eq!(format!("{:.6}", s.d), "1.578968");
        let p = softmax_exact_f32(&x).unwrap();
        let direct = crate::softmax::softmax(&x).unwrap();
        for (e, d) in p.iter().zip(&direct) {
            assert!((e - d).abs() <= 4.0 * f64::EPSILON * e);
        }
        assert_eq!(softmax_exact_f32(&[-10000.0, 0.0, 10000.0]).unwrap(), vec![0.0, 0.0, 1.0]);
    }

    #[test]
    fn exact_masks_and_errors() {
        let m = f32::NEG_INFINITY;
        assert_eq!(softmax_exact_f32(&[m, 5.0, m]).unwrap(), vec![0.0, 1.0, 0.0]);
        assert_eq!(softmax_exact_f32(&[m, m]), Err(ModelError::AllMasked { rows: vec![0] }));
        assert!(matches!(softmax_exact_f32(&[1.0, f32::NAN]), Err(ModelError::NonFinite { index: 1, .. })));
        assert_eq!(
            softmax_exact_rows_f32(&[m, m, 1.0, 1.0, m, m], 3, 2),
            Err(ModelError::AllMasked { rows: vec![0, 2] })
        );
    }

    #[test]
    fn tiny_probabilities_underflow_like_f64() {
        // e^-800 is below the smallest f64 subnormal: rounds to 0; e^-700 does not.
        let p = softmax_exact_f32(&[0.0, -700.0, -800.0]).unwrap();
        assert_eq!(p[0], 1.0);
        assert!(p[1] > 0.0 && p[1] < 1e-300);
        assert_eq!(p[2], 0.0);
    }
}

//! Full softmax probabilities in f64 (the direct definition the GPU is compared against when
//! an exact reference is not needed).

use super::rows::{softmax_each_row, RowShape};
use super::state::softmax_state;
use crate::scalar::Scalar;
use crate::ModelError;

/// Softmax of one row in f64: `p_i = e^(x_i − m) / d` with `(m, d) = softmax_state(row)`;
/// masked `-inf` logits get exactly 0.
///
/// Errors: empty row → `EmptyInput { primitive: "softmax" }`; NaN/`+inf` → `NonFinite` at the
/// first offending index; all logits masked → `AllMasked { rows: [0] }`.
/// Example: `[-10000, 0, 10000] -> [0, 0, 1]`; shift invariant.
pub fn softmax<T: Scalar>(row: &[T]) -> Result<Vec<f64>, ModelError> {
    if row.is_empty() {
        return Err(ModelError::EmptyInput { primitive: "softmax" });
    }
    let state = softmax_state(row)?;
    if state.is_empty() {
        return Err(ModelError::AllMasked { rows: vec![0] });
    }
    Ok(row
        .iter()
        .map(|x| {
            let x = x.to_f64();
            if x == f64::NEG_INFINITY {
                0.0
            } else {
                (x - state.m).exp() / state.d
            }
        })
        .collect())
}

/// [`softmax`] with masks as `None` (a `Some(-inf)` is masked as well). Same errors.
/// Example: `[None, Some(5), None] -> [0, 1, 0]`.
pub fn softmax_masked(row: &[Option<f64>]) -> Result<Vec<f64>, ModelError> {
    let logits: Vec<f64> = row.iter().map(|x| x.unwrap_or(f64::NEG_INFINITY)).collect();
    softmax(&logits)
}

/// Row-wise [`softmax`] over a row-major `rows × cols` buffer; returns `rows * cols`
/// probabilities. Errors (see [`check_rows`](super::check_rows)): `BadShape`, `EmptyInput`,
/// `NonFinite` (flat index), then `AllMasked` listing **every** all-masked row.
pub fn softmax_rows<T: Scalar>(data: &[T], rows: usize, cols: usize) -> Result<Vec<f64>, ModelError> {
    softmax_each_row("softmax_rows", data, RowShape { rows, cols }, softmax)
}

#[cfg(test)]
mod tests {
    use super::*;

    const X: [f64; 8] = [3.0, -1.0, 4.0, 1.0, 5.0, -9.0, 2.0, 6.0];

    #[test]
    fn seed_masked_and_extreme_rows() {
        assert_eq!(softmax_masked(&[None, Some(5.0), None]).unwrap(), vec![0.0, 1.0, 0.0]);
        assert_eq!(softmax(&[-10000.0, 0.0, 10000.0]).unwrap(), vec![0.0, 0.0, 1.0]);
        let p = softmax(&X).unwrap();
        assert!((p.iter().sum::<f64>() - 1.0).abs() <= 1e-15);
    }

    #[test]
    fn seed_rejections() {
        assert_eq!(softmax_masked(&[None, None]), Err(ModelError::AllMasked { rows: vec![0] }));
        assert!(matches!(softmax(&[f64::INFINITY, 1.0]), Err(ModelError::NonFinite { index: 0, .. })));
        assert!(matches!(softmax::<f64>(&[]), Err(ModelError::EmptyInput { .. })));
    }

    #[test]
    fn seed_shift_invariance_by_1000() {
        let shifted: Vec<f64> = X.iter().map(|v| v + 1000.0).collect();
        for (a, b) in softmax(&X).unwrap().iter().zip(softmax(&shifted).unwrap()) {
            assert!((a - b).abs() <= 1e-14 * a.abs().max(b.abs()) + 1e-15);
        }
    }

    #[test]
    fn rows_report_every_masked_row() {
        let m = f32::NEG_INFINITY;
        let data = [m, m, 1.0, 2.0, m, m, 0.0, m];
        assert_eq!(softmax_rows(&data, 4, 2), Err(ModelError::AllMasked { rows: vec![0, 2] }));
        let p = softmax_rows(&[1.0f32, 1.0, m, 3.0], 2, 2).unwrap();
        assert_eq!(p, vec![0.5, 0.5, 0.0, 1.0]);
    }
}

//! Row-major validation shared by every row-wise softmax: shape, nonfinite logits, all-masked
//! rows, in that order of precedence.

use crate::scalar::Scalar;
use crate::ModelError;

/// A row-major matrix shape: `rows` rows of `cols` logits, `data.len() == rows * cols`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowShape {
    /// Number of rows.
    pub rows: usize,
    /// Logits per row.
    pub cols: usize,
}

/// Validates a row-major softmax input, returning errors in this order:
/// 1. `BadShape` when `data.len() != rows * cols` (or the product overflows);
/// 2. `EmptyInput` when `cols == 0` and `rows > 0`;
/// 3. `NonFinite` at the first NaN/`+inf` (flat index `row * cols + col`);
/// 4. `AllMasked { rows }` listing every row whose logits are all `-inf`.
pub fn check_rows<T: Scalar>(primitive: &'static str, data: &[T], shape: RowShape) -> Result<(), ModelError> {
    let expected = shape.rows.checked_mul(shape.cols).ok_or_else(|| ModelError::BadShape {
        primitive,
        detail: format!("{} rows x {} cols overflows usize", shape.rows, shape.cols),
    })?;
    if data.len() != expected {
        return Err(ModelError::BadShape {
            primitive,
            detail: format!("{} values for {} rows x {} cols", data.len(), shape.rows, shape.cols),
        });
    }
    if shape.cols == 0 && shape.rows > 0 {
        return Err(ModelError::EmptyInput { primitive });
    }
    if let Some((index, x)) = data.iter().enumerate().find(|(_, x)| x.is_nan_value() || x.to_f64() == f64::INFINITY) {
        return Err(ModelError::NonFinite { primitive, index, value: x.to_f64() });
    }
    let masked: Vec<usize> = (0..shape.rows)
        .filter(|r| data[r * shape.cols..(r + 1) * shape.cols].iter().all(|x| x.to_f64() == f64::NEG_INFINITY))
        .collect();
    if !masked.is_empty() {
        return Err(ModelError::AllMasked { rows: masked });
    }
    Ok(())
}

/// `row_softmax` of every row of a row-major input, concatenated, after [`check_rows`] (whose
/// errors come first, so `row_softmax` only sees rows that passed it).
pub(crate) fn softmax_each_row<T: Scalar>(
    primitive: &'static str,
    data: &[T],
    shape: RowShape,
    row_softmax: impl Fn(&[T]) -> Result<Vec<f64>, ModelError>,
) -> Result<Vec<f64>, ModelError> {
    check_rows(primitive, data, shape)?;
    let mut out = Vec::with_capacity(data.len());
    for row in data.chunks(shape.cols.max(1)).take(shape.rows) {
        out.extend(row_softmax(row)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: f32 = f32::NEG_INFINITY;

    #[test]
    fn precedence_and_listing() {
        let shape = RowShape { rows: 3, cols: 2 };
        assert!(matches!(check_rows("t", &[1.0f32; 5], shape), Err(ModelError::BadShape { .. })));
        let data = [M, M, 1.0, 2.0, M, M];
        assert_eq!(check_rows("t", &data, shape), Err(ModelError::AllMasked { rows: vec![0, 2] }));
        let data = [M, M, 1.0, f32::INFINITY, M, f32::NAN];
        assert!(matches!(check_rows("t", &data, shape), Err(ModelError::NonFinite { index: 3, .. })));
        assert!(matches!(
            check_rows::<f32>("t", &[], RowShape { rows: 2, cols: 0 }),
            Err(ModelError::EmptyInput { .. })
        ));
        assert_eq!(check_rows::<f32>("t", &[], RowShape { rows: 0, cols: 0 }), Ok(()));
    }
}

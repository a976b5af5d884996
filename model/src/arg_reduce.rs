//! Arg max / arg min by their direct definitions (seed policy: nonfinite rejected, lowest
//! index wins ties, empty rejected).

use crate::scalar::Scalar;
use crate::ModelError;

fn check_finite<T: Scalar>(primitive: &'static str, values: &[T], base: usize) -> Result<(), ModelError> {
    match values.iter().position(|v| !v.is_finite_value()) {
        Some(i) => Err(ModelError::NonFinite { primitive, index: base + i, value: values[i].to_f64() }),
        None => Ok(()),
    }
}

fn arg_best<T: Scalar>(
    primitive: &'static str,
    values: &[T],
    base: usize,
    better: fn(T, T) -> bool,
) -> Result<(T, usize), ModelError> {
    if values.is_empty() {
        return Err(ModelError::EmptyInput { primitive });
    }
    check_finite(primitive, values, base)?;
    let mut best = (values[0], 0);
    for (i, &v) in values.iter().enumerate().skip(1) {
        if better(v, best.0) {
            best = (v, i);
        }
    }
    Ok(best)
}

/// `(value, index)` of the maximum; ties (including `-0.0` vs `0.0`) → the lowest index.
/// Errors: empty → `EmptyInput { primitive: "argmax" }`; any NaN/±inf →
/// `NonFinite { primitive: "argmax", index }` naming the **first** offending index (checked
/// before any comparison). Seed: `argmax([3,-1,4,1,5,-9,2,6]) = (6, 7)`,
/// `argmax([6,-1,6]) = (6, 0)`.
pub fn argmax<T: Scalar>(values: &[T]) -> Result<(T, usize), ModelError> {
    arg_best("argmax", values, 0, |a, b| a > b)
}

/// `(value, index)` of the minimum; same tie rule and errors as [`argmax`] (primitive
/// `"argmin"`).
pub fn argmin<T: Scalar>(values: &[T]) -> Result<(T, usize), ModelError> {
    arg_best("argmin", values, 0, |a, b| a < b)
}

/// [`argmax`] or [`argmin`] of one input given a piece at a time, in order:
/// the same answer and the same errors (the first offending index of the
/// whole input; `EmptyInput` when no piece held an item).
pub struct PieceArg<T> {
    primitive: &'static str,
    better: fn(T, T) -> bool,
    best: Option<(T, usize)>,
    at: usize,
}

impl<T: Scalar> PieceArg<T> {
    /// The arg max.
    pub fn max() -> Self {
        PieceArg { primitive: "argmax", better: |a, b| a > b, best: None, at: 0 }
    }

    /// The arg min.
    pub fn min() -> Self {
        PieceArg { primitive: "argmin", better: |a, b| a < b, best: None, at: 0 }
    }

    /// Takes the next piece in.
    pub fn piece(&mut self, values: &[T]) -> Result<(), ModelError> {
        if values.is_empty() {
            return Ok(());
        }
        let (v, i) = arg_best(self.primitive, values, self.at, self.better)?;
        // Strictly better only: an equal value of a later piece has a higher index.
        if self.best.is_none_or(|(b, _)| (self.better)(v, b)) {
            self.best = Some((v, self.at + i));
        }
        self.at += values.len();
        Ok(())
    }

    /// `(value, index)` over every piece.
    pub fn finish(&self) -> Result<(T, usize), ModelError> {
        self.best.ok_or(ModelError::EmptyInput { primitive: self.primitive })
    }
}

fn rows_of<T: Scalar>(
    primitive: &'static str,
    data: &[T],
    rows: usize,
    cols: usize,
    better: fn(T, T) -> bool,
) -> Result<Vec<(T, usize)>, ModelError> {
    if rows.checked_mul(cols) != Some(data.len()) {
        return Err(ModelError::BadShape {
            primitive,
            detail: format!("{} values for {rows} rows x {cols} cols", data.len()),
        });
    }
    if cols == 0 && rows > 0 {
        return Err(ModelError::EmptyInput { primitive });
    }
    check_finite(primitive, data, 0)?;
    (0..rows).map(|r| arg_best(primitive, &data[r * cols..(r + 1) * cols], r * cols, better)).collect()
}

/// Per-row [`argmax`] over a row-major `rows × cols` buffer; indices are column indices
/// within the row. Errors: `BadShape` (`data.len() != rows·cols`), `EmptyInput`
/// (`cols == 0`, `rows > 0`), `NonFinite` naming the first offending **flat** index
/// (`row·cols + col`).
pub fn argmax_rows<T: Scalar>(data: &[T], rows: usize, cols: usize) -> Result<Vec<(T, usize)>, ModelError> {
    rows_of("argmax_rows", data, rows, cols, |a, b| a > b)
}

/// Per-row [`argmin`]; same shape rules and errors as [`argmax_rows`].
pub fn argmin_rows<T: Scalar>(data: &[T], rows: usize, cols: usize) -> Result<Vec<(T, usize)>, ModelError> {
    rows_of("argmin_rows", data, rows, cols, |a, b| a < b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arg_in_pieces_is_the_whole_arg() {
        let x: Vec<i32> = (0..97).map(|i| (i * 31 % 11) - 5).collect();
        for piece in [1usize, 4, 11, 97] {
            let (mut max, mut min) = (PieceArg::max(), PieceArg::min());
            for chunk in x.chunks(piece) {
                max.piece(chunk).unwrap();
                min.piece(chunk).unwrap();
            }
            assert_eq!(max.finish().unwrap(), argmax(&x).unwrap(), "piece {piece}");
            assert_eq!(min.finish().unwrap(), argmin(&x).unwrap(), "piece {piece}");
        }
        let mut nan = PieceArg::max();
        nan.piece(&[1.0f32, 2.0]).unwrap();
        assert!(matches!(nan.piece(&[3.0, f32::NAN]), Err(ModelError::NonFinite { index: 3, .. })));
        assert!(matches!(PieceArg::<f32>::min().finish(), Err(ModelError::EmptyInput { primitive: "argmin" })));
    }
    use crate::operator::ArgMax;
    use crate::reduce::reduce;
    use proptest::prelude::*;

    #[test]
    fn seed_argmax() {
        assert_eq!(argmax(&[3, -1, 4, 1, 5, -9, 2, 6]), Ok((6, 7)));
        assert_eq!(argmax(&[6, -1, 6]), Ok((6, 0)));
        assert_eq!(argmax(&[6.0f32, -1.0, 6.0]), Ok((6.0, 0)));
        assert_eq!(argmin(&[3, -1, 4, 1, 5, -9, 2, 6]), Ok((-9, 5)));
    }

    #[test]
    fn seed_nonfinite_rejected() {
        for (values, index) in
            [(vec![f64::NAN, 6.0], 0), (vec![f64::INFINITY, 6.0], 0), (vec![6.0, f64::NEG_INFINITY], 1)]
        {
            match argmax(&values) {
                Err(ModelError::NonFinite { primitive: "argmax", index: i, .. }) => assert_eq!(i, index),
                other => panic!("accepted nonfinite input {values:?}: {other:?}"),
            }
        }
        assert_eq!(argmax::<f32>(&[]), Err(ModelError::EmptyInput { primitive: "argmax" }));
    }

    #[test]
    fn signed_zero_ties() {
        assert_eq!(argmax(&[-0.0f32, 0.0]).map(|(_, i)| i), Ok(0));
        assert_eq!(argmin(&[0.0f64, -0.0]).map(|(_, i)| i), Ok(0));
    }

    #[test]
    fn rows() {
        let data = [1, 5, 5, 7, 7, 0];
        assert_eq!(argmax_rows(&data, 2, 3), Ok(vec![(5, 1), (7, 0)]));
        assert_eq!(argmin_rows(&data, 2, 3), Ok(vec![(1, 0), (0, 2)]));
        assert!(matches!(argmax_rows(&data, 4, 2), Err(ModelError::BadShape { .. })));
        let f = [1.0f32, 2.0, 3.0, f32::NAN];
        assert!(matches!(argmax_rows(&f, 2, 2), Err(ModelError::NonFinite { index: 3, .. })));
        assert!(matches!(argmax_rows::<i32>(&[], 1, 0), Err(ModelError::EmptyInput { .. })));
        assert_eq!(argmax_rows::<i32>(&[], 0, 5), Ok(vec![]));
    }

    proptest! {
        #[test]
        fn direct_equals_operator_reduction(values in prop::collection::vec(-3i32..3, 1..200)) {
            let (v, i) = argmax(&values)?;
            let pairs: Vec<(i32, u64)> = values.iter().enumerate().map(|(i, &v)| (v, i as u64)).collect();
            prop_assert_eq!(reduce(&ArgMax::<i32>::new(), &pairs)?, (v, i as u64));
            prop_assert!(values[..i].iter().all(|&x| x < v));
        }
    }
}

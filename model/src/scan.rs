//! Exclusive and inclusive scan by their direct definitions.
//!
//! The sum scans here are checked: a prefix that leaves int64 is an error
//! (the seed's rule for int64 inputs). The int32 -> int64 kernels add modulo
//! 2^64 instead, which gives the same answers up to 2^32 items (no prefix of
//! int32 can leave int64 there) and the wrapped prefixes past that:
//! [`crate::pieces::SumScansI32`] is that contract, a piece at a time.

use crate::operator::{Operator, SumI64};
use crate::ModelError;

/// A scan of one input given a piece at a time, in order: each piece's
/// outputs follow from every earlier piece (the running total is carried),
/// so an input too large to hold is scanned as it is generated. The whole
/// scans below are one piece.
pub struct PieceScan<'a, Op: Operator> {
    op: &'a Op,
    acc: Op::Value,
    at: usize,
    len: usize,
    inclusive: bool,
}

impl<'a, Op: Operator> PieceScan<'a, Op> {
    /// The exclusive scan of an input of `len` items (see [`exclusive_scan`]).
    pub fn exclusive(op: &'a Op, len: usize) -> Self {
        PieceScan { op, acc: op.identity(), at: 0, len, inclusive: false }
    }

    /// The inclusive scan of an input of `len` items (see [`inclusive_scan`]).
    pub fn inclusive(op: &'a Op, len: usize) -> Self {
        PieceScan { op, acc: op.identity(), at: 0, len, inclusive: true }
    }

    /// The outputs of the next piece. Errors: the first failing combine,
    /// with its index in the whole input.
    pub fn piece(&mut self, items: &[Op::Value]) -> Result<Vec<Op::Value>, ModelError> {
        let mut out = Vec::with_capacity(items.len());
        for x in items {
            let i = self.at;
            self.at += 1;
            if self.inclusive {
                self.acc = self.op.combine(&self.acc, x).map_err(|e| e.at("inclusive_scan", format!("index {i}")))?;
                out.push(self.acc.clone());
            } else {
                out.push(self.acc.clone());
                // The total of all items is no output: its combine is not performed.
                if i + 1 < self.len {
                    self.acc = self
                        .op
                        .combine(&self.acc, x)
                        .map_err(|e| e.at("exclusive_scan", format!("index {}", i + 1)))?;
                }
            }
        }
        Ok(out)
    }
}

/// `out[0] = identity`, `out[i] = x[0] ⊕ … ⊕ x[i−1]`, left to right. Only the `n − 1`
/// combines whose results are outputs are performed (the total of all `n` items is not).
/// Errors: the first failing combine, relocated to `exclusive_scan` with its index.
pub fn exclusive_scan<Op: Operator>(op: &Op, items: &[Op::Value]) -> Result<Vec<Op::Value>, ModelError> {
    PieceScan::exclusive(op, items.len()).piece(items)
}

/// `out[i] = x[0] ⊕ … ⊕ x[i]` = `exclusive[i] ⊕ x[i]`, left to right. Errors: the first
/// failing combine, relocated to `inclusive_scan` with its index.
pub fn inclusive_scan<Op: Operator>(op: &Op, items: &[Op::Value]) -> Result<Vec<Op::Value>, ModelError> {
    PieceScan::inclusive(op, items.len()).piece(items)
}

/// Exclusive sum scan of `i32`/`i64` inputs into checked `i64` (identity 0 at index 0).
/// Seed: `[3,-1,4,1,5,-9,2,6] -> [0,3,2,6,7,12,3,5]`.
pub fn exclusive_scan_i64<T: Copy + Into<i64>>(items: &[T]) -> Result<Vec<i64>, ModelError> {
    let wide: Vec<i64> = items.iter().map(|&x| x.into()).collect();
    exclusive_scan(&SumI64, &wide)
}

/// Inclusive sum scan of `i32`/`i64` inputs into checked `i64`.
/// Seed: `[3,-1,4,1,5,-9,2,6] -> [3,2,6,7,12,3,5,11]`.
pub fn inclusive_scan_i64<T: Copy + Into<i64>>(items: &[T]) -> Result<Vec<i64>, ModelError> {
    let wide: Vec<i64> = items.iter().map(|&x| x.into()).collect();
    inclusive_scan(&SumI64, &wide)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::{Affine, AffineMap};
    use proptest::prelude::*;

    const X: [i32; 8] = [3, -1, 4, 1, 5, -9, 2, 6];

    #[test]
    fn scans_in_pieces_are_the_whole_scans() {
        let x: Vec<i64> = (0..100).map(|i| (i * 37 % 19) - 9).collect();
        for piece in [1usize, 3, 50, 100] {
            let mut ex = PieceScan::exclusive(&SumI64, x.len());
            let mut inc = PieceScan::inclusive(&SumI64, x.len());
            let (mut e, mut i) = (vec![], vec![]);
            for chunk in x.chunks(piece) {
                e.extend(ex.piece(chunk).unwrap());
                i.extend(inc.piece(chunk).unwrap());
            }
            assert_eq!(e, exclusive_scan(&SumI64, &x).unwrap(), "piece {piece}");
            assert_eq!(i, inclusive_scan(&SumI64, &x).unwrap(), "piece {piece}");
        }
        // The overflow of the (unused) total is no error of the exclusive scan, in pieces too.
        let big = [i64::MAX, 1];
        let mut ex = PieceScan::exclusive(&SumI64, 2);
        assert!(ex.piece(&big[..1]).is_ok() && ex.piece(&big[1..]).is_ok());
        let mut inc = PieceScan::inclusive(&SumI64, 2);
        let _ = inc.piece(&big[..1]);
        assert!(inc.piece(&big[1..]).unwrap_err().to_string().contains("index 1"));
    }

    #[test]
    fn seed_scans() {
        assert_eq!(exclusive_scan_i64(&X).unwrap(), vec![0, 3, 2, 6, 7, 12, 3, 5]);
        assert_eq!(inclusive_scan_i64(&X).unwrap(), vec![3, 2, 6, 7, 12, 3, 5, 11]);
        assert_eq!(exclusive_scan_i64(&X[..4]).unwrap(), vec![0, 3, 2, 6]);
        assert_eq!(inclusive_scan_i64(&X[..4]).unwrap(), vec![3, 2, 6, 7]);
    }

    #[test]
    fn exclusive_does_not_compute_the_unused_total() {
        assert_eq!(exclusive_scan_i64(&[i64::MAX, 1]).unwrap(), vec![0, i64::MAX]);
        assert!(inclusive_scan_i64(&[i64::MAX, 1]).is_err());
    }

    proptest! {
        #[test]
        fn inclusive_is_exclusive_plus_x(values in prop::collection::vec(any::<i32>(), 0..300)) {
            let ex = exclusive_scan_i64(&values)?;
            let inc = inclusive_scan_i64(&values)?;
            for i in 0..values.len() {
                prop_assert_eq!(inc[i], ex[i] + i64::from(values[i]));
            }
        }

        #[test]
        fn scan_of_concatenation_is_scans_of_parts_with_offset(a in prop::collection::vec(any::<i32>(), 0..200), b in prop::collection::vec(any::<i32>(), 0..200)) {
            let whole: Vec<i32> = a.iter().chain(&b).copied().collect();
            let ex = exclusive_scan_i64(&whole)?;
            let offset: i64 = a.iter().map(|&v| i64::from(v)).sum();
            let mut expected = exclusive_scan_i64(&a)?;
            expected.extend(exclusive_scan_i64(&b)?.into_iter().map(|v| v + offset));
            prop_assert_eq!(ex, expected);
        }

        #[test]
        fn affine_scan_of_concatenation(a in prop::collection::vec((any::<u64>(), any::<u64>()), 0..60), b in prop::collection::vec((any::<u64>(), any::<u64>()), 0..60)) {
            let m = |v: &Vec<(u64, u64)>| v.iter().map(|&(a, b)| AffineMap { a, b }).collect::<Vec<_>>();
            let (a, b) = (m(&a), m(&b));
            let whole: Vec<AffineMap> = a.iter().chain(&b).copied().collect();
            let offset = crate::reduce::reduce(&Affine, &a)?;
            let mut expected = inclusive_scan(&Affine, &a)?;
            for p in inclusive_scan(&Affine, &b)? {
                expected.push(Affine.combine(&offset, &p)?);
            }
            prop_assert_eq!(inclusive_scan(&Affine, &whole)?, expected);
        }
    }
}

//! Exclusive and inclusive scan by their direct definitions.

use crate::operator::{Operator, SumI64};
use crate::ModelError;

/// `out[0] = identity`, `out[i] = x[0] ⊕ … ⊕ x[i−1]`, left to right. Only the `n − 1`
/// combines whose results are outputs are performed (the total of all `n` items is not).
/// Errors: the first failing combine, relocated to `exclusive_scan` with its index.
pub fn exclusive_scan<Op: Operator>(op: &Op, items: &[Op::Value]) -> Result<Vec<Op::Value>, ModelError> {
    let mut out = Vec::with_capacity(items.len());
    if let Some((_, all_but_last)) = items.split_last() {
        let mut acc = op.identity();
        out.push(acc.clone());
        for (i, x) in all_but_last.iter().enumerate() {
            acc = op.combine(&acc, x).map_err(|e| e.at("exclusive_scan", format!("index {}", i + 1)))?;
            out.push(acc.clone());
        }
    }
    Ok(out)
}

/// `out[i] = x[0] ⊕ … ⊕ x[i]` = `exclusive[i] ⊕ x[i]`, left to right. Errors: the first
/// failing combine, relocated to `inclusive_scan` with its index.
pub fn inclusive_scan<Op: Operator>(op: &Op, items: &[Op::Value]) -> Result<Vec<Op::Value>, ModelError> {
    let mut out = Vec::with_capacity(items.len());
    let mut acc = op.identity();
    for (i, x) in items.iter().enumerate() {
        acc = op.combine(&acc, x).map_err(|e| e.at("inclusive_scan", format!("index {i}")))?;
        out.push(acc.clone());
    }
    Ok(out)
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

//! Hillis–Steele step-efficient inclusive scan, counting its combines.

pub use super::blelloch::blelloch_additions;
use crate::operator::Operator;
use crate::ModelError;

/// Result of [`hillis_steele_scan`]: the inclusive scan, the combines performed and the
/// number of stages.
#[derive(Clone, Debug, PartialEq)]
pub struct HillisSteeleCount<V> {
    /// `inclusive[i] = x[0] ⊕ … ⊕ x[i]`.
    pub inclusive: Vec<V>,
    /// Combines performed: Σ over stages of `n − 2^k` (129 at n = 32, 4097 at 512).
    pub additions: u64,
    /// Stages: `ceil(log2 n)` (0 for n ≤ 1).
    pub stages: u32,
}

/// Combines a Hillis–Steele scan of `n` items performs: Σ_{k: 2^k < n} (n − 2^k), which is
/// `n·log2 n − (n − 1)` for a power of two.
pub fn hillis_steele_additions(n: usize) -> u64 {
    let mut total = 0u64;
    let mut stride = 1usize;
    while stride < n {
        total += (n - stride) as u64;
        stride *= 2;
    }
    total
}

/// Arithmetic-work ratio Hillis–Steele / Blelloch at `n` (4097 / 1022 ≈ 4.01 at 512,
/// 129 / 62 ≈ 2.08 at 32). Not a speed ratio.
pub fn work_ratio(n: usize) -> f64 {
    hillis_steele_additions(n) as f64 / blelloch_additions(n) as f64
}

/// Inclusive scan by doubling strides: at stride `s = 1, 2, 4, …` (while `s < n`) every
/// position `i >= s` becomes `old[i − s] ⊕ old[i]`, reading a consistent copy of the previous
/// stage (lower range on the left, so order is kept). Errors: a combine error relocated to
/// `hillis_steele_scan` with the stride and index.
pub fn hillis_steele_scan<Op: Operator>(
    op: &Op,
    items: &[Op::Value],
) -> Result<HillisSteeleCount<Op::Value>, ModelError> {
    let n = items.len();
    let mut a = items.to_vec();
    let mut additions = 0u64;
    let mut stages = 0u32;
    let mut stride = 1;
    while stride < n {
        let before = a.clone();
        for i in stride..n {
            a[i] = op
                .combine(&before[i - stride], &before[i])
                .map_err(|e| e.at("hillis_steele_scan", format!("stride {stride}, index {i}")))?;
            additions += 1;
        }
        stages += 1;
        stride *= 2;
    }
    Ok(HillisSteeleCount { inclusive: a, additions, stages })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::{Affine, AffineMap, SumI64};
    use crate::scan::inclusive_scan;
    use proptest::prelude::*;

    #[test]
    fn seed_work_counts() {
        let ones = vec![1i64; 512];
        let r32 = hillis_steele_scan(&SumI64, &ones[..32]).unwrap();
        assert_eq!(r32.additions, 129);
        assert_eq!(r32.stages, 5);
        assert_eq!(blelloch_additions(32), 62);
        let r512 = hillis_steele_scan(&SumI64, &ones).unwrap();
        assert_eq!(r512.additions, 4097);
        assert_eq!(blelloch_additions(512), 1022);
        assert_eq!(format!("{:.2}", work_ratio(512)), "4.01");
        assert_eq!(format!("{:.2}", work_ratio(32)), "2.08");
        assert_eq!(hillis_steele_additions(32), 129);
        assert_eq!(hillis_steele_additions(512), 4097);
    }

    #[test]
    fn seed_inclusive_scan() {
        let r = hillis_steele_scan(&SumI64, &[3, -1, 4, 1, 5, -9, 2, 6]).unwrap();
        assert_eq!(r.inclusive, vec![3, 2, 6, 7, 12, 3, 5, 11]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn hillis_steele_equals_direct(values in prop::collection::vec(any::<i32>(), 0..=600)) {
            let wide: Vec<i64> = values.iter().map(|&v| i64::from(v)).collect();
            let r = hillis_steele_scan(&SumI64, &wide)?;
            prop_assert_eq!(r.inclusive, inclusive_scan(&SumI64, &wide)?);
            prop_assert_eq!(r.additions, hillis_steele_additions(wide.len()));
        }

        #[test]
        fn hillis_steele_keeps_order(raw in prop::collection::vec((any::<u64>(), any::<u64>()), 0..=300)) {
            let maps: Vec<AffineMap> = raw.iter().map(|&(a, b)| AffineMap { a, b }).collect();
            prop_assert_eq!(hillis_steele_scan(&Affine, &maps)?.inclusive, inclusive_scan(&Affine, &maps)?);
        }
    }
}

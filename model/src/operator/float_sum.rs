//! Rounded float addition: not associative, present only to reproduce a fixed GPU tree bit
//! for bit.

/// `f32` addition, round to nearest even, identity `+0.0`. Never fails (overflow gives ±inf as
/// on the GPU). **Not associative**: it exists so that a schedule (`block_reduce`,
/// `multipass_reduce`) reproduces the exact bits a GPU float tree with the same order
/// produces; accuracy is judged against `exact::exact_sum_f32` with a tree bound, not by
/// associativity. Commutative (IEEE addition is).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SumF32;

/// `f64` addition; same contract as [`SumF32`] in double precision.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SumF64;

impl_operator!(SumF32 => f32 { name: "SumF32", commutative: true, identity: 0.0, combine(a, b) => Ok(a + b) });
impl_operator!(SumF64 => f64 { name: "SumF64", commutative: true, identity: 0.0, combine(a, b) => Ok(a + b) });

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::{tree_error_bound, U_F32};
    use crate::operator::Operator;
    use proptest::prelude::*;

    proptest! {
        /// Not associative, but both groupings stay within the depth-2 bound of the exact sum.
        #[test]
        fn groupings_within_the_tree_bound(a in -1e30f32..1e30, b in -1e30f32..1e30, c in -1e30f32..1e30) {
            let left = SumF32.combine(&SumF32.combine(&a, &b)?, &c)?;
            let right = SumF32.combine(&a, &SumF32.combine(&b, &c)?)?;
            let exact = f64::from(a) + f64::from(b) + f64::from(c);
            let sum_abs = f64::from(a).abs() + f64::from(b).abs() + f64::from(c).abs();
            let bound = tree_error_bound(2, U_F32, sum_abs) * (1.0 + 1e-12);
            prop_assert!((f64::from(left) - exact).abs() <= bound);
            prop_assert!((f64::from(right) - exact).abs() <= bound);
            prop_assert_eq!(SumF32.combine(&a, &b)?, SumF32.combine(&b, &a)?);
        }
    }

    /// Float addition is not associative, so a schedule must fix the grouping: f32 (a + b) + c = 0 but (a + c) + b = 1 with a = 1e8, b = 1, c = -1e8.
    #[test]
    fn seed_grouping_changes_the_float_result() {
        let (a, b, c) = (100_000_000f32, 1f32, -100_000_000f32);
        let left = SumF32.combine(&SumF32.combine(&a, &b).unwrap(), &c).unwrap();
        let cancel_first = SumF32.combine(&SumF32.combine(&a, &c).unwrap(), &b).unwrap();
        assert_eq!(left, 0.0);
        assert_eq!(cancel_first, 1.0);
    }
}

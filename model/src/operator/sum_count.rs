//! The (sum, count) pair used for means.

use crate::ModelError;

/// Pairs `(sum: i64, count: u64)` added componentwise; identity `(0, 0)`. A sum that leaves
/// `i64` or a count that leaves `u64` is `ModelError::Overflow` (primitive `"SumCount"`).
/// Associative and commutative.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SumCount;

impl_operator!(SumCount => (i64, u64) {
    name: "SumCount",
    commutative: true,
    identity: (0, 0),
    combine(a, b) => {
        let overflow = |detail: String| ModelError::Overflow { primitive: "SumCount", detail };
        let sum = a.0.checked_add(b.0).ok_or_else(|| overflow(format!("sum {} + {}", a.0, b.0)))?;
        let count = a.1.checked_add(b.1).ok_or_else(|| overflow(format!("count {} + {}", a.1, b.1)))?;
        Ok((sum, count))
    }
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::Operator;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn associative(a in any::<(i32, u32)>(), b in any::<(i32, u32)>(), c in any::<(i32, u32)>()) {
            let w = |p: (i32, u32)| (i64::from(p.0), u64::from(p.1));
            let (a, b, c) = (w(a), w(b), w(c));
            let l = SumCount.combine(&SumCount.combine(&a, &b)?, &c)?;
            let r = SumCount.combine(&a, &SumCount.combine(&b, &c)?)?;
            prop_assert_eq!(l, r);
            prop_assert_eq!(SumCount.combine(&SumCount.identity(), &a)?, a);
        }
    }

    #[test]
    fn count_overflow_detected() {
        let e = SumCount.combine(&(0, u64::MAX), &(0, 1)).unwrap_err();
        assert_eq!(e.kind(), "Overflow");
    }
}

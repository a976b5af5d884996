//! Checked signed 64-bit addition.

use crate::ModelError;

/// Sum over `i64`, identity 0; an overflowing addition is `ModelError::Overflow` (primitive
/// `"SumI64"`, detail `"a + b"`), never a wrapped value. Associative and commutative wherever
/// both groupings are representable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SumI64;

impl_operator!(SumI64 => i64 {
    name: "SumI64",
    commutative: true,
    identity: 0,
    combine(a, b) => {
        a.checked_add(*b).ok_or_else(|| ModelError::Overflow { primitive: "SumI64", detail: format!("{a} + {b}") })
    }
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::Operator;
    use proptest::prelude::*;

    #[test]
    fn overflow_is_an_error() {
        let e = SumI64.combine(&i64::MAX, &1).unwrap_err();
        assert!(matches!(e, ModelError::Overflow { primitive: "SumI64", .. }));
        assert_eq!(SumI64.combine(&i64::MAX, &0), Ok(i64::MAX));
        assert_eq!(SumI64.combine(&i64::MIN, &-1).map_err(|e| e.kind()), Err("Overflow"));
    }

    proptest! {
        #[test]
        fn associative(a in any::<i64>(), b in any::<i64>(), c in any::<i64>()) {
            let left = SumI64.combine(&a, &b).and_then(|ab| SumI64.combine(&ab, &c));
            let right = SumI64.combine(&b, &c).and_then(|bc| SumI64.combine(&a, &bc));
            if let (Ok(l), Ok(r)) = (&left, &right) {
                prop_assert_eq!(l, r);
            }
            // The exact sum decides representability of the total.
            let exact = i128::from(a) + i128::from(b) + i128::from(c);
            if let Ok(l) = left { prop_assert_eq!(i128::from(l), exact); }
        }

        #[test]
        fn identity_law(a in any::<i64>()) {
            prop_assert_eq!(SumI64.combine(&0, &a), Ok(a));
            prop_assert_eq!(SumI64.combine(&a, &0), Ok(a));
        }
    }
}

//! Maximum and minimum over `i64`.

/// Maximum over `i64`; identity `i64::MIN`. Never fails; associative and commutative.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MaxI64;

/// Minimum over `i64`; identity `i64::MAX`. Never fails; associative and commutative.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MinI64;

impl_operator!(MaxI64 => i64 { name: "MaxI64", commutative: true, identity: i64::MIN, combine(a, b) => Ok(*a.max(b)) });
impl_operator!(MinI64 => i64 { name: "MinI64", commutative: true, identity: i64::MAX, combine(a, b) => Ok(*a.min(b)) });

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::Operator;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn associative_with_identity(a in any::<i64>(), b in any::<i64>(), c in any::<i64>()) {
            for op in [&MaxI64 as &dyn Operator<Value = i64>, &MinI64] {
                let l = op.combine(&op.combine(&a, &b)?, &c)?;
                let r = op.combine(&a, &op.combine(&b, &c)?)?;
                prop_assert_eq!(l, r);
                prop_assert_eq!(op.combine(&op.identity(), &a)?, a);
                prop_assert_eq!(op.combine(&a, &op.identity())?, a);
            }
        }
    }
}

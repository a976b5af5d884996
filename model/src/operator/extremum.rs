//! Maximum and minimum over `i64`.

use super::Operator;
use crate::ModelError;

/// Maximum over `i64`; identity `i64::MIN`. Never fails; associative and commutative.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MaxI64;

/// Minimum over `i64`; identity `i64::MAX`. Never fails; associative and commutative.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MinI64;

impl Operator for MaxI64 {
    type Value = i64;
    fn identity(&self) -> i64 {
        i64::MIN
    }
    fn combine(&self, a: &i64, b: &i64) -> Result<i64, ModelError> {
        Ok(*a.max(b))
    }
    fn name(&self) -> &'static str {
        "MaxI64"
    }
    fn is_commutative(&self) -> bool {
        true
    }
}

impl Operator for MinI64 {
    type Value = i64;
    fn identity(&self) -> i64 {
        i64::MAX
    }
    fn combine(&self, a: &i64, b: &i64) -> Result<i64, ModelError> {
        Ok(*a.min(b))
    }
    fn name(&self) -> &'static str {
        "MinI64"
    }
    fn is_commutative(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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

//! (value, index) pairs: arg max and arg min with the lowest-index tie rule.

use std::marker::PhantomData;

use super::Operator;
use crate::scalar::Scalar;
use crate::ModelError;

/// Arg max over `(value, index)` pairs for `T` in `f32`, `f64`, `i32`.
///
/// * Larger value wins; equal values (including `-0.0 == 0.0`) → the **lower index** wins.
/// * Identity: `(T::LOWEST, u64::MAX)` = `(-inf, u64::MAX)` for floats, `(i32::MIN, u64::MAX)`
///   for `i32`. The sentinel index `u64::MAX` loses every tie, so the identity is neutral
///   even against a real `-inf` / `i32::MIN`; a reduction that returns it had no input.
/// * A NaN operand is `ModelError::NonFinite` (primitive `"ArgMax"`, its index): NaN has no
///   place in the order. ±inf are ordered normally (the `argmax` primitive rejects them before
///   any combine).
/// * Associative and commutative for pairs with distinct indices (a total order on
///   `(value, -index)`).
pub struct ArgMax<T>(PhantomData<T>);

/// Arg min over `(value, index)` pairs; the mirror image of [`ArgMax`]: smaller value wins,
/// ties → lower index, identity `(T::HIGHEST, u64::MAX)`, NaN → `NonFinite` (primitive
/// `"ArgMin"`).
pub struct ArgMin<T>(PhantomData<T>);

macro_rules! unit_like {
    ($ty:ident) => {
        impl<T> $ty<T> {
            /// The operator (a zero-sized value).
            pub const fn new() -> Self {
                $ty(PhantomData)
            }
        }
        impl<T> Default for $ty<T> {
            fn default() -> Self {
                Self::new()
            }
        }
        impl<T> Clone for $ty<T> {
            fn clone(&self) -> Self {
                *self
            }
        }
        impl<T> Copy for $ty<T> {}
        impl<T> std::fmt::Debug for $ty<T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(stringify!($ty))
            }
        }
    };
}
unit_like!(ArgMax);
unit_like!(ArgMin);

fn reject_nan<T: Scalar>(primitive: &'static str, pair: &(T, u64)) -> Result<(), ModelError> {
    if pair.0.is_nan_value() {
        return Err(ModelError::NonFinite {
            primitive,
            index: usize::try_from(pair.1).unwrap_or(usize::MAX),
            value: pair.0.to_f64(),
        });
    }
    Ok(())
}

/// `better(a, b)` is true when `a` strictly beats `b` on value.
fn pick<T: Scalar>(a: &(T, u64), b: &(T, u64), better: fn(T, T) -> bool) -> (T, u64) {
    if better(b.0, a.0) {
        *b
    } else if better(a.0, b.0) {
        *a
    } else if b.1 < a.1 {
        *b
    } else {
        *a
    }
}

impl<T: Scalar> Operator for ArgMax<T> {
    type Value = (T, u64);
    fn identity(&self) -> (T, u64) {
        (T::LOWEST, u64::MAX)
    }
    fn combine(&self, a: &(T, u64), b: &(T, u64)) -> Result<(T, u64), ModelError> {
        reject_nan("ArgMax", a)?;
        reject_nan("ArgMax", b)?;
        Ok(pick(a, b, |x, y| x > y))
    }
    fn name(&self) -> &'static str {
        "ArgMax"
    }
    fn is_commutative(&self) -> bool {
        true
    }
}

impl<T: Scalar> Operator for ArgMin<T> {
    type Value = (T, u64);
    fn identity(&self) -> (T, u64) {
        (T::HIGHEST, u64::MAX)
    }
    fn combine(&self, a: &(T, u64), b: &(T, u64)) -> Result<(T, u64), ModelError> {
        reject_nan("ArgMin", a)?;
        reject_nan("ArgMin", b)?;
        Ok(pick(a, b, |x, y| x < y))
    }
    fn name(&self) -> &'static str {
        "ArgMin"
    }
    fn is_commutative(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ties_go_to_the_lower_index() {
        let op = ArgMax::<f32>::new();
        assert_eq!(op.combine(&(6.0, 2), &(6.0, 0)), Ok((6.0, 0)));
        assert_eq!(op.combine(&(0.0, 5), &(-0.0, 1)), Ok((-0.0, 1)));
        assert_eq!(op.combine(&op.identity(), &(f32::NEG_INFINITY, 3)), Ok((f32::NEG_INFINITY, 3)));
        let op = ArgMin::<i32>::new();
        assert_eq!(op.combine(&(i32::MAX, 9), &op.identity()), Ok((i32::MAX, 9)));
    }

    #[test]
    fn nan_rejected() {
        let e = ArgMax::<f64>::new().combine(&(1.0, 0), &(f64::NAN, 7)).unwrap_err();
        assert!(matches!(e, ModelError::NonFinite { primitive: "ArgMax", index: 7, .. }));
    }

    fn triple() -> impl Strategy<Value = [(f32, u64); 3]> {
        // Few distinct values so ties are common; distinct indices.
        (prop::array::uniform3(-3i8..3), prop::sample::subsequence((0u64..50).collect::<Vec<_>>(), 3).prop_shuffle())
            .prop_map(|(v, idx)| [(f32::from(v[0]), idx[0]), (f32::from(v[1]), idx[1]), (f32::from(v[2]), idx[2])])
    }

    proptest! {
        #[test]
        fn argmax_associative_commutative_identity(t in triple()) {
            let op = ArgMax::<f32>::new();
            let [a, b, c] = t;
            prop_assert_eq!(op.combine(&op.combine(&a, &b)?, &c)?, op.combine(&a, &op.combine(&b, &c)?)?);
            prop_assert_eq!(op.combine(&a, &b)?, op.combine(&b, &a)?);
            prop_assert_eq!(op.combine(&op.identity(), &a)?, a);
            prop_assert_eq!(op.combine(&a, &op.identity())?, a);
        }

        #[test]
        fn argmin_associative_commutative_identity(t in triple()) {
            let op = ArgMin::<f32>::new();
            let [a, b, c] = t;
            prop_assert_eq!(op.combine(&op.combine(&a, &b)?, &c)?, op.combine(&a, &op.combine(&b, &c)?)?);
            prop_assert_eq!(op.combine(&a, &b)?, op.combine(&b, &a)?);
            prop_assert_eq!(op.combine(&op.identity(), &a)?, a);
        }

        #[test]
        fn argmax_i32_associative(v in prop::array::uniform3(any::<i32>()), i in prop::array::uniform3(0u64..1000)) {
            prop_assume!(i[0] != i[1] && i[1] != i[2] && i[0] != i[2]);
            let op = ArgMax::<i32>::new();
            let (a, b, c) = ((v[0], i[0]), (v[1], i[1]), (v[2], i[2]));
            prop_assert_eq!(op.combine(&op.combine(&a, &b)?, &c)?, op.combine(&a, &op.combine(&b, &c)?)?);
        }
    }
}

//! (value, index) pairs: arg max and arg min with the lowest-index tie rule.

use std::marker::PhantomData;

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

/// Both operands checked for NaN (in order, so the left one is reported first), then the
/// winner: `better(a, b)` is true when `a` strictly beats `b` on value.
fn arg_combine<T: Scalar>(
    primitive: &'static str,
    a: &(T, u64),
    b: &(T, u64),
    better: fn(T, T) -> bool,
) -> Result<(T, u64), ModelError> {
    reject_nan(primitive, a)?;
    reject_nan(primitive, b)?;
    Ok(pick(a, b, better))
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

impl_operator!([T: Scalar] ArgMax<T> => (T, u64) {
    name: "ArgMax",
    commutative: true,
    identity: (T::LOWEST, u64::MAX),
    combine(a, b) => arg_combine("ArgMax", a, b, |x, y| x > y)
});
impl_operator!([T: Scalar] ArgMin<T> => (T, u64) {
    name: "ArgMin",
    commutative: true,
    identity: (T::HIGHEST, u64::MAX),
    combine(a, b) => arg_combine("ArgMin", a, b, |x, y| x < y)
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::Operator;
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

    /// Associativity, commutativity and both identity laws of `op` on one triple.
    fn laws_hold(op: &dyn Operator<Value = (f32, u64)>, [a, b, c]: [(f32, u64); 3]) -> Result<(), TestCaseError> {
        prop_assert_eq!(op.combine(&op.combine(&a, &b)?, &c)?, op.combine(&a, &op.combine(&b, &c)?)?);
        prop_assert_eq!(op.combine(&a, &b)?, op.combine(&b, &a)?);
        prop_assert_eq!(op.combine(&op.identity(), &a)?, a);
        prop_assert_eq!(op.combine(&a, &op.identity())?, a);
        Ok(())
    }

    proptest! {
        #[test]
        fn argmax_associative_commutative_identity(t in triple()) {
            laws_hold(&ArgMax::<f32>::new(), t)?;
        }

        #[test]
        fn argmin_associative_commutative_identity(t in triple()) {
            laws_hold(&ArgMin::<f32>::new(), t)?;
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

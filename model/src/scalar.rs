//! The element types that arg reduction, softmax and segmented argmax accept: `f32`, `f64`
//! and `i32`, with the order, finiteness test and widening those primitives need.

use std::fmt::Debug;

/// An input element type of the value-carrying primitives.
///
/// Values are compared with `PartialOrd` (for floats `-0.0 == 0.0`, so they tie and the lower
/// index wins). `to_f64` widens exactly (every `f32` and `i32` is an `f64`).
pub trait Scalar: Copy + PartialOrd + Debug + Send + Sync + 'static {
    /// Type name as it appears in fixtures (`"f32"`, `"f64"`, `"i32"`).
    const NAME: &'static str;
    /// The smallest value of the type: `-inf` for floats, `i32::MIN` for `i32`. Identity value
    /// of `ArgMax`.
    const LOWEST: Self;
    /// The largest value of the type: `+inf` for floats, `i32::MAX` for `i32`. Identity value
    /// of `ArgMin`.
    const HIGHEST: Self;
    /// Exact widening to `f64`.
    fn to_f64(self) -> f64;
    /// `false` for NaN and ±inf; always `true` for integers.
    fn is_finite_value(self) -> bool;
    /// `true` only for a NaN.
    fn is_nan_value(self) -> bool;
}

/// The float impls: the infinities are the extremes; finiteness and NaN as IEEE 754 defines
/// them; `f64::from` widens exactly (the identity for `f64`).
macro_rules! float_scalar {
    ($float:ident) => {
        impl Scalar for $float {
            const NAME: &'static str = stringify!($float);
            const LOWEST: Self = $float::NEG_INFINITY;
            const HIGHEST: Self = $float::INFINITY;
            fn to_f64(self) -> f64 {
                f64::from(self)
            }
            fn is_finite_value(self) -> bool {
                self.is_finite()
            }
            fn is_nan_value(self) -> bool {
                self.is_nan()
            }
        }
    };
}
float_scalar!(f32);
float_scalar!(f64);

impl Scalar for i32 {
    const NAME: &'static str = "i32";
    const LOWEST: Self = i32::MIN;
    const HIGHEST: Self = i32::MAX;
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    fn is_finite_value(self) -> bool {
        true
    }
    fn is_nan_value(self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extremes_and_finiteness() {
        assert!(!<f32 as Scalar>::LOWEST.is_finite_value());
        assert_eq!(<f64 as Scalar>::HIGHEST, f64::INFINITY);
        assert!(<i32 as Scalar>::LOWEST.is_finite_value());
        assert!(f32::NAN.is_nan_value());
        assert_eq!(Scalar::to_f64(i32::MIN), -2147483648.0);
    }
}

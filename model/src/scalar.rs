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

impl Scalar for f32 {
    const NAME: &'static str = "f32";
    const LOWEST: Self = f32::NEG_INFINITY;
    const HIGHEST: Self = f32::INFINITY;
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

impl Scalar for f64 {
    const NAME: &'static str = "f64";
    const LOWEST: Self = f64::NEG_INFINITY;
    const HIGHEST: Self = f64::INFINITY;
    fn to_f64(self) -> f64 {
        self
    }
    fn is_finite_value(self) -> bool {
        self.is_finite()
    }
    fn is_nan_value(self) -> bool {
        self.is_nan()
    }
}

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

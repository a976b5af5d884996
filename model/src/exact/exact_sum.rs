//! Exact sums of f32, bf16 and f64 inputs with correctly rounded results.

use half::bf16;
use rug::float::Round;
use rug::Float;
use serde::Serialize;

use super::dyadic::Dyadic;
use super::fixed_point::FixedSum;
use crate::ModelError;

/// The exact sum of a float input and what a checker needs beside it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ExactSum {
    /// The exact sum in plain decimal (every digit; see `Dyadic::to_decimal`).
    pub exact_decimal: String,
    /// The exact sum correctly rounded to f32 (round to nearest, ties to even).
    pub rounded_f32: f32,
    /// The exact sum correctly rounded to f64 (round to nearest, ties to even).
    pub rounded_f64: f64,
    /// Σ|x|, rounded **up** to f64 (so bounds built on it stay bounds).
    pub sum_abs: f64,
    /// Condition number Σ|x| / |Σx| (exact ratio rounded to nearest f64); 1 when every term
    /// is zero, `+inf` when the terms cancel exactly to 0.
    pub condition: f64,
}

/// The exact Σx and Σ|x| (fixed point: no allocation per term).
fn accumulate(primitive: &'static str, values: impl Iterator<Item = f64>) -> Result<(Dyadic, Dyadic), ModelError> {
    let mut sum = FixedSum::new();
    let mut sum_abs = FixedSum::new();
    for (index, x) in values.enumerate() {
        if !x.is_finite() {
            return Err(ModelError::NonFinite { primitive, index, value: x });
        }
        sum.add(x);
        sum_abs.add(x.abs());
    }
    Ok((sum.to_dyadic(), sum_abs.to_dyadic()))
}

fn condition_of(sum: &Dyadic, sum_abs: &Dyadic) -> f64 {
    if sum_abs.is_zero() {
        return 1.0;
    }
    if sum.is_zero() {
        return f64::INFINITY;
    }
    let numerator = sum_abs.to_float();
    let denominator = sum.to_float().abs();
    // Evaluated at 53 bits directly: one correct rounding.
    Float::with_val(53, &numerator / &denominator).to_f64()
}

fn summarize(primitive: &'static str, values: impl Iterator<Item = f64>) -> Result<ExactSum, ModelError> {
    let (sum, sum_abs) = accumulate(primitive, values)?;
    Ok(ExactSum {
        exact_decimal: sum.to_decimal(),
        rounded_f32: sum.to_f32(),
        rounded_f64: sum.to_f64(),
        sum_abs: sum_abs.to_f64_round(Round::Up),
        condition: condition_of(&sum, &sum_abs),
    })
}

/// Exact sum of f64 values. Errors: NaN/±inf → `NonFinite { primitive: "exact_sum_f64", index }`
/// (first offending index). Empty input: exact 0, condition 1.
pub fn exact_sum_f64(values: &[f64]) -> Result<ExactSum, ModelError> {
    summarize("exact_sum_f64", values.iter().copied())
}

/// Exact sum of f32 values (widened exactly). Errors as [`exact_sum_f64`] with primitive
/// `"exact_sum_f32"`. Seed: `[1e8, 1, -1e8]` sums to exactly `"1"`.
pub fn exact_sum_f32(values: &[f32]) -> Result<ExactSum, ModelError> {
    summarize("exact_sum_f32", values.iter().map(|&x| f64::from(x)))
}

/// Exact sum of bf16 values (widened exactly). Errors as [`exact_sum_f64`] with primitive
/// `"exact_sum_bf16"`.
pub fn exact_sum_bf16(values: &[bf16]) -> Result<ExactSum, ModelError> {
    summarize("exact_sum_bf16", values.iter().map(|&x| x.to_f64()))
}

/// Condition number of a sum, Σ|x| / |Σx|, computed exactly and rounded to nearest (1 for all
/// zeros, `+inf` for an exact zero sum of nonzero terms). Errors: NaN/±inf → `NonFinite`
/// (primitive `"condition_number"`).
pub fn condition_number(values: &[f64]) -> Result<f64, ModelError> {
    let (sum, sum_abs) = accumulate("condition_number", values.iter().copied())?;
    Ok(condition_of(&sum, &sum_abs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::{order_free_error_bound, U_F32};

    #[test]
    fn seed_float32_grouping_example() {
        let (a, b, c) = (100_000_000f32, 1f32, -100_000_000f32);
        let left_grouped = (a + b) + c;
        let cancel_first = (a + c) + b;
        assert_eq!(left_grouped, 0.0);
        assert_eq!(cancel_first, 1.0);
        let exact = exact_sum_f32(&[a, b, c]).unwrap();
        assert_eq!(exact.exact_decimal, "1");
        assert_eq!(exact.rounded_f32, 1.0);
        assert_eq!(exact.rounded_f64, 1.0);
        assert_eq!(exact.sum_abs, 200_000_001.0);
        assert_eq!(exact.condition, 200_000_001.0);
        // The wrong answer is still inside the order-free bound.
        assert!((left_grouped as f64 - 1.0).abs() <= order_free_error_bound(3, U_F32, exact.sum_abs));
    }

    #[test]
    fn edge_cases() {
        let empty = exact_sum_f64(&[]).unwrap();
        assert_eq!((empty.exact_decimal.as_str(), empty.condition), ("0", 1.0));
        let cancel = exact_sum_f64(&[1.5, -1.5]).unwrap();
        assert_eq!(cancel.condition, f64::INFINITY);
        assert!(matches!(
            exact_sum_f32(&[1.0, f32::NAN]),
            Err(ModelError::NonFinite { primitive: "exact_sum_f32", index: 1, .. })
        ));
        let b = exact_sum_bf16(&[bf16::from_f32(1.0), bf16::from_f32(0.0078125)]).unwrap();
        assert_eq!(b.exact_decimal, "1.0078125");
        assert_eq!(condition_number(&[3.0, -1.0]).unwrap(), 2.0);
    }

    #[test]
    fn sum_abs_rounds_up() {
        let s = exact_sum_f64(&[1.0, 2f64.powi(-60)]).unwrap();
        assert_eq!(s.sum_abs, 1.0 + f64::EPSILON);
        assert_eq!(s.rounded_f64, 1.0);
    }
}

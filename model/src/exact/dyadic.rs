//! Exact dyadic rationals `I · 2^-1074`: every finite f64 (hence every f32 and bf16) and
//! every sum of them is one, so sums are exact integer additions.

use rug::float::Round;
use rug::{Float, Integer};

/// Scale exponent: the value is `integer · 2^-SCALE`; 1074 makes every f64 subnormal an
/// integer multiple.
const SCALE: u32 = 1074;

/// An exact sum of finite f64 values, held as the integer `I` with value `I · 2^-1074`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dyadic {
    scaled: Integer,
}

impl Dyadic {
    /// Zero.
    pub fn zero() -> Dyadic {
        Dyadic::default()
    }

    /// The value `scaled · 2^-1074`.
    pub(crate) fn from_scaled(scaled: Integer) -> Dyadic {
        Dyadic { scaled }
    }

    /// The exact value of a finite `x`; `None` for NaN/±inf.
    pub fn from_f64(x: f64) -> Option<Dyadic> {
        if !x.is_finite() {
            return None;
        }
        let bits = x.to_bits();
        let exponent_bits = ((bits >> 52) & 0x7ff) as u32;
        let fraction = bits & ((1u64 << 52) - 1);
        // value = mantissa · 2^(shift − 1074)
        let (mantissa, shift) =
            if exponent_bits == 0 { (fraction, 0) } else { (fraction | (1u64 << 52), exponent_bits - 1) };
        let mut scaled = Integer::from(mantissa) << shift;
        if x.is_sign_negative() {
            scaled = -scaled;
        }
        Some(Dyadic { scaled })
    }

    /// Adds `other` exactly.
    pub fn add(&mut self, other: &Dyadic) {
        self.scaled += &other.scaled;
    }

    /// The absolute value.
    pub fn abs(&self) -> Dyadic {
        Dyadic { scaled: self.scaled.clone().abs() }
    }

    /// `true` for exactly zero.
    pub fn is_zero(&self) -> bool {
        self.scaled.is_zero()
    }

    /// The exact value as an MPFR float (precision = the integer's bit length, so exact).
    pub fn to_float(&self) -> Float {
        let bits = self.scaled.significant_bits().max(1);
        Float::with_val(bits, &self.scaled) >> SCALE
    }

    /// Rounded to f64 with `round` (correct rounding, subnormals included; overflow gives
    /// ±inf for nearest rounding).
    pub fn to_f64_round(&self, round: Round) -> f64 {
        self.to_float().to_f64_round(round)
    }

    /// Rounded to nearest-even f64.
    pub fn to_f64(&self) -> f64 {
        self.to_f64_round(Round::Nearest)
    }

    /// Rounded to nearest-even f32 (correct rounding, subnormals included; values at or
    /// beyond `f32::MAX + ulp/2` round to ±inf).
    pub fn to_f32(&self) -> f32 {
        let f = self.to_float();
        // 2^128 − 2^103: the rounding boundary between f32::MAX and infinity.
        let limit = (Float::with_val(256, 1) << 128u32) - (Float::with_val(256, 1) << 103u32);
        if f.clone().abs() >= limit {
            return if f.is_sign_negative() { f32::NEG_INFINITY } else { f32::INFINITY };
        }
        f.to_f32_round(Round::Nearest)
    }

    /// The exact value in plain decimal (no exponent): `-`, integer digits, and — unless the
    /// value is an integer — `.` and every fractional digit (a dyadic rational has a finite
    /// decimal expansion). Zero is `"0"`.
    pub fn to_decimal(&self) -> String {
        if self.scaled.is_zero() {
            return "0".to_string();
        }
        let trailing = self.scaled.find_one(0).unwrap_or(0).min(SCALE);
        let odd = self.scaled.clone().abs() >> trailing;
        let frac_digits = (SCALE - trailing) as usize;
        // odd · 2^-f = odd · 5^f / 10^f
        let digits = (odd * Integer::from(Integer::u_pow_u(5, frac_digits as u32))).to_string();
        let sign = if self.scaled < 0 { "-" } else { "" };
        if frac_digits == 0 {
            return format!("{sign}{digits}");
        }
        let padded = format!("{digits:0>width$}", width = frac_digits + 1);
        let (int_part, frac_part) = padded.split_at(padded.len() - frac_digits);
        format!("{sign}{int_part}.{frac_part}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sum(values: &[f64]) -> Dyadic {
        let mut acc = Dyadic::zero();
        for &v in values {
            acc.add(&Dyadic::from_f64(v).unwrap());
        }
        acc
    }

    #[test]
    fn decimal_strings() {
        assert_eq!(sum(&[]).to_decimal(), "0");
        assert_eq!(sum(&[1.0]).to_decimal(), "1");
        assert_eq!(sum(&[-12.375]).to_decimal(), "-12.375");
        assert_eq!(sum(&[0.5, 0.25]).to_decimal(), "0.75");
        assert_eq!(sum(&[0.1]).to_decimal(), "0.1000000000000000055511151231257827021181583404541015625");
        assert_eq!(sum(&[1e20, 1.0]).to_decimal(), "100000000000000000001");
        assert!(sum(&[f64::from_bits(1)]).to_decimal().starts_with("0.000"));
        assert!(sum(&[f64::from_bits(1)]).to_decimal().ends_with("5"));
    }

    #[test]
    fn correct_rounding_ties_to_even() {
        // 1 + 2^-53 is a tie between 1 and 1 + 2^-52: rounds to 1 (even).
        assert_eq!(sum(&[1.0, 2f64.powi(-53)]).to_f64(), 1.0);
        // 1 + 2^-53 + 2^-100 is above the tie.
        assert_eq!(sum(&[1.0, 2f64.powi(-53), 2f64.powi(-100)]).to_f64(), 1.0 + f64::EPSILON);
        // f32: 1 + 2^-24 is a tie → 1; 1 + 3·2^-24 is a tie → 1 + 2^-22 (even).
        assert_eq!(sum(&[1.0, 2f64.powi(-24)]).to_f32(), 1.0);
        assert_eq!(sum(&[1.0, 3.0 * 2f64.powi(-24)]).to_f32(), 1.0 + 2f32.powi(-22));
        // Subnormal f32 tie: 2^-150 is half the smallest subnormal → rounds to 0 (even).
        assert_eq!(sum(&[2f64.powi(-150)]).to_f32(), 0.0);
        assert_eq!(sum(&[2f64.powi(-150), 2f64.powi(-160)]).to_f32(), f32::from_bits(1));
        assert_eq!(sum(&[3.0 * 2f64.powi(-150)]).to_f32(), f32::from_bits(2));
        // Overflow boundary.
        assert_eq!(sum(&[f64::from(f32::MAX), 2f64.powi(102)]).to_f32(), f32::MAX);
        assert_eq!(sum(&[f64::from(f32::MAX), 2f64.powi(103)]).to_f32(), f32::INFINITY);
        assert_eq!(sum(&[f64::MAX, f64::MAX]).to_f64(), f64::INFINITY);
        assert_eq!(sum(&[-f64::MAX, -f64::MAX]).to_f32(), f32::NEG_INFINITY);
    }

    #[test]
    fn rejects_nonfinite() {
        assert!(Dyadic::from_f64(f64::NAN).is_none());
        assert!(Dyadic::from_f64(f64::INFINITY).is_none());
        assert_eq!(Dyadic::from_f64(-0.0), Some(Dyadic::zero()));
    }
}

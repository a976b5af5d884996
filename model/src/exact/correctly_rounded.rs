//! The correctly rounded f32 sum, by exact (rug) arithmetic: the reference the
//! `exact_sum` kernels and the binned-limb model ([`super::binned`]) must
//! equal bit for bit.
//!
//! Contract (the kernels' too):
//! * finite inputs: the exact real sum rounded to nearest, ties to even, in
//!   f32 (subnormals included); `±inf` when the rounding overflows
//!   (`|S| >= f32::MAX + ulp/2`); an exact zero (the empty sum included) is
//!   `+0.0`, also when every input is `-0.0`;
//! * any NaN input, or `+inf` and `-inf` both present: NaN, always the
//!   canonical quiet NaN `f32::NAN` (`0x7fc0_0000`);
//! * otherwise, an infinity present is the result (IEEE `inf + finite = inf`).

use half::bf16;

use super::dyadic::Dyadic;

/// Which non-finite values an input holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NonFiniteSeen {
    /// Some input is a NaN.
    pub nan: bool,
    /// Some input is `+inf`.
    pub pos_inf: bool,
    /// Some input is `-inf`.
    pub neg_inf: bool,
}

impl NonFiniteSeen {
    /// Records `x`.
    pub fn see(&mut self, x: f32) {
        if x.is_nan() {
            self.nan = true;
        } else if x == f32::INFINITY {
            self.pos_inf = true;
        } else if x == f32::NEG_INFINITY {
            self.neg_inf = true;
        }
    }

    /// Both records together.
    pub fn merge(self, other: NonFiniteSeen) -> NonFiniteSeen {
        NonFiniteSeen {
            nan: self.nan || other.nan,
            pos_inf: self.pos_inf || other.pos_inf,
            neg_inf: self.neg_inf || other.neg_inf,
        }
    }

    /// The result the non-finite inputs force, if any: NaN for a NaN or
    /// for both infinities, else the infinity present.
    pub fn forced_result(self) -> Option<f32> {
        if self.nan || (self.pos_inf && self.neg_inf) {
            Some(f32::NAN)
        } else if self.pos_inf {
            Some(f32::INFINITY)
        } else if self.neg_inf {
            Some(f32::NEG_INFINITY)
        } else {
            None
        }
    }
}

/// The correctly rounded f32 sum of `values` (module documentation: the
/// contract, non-finite inputs included). Exact: rug integers.
pub fn correctly_rounded_sum_f32(values: &[f32]) -> f32 {
    let mut seen = NonFiniteSeen::default();
    let mut sum = Dyadic::zero();
    for &x in values {
        match Dyadic::from_f64(f64::from(x)) {
            Some(exact) => sum.add(&exact),
            None => seen.see(x),
        }
    }
    seen.forced_result().unwrap_or_else(|| {
        // `Dyadic::to_f32` of an exact zero is +0.0.
        sum.to_f32()
    })
}

/// The correctly rounded f32 sum of bf16 `values` (each widened exactly);
/// contract as [`correctly_rounded_sum_f32`].
pub fn correctly_rounded_sum_bf16(values: &[bf16]) -> f32 {
    let widened: Vec<f32> = values.iter().map(|x| x.to_f32()).collect();
    correctly_rounded_sum_f32(&widened)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generators::ill_conditioned_f32;

    fn p2(k: i32) -> f32 {
        2f32.powi(k)
    }

    #[test]
    fn huge_terms_cancel_to_exact_zero() {
        let mut x = vec![p2(127), p2(127), -p2(127), -p2(127)];
        x.extend(std::iter::repeat_n(0.0, 1000));
        let s = correctly_rounded_sum_f32(&x);
        assert_eq!(s.to_bits(), 0, "+0.0");
        assert_eq!(correctly_rounded_sum_f32(&[]).to_bits(), 0);
        assert_eq!(correctly_rounded_sum_f32(&[-0.0, -0.0]).to_bits(), 0, "exact zero is +0");
        // f32 arithmetic in this order would overflow to inf - inf = NaN.
        assert!(((p2(127) + p2(127)) + -p2(127)).is_infinite());
    }

    #[test]
    fn overflowing_sums_are_infinite() {
        assert_eq!(correctly_rounded_sum_f32(&[f32::MAX, f32::MAX]), f32::INFINITY);
        assert_eq!(correctly_rounded_sum_f32(&[-f32::MAX, -f32::MAX, f32::MAX, -f32::MAX]), f32::NEG_INFINITY);
        // Below the boundary f32::MAX + ulp/2 = f32::MAX + 2^103: stays finite.
        assert_eq!(correctly_rounded_sum_f32(&[f32::MAX, p2(102)]), f32::MAX);
        assert_eq!(correctly_rounded_sum_f32(&[f32::MAX, p2(102), p2(102)]), f32::INFINITY);
        // Overflowing partial sums that come back into range are finite.
        assert_eq!(correctly_rounded_sum_f32(&[f32::MAX, f32::MAX, -f32::MAX]), f32::MAX);
    }

    #[test]
    fn subnormals_sum_exactly() {
        let tiny = f32::from_bits(1);
        assert_eq!(correctly_rounded_sum_f32(&vec![tiny; 1000]).to_bits(), 1000);
        let smallest_normal = f32::MIN_POSITIVE;
        assert_eq!(correctly_rounded_sum_f32(&[smallest_normal, -tiny]).to_bits(), 0x007f_ffff);
        assert_eq!(correctly_rounded_sum_f32(&[-tiny, -tiny]).to_bits(), 0x8000_0002);
        assert_eq!(correctly_rounded_sum_f32(&[1.0, tiny, -1.0]), tiny);
    }

    #[test]
    fn mixed_signs_and_ties_to_even() {
        assert_eq!(correctly_rounded_sum_f32(&[1e8, 1.0, -1e8]), 1.0);
        // 1 + 2^-24 is a tie between 1 and 1 + 2^-23: even is 1.
        assert_eq!(correctly_rounded_sum_f32(&[1.0, p2(-24)]), 1.0);
        // 1 + 3 * 2^-24 is a tie: even is 1 + 2^-22.
        assert_eq!(correctly_rounded_sum_f32(&[1.0, p2(-24), p2(-23)]), 1.0 + p2(-22));
        // Just above a tie: rounds up.
        assert_eq!(correctly_rounded_sum_f32(&[1.0, p2(-24), p2(-100)]), 1.0 + p2(-23));
        // Just below a tie: rounds down.
        assert_eq!(correctly_rounded_sum_f32(&[1.0, p2(-24), -p2(-100)]), 1.0);
        assert_eq!(correctly_rounded_sum_f32(&[-1.0, -p2(-24), -p2(-23)]), -(1.0 + p2(-22)));
    }

    #[test]
    fn non_finite_inputs_follow_ieee() {
        assert!(correctly_rounded_sum_f32(&[1.0, f32::NAN]).is_nan());
        assert_eq!(correctly_rounded_sum_f32(&[f32::NAN]).to_bits(), 0x7fc0_0000);
        assert_eq!(correctly_rounded_sum_f32(&[f32::INFINITY, f32::NEG_INFINITY]).to_bits(), 0x7fc0_0000);
        assert_eq!(correctly_rounded_sum_f32(&[f32::INFINITY, -f32::MAX, -f32::MAX]), f32::INFINITY);
        assert_eq!(correctly_rounded_sum_f32(&[f32::NEG_INFINITY, 1.0]), f32::NEG_INFINITY);
        assert_eq!(correctly_rounded_sum_f32(&[f32::INFINITY, f32::INFINITY]), f32::INFINITY);
    }

    #[test]
    fn ill_conditioned_sums_round_correctly() {
        for condition in [1e10, 1e30, 1e38, 1e45] {
            let (x, achieved) = ill_conditioned_f32(2000, condition, 7).unwrap();
            assert!(achieved >= condition / 100.0, "{condition:e}: reached {achieved:e}");
            let wide: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
            let expected = super::super::exact_sum_f64(&wide).unwrap().rounded_f32;
            assert_eq!(correctly_rounded_sum_f32(&x).to_bits(), expected.to_bits(), "{condition:e}");
        }
    }

    #[test]
    fn bf16_inputs_widen_exactly() {
        let x = [bf16::from_f32(1.0), bf16::from_f32(0.0078125), bf16::from_f32(-3.0)];
        assert_eq!(correctly_rounded_sum_bf16(&x), -1.9921875);
        assert!(correctly_rounded_sum_bf16(&[bf16::NAN]).is_nan());
    }
}

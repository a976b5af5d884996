//! Ill-conditioned sums in the style of Ogita, Rump & Oishi (2005), GenDot/GenSum.
//!
//! Algorithm (for `n` terms, target condition `c`, `b = log2 c`):
//! 1. exponent window: `top = min(b, TOP)`, `bottom = max(top − b, BOTTOM)` (format limits
//!    below). For `b <= TOP` this is GenSum's `[0, b]`: terms up to `2^b`, the sum driven to
//!    about 1. Beyond, the sum is driven below 1 instead (to `2^(TOP − b)`), which keeps every
//!    term and partial sum far from overflow;
//! 2. first half (`n/2` terms): `r·2^e`, `r` uniform in `[-1, 1)`, `e` uniform in
//!    `[bottom, top]` (the first one exactly `top`), rounded to the format;
//! 3. second half: exponents fall linearly from `top` to `bottom`; each term is
//!    `round(r·2^e − round(S))` where `S` is the **exact** running sum, so the running sum
//!    shrinks to about `2^bottom`; a term that would make `S` exactly 0 is moved one ulp;
//! 4. shuffle; report the exactly computed condition `Σ|x| / |Σx|`.
//!
//! Exponents go up to `b`, not GenDot's `b/2`: `b/2` is GenDot's exponent for each *factor* of
//! a product; for a plain sum the terms need exponents up to `b` to reach condition `2^b`.
//!
//! What is achievable: each second-half step can cancel at most ~p bits (p = 24 for f32, 53
//! for f64), so about `(n/2)·p` bits of condition in total: with f32, 1e30 (~100 bits) needs
//! `n >= ~10`; small `n` fall short and report what they reach. f32 terms stay within
//! `2^±100` (no subnormals, sums of up to 2^26 terms cannot overflow), so f32 targets up to
//! ~2^200 ≈ 1.6e60 are meaningful; f64 uses `2^±900`.

use super::rng::Rng;
use crate::exact::{condition_number, FixedSum};
use crate::ModelError;

/// Largest term exponent for f32 sums.
pub const F32_TOP_EXPONENT: f64 = 100.0;
/// Smallest exponent the f32 running sum is driven to.
pub const F32_BOTTOM_EXPONENT: f64 = -100.0;
/// Largest term exponent for f64 sums.
pub const F64_TOP_EXPONENT: f64 = 900.0;
/// Smallest exponent the f64 running sum is driven to.
pub const F64_BOTTOM_EXPONENT: f64 = -900.0;

#[derive(Clone, Copy)]
enum Format {
    F32,
    F64,
}

impl Format {
    fn round(self, x: f64) -> f64 {
        match self {
            Format::F32 => f64::from(x as f32),
            Format::F64 => x,
        }
    }

    fn round_exact(self, sum: &FixedSum) -> f64 {
        match self {
            Format::F32 => f64::from(sum.to_f32()),
            Format::F64 => sum.to_f64(),
        }
    }

    /// The next representable value above `x`.
    fn next_up(self, x: f64) -> f64 {
        match self {
            Format::F32 => {
                let f = x as f32;
                let bits = f.to_bits();
                let next = if f == 0.0 {
                    f32::from_bits(1)
                } else if f > 0.0 {
                    f32::from_bits(bits + 1)
                } else {
                    f32::from_bits(bits - 1)
                };
                f64::from(next)
            }
            Format::F64 => {
                let bits = x.to_bits();
                if x == 0.0 {
                    f64::from_bits(1)
                } else if x > 0.0 {
                    f64::from_bits(bits + 1)
                } else {
                    f64::from_bits(bits - 1)
                }
            }
        }
    }

    fn window(self) -> (f64, f64) {
        match self {
            Format::F32 => (F32_TOP_EXPONENT, F32_BOTTOM_EXPONENT),
            Format::F64 => (F64_TOP_EXPONENT, F64_BOTTOM_EXPONENT),
        }
    }
}

fn gen_sum(
    n: usize,
    condition: f64,
    seed: u64,
    format: Format,
    generator: &'static str,
) -> Result<(Vec<f64>, f64), ModelError> {
    if !(condition.is_finite() && condition >= 1.0) {
        return Err(ModelError::BadGenerator {
            generator,
            detail: format!("condition {condition} must be finite and >= 1"),
        });
    }
    let b = condition.log2();
    let (top_limit, bottom_limit) = format.window();
    let top = b.min(top_limit);
    let bottom = (top - b).max(bottom_limit);
    let mut rng = Rng::new(seed);
    let first_half = n / 2;
    let second_half = n - first_half;
    let mut values = Vec::with_capacity(n);
    // The exact running sum (terms are finite by construction: exponents within ±900, |r| < 1).
    let mut sum = FixedSum::new();
    for i in 0..first_half {
        let e = if i == 0 { top } else { bottom + rng.unit_f64() * (top - bottom) };
        let x = format.round(rng.signed_unit_f64() * 2f64.powi(e.round() as i32));
        sum.add(x);
        values.push(x);
    }
    for j in 0..second_half {
        let e = top - (top - bottom) * (j + 1) as f64 / second_half as f64;
        let target = rng.signed_unit_f64() * 2f64.powi(e.round() as i32);
        let mut x = format.round(target - format.round_exact(&sum));
        sum.add(x);
        if sum.is_zero() {
            // Take x back (the sum is exactly -x) and move it one ulp.
            sum.add(-x);
            x = format.next_up(x);
            sum.add(x);
        }
        values.push(x);
    }
    rng.shuffle(&mut values);
    let achieved = condition_number(&values)?;
    Ok((values, achieved))
}

/// `n` f32 terms whose exact sum has condition number near `condition` (see the module docs);
/// returns the terms and the **achieved** condition (exact ratio rounded to f64). Never an
/// exact zero sum for `n >= 1`. Error: `BadGenerator` for a condition below 1 or nonfinite.
pub fn ill_conditioned_f32(n: usize, condition: f64, seed: u64) -> Result<(Vec<f32>, f64), ModelError> {
    let (values, achieved) = gen_sum(n, condition, seed, Format::F32, "ill_conditioned_f32")?;
    Ok((values.into_iter().map(|x| x as f32).collect(), achieved))
}

/// `n` f64 terms with condition number near `condition`; as [`ill_conditioned_f32`] with the
/// f64 window `2^±900`.
pub fn ill_conditioned_f64(n: usize, condition: f64, seed: u64) -> Result<(Vec<f64>, f64), ModelError> {
    gen_sum(n, condition, seed, Format::F64, "ill_conditioned_f64")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::exact_sum_f32;

    #[test]
    fn f32_reaches_1e30_and_beyond() {
        for (n, target) in [(64usize, 1e10), (64, 1e30), (512, 1e30), (4099, 1e30), (512, 1e45)] {
            let (v, achieved) = ill_conditioned_f32(n, target, 11).unwrap();
            assert_eq!(v.len(), n);
            assert!(
                achieved >= target / 100.0 && achieved <= target * 1e6,
                "n {n} target {target:e} achieved {achieved:e}"
            );
            let check = exact_sum_f32(&v).unwrap();
            assert_eq!(check.condition, achieved);
        }
    }

    #[test]
    fn f64_reaches_1e100() {
        let (_, achieved) = ill_conditioned_f64(256, 1e100, 5).unwrap();
        assert!(achieved >= 1e98, "{achieved:e}");
        let (_, achieved) = ill_conditioned_f64(64, 1e30, 5).unwrap();
        assert!((1e28..=1e36).contains(&achieved), "{achieved:e}");
    }

    #[test]
    fn small_and_degenerate_requests() {
        let (v, c) = ill_conditioned_f32(1, 1e30, 1).unwrap();
        assert_eq!(v.len(), 1);
        assert_eq!(c, 1.0);
        let (v, c) = ill_conditioned_f32(2, 1e30, 1).unwrap();
        assert_eq!(v.len(), 2);
        assert!(c.is_finite());
        assert_eq!(ill_conditioned_f32(0, 10.0, 1).unwrap().0, Vec::<f32>::new());
        assert!(ill_conditioned_f32(4, 0.5, 1).is_err());
        assert!(ill_conditioned_f64(4, f64::INFINITY, 1).is_err());
        let (_, c) = ill_conditioned_f32(64, 1.0, 3).unwrap();
        assert!(c < 100.0);
    }
}

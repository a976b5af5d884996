//! An exact sum of finite f64 values in fixed point, without allocation per
//! term: the fast path behind [`super::exact_sum_f64`] and friends (a
//! [`Dyadic`] per term allocates a big integer each time).
//!
//! Every finite f64 is `m · 2^(s − 1074)` with `m < 2^53` and `0 <= s <=
//! 2045` (`s = max(biased exponent, 1) − 1`), i.e. an integer `m << s` in
//! units of 2^-1074, the unit of [`Dyadic`]. That integer is split by `s`:
//! it adds `m << (s & 31)` (below 2^84) to bin `s >> 5`, which weighs
//! `2^(32 · (s >> 5))` units. A bin is an `i128`, so it takes 2^43 terms
//! before it could overflow; [`FixedSum::add`] carries the bins into 32-bit
//! digits long before that (every 2^40 terms), which leaves the value
//! unchanged. The value is then `Σ bins[b] · 2^(32 b)` units, exactly.

use super::dyadic::Dyadic;
use rug::float::Round;
use rug::Integer;

/// Exponent bins: `2045 >> 5 = 63` is the last.
const BINS: usize = 64;
/// Terms between carries (far below the 2^43 an `i128` bin could take).
const CARRY_EVERY: u64 = 1 << 40;

/// A running exact sum of finite f64 values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FixedSum {
    bins: [i128; BINS],
    terms: u64,
}

impl Default for FixedSum {
    fn default() -> Self {
        FixedSum { bins: [0; BINS], terms: 0 }
    }
}

impl FixedSum {
    /// Zero.
    pub fn new() -> FixedSum {
        FixedSum::default()
    }

    /// Adds a finite `x` exactly. A non-finite `x` is the caller's to refuse
    /// (it would add a meaningless term).
    #[inline]
    pub fn add(&mut self, x: f64) {
        debug_assert!(x.is_finite());
        let bits = x.to_bits();
        let biased = ((bits >> 52) & 0x7ff) as u32;
        let fraction = bits & ((1u64 << 52) - 1);
        let (m, s) = if biased == 0 { (fraction, 0) } else { (fraction | (1u64 << 52), biased - 1) };
        let term = i128::from(m) << (s & 31);
        let bin = (s >> 5) as usize;
        if bits >> 63 == 0 {
            self.bins[bin] += term;
        } else {
            self.bins[bin] -= term;
        }
        self.terms += 1;
        if self.terms % CARRY_EVERY == 0 {
            self.carry();
        }
    }

    /// Adds `other`'s value.
    pub fn merge(&mut self, other: &FixedSum) {
        self.carry();
        let mut other = other.clone();
        other.carry();
        for (mine, theirs) in self.bins.iter_mut().zip(other.bins) {
            *mine += theirs;
        }
        self.carry();
    }

    /// Moves every bin but the last into `[0, 2^32)`, its carry (a floor
    /// division by 2^32) into the next bin: the value is unchanged.
    fn carry(&mut self) {
        for b in 0..BINS - 1 {
            let carry = self.bins[b] >> 32;
            self.bins[b] -= carry << 32;
            self.bins[b + 1] += carry;
        }
    }

    /// The value rounded to nearest-even f64 (the f64 nearest the exact sum,
    /// subnormals included; beyond the largest finite f64 by half an ulp or
    /// more, ±inf). Done here on the bins, with no big-integer allocation.
    pub fn to_f64(&self) -> f64 {
        self.round(53, 0, 1024)
    }

    /// The value rounded to nearest-even f32 (subnormals included; ±inf
    /// from `f32::MAX` plus half an ulp on).
    pub fn to_f32(&self) -> f32 {
        // Exact: the rounded value has 24 bits and an exponent within f32's.
        self.round(24, 1074 - 149, 128) as f32
    }

    /// Rounds the value to `precision` significant bits, to nearest even, in
    /// units no finer than 2^(`quantum` - 1074) (the format's smallest
    /// subnormal), with ±inf at 2^`overflow` and above; as an f64.
    fn round(&self, precision: u32, quantum: u32, overflow: i32) -> f64 {
        let (negative, digits) = self.magnitude();
        let Some(top) = digits.iter().rposition(|&d| d != 0) else { return 0.0 };
        let length = 32 * top as u32 + (32 - digits[top].leading_zeros());
        let bit = |i: u32| (digits[(i / 32) as usize] >> (i % 32)) & 1 == 1;
        let shift = length.saturating_sub(precision).max(quantum);
        let mut keep: u64 = (shift..length).rev().fold(0, |acc, i| (acc << 1) | u64::from(bit(i)));
        if shift > 0 {
            let guard = bit(shift - 1);
            // Any bit below the guard: whole digits, then the guard's digit below it.
            let (whole, part) = (((shift - 1) / 32) as usize, (shift - 1) % 32);
            let sticky = digits[..whole].iter().any(|&d| d != 0) || digits[whole] & ((1u32 << part) - 1) != 0;
            keep += u64::from(guard && (sticky || keep & 1 == 1));
        }
        // keep < 2^(precision + 1) and the exponent within f64's: exact.
        let exponent = shift as i32 - 1074;
        let magnitude = if exponent + 64 - keep.leading_zeros() as i32 > overflow {
            f64::INFINITY
        } else {
            keep as f64 * 2f64.powi(exponent.max(-1022)) * 2f64.powi((exponent + 1022).min(0))
        };
        if negative {
            -magnitude
        } else {
            magnitude
        }
    }

    /// The sign and the magnitude in 32-bit digits (little-endian) of the value.
    fn magnitude(&self) -> (bool, [u32; BINS + 3]) {
        let mut value = self.clone();
        value.carry();
        let negative = value.bins[BINS - 1] < 0;
        if negative {
            value.bins.iter_mut().for_each(|b| *b = -*b);
            value.carry();
        }
        let mut digits = [0u32; BINS + 3];
        for (d, &b) in digits.iter_mut().zip(&value.bins[..BINS - 1]) {
            *d = b as u32;
        }
        let top = value.bins[BINS - 1] as u128;
        for k in 0..4 {
            digits[BINS - 1 + k] = (top >> (32 * k)) as u32;
        }
        (negative, digits)
    }

    /// Whether the value is exactly zero.
    pub fn is_zero(&self) -> bool {
        let mut value = self.clone();
        value.carry();
        value.bins.iter().all(|&b| b == 0)
    }

    /// The value rounded up (toward +inf) to f64: a bound built on it stays a bound.
    pub fn to_f64_up(&self) -> f64 {
        self.to_dyadic().to_f64_round(Round::Up)
    }

    /// The exact value.
    pub fn to_dyadic(&self) -> Dyadic {
        let mut scaled = Integer::new();
        for (b, &bin) in self.bins.iter().enumerate().rev() {
            if bin != 0 {
                scaled += Integer::from(bin) << (32 * b as u32);
            }
        }
        Dyadic::from_scaled(scaled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn by_dyadic(values: &[f64]) -> Dyadic {
        let mut acc = Dyadic::zero();
        for &v in values {
            acc.add(&Dyadic::from_f64(v).expect("finite"));
        }
        acc
    }

    fn by_fixed(values: &[f64]) -> Dyadic {
        let mut acc = FixedSum::new();
        values.iter().for_each(|&v| acc.add(v));
        acc.to_dyadic()
    }

    #[test]
    fn extremes_and_cancellation_are_exact() {
        let cases: [&[f64]; 6] = [
            &[],
            &[f64::MAX, f64::MAX, -f64::MAX],
            &[f64::from_bits(1), -f64::from_bits(1), f64::from_bits(1)],
            &[1e308, 1.0, -1e308],
            &[f64::MIN_POSITIVE, f64::MIN_POSITIVE / 4.0, -0.0, 0.0],
            &[-f64::MAX, -f64::MAX, -f64::MAX, f64::from_bits(1)],
        ];
        for values in cases {
            assert_eq!(by_fixed(values), by_dyadic(values), "{values:?}");
        }
    }

    #[test]
    fn carries_and_merges_keep_the_value() {
        let values: Vec<f64> = (0..5000).map(|i| ((i * 7919) % 1000) as f64 * 2f64.powi((i % 200) - 100)).collect();
        let mut halves = FixedSum::new();
        let mut second = FixedSum::new();
        values[..2500].iter().for_each(|&v| halves.add(v));
        values[2500..].iter().for_each(|&v| second.add(-v));
        halves.merge(&second);
        let mut expected: Vec<f64> = values[..2500].to_vec();
        expected.extend(values[2500..].iter().map(|v| -v));
        assert_eq!(halves.to_dyadic(), by_dyadic(&expected));
        let mut carried = FixedSum::new();
        values.iter().for_each(|&v| carried.add(v));
        carried.carry();
        assert_eq!(carried.to_dyadic(), by_dyadic(&values));
    }

    #[test]
    fn roundings_are_the_dyadic_references_at_the_edges() {
        let cases: [&[f64]; 10] = [
            &[],
            &[1.0, 2f64.powi(-53)],
            &[1.0, 2f64.powi(-53), 2f64.powi(-100)],
            &[1.0, 2f64.powi(-24)],
            &[1.0, 3.0 * 2f64.powi(-24)],
            &[f64::from(f32::MAX), f64::from(f32::MAX) * 2f64.powi(-25)],
            &[2f64.powi(-150)],
            &[2f64.powi(-150), 2f64.powi(-200)],
            &[f64::MAX, f64::MAX],
            &[-f64::from_bits(1), -1e-320, 3.5],
        ];
        for values in cases {
            let mut fixed = FixedSum::new();
            values.iter().for_each(|&v| fixed.add(v));
            let dyadic = by_dyadic(values);
            assert_eq!(fixed.to_f64().to_bits(), dyadic.to_f64().to_bits(), "f64 of {values:?}");
            assert_eq!(fixed.to_f32().to_bits(), dyadic.to_f32().to_bits(), "f32 of {values:?}");
            assert_eq!(fixed.is_zero(), dyadic.is_zero(), "{values:?}");
        }
    }

    proptest! {
        #[test]
        fn any_sum_rounds_as_the_dyadic_reference(bits in proptest::collection::vec(any::<u64>(), 0..16), scale in -1100i32..1100) {
            let values: Vec<f64> = bits.into_iter().map(|b| f64::from_bits(b) * 0.0 + (b as f64) * 2f64.powi(scale.clamp(-1074, 900) / 2) * if b & 1 == 0 { 1.0 } else { -1.0 })
                .filter(|x| x.is_finite()).collect();
            let mut fixed = FixedSum::new();
            values.iter().for_each(|&v| fixed.add(v));
            let dyadic = by_dyadic(&values);
            prop_assert_eq!(fixed.to_f64().to_bits(), dyadic.to_f64().to_bits());
            prop_assert_eq!(fixed.to_f32().to_bits(), dyadic.to_f32().to_bits());
        }

        #[test]
        fn any_finite_values_round_as_the_dyadic_reference(bits in proptest::collection::vec(any::<u64>(), 0..12)) {
            let values: Vec<f64> = bits.into_iter().map(f64::from_bits).filter(|x| x.is_finite()).collect();
            let mut fixed = FixedSum::new();
            values.iter().for_each(|&v| fixed.add(v));
            let dyadic = by_dyadic(&values);
            prop_assert_eq!(fixed.to_f64().to_bits(), dyadic.to_f64().to_bits());
            prop_assert_eq!(fixed.to_f32().to_bits(), dyadic.to_f32().to_bits());
        }

        #[test]
        fn any_finite_values_sum_as_the_dyadic_reference(bits in proptest::collection::vec(any::<u64>(), 0..64)) {
            let values: Vec<f64> = bits.into_iter().map(f64::from_bits).filter(|x| x.is_finite()).collect();
            prop_assert_eq!(by_fixed(&values), by_dyadic(&values));
        }
    }
}

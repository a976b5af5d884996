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

    /// The value rounded to nearest-even f64.
    pub fn to_f64(&self) -> f64 {
        self.to_dyadic().to_f64()
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

    proptest! {
        #[test]
        fn any_finite_values_sum_as_the_dyadic_reference(bits in proptest::collection::vec(any::<u64>(), 0..64)) {
            let values: Vec<f64> = bits.into_iter().map(f64::from_bits).filter(|x| x.is_finite()).collect();
            prop_assert_eq!(by_fixed(&values), by_dyadic(&values));
        }
    }
}

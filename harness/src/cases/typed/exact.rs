//! An exact running sum of floats in fixed point, cheap to copy and to round:
//! what the typed float sums (reduce and scan) are judged against.
//!
//! Rule: every finite f64 (and so every f32 and bf16) is an integer multiple
//! of 2^-1074, of magnitude below 2^2098. A sum of up to 2^36 of them is an
//! integer below 2^2134 in units of 2^-1074, which a two's complement integer
//! of [`LIMBS`] 64-bit limbs (2176 bits) holds with room for its sign. Adding
//! a term adds its 53-bit significand at its exponent's bit, exactly, so the
//! sum is exact in any order; [`ExactSum::to_f64`] rounds it once, to nearest
//! even. (The model's `FixedSum` is the same idea with lazy carries, built
//! for merging; this one keeps carries done so a copy and a rounding per
//! element of a scan stay cheap.)

/// 64-bit limbs of the integer.
pub const LIMBS: usize = 34;

/// An exact sum of finite floats: a two's complement integer in units of 2^-1074.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExactSum {
    limbs: [u64; LIMBS],
}

impl Default for ExactSum {
    fn default() -> Self {
        ExactSum { limbs: [0; LIMBS] }
    }
}

impl ExactSum {
    /// Zero.
    pub fn new() -> ExactSum {
        ExactSum::default()
    }

    /// Adds a finite `x` exactly (a non-finite `x` is the caller's to refuse:
    /// it is ignored here).
    pub fn add(&mut self, x: f64) {
        if !x.is_finite() || x == 0.0 {
            return;
        }
        let bits = x.to_bits();
        let biased = ((bits >> 52) & 0x7ff) as usize;
        let fraction = bits & ((1u64 << 52) - 1);
        // x = ±m · 2^(s - 1074): subnormals have s = 0, normals s = biased - 1.
        let (m, s) = if biased == 0 { (fraction, 0) } else { (fraction | (1u64 << 52), biased - 1) };
        let shifted = u128::from(m) << (s % 64);
        let (low, high) = (shifted as u64, (shifted >> 64) as u64);
        if bits >> 63 == 0 {
            self.add_at(s / 64, low, high);
        } else {
            self.sub_at(s / 64, low, high);
        }
    }

    /// Adds `other` exactly.
    pub fn merge(&mut self, other: &ExactSum) {
        let mut carry = false;
        for (mine, &theirs) in self.limbs.iter_mut().zip(&other.limbs) {
            let (v, c1) = mine.overflowing_add(theirs);
            let (v, c2) = v.overflowing_add(u64::from(carry));
            *mine = v;
            carry = c1 || c2;
        }
    }

    fn add_at(&mut self, at: usize, low: u64, high: u64) {
        let mut carry;
        (self.limbs[at], carry) = self.limbs[at].overflowing_add(low);
        let mut k = at + 1;
        let mut addend = high;
        while k < LIMBS && (carry || addend != 0) {
            let (v, c1) = self.limbs[k].overflowing_add(addend);
            let (v, c2) = v.overflowing_add(u64::from(carry));
            self.limbs[k] = v;
            carry = c1 || c2;
            addend = 0;
            k += 1;
        }
    }

    fn sub_at(&mut self, at: usize, low: u64, high: u64) {
        let mut borrow;
        (self.limbs[at], borrow) = self.limbs[at].overflowing_sub(low);
        let mut k = at + 1;
        let mut subtrahend = high;
        while k < LIMBS && (borrow || subtrahend != 0) {
            let (v, b1) = self.limbs[k].overflowing_sub(subtrahend);
            let (v, b2) = v.overflowing_sub(u64::from(borrow));
            self.limbs[k] = v;
            borrow = b1 || b2;
            subtrahend = 0;
            k += 1;
        }
    }

    /// Whether the sum is negative.
    fn negative(&self) -> bool {
        self.limbs[LIMBS - 1] >> 63 == 1
    }

    /// The magnitude, as an unsigned integer in units of 2^-1074.
    fn magnitude(&self) -> [u64; LIMBS] {
        if !self.negative() {
            return self.limbs;
        }
        let mut m = self.limbs.map(|l| !l);
        for limb in &mut m {
            let (v, carry) = limb.overflowing_add(1);
            *limb = v;
            if !carry {
                break;
            }
        }
        m
    }

    /// The sum rounded to the nearest f64 (ties to even; ±inf from the largest
    /// finite f64 plus half an ulp on).
    pub fn to_f64(&self) -> f64 {
        let m = self.magnitude();
        let Some(top) = m.iter().rposition(|&l| l != 0) else { return 0.0 };
        let length = 64 * top + (64 - m[top].leading_zeros() as usize);
        let bit = |i: usize| (m[i / 64] >> (i % 64)) & 1 == 1;
        let window = |from: usize| {
            let (a, o) = (from / 64, from % 64);
            let low = m[a] >> o;
            let high = if o > 0 && a + 1 < LIMBS { m[a + 1] << (64 - o) } else { 0 };
            (low | high) & ((1u64 << 53) - 1)
        };
        let (mut keep, mut shift) = if length <= 53 { (window(0), 0) } else { (window(length - 53), length - 53) };
        if shift > 0 {
            let guard = bit(shift - 1);
            let sticky = below(&m, shift - 1);
            if guard && (sticky || keep & 1 == 1) {
                keep += 1;
                if keep == 1u64 << 53 {
                    keep >>= 1;
                    shift += 1;
                }
            }
        }
        let exponent = shift as i32 - 1074;
        let magnitude = if exponent > 1023 - 52 {
            f64::INFINITY
        } else if exponent < -1022 {
            // Only when shift = 0: keep < 2^53 units of 2^-1074, exact; the scale is split
            // so that no factor underflows.
            keep as f64 * 2f64.powi(exponent + 60) * 2f64.powi(-60)
        } else {
            keep as f64 * 2f64.powi(exponent)
        };
        if self.negative() {
            -magnitude
        } else {
            magnitude
        }
    }

    /// `self - x` rounded to the nearest f64 (the error of a result `x`, negated).
    pub fn minus_to_f64(&self, x: f64) -> f64 {
        let mut d = self.clone();
        d.add(-x);
        d.to_f64()
    }
}

/// Whether any of the bits of `m` below bit `i` is set.
fn below(m: &[u64; LIMBS], i: usize) -> bool {
    let (whole, part) = (i / 64, i % 64);
    m[..whole].iter().any(|&l| l != 0) || (part > 0 && m[whole] & ((1u64 << part) - 1) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::exact::exact_sum_f64;

    fn sum_of(values: &[f64]) -> f64 {
        let mut s = ExactSum::new();
        values.iter().for_each(|&x| s.add(x));
        s.to_f64()
    }

    #[test]
    fn sums_equal_the_models_exact_sum_rounded_once() {
        let tiny = f64::from_bits(1);
        let cases: Vec<Vec<f64>> = vec![
            vec![],
            vec![1.0, 2.0, -3.0],
            vec![1e300, 1.0, -1e300],
            vec![tiny, tiny, -tiny * 3.0],
            vec![f64::MAX, -f64::MAX, 0.5],
            vec![1.0, 2f64.powi(-53)],
            vec![1.0, 2f64.powi(-53), 2f64.powi(-105)],
            vec![-1.0, -2f64.powi(-53)],
            vec![f64::MIN_POSITIVE, -tiny],
            vec![0.1, 0.2, 0.3, -0.6],
            vec![1e-310, 3e-320, -2e-315],
            vec![3.0 * 2f64.powi(1000), 2f64.powi(1000)],
        ];
        for values in cases {
            let model = exact_sum_f64(&values).map(|s| s.rounded_f64).unwrap_or(0.0);
            assert_eq!(sum_of(&values).to_bits(), model.to_bits(), "{values:?}");
        }
    }

    #[test]
    fn random_sums_in_any_order_equal_the_model() {
        let mut rng = model::generators::Rng::new(7);
        for trial in 0..200 {
            let len = 1 + rng.index(40);
            let values: Vec<f64> = (0..len)
                .map(|_| {
                    let m = rng.next_u64() as f64 / 2f64.powi(64) - 0.5;
                    let e = rng.below(2000) as i32 - 1000 - if trial % 3 == 0 { 60 } else { 0 };
                    m * 2f64.powi(e / 2) * 2f64.powi(e - e / 2)
                })
                .collect();
            let model = exact_sum_f64(&values).expect("finite").rounded_f64;
            assert_eq!(sum_of(&values).to_bits(), model.to_bits(), "{values:?}");
            let mut reversed = values.clone();
            reversed.reverse();
            assert_eq!(sum_of(&reversed).to_bits(), model.to_bits());
            let half = len / 2;
            let (mut a, mut b) = (ExactSum::new(), ExactSum::new());
            values[..half].iter().for_each(|&x| a.add(x));
            values[half..].iter().for_each(|&x| b.add(x));
            a.merge(&b);
            assert_eq!(a.to_f64().to_bits(), model.to_bits());
        }
    }

    #[test]
    fn the_difference_with_a_result_is_exact_then_rounded_and_overflow_is_infinite() {
        let mut s = ExactSum::new();
        [1.0, 2f64.powi(-60)].iter().for_each(|&x| s.add(x));
        assert_eq!(s.minus_to_f64(1.0), 2f64.powi(-60));
        let mut big = ExactSum::new();
        big.add(f64::MAX);
        big.add(f64::MAX);
        assert_eq!(big.to_f64(), f64::INFINITY);
        let mut neg = ExactSum::new();
        neg.add(-f64::MAX);
        neg.add(-f64::MAX);
        assert_eq!(neg.to_f64(), f64::NEG_INFINITY);
    }
}

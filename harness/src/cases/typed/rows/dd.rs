//! Double-double arithmetic: a value is the unevaluated sum `hi + lo` of two
//! f64 with `|lo| <= ulp(hi) / 2`, 106 significand bits in all (Dekker 1971;
//! Hida, Li and Bailey's QD library). The row models use it past their exact
//! sums: a difference of two values is exact to 2^-104 of the larger, so a
//! deviation `x - mean` keeps 2^-104 |mean| of absolute error however much
//! the row cancels.
//!
//! Rules relied on: `a + b` and `a * b` of f64 round to nearest once, so
//! [`two_sum`] and [`two_prod`] (through a fused multiply-add, exact before
//! its one rounding) give the rounding error exactly; every operation below
//! keeps a relative error below 2^-100 for values well inside f64's range
//! (no product here leaves [2^-900, 2^900]: the rows hold float32 values).

/// A double-double value `hi + lo`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dd {
    /// The value rounded to f64.
    pub hi: f64,
    /// What `hi` misses.
    pub lo: f64,
}

/// `a + b` as (rounded sum, its exact error).
pub fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let v = s - a;
    (s, (a - (s - v)) + (b - v))
}

/// `a + b` as (rounded sum, its exact error), for `|a| >= |b|` (or a = 0).
fn quick_two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    (s, b - (s - a))
}

/// `a * b` as (rounded product, its exact error).
pub fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    (p, a.mul_add(b, -p))
}

impl Dd {
    /// Zero.
    pub const ZERO: Dd = Dd { hi: 0.0, lo: 0.0 };

    /// The f64 `x`, exactly.
    pub fn from(x: f64) -> Dd {
        Dd { hi: x, lo: 0.0 }
    }

    /// `hi + lo` made canonical.
    fn normal(hi: f64, lo: f64) -> Dd {
        let (hi, lo) = quick_two_sum(hi, lo);
        Dd { hi, lo }
    }

    /// The value rounded to f64 (`hi`: `|lo| <= ulp(hi) / 2`).
    pub fn to_f64(self) -> f64 {
        self.hi + self.lo
    }

    /// `self + other`.
    pub fn add(self, other: Dd) -> Dd {
        let (s, e) = two_sum(self.hi, other.hi);
        let (t, f) = two_sum(self.lo, other.lo);
        let (s, e) = quick_two_sum(s, e + t);
        Dd::normal(s, e + f)
    }

    /// `-self`.
    pub fn neg(self) -> Dd {
        Dd { hi: -self.hi, lo: -self.lo }
    }

    /// `self - other`.
    pub fn sub(self, other: Dd) -> Dd {
        self.add(other.neg())
    }

    /// `self * other`.
    pub fn mul(self, other: Dd) -> Dd {
        let (p, e) = two_prod(self.hi, other.hi);
        Dd::normal(p, e + (self.hi * other.lo + self.lo * other.hi))
    }

    /// `self / other` (other nonzero): three quotient digits, each from the remainder.
    pub fn div(self, other: Dd) -> Dd {
        let q1 = self.hi / other.hi;
        let r = self.sub(other.mul(Dd::from(q1)));
        let q2 = r.hi / other.hi;
        let r = r.sub(other.mul(Dd::from(q2)));
        let q3 = r.hi / other.hi;
        Dd::normal(q1, q2).add(Dd::from(q3))
    }

    /// The square root (self >= 0): f64's, corrected once by Newton's step
    /// `q + (self - q^2) / (2q)`, which doubles its 53 correct bits.
    pub fn sqrt(self) -> Dd {
        if self.hi <= 0.0 {
            return Dd::ZERO;
        }
        let q = self.hi.sqrt();
        let residual = self.sub(Dd::from(q).mul(Dd::from(q)));
        Dd::normal(q, residual.hi / (2.0 * q))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::typed::exact::ExactSum;

    /// The exact value of `d` minus `x`, rounded once (through the fixed-point sum).
    fn error(d: Dd, x: &[f64]) -> f64 {
        let mut s = ExactSum::new();
        s.add(d.hi);
        s.add(d.lo);
        x.iter().for_each(|&v| s.add(-v));
        s.to_f64()
    }

    #[test]
    fn sums_and_products_are_exact_where_106_bits_hold_them() {
        let a = Dd::from(1.0).add(Dd::from(2f64.powi(-80)));
        assert_eq!((a.hi, a.lo), (1.0, 2f64.powi(-80)));
        assert_eq!(error(a.sub(Dd::from(1.0)), &[2f64.powi(-80)]), 0.0);
        let third = 1.0 / 3.0;
        let p = Dd::from(third).mul(Dd::from(third));
        // third^2 needs 106 bits: held exactly.
        let (hi, lo) = two_prod(third, third);
        assert_eq!((p.hi, p.lo), (hi, lo));
    }

    #[test]
    fn division_and_square_root_keep_100_bits() {
        for (a, b) in [(1.0, 3.0), (2.0, 7.0), (1e4, 9.0), (5.5, 1e-7), (123.456, 789.0)] {
            let q = Dd::from(a).div(Dd::from(b));
            // q * b - a, exactly, relative to a.
            let (p, e) = two_prod(q.hi, b);
            let (p2, e2) = two_prod(q.lo, b);
            let residual = error(Dd { hi: p, lo: e }, &[a, -p2, -e2]);
            assert!(residual.abs() <= a.abs() * 2f64.powi(-100), "{a}/{b}: {residual:e}");
        }
        for a in [2.0, 3.0, 1e-30, 1e30, 0.1] {
            let r = Dd::from(a).sqrt();
            let square = r.mul(r);
            assert!(square.sub(Dd::from(a)).hi.abs() <= a * 2f64.powi(-100), "sqrt {a}");
        }
        assert_eq!(Dd::from(0.0).sqrt(), Dd::ZERO);
    }
}

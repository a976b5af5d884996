//! Error bounds for float summation: the depth bound of a fixed tree and the order-free bound.

use rug::float::Round;
use rug::{Float, Rational};

/// Unit roundoff of f32 (round to nearest): 2^-24.
pub const U_F32: f64 = 1.0 / 16_777_216.0;
/// Unit roundoff of f64: 2^-53.
pub const U_F64: f64 = 1.0 / 9_007_199_254_740_992.0;
/// Unit roundoff of bf16: 2^-8.
pub const U_BF16: f64 = 1.0 / 256.0;

fn rational(x: f64) -> Rational {
    Rational::from_f64(x).unwrap_or_default()
}

fn round_up(q: &Rational) -> f64 {
    Float::with_val_round(64, q, Round::Up).0.to_f64_round(Round::Up)
}

/// `gamma_k = k·u / (1 − k·u)`, evaluated exactly and rounded **up** to f64; `+inf` when
/// `k·u >= 1` (no bound). `u` must be finite and non-negative (NaN/negative `u` → `+inf`).
pub fn gamma(k: u64, u: f64) -> f64 {
    if !u.is_finite() || u < 0.0 {
        return f64::INFINITY;
    }
    let ku = rational(u) * Rational::from(k);
    if ku >= 1 {
        return f64::INFINITY;
    }
    let denominator = Rational::from(1) - &ku;
    round_up(&(ku / denominator))
}

/// `|computed − exact| <= gamma_D · Σ|x|` for a fixed summation tree in which every input
/// passes through at most `depth` additions (Higham, Thm. 4.2 style); rounded **up**.
/// `sum_abs` is Σ|x| (itself rounded up). Infinite when `depth·u >= 1`.
pub fn tree_error_bound(depth: u32, u: f64, sum_abs: f64) -> f64 {
    let g = gamma(u64::from(depth), u);
    if !g.is_finite() || !sum_abs.is_finite() {
        return f64::INFINITY;
    }
    round_up(&(rational(g) * rational(sum_abs)))
}

/// The bound for **any** order, atomics included (Jeannerod & Rump 2018):
/// `|computed − exact| <= (n − 1)·u/(1 + u) · Σ|x|`, rounded **up**; 0 for `n <= 1`.
pub fn order_free_error_bound(n: u64, u: f64, sum_abs: f64) -> f64 {
    if n <= 1 {
        return 0.0;
    }
    if !sum_abs.is_finite() || !u.is_finite() || u < 0.0 {
        return f64::INFINITY;
    }
    let u = rational(u);
    let factor = Rational::from(n - 1) * &u / (Rational::from(1) + &u);
    round_up(&(factor * rational(sum_abs)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gamma_values() {
        assert_eq!(gamma(0, U_F32), 0.0);
        let g1 = gamma(1, U_F32);
        assert!(g1 >= U_F32 / (1.0 - U_F32));
        assert!(g1 <= U_F32 * (1.0 + 1e-6));
        assert_eq!(gamma(1 << 24, U_F32), f64::INFINITY);
        assert!(gamma(9, U_F32) > 9.0 * U_F32);
    }

    #[test]
    fn bounds_scale_with_sum_abs() {
        assert_eq!(tree_error_bound(9, U_F32, 0.0), 0.0);
        let b = tree_error_bound(9, U_F32, 1e8);
        assert!((9.0 * U_F32 * 1e8..10.0 * U_F32 * 1e8).contains(&b));
        assert_eq!(order_free_error_bound(1, U_F32, 5.0), 0.0);
        let of = order_free_error_bound(3, U_F32, 2e8 + 1.0);
        assert!(of > 2.0 * U_F32 * 2e8 * (1.0 - 1e-6));
    }

    #[test]
    fn seed_example_bounds_hold() {
        // (a + b) + c = 0 vs exact 1: error 1 <= 2u/(1+u) · (2e8 + 1) ≈ 23.8.
        let sum_abs = 2e8 + 1.0;
        assert!(1.0 <= order_free_error_bound(3, U_F32, sum_abs));
        assert!(1.0 <= tree_error_bound(2, U_F32, sum_abs));
    }
}

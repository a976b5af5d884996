//! Accuracy checks of float results against the exact (rug) value.

use model::exact::{exact_sum_f64, order_free_error_bound, tree_error_bound, U_F32};

/// The exact error `got - sum(values)` (rounded to the nearest f64) and
/// `sum |values|` (rounded up).
pub fn error_of(values: impl Iterator<Item = f64>, got: f32) -> Result<(f64, f64), String> {
    let mut all: Vec<f64> = values.collect();
    let sum_abs = exact_sum_f64(&all).map_err(|e| e.to_string())?.sum_abs;
    all.push(-(got as f64));
    let error = exact_sum_f64(&all).map_err(|e| e.to_string())?.rounded_f64;
    Ok((-error, sum_abs))
}

/// The bound |err| <= gamma_depth * sum|x| of a fixed tree, f32 arithmetic.
pub fn tree_bound(depth: u32, sum_abs: f64) -> f64 {
    tree_error_bound(depth, U_F32, sum_abs)
}

/// The order-free bound (n-1) u/(1+u) sum|x| (any order, atomics included).
pub fn order_free_bound(n: usize, sum_abs: f64) -> f64 {
    order_free_error_bound(n as u64, U_F32, sum_abs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_of_the_seed_example_is_exact() {
        // (1e8 + 1) - 1e8 in f32 is 0; the exact sum is 1.
        let (error, sum_abs) = error_of([1e8, 1.0, -1e8].into_iter(), 0.0).unwrap();
        assert_eq!(error, -1.0);
        assert_eq!(sum_abs, 2e8 + 1.0);
        assert!(order_free_bound(3, sum_abs) >= 1.0);
    }
}

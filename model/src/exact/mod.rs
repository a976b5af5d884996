//! Exact float sums (rug) and the declared error bounds float reductions are checked against.

mod bounds;
mod dyadic;
mod sum;

pub use bounds::{gamma, order_free_error_bound, tree_error_bound, U_BF16, U_F32, U_F64};
pub use dyadic::Dyadic;
pub use sum::{condition_number, exact_sum_bf16, exact_sum_f32, exact_sum_f64, ExactSum};

//! Exact float sums (rug) and the declared error bounds float reductions are checked against.

pub mod binned;
mod bounds;
mod correctly_rounded;
mod dyadic;
mod exact_segmented_sum;
mod exact_sum;
mod fixed_point;

pub use binned::{binned_sum_bf16, binned_sum_f32, BinnedAccumulator};
pub use bounds::{gamma, order_free_error_bound, tree_error_bound, U_BF16, U_F32, U_F64};
pub use correctly_rounded::{correctly_rounded_sum_bf16, correctly_rounded_sum_f32, NonFiniteSeen};
pub use dyadic::Dyadic;
pub use exact_segmented_sum::{
    hand_checked_segments, segmented_correctly_rounded_sum_bf16, segmented_correctly_rounded_sum_f32,
};
pub use exact_sum::{condition_number, exact_sum_bf16, exact_sum_f32, exact_sum_f64, ExactSum};
pub use fixed_point::FixedSum;

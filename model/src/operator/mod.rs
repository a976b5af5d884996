//! The combine operator, kept apart from every schedule: a schedule (reduction, scan, block
//! tree) never knows which operator it runs, so one generic schedule serves all of them.

use std::fmt::Debug;

use crate::ModelError;

#[macro_use]
mod impl_operator;

mod affine;
mod arg_extremum;
mod compensated_sum;
mod extremum;
mod float_sum;
mod softmax_merge;
mod sum_count;
mod sum_i64;

pub use affine::{Affine, AffineMap};
pub use arg_extremum::{ArgMax, ArgMin};
pub use compensated_sum::{CompensatedF32, CompensatedSumF32};
pub use extremum::{MaxI64, MinI64};
pub use float_sum::{SumF32, SumF64};
pub use softmax_merge::SoftmaxMerge;
pub use sum_count::SumCount;
pub use sum_i64::SumI64;

/// An associative combine with an identity, checked: a combine that leaves the value type
/// (int64 overflow, a NaN where an order is needed) returns an error instead of a value.
///
/// Laws every implementation states in its docs (and the crate's proptests check):
/// * identity: `combine(identity, a) == a == combine(a, identity)`;
/// * associativity: `combine(combine(a, b), c) == combine(a, combine(b, c))` whenever both
///   sides are `Ok` (the float operators are exceptions and say so);
/// * `combine(a, b)` means "a's range comes before b's range": schedules always pass the
///   lower-index range first, so non-commutative operators keep left-to-right order.
pub trait Operator {
    /// The combined value.
    type Value: Clone + PartialEq + Debug;
    /// The identity element `e` with `e ⊕ a = a ⊕ e = a`.
    fn identity(&self) -> Self::Value;
    /// `a ⊕ b`, where `a` covers the lower input range.
    fn combine(&self, a: &Self::Value, b: &Self::Value) -> Result<Self::Value, ModelError>;
    /// Short name used in errors and fixtures (e.g. `"SumI64"`).
    fn name(&self) -> &'static str;
    /// `true` when `a ⊕ b == b ⊕ a` for all values. Schedules that reorder inputs (the strided
    /// block layout) refuse operators that return `false`. Default: `false` (the safe answer).
    fn is_commutative(&self) -> bool {
        false
    }
}

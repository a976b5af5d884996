//! Edge-value data families for user kernels: the raw cases that `harness check` and
//! `harness cases export`/`verify` add after the raw catalogue ([`raw::catalogue`]) of a
//! contract, with the same ids, buffer layouts and model answers as its cases.
//!
//! | family | values | contracts |
//! | --- | --- | --- |
//! | `alternating_min_max` | `i32::MIN`, `i32::MAX` alternating | scan, reduce, compact, segmented, histogram int32 |
//! | `long_runs` | runs (up to 4096) of `i32::MIN`, -1, 0, 1, `i32::MAX` and full-range draws | the same |
//! | `float_edges` | ±0.0 side by side, subnormals, ±smallest normal, ±1, ±largest finite, in runs | arg_reduce, exact_sum |
//! | `signed_zero_ties` | only -0.0 and +0.0, element 0 and 1 of opposite signs | arg_reduce, exact_sum |
//! | `alternating_extremes` | ±largest finite alternating | arg_reduce, exact_sum |
//! | `sum_edges` | ±0.0, subnormals, ±1, cancelling ±2^105 pairs: no order overflows | float_reduce, exact_sum |
//! | `bin_edges` | every bin's lower edge by the model's formula, one ulp either side, NaN, ±inf | histogram f32 |
//! | `softmax_edges` | ±0.0, subnormal logits, ±1 and -1e30 in runs, never masked | softmax |
//!
//! Each family stays within its contract: finite values where the contract rejects NaN and
//! ±inf (arg_reduce, softmax), no order that overflows where a sum is held to the order-free
//! bound (float_reduce: [`values::sum_edges`]), NaN and ±inf only where the contract defines
//! them (the histogram counts neither; the correctly rounded sum of ±largest finite may be
//! ±inf, as its contract says).
//!
//! They run at the plan's sizes up to [`EDGE_FAMILIES_MAX`] (softmax: at every row width
//! whose block of rows holds at most that many logits), never in a sanitizer plan (one
//! family per size). A case's seed is [`case_seed`](crate::sweep::gpu::case_seed) of the
//! plan's seed, its size and its family's position after the catalogue's own families at
//! that size (or a label of its own), so `--sizes N --seed S` regenerates the same input.

mod bins;
mod float_cases;
mod int_cases;
mod values;

#[cfg(test)]
mod catalogue_tests;

use crate::registry::Primitive;
use crate::sweep::raw::{self, Contract, Dtype, RawSpec};
use crate::sweep::SweepPlan;

/// The largest size at which the edge families run: they target comparisons, signs, ties,
/// runs and overflow, which the boundary sizes up to here already exercise in every launch
/// shape (one block, several, a partial last one), and each adds cases to every check.
pub const EDGE_FAMILIES_MAX: usize = 1 << 20;

/// The sizes of `plan` the edge families visit: those up to [`EDGE_FAMILIES_MAX`], none in a
/// sanitizer plan.
pub fn sizes(plan: &SweepPlan) -> Vec<usize> {
    if plan.one_family {
        return Vec::new();
    }
    plan.sizes.iter().copied().filter(|&n| n <= EDGE_FAMILIES_MAX).collect()
}

/// The edge-family cases of `primitive`'s `contract` for `plan`, variants named
/// `<label>.<contract>` (as [`raw::catalogue`] names them).
pub fn cases(plan: &SweepPlan, primitive: Primitive, contract: &Contract, label: &str) -> Vec<RawSpec> {
    let mut out = Vec::new();
    match primitive {
        Primitive::Reduce => int_cases::reduce(plan, contract, label, &mut out),
        Primitive::Scan => int_cases::scan(plan, contract, label, &mut out),
        Primitive::Compact => int_cases::compact(plan, contract, label, &mut out),
        Primitive::SegmentedReduce => int_cases::segmented(plan, contract, label, &mut out),
        Primitive::Histogram if contract.inputs.first().map(|b| b.dtype) == Some(Dtype::Float32) => {
            float_cases::histogram(plan, contract, label, &mut out)
        }
        Primitive::Histogram => int_cases::histogram(plan, contract, label, &mut out),
        Primitive::ArgReduce => float_cases::arg_reduce(plan, contract, label, &mut out),
        Primitive::FloatReduce => float_cases::float_sum(plan, contract, label, &mut out),
        Primitive::ExactSum => float_cases::exact_sum(plan, contract, label, &mut out),
        Primitive::Softmax => float_cases::softmax(plan, contract, label, &mut out),
        // Its catalogue's own families are the edge cases (ties at the k-th value, signed
        // zeros, equal, sorted and reversed rows): nothing to add.
        Primitive::Topk => {}
    }
    out
}

/// The raw catalogue of `primitive`'s `contract` for `plan` followed by its edge-family
/// cases: the cases user kernels get (`check`, before its one-family-past-2^31 filter, and
/// `cases export`/`verify`).
pub fn with_catalogue(plan: &SweepPlan, primitive: Primitive, contract: &Contract, label: &str) -> Vec<RawSpec> {
    let mut specs = raw::catalogue(plan, primitive, contract, label);
    specs.extend(cases(plan, primitive, contract, label));
    specs
}

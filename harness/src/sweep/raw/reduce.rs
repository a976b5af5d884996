//! Raw cases of the integer reduce: the GPU catalogue's int32 inputs (same
//! sizes, families and seeds) with the model's exact int64 sum.

use super::{int_cases, Array, Buffer, Contract, Dtype, Len, RawCase, RawSpec};
use crate::sweep::gpu::reduce::int_input;
use crate::sweep::SweepPlan;

/// The reduce contract: `out[0]` is the int64 sum of every `in[i]`.
pub const CONTRACTS: [Contract; 1] = [Contract::exact(
    "sum.i32",
    "sum: out[0] = in[0] + ... + in[n-1] (int32 in, one int64 out)",
    &[Buffer { role: "in", dtype: Dtype::Int32, len: Len::N }],
    &[Buffer { role: "out", dtype: Dtype::Int64, len: Len::One }],
    "sum",
)];

/// Appends the raw reduce cases of `contract`.
pub fn cases(plan: &SweepPlan, contract: &Contract, label: &str, out: &mut Vec<RawSpec>) {
    int_cases(plan, "reduce", contract, label, out, |family, n, seed| {
        let input = int_input(family, n, seed)?;
        Ok(RawCase::new(vec![Array::Int32(input.x)], vec![Array::Int64(vec![input.sum])]))
    });
}

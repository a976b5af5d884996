//! Raw cases of stream compaction: the GPU catalogue's int32 inputs and
//! flags (same sizes, families and seeds) with the model's kept items and
//! count. The kernel writes the kept items, in input order, to
//! `out[0..count)` and must leave `out[count..n)` untouched.

use super::{int_cases, Array, Buffer, Contract, Dtype, Len, RawCase, RawSpec};
use crate::sweep::gpu::compact::make;
use crate::sweep::SweepPlan;

const IN: Buffer = Buffer { role: "in", dtype: Dtype::Int32, len: Len::N };
const FLAGS: Buffer = Buffer { role: "flags", dtype: Dtype::Uint8, len: Len::N };
const OUTPUTS: [Buffer; 2] = [
    Buffer { role: "out", dtype: Dtype::Int32, len: Len::N },
    Buffer { role: "count", dtype: Dtype::Int64, len: Len::One },
];

/// The compaction contracts: keep `in[i]` when `in[i] > 0` (positive) or
/// when `flags[i] != 0` (flagged).
pub const CONTRACTS: [Contract; 2] = [
    Contract::exact(
        "positive.i32",
        "compaction by x > 0: out[0..count) = the in[i] > 0 in order, count[0] = how many (int32 in and \
     out, int64 count; out[count..n) untouched)",
        &[IN],
        &OUTPUTS,
        "kept items, in order",
    ),
    Contract::exact(
        "flagged.i32",
        "compaction by flags: out[0..count) = the in[i] with flags[i] != 0 in order, count[0] = how many \
     (int32 in and out, uint8 flags, int64 count; out[count..n) untouched)",
        &[IN, FLAGS],
        &OUTPUTS,
        "kept items, in order",
    ),
];

/// Appends the raw compaction cases of `contract`.
pub fn cases(plan: &SweepPlan, contract: &Contract, label: &str, out: &mut Vec<RawSpec>) {
    let flagged = contract.inputs.len() == 2;
    int_cases(plan, "compact", contract, label, out, move |family, n, seed| {
        let case = make(family, n, seed)?;
        let (inputs, kept) = if flagged {
            (vec![Array::Int32(case.input), Array::Uint8(case.flags)], case.kept_flagged)
        } else {
            (vec![Array::Int32(case.input)], case.kept_positive)
        };
        let count = kept.len() as i64;
        Ok(RawCase::new(inputs, vec![Array::Int32(kept), Array::Int64(vec![count])]))
    });
}

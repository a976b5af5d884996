//! Raw cases of the integer scans: the GPU catalogue's int32 inputs (same
//! sizes, families and seeds) with the model's int64 prefixes.

use super::{int_cases, Array, Buffer, Contract, Dtype, Len, RawCase, RawSpec};
use crate::sweep::gpu::scan::int_case;
use crate::sweep::SweepPlan;
use kernels::ScanKind;

const IN: Buffer = Buffer { role: "in", dtype: Dtype::Int32, len: Len::N };
const OUT: Buffer = Buffer { role: "out", dtype: Dtype::Int64, len: Len::N };

/// The scan contracts: `out[i]` is the int64 sum of `in[0..i)` (exclusive)
/// or `in[0..=i]` (inclusive).
pub const CONTRACTS: [Contract; 2] = [
    Contract::exact(
        "exclusive.i32",
        "exclusive prefix sum: out[i] = in[0] + ... + in[i-1] (int32 in, int64 out, out[0] = 0)",
        &[IN],
        &[OUT],
        "prefix",
    ),
    Contract::exact(
        "inclusive.i32",
        "inclusive prefix sum: out[i] = in[0] + ... + in[i] (int32 in, int64 out)",
        &[IN],
        &[OUT],
        "prefix",
    ),
];

fn kind_of(contract: &Contract) -> ScanKind {
    if contract.name.starts_with("inclusive") {
        ScanKind::Inclusive
    } else {
        ScanKind::Exclusive
    }
}

/// Appends the raw scan cases of `contract`.
pub fn cases(plan: &SweepPlan, contract: &Contract, label: &str, out: &mut Vec<RawSpec>) {
    let kind = kind_of(contract);
    int_cases(plan, "scan", contract, label, out, move |family, n, seed| {
        let case = int_case(family, n, seed)?;
        // The expected prefixes are moved out, not copied (2 GB at 2^28).
        let expected = match kind {
            ScanKind::Exclusive => case.exclusive,
            ScanKind::Inclusive => case.inclusive,
        };
        Ok(RawCase::new(vec![Array::Int32(case.input)], vec![Array::Int64(expected)]))
    });
}

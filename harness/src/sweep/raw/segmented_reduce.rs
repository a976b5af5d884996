//! Raw cases of the segmented integer reductions: the GPU catalogue's
//! segment shapes (same sizes, offsets and seeds, the long segment
//! included) over its int32 values, with the model's int64 result per
//! segment. Segment s is the half-open range `in[offsets[s]..offsets[s+1])`.

use super::{variant, Array, Buffer, Contract, Dtype, Len, Param, RawCase, RawSpec, Rule, Value};
use crate::sweep::gpu::segmented_reduce::{offsets, shape_name, shapes, sizes, visits};
use crate::sweep::gpu::{case_seed, id};
use crate::sweep::SweepPlan;
use model::generators::{ints, DataFamily};

const INPUTS: [Buffer; 2] = [
    Buffer { role: "in", dtype: Dtype::Int32, len: Len::N },
    Buffer { role: "offsets", dtype: Dtype::Int64, len: Len::PerCase },
];
const PARAMS: [Param; 1] = [Param { name: "segments", dtype: Dtype::Int64 }];
const OUT: Buffer = Buffer { role: "out", dtype: Dtype::Int64, len: Len::PerCase };

/// The segmented contracts: `out[s]` is the int64 sum (or maximum) of segment s.
pub const CONTRACTS: [Contract; 2] = [
    Contract {
        name: "sum.i32",
        summary: "segmented sum: out[s] = sum of in[offsets[s]..offsets[s+1]) for s < segments (int32 in, int64 \
                  offsets of segments + 1 entries from 0 to n, int64 out; an empty segment sums to 0)",
        inputs: &INPUTS,
        params: &PARAMS,
        outputs: &[OUT],
        rule: Rule::Exact,
        what: "segment sums",
    },
    Contract {
        name: "max.i32",
        summary: "segmented max: out[s] = max of in[offsets[s]..offsets[s+1]) for s < segments (int32 in, int64 \
                  offsets, int64 out; an empty segment is i64::MIN)",
        inputs: &INPUTS,
        params: &PARAMS,
        outputs: &[OUT],
        rule: Rule::Exact,
        what: "segment maxima (empty = i64::MIN)",
    },
];

/// Appends the raw segmented cases of `contract`.
pub fn cases(plan: &SweepPlan, contract: &Contract, label: &str, out: &mut Vec<RawSpec>) {
    let max = contract.name.starts_with("max");
    let op = if max { "max_i32" } else { "sum_i32" };
    for n in sizes(plan).into_iter().filter(|&n| visits(op, n)) {
        for (s, shape) in shapes(plan, n).into_iter().enumerate() {
            let seed = case_seed(plan.seed, "segmented_reduce", n, s);
            let family = format!("small_ints.{}", shape_name(shape, n));
            let case_id = id("segmented_reduce", variant(label, contract), n.to_string(), n, &family, seed);
            out.push(RawSpec::new(case_id, move || {
                let offsets = offsets(shape, n, seed);
                let values = ints(DataFamily::SmallInts, n, seed).map_err(|e| e.to_string())?;
                let result = if max {
                    model::segmented_reduce::segmented_max(&values, &offsets)
                } else {
                    model::segmented_reduce::segmented_sum(&values, &offsets)
                };
                let result = result.map_err(|e| e.to_string())?;
                let segments = Value::Int64(result.len() as i64);
                let wide: Vec<i64> = offsets.iter().map(|&o| o as i64).collect();
                Ok(RawCase {
                    inputs: vec![Array::Int32(values), Array::Int64(wide)],
                    params: vec![segments],
                    expected: vec![Array::Int64(result)],
                })
            }));
        }
    }
}

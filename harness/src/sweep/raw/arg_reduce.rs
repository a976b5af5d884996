//! Raw cases of the whole-array argmax / argmin over f32: the GPU
//! catalogue's f32 families (same sizes and seeds) with the model's index.
//! The model's rules: the lowest index wins a tie (`-0.0` and `0.0` tie);
//! NaN and ±inf are rejected by the model, so no case holds one.

use super::{variant, Array, Buffer, Contract, Dtype, Len, RawCase, RawSpec};
use crate::sweep::gpu::arg_pairs::extremum_name;
use crate::sweep::gpu::arg_reduce::{expected, float_families};
use crate::sweep::gpu::{case_seed, id};
use crate::sweep::SweepPlan;
use kernels::Extremum;

const IN: Buffer = Buffer { role: "in", dtype: Dtype::Float32, len: Len::N };
const INDEX: Buffer = Buffer { role: "index", dtype: Dtype::Int64, len: Len::One };

/// The arg-reduce contracts: `index[0]` is the lowest `i` where `in[i]` is
/// the maximum (argmax) or the minimum (argmin).
pub const CONTRACTS: [Contract; 2] = [
    Contract::exact(
        "argmax.f32",
        "argmax: index[0] = the lowest i with in[i] = max(in) (finite f32 in, -0.0 ties 0.0; one int64 out)",
        &[IN],
        &[INDEX],
        "argmax index",
    ),
    Contract::exact(
        "argmin.f32",
        "argmin: index[0] = the lowest i with in[i] = min(in) (finite f32 in, -0.0 ties 0.0; one int64 out)",
        &[IN],
        &[INDEX],
        "argmin index",
    ),
];

fn extremum_of(contract: &Contract) -> Extremum {
    [Extremum::Max, Extremum::Min]
        .into_iter()
        .find(|&e| contract.name.starts_with(extremum_name(e)))
        .unwrap_or(Extremum::Max)
}

/// The sizes of `plan` a user's arg reduction is checked at: below 2^31.
/// Past it a case would need its input streamed, as `check` does for the
/// reduce, the scans and the other contracts of its streamed table, which
/// does not hold the arg reductions yet.
fn raw_sizes(plan: &SweepPlan) -> impl Iterator<Item = usize> + '_ {
    plan.sizes.iter().copied().filter(|&n| n < 1 << 31)
}

/// Appends the raw arg-reduce cases of `contract`.
pub fn cases(plan: &SweepPlan, contract: &Contract, label: &str, out: &mut Vec<RawSpec>) {
    let e = extremum_of(contract);
    for n in raw_sizes(plan) {
        for (f, &(family, make)) in float_families(plan, n).iter().enumerate() {
            let seed = case_seed(plan.seed, "arg_reduce.f32", n, f);
            let case_id = id("arg_reduce", variant(label, contract), n.to_string(), n, family, seed);
            out.push(RawSpec::new(case_id, move || {
                let data = make(n, seed);
                let (_, index) = expected(e, &data).map_err(|e| e.to_string())?;
                Ok(RawCase::new(vec![Array::Float32(data)], vec![Array::Int64(vec![index as i64])]))
            }));
        }
    }
}

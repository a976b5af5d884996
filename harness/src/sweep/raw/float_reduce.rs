//! Raw cases of the f32 sum: the GPU catalogue's f32 inputs (uniform and
//! ill-conditioned; same sizes, conditions and seeds) with the exact sum
//! rounded to float64. A result passes within the order-free bound (the
//! bound the sweep holds our atomic variants to, whose order is free).

use super::{variant, Array, Buffer, Contract, Dtype, Len, RawCase, RawSpec, Rule};
use crate::sweep::gpu::float_reduce::{ill_conditions, sizes};
use crate::sweep::gpu::{case_seed, id};
use crate::sweep::SweepPlan;
use model::generators::{ill_conditioned_f32, uniform_f32};

/// The float-sum contract: `out[0]` is the sum of `in` in f32 arithmetic, any order.
pub const CONTRACTS: [Contract; 1] = [Contract {
    name: "sum.f32",
    summary: "f32 sum in any order: |out[0] - sum(in)| <= (n-1) u/(1+u) sum|in| with u = 2^-24 (f32 in, one f32 out)",
    inputs: &[Buffer { role: "in", dtype: Dtype::Float32, len: Len::N }],
    params: &[],
    outputs: &[Buffer { role: "out", dtype: Dtype::Float32, len: Len::One }],
    rule: Rule::FloatSumBound,
    what: "sum within the order-free bound",
}];

/// The case of `x` with its exact sum.
fn case_of(x: Vec<f32>) -> Result<RawCase, String> {
    let wide: Vec<f64> = x.iter().map(|&v| v as f64).collect();
    let exact = model::exact::exact_sum_f64(&wide).map_err(|e| e.to_string())?.rounded_f64;
    Ok(RawCase::new(vec![Array::Float32(x)], vec![Array::Float64(vec![exact])]))
}

/// Appends the raw float-sum cases of `contract`.
pub fn cases(plan: &SweepPlan, contract: &Contract, label: &str, out: &mut Vec<RawSpec>) {
    for n in sizes(plan) {
        let seed = case_seed(plan.seed, "float_reduce", n, 0);
        let case_id = id("float_reduce", variant(label, contract), n.to_string(), n, "uniform_float", seed);
        out.push(RawSpec::new(case_id, move || case_of(uniform_f32(n, seed))));
        for &condition in ill_conditions(plan, n) {
            let family = format!("ill_conditioned_{condition:e}");
            let case_id = id("float_reduce", variant(label, contract), n.to_string(), n, &family, seed);
            out.push(RawSpec::new(case_id, move || {
                case_of(ill_conditioned_f32(n, condition, seed).map_err(|e| e.to_string())?.0)
            }));
        }
    }
}

//! Raw cases of the correctly rounded f32 sum: the GPU catalogue's f32
//! inputs (uniform at every size, ill-conditioned, the fixed contract
//! inputs and the limb-carry inputs; same sizes and seeds) with the model's
//! correctly rounded sum, which a result must equal bit for bit: an
//! overflowing exact sum is ±inf, NaN in, or +inf with -inf, is the NaN
//! 0x7fc00000, and a zero sum is +0.0 unless every term is -0.0.

use super::{variant, Array, Buffer, Contract, Dtype, Len, RawCase, RawSpec};
use crate::sweep::gpu::exact_sum::{carry_input, contract_inputs, expected_of, ill_conditions, CARRY_SIZES};
use crate::sweep::gpu::{case_seed, id};
use crate::sweep::SweepPlan;
use model::generators::{ill_conditioned_f32, uniform_f32};

/// The correctly rounded sum contract: `out[0]` is the exact sum of `in` rounded once to f32.
pub const CONTRACTS: [Contract; 1] = [Contract::exact(
    "sum.f32",
    "correctly rounded sum: out[0] = sum(in) computed exactly, rounded once to nearest-even f32, \
     bit for bit (f32 in, one f32 out)",
    &[Buffer { role: "in", dtype: Dtype::Float32, len: Len::N }],
    &[Buffer { role: "out", dtype: Dtype::Float32, len: Len::One }],
    "bitwise sum",
)];

/// The case of `x` with its correctly rounded sum.
fn case_of(x: Vec<f32>) -> Result<RawCase, String> {
    let sum = expected_of(&x)?;
    Ok(RawCase::new(vec![Array::Float32(x)], vec![Array::Float32(vec![sum])]))
}

/// Appends the raw correctly-rounded-sum cases of `contract`.
pub fn cases(plan: &SweepPlan, contract: &Contract, label: &str, out: &mut Vec<RawSpec>) {
    let name = variant(label, contract);
    for &n in &plan.sizes {
        let seed = case_seed(plan.seed, "exact_sum", n, 0);
        out.push(RawSpec::new(id("exact_sum", name.clone(), n.to_string(), n, "uniform_float", seed), move || {
            case_of(uniform_f32(n, seed))
        }));
        for &condition in ill_conditions(plan, n) {
            let family = format!("ill_conditioned_{condition:e}");
            out.push(RawSpec::new(id("exact_sum", name.clone(), n.to_string(), n, &family, seed), move || {
                case_of(ill_conditioned_f32(n, condition, seed).map_err(|e| e.to_string())?.0)
            }));
        }
    }
    if plan.one_family {
        return;
    }
    let seed = case_seed(plan.seed, "exact_sum.contract", 0, 0);
    for (family, x) in contract_inputs(seed) {
        let n = x.len();
        out.push(RawSpec::new(id("exact_sum", name.clone(), n.to_string(), n, family, seed), move || {
            case_of(x.clone())
        }));
    }
    for n in CARRY_SIZES {
        let seed = case_seed(plan.seed, "exact_sum.carries", n, 0);
        out.push(RawSpec::new(id("exact_sum", name.clone(), n.to_string(), n, "same_sign_large", seed), move || {
            case_of(carry_input(n, seed))
        }));
    }
}

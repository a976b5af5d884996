//! GPU cases of the float reductions (f32 and bf16 input, f32 accumulation):
//! accuracy against the exact (rug) sum with each variant's declared bound
//! (gamma_D * sum|x| for fixed trees, the order-free bound for atomics, the
//! compensated bound), ill-conditioned sums up to condition 1e30, and bitwise
//! repeatability of the deterministic variants over 100 runs.

use super::{case_seed, gpu_error, id, GpuCase, Input, Inputs};
use crate::sweep::case::CaseId;
use crate::sweep::case::Verdict;
use crate::sweep::digest::Fingerprint;
use crate::sweep::float_check::{error_of, tree_bound};
use crate::sweep::SweepPlan;
use half::bf16;
use kernels::FloatReduceVariant;
use model::generators::{ill_conditioned_f32, uniform_bf16, uniform_f32};

/// Largest n the exact rug sum is computed for in the sweep (cost grows linearly).
const MAX_EXACT_N: usize = 1 << 24;
/// Largest n of the ill-conditioned generator in the sweep.
const MAX_ILL_N: usize = 1 << 20;

fn check_accuracy(variant: FloatReduceVariant, values: impl Iterator<Item = f64>, n: usize, got: f32) -> Verdict {
    let (error, sum_abs) = match error_of(values, got) {
        Ok(v) => v,
        Err(e) => return Verdict::fail("an exact sum", e, "model"),
    };
    let exact_abs = (got as f64 - error).abs();
    let bound = variant.error_bound(n, sum_abs, exact_abs);
    // The harness's own gamma_D bound for the fixed trees (rug, rounded up) must agree.
    let declared = if variant.is_order_free() || variant == FloatReduceVariant::Compensated {
        bound
    } else {
        bound.min(tree_bound(variant.tree_depth(n), sum_abs) * (1.0 + 1e-9))
    };
    if error.abs() <= declared {
        Verdict::Pass
    } else {
        Verdict::fail(
            format!("|error| <= {declared:e} (depth {}, sum|x| {sum_abs:e})", variant.tree_depth(n)),
            format!("{got:e} (error {error:e})"),
            "accuracy bound",
        )
    }
}

/// A float input: its values (widened exactly to f64 for the model) and
/// its exact sum.
struct FloatCase<T> {
    x: Vec<T>,
    exact: Result<(f64, f64), String>,
}

fn float_case<T>(x: Vec<T>, widen: fn(&T) -> f64) -> FloatCase<T> {
    let wide: Vec<f64> = x.iter().map(widen).collect();
    let exact = model::exact::exact_sum_f64(&wide).map(|e| (e.rounded_f64, e.sum_abs)).map_err(|e| e.to_string());
    FloatCase { x, exact }
}

/// The reference of `variant` on `case`: the exact sum (rounded to f64),
/// sum|x| (rounded up), and the variant's declared bound at that sum.
fn expected_digest<T>(case: &FloatCase<T>, variant: FloatReduceVariant, n: usize) -> String {
    match &case.exact {
        Ok((sum, sum_abs)) => Fingerprint::new()
            .f64s(&[*sum, *sum_abs, variant.error_bound(n, *sum_abs, sum.abs())])
            .u64s([variant.tree_depth(n) as u64].into_iter())
            .finish(),
        Err(e) => Fingerprint::new().text(&format!("model error: {e}")).finish(),
    }
}

fn widen_f32(v: &f32) -> f64 {
    *v as f64
}

fn widen_bf16(v: &bf16) -> f64 {
    v.to_f64()
}

fn reduce_f32(gpu: &kernels::Gpu, variant: FloatReduceVariant, x: &[f32]) -> kernels::GpuResult<f32> {
    gpu.reduce_f32(variant, x)
}

fn reduce_bf16(gpu: &kernels::Gpu, variant: FloatReduceVariant, x: &[bf16]) -> kernels::GpuResult<f32> {
    gpu.reduce_bf16(variant, x)
}

/// The accuracy case of `variant` on `input`: the GPU sum within the
/// variant's declared bound of the exact sum.
fn accuracy_case<T: Send + Sync + 'static>(
    input: &Input<FloatCase<T>>,
    case_id: CaseId,
    variant: FloatReduceVariant,
    n: usize,
    reduce: fn(&kernels::Gpu, FloatReduceVariant, &[T]) -> kernels::GpuResult<f32>,
    widen: fn(&T) -> f64,
) -> GpuCase {
    input.case(
        case_id,
        variant.name(),
        move |c| expected_digest(c, variant, n),
        move |gpu, c| match reduce(gpu, variant, &c.x) {
            Ok(got) => check_accuracy(variant, c.x.iter().map(widen), n, got),
            Err(e) => gpu_error(&e),
        },
    )
}

/// Appends every float-reduction case of `plan`.
pub fn cases(plan: &SweepPlan, out: &mut Vec<GpuCase>) {
    let f32_inputs: Inputs<FloatCase<f32>> = Inputs::default();
    let bf16_inputs: Inputs<FloatCase<bf16>> = Inputs::default();
    let ill_inputs: Inputs<FloatCase<f32>> = Inputs::default();
    for &n in plan.sizes.iter().filter(|&&n| n <= MAX_EXACT_N) {
        let seed = case_seed(plan.seed, "float_reduce", n, 0);
        let uniform = f32_inputs.input(
            format!("{n}/f32/{seed}"),
            move || Ok(float_case(uniform_f32(n, seed), widen_f32)),
            |c| Fingerprint::new().f32s(&c.x).finish(),
        );
        let narrow = bf16_inputs.input(
            format!("{n}/bf16/{seed}"),
            move || Ok(float_case(uniform_bf16(n, seed), widen_bf16)),
            |c| Fingerprint::new().bf16s(&c.x).finish(),
        );
        let ill: Vec<_> = [1e10, 1e30]
            .into_iter()
            .map(|condition| {
                let input = ill_inputs.input(
                    format!("{n}/ill{condition:e}/{seed}"),
                    move || {
                        let (x, _achieved) = ill_conditioned_f32(n, condition, seed).map_err(|e| e.to_string())?;
                        Ok(float_case(x, widen_f32))
                    },
                    |c| Fingerprint::new().f32s(&c.x).finish(),
                );
                (condition, input)
            })
            .collect();
        for variant in FloatReduceVariant::ALL {
            let case_id =
                id("float_reduce", format!("{}.f32", variant.name()), n.to_string(), n, "uniform_float", seed);
            out.push(accuracy_case(&uniform, case_id, variant, n, reduce_f32, widen_f32));
            if plan.one_family && n > 4099 {
                continue;
            }
            let case_id =
                id("float_reduce", format!("{}.bf16", variant.name()), n.to_string(), n, "uniform_bf16", seed);
            out.push(accuracy_case(&narrow, case_id, variant, n, reduce_bf16, widen_bf16));
            if plan.one_family || !(2..=MAX_ILL_N).contains(&n) {
                continue;
            }
            for (condition, input) in &ill {
                let case_id = id(
                    "float_reduce",
                    format!("{}.f32.cond{condition:e}", variant.name()),
                    n.to_string(),
                    n,
                    &format!("ill_conditioned_{condition:e}"),
                    seed,
                );
                out.push(accuracy_case(input, case_id, variant, n, reduce_f32, widen_f32));
            }
        }
    }
    // Run-to-run determinism: the fixed-order variants give the same bits 100 times.
    let sizes: &[usize] = if plan.one_family { &[] } else { &[4099, 262_145, 1 << 22] };
    let repeat_inputs: Inputs<Vec<f32>> = Inputs::default();
    for &n in sizes {
        let seed = case_seed(plan.seed, "float_reduce.repeat", n, 0);
        let input = repeat_inputs.input(
            format!("{n}/repeat/{seed}"),
            move || ill_conditioned_f32(n, 1e30, seed).map(|(x, _)| x).map_err(|e| e.to_string()),
            |x| Fingerprint::new().f32s(x).finish(),
        );
        for variant in FloatReduceVariant::ALL.into_iter().filter(|v| v.is_deterministic()) {
            let case_id = id(
                "float_reduce",
                format!("{}.f32.bitwise_x100", variant.name()),
                n.to_string(),
                n,
                "ill_conditioned_1e30",
                seed,
            );
            out.push(input.case(
                case_id,
                "bitwise",
                |_| Fingerprint::new().text("the same bits in 100 runs").finish(),
                move |gpu, x| {
                    let first = match gpu.reduce_f32(variant, x) {
                        Ok(v) => v,
                        Err(e) => return gpu_error(&e),
                    };
                    for run in 1..100 {
                        match gpu.reduce_f32(variant, x) {
                            Ok(v) if v.to_bits() == first.to_bits() => {}
                            Ok(v) => {
                                return Verdict::fail_at(
                                    run,
                                    format!("{first:e} ({:#x})", first.to_bits()),
                                    format!("{v:e} ({:#x})", v.to_bits()),
                                    "bitwise repeat",
                                )
                            }
                            Err(e) => return gpu_error(&e),
                        }
                    }
                    Verdict::Pass
                },
            ));
        }
    }
}

//! GPU cases of the float reductions (f32 and bf16 input, f32 accumulation):
//! accuracy against the exact (rug) sum with each variant's declared bound
//! (gamma_D * sum|x| for fixed trees, the order-free bound for atomics, the
//! compensated bound), ill-conditioned sums up to condition 1e30, and bitwise
//! repeatability of the deterministic variants over 100 runs.

use super::{case_seed, gpu_error, id, GpuCase};
use crate::sweep::case::Verdict;
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

/// Appends every float-reduction case of `plan`.
pub fn cases(plan: &SweepPlan, out: &mut Vec<GpuCase>) {
    for &n in plan.sizes.iter().filter(|&&n| n <= MAX_EXACT_N) {
        let seed = case_seed(plan.seed, "float_reduce", n, 0);
        for variant in FloatReduceVariant::ALL {
            out.push(GpuCase {
                id: id("float_reduce", format!("{}.f32", variant.name()), n.to_string(), n, "uniform_float", seed),
                run: Box::new(move |gpu| {
                    let x = uniform_f32(n, seed);
                    match gpu.reduce_f32(variant, &x) {
                        Ok(got) => check_accuracy(variant, x.iter().map(|&v| v as f64), n, got),
                        Err(e) => gpu_error(&e),
                    }
                }),
            });
            if plan.one_family && n > 4099 {
                continue;
            }
            out.push(GpuCase {
                id: id("float_reduce", format!("{}.bf16", variant.name()), n.to_string(), n, "uniform_bf16", seed),
                run: Box::new(move |gpu| {
                    let x: Vec<bf16> = uniform_bf16(n, seed);
                    match gpu.reduce_bf16(variant, &x) {
                        Ok(got) => check_accuracy(variant, x.iter().map(|v| v.to_f64()), n, got),
                        Err(e) => gpu_error(&e),
                    }
                }),
            });
            if plan.one_family || !(2..=MAX_ILL_N).contains(&n) {
                continue;
            }
            for condition in [1e10, 1e30] {
                out.push(GpuCase {
                    id: id(
                        "float_reduce",
                        format!("{}.f32.cond{condition:e}", variant.name()),
                        n.to_string(),
                        n,
                        &format!("ill_conditioned_{condition:e}"),
                        seed,
                    ),
                    run: Box::new(move |gpu| {
                        let (x, _achieved) = match ill_conditioned_f32(n, condition, seed) {
                            Ok(v) => v,
                            Err(e) => return super::model_error(&e),
                        };
                        match gpu.reduce_f32(variant, &x) {
                            Ok(got) => check_accuracy(variant, x.iter().map(|&v| v as f64), n, got),
                            Err(e) => gpu_error(&e),
                        }
                    }),
                });
            }
        }
    }
    // Run-to-run determinism: the fixed-order variants give the same bits 100 times.
    let sizes: &[usize] = if plan.one_family { &[] } else { &[4099, 262_145, 1 << 22] };
    for &n in sizes {
        let seed = case_seed(plan.seed, "float_reduce.repeat", n, 0);
        for variant in FloatReduceVariant::ALL.into_iter().filter(|v| v.is_deterministic()) {
            out.push(GpuCase {
                id: id(
                    "float_reduce",
                    format!("{}.f32.bitwise_x100", variant.name()),
                    n.to_string(),
                    n,
                    "ill_conditioned_1e30",
                    seed,
                ),
                run: Box::new(move |gpu| {
                    let x = match ill_conditioned_f32(n, 1e30, seed) {
                        Ok((x, _)) => x,
                        Err(e) => return super::model_error(&e),
                    };
                    let first = match gpu.reduce_f32(variant, &x) {
                        Ok(v) => v,
                        Err(e) => return gpu_error(&e),
                    };
                    for run in 1..100 {
                        match gpu.reduce_f32(variant, &x) {
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
                }),
            });
        }
    }
}

//! GPU cases of the float reductions (f32 and bf16 input, f32 accumulation):
//! accuracy against the exact (rug) sum with each variant's declared bound
//! (gamma_D * sum|x| for fixed trees, the order-free bound for atomics, the
//! compensated bound), ill-conditioned sums up to condition 1e30, and bitwise
//! repeatability of the deterministic variants over 100 runs. Each
//! deterministic variant (FixedTree, Compensated, TwoPass) is also compared
//! bit for bit with the model's replay of its exact tree
//! (`model::float_reduce`), after checking that the plan
//! launched the grids the replay assumes.

use super::sparse_sum::{sparse_cases, FloatReduceSum, SparseElement, SparseRun};
use super::streamed::{OnDevice, STREAMED_FROM};
use super::{case_seed, gpu_error, sized_id, GpuCase, Input, Inputs};
use crate::sweep::case::CaseId;
use crate::sweep::case::Verdict;
use crate::sweep::digest::Fingerprint;
use crate::sweep::float_check::{check_replay, error_of, tree_bound};
use crate::sweep::SweepPlan;
use half::bf16;
use kernels::{FloatElement, FloatReducePlan, FloatReduceVariant};
#[cfg(test)]
use model::float_reduce::FloatLaunch;
use model::float_reduce::{replay_float_sum_planned, FloatInput, FloatTreeSchedule};
use model::generators::{ill_conditioned_f32, uniform_bf16, uniform_f32};
use std::sync::{Arc, OnceLock};

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

/// The model's replay of a deterministic variant; `None` for the atomic
/// ones, whose order depends on scheduling (they are checked against the
/// order-free bound only).
fn schedule_of(variant: FloatReduceVariant) -> Option<FloatTreeSchedule> {
    match variant {
        FloatReduceVariant::FixedTree => Some(FloatTreeSchedule::FixedTree),
        FloatReduceVariant::Compensated => Some(FloatTreeSchedule::Compensated),
        FloatReduceVariant::TwoPass => Some(FloatTreeSchedule::TwoPass),
        FloatReduceVariant::AtomicPerElement | FloatReduceVariant::AtomicPerBlock => None,
    }
}

/// The input element types of the sweep: how the model reads them.
trait SweepFloat: FloatElement + Send + Sync {
    /// The values widened exactly to f64 (for the exact sum).
    fn widen(&self) -> f64;
    /// The slice as the model's replay input.
    fn model_input(x: &[Self]) -> FloatInput<'_>;
}

impl SweepFloat for f32 {
    fn widen(&self) -> f64 {
        *self as f64
    }
    fn model_input(x: &[f32]) -> FloatInput<'_> {
        FloatInput::F32(x)
    }
}

impl SweepFloat for bf16 {
    fn widen(&self) -> f64 {
        self.to_f64()
    }
    fn model_input(x: &[bf16]) -> FloatInput<'_> {
        FloatInput::Bf16(x)
    }
}

/// A float input: its values, its exact sum and sum|x|, and the model's
/// replay of each deterministic schedule (made on first use, then shared by
/// the reference digest and the GPU comparison).
struct FloatCase<T> {
    x: Vec<T>,
    exact: Result<(f64, f64), String>,
    replays: [OnceLock<Result<f32, String>>; 3],
}

impl<T: SweepFloat> FloatCase<T> {
    fn new(x: Vec<T>) -> FloatCase<T> {
        let wide: Vec<f64> = x.iter().map(T::widen).collect();
        let exact = model::exact::exact_sum_f64(&wide).map(|e| (e.rounded_f64, e.sum_abs)).map_err(|e| e.to_string());
        FloatCase { x, exact, replays: Default::default() }
    }

    /// The replay of `schedule` under the kernels' geometry for this n.
    fn replay(&self, schedule: FloatTreeSchedule) -> &Result<f32, String> {
        let slot = FloatTreeSchedule::ALL.iter().position(|&s| s == schedule).unwrap_or(0);
        self.replays[slot]
            .get_or_init(|| replay_float_sum_planned(schedule, T::model_input(&self.x)).map_err(|e| e.to_string()))
    }
}

/// The reference of `variant` on `case`: the exact sum (rounded to f64),
/// sum|x| (rounded up), the variant's declared bound at that sum, and for a
/// deterministic variant the bits of the model's replay.
fn expected_digest<T: SweepFloat>(case: &FloatCase<T>, variant: FloatReduceVariant, n: usize) -> String {
    let print = match &case.exact {
        Ok((sum, sum_abs)) => Fingerprint::new()
            .f64s(&[*sum, *sum_abs, variant.error_bound(n, *sum_abs, sum.abs())])
            .u64s([variant.tree_depth(n) as u64].into_iter()),
        Err(e) => Fingerprint::new().text(&format!("model error: {e}")),
    };
    match schedule_of(variant).map(|s| case.replay(s)) {
        None => print.finish(),
        Some(Ok(bits)) => print.text("replay bits").u64s([bits.to_bits() as u64].into_iter()).finish(),
        Some(Err(e)) => print.text(&format!("replay error: {e}")).finish(),
    }
}

/// Runs `variant` on `x` through its plan: the f32 result and the grids the
/// plan launched.
fn run_planned<T: FloatElement>(
    gpu: &kernels::Gpu,
    variant: FloatReduceVariant,
    x: &[T],
) -> kernels::GpuResult<(f32, Vec<usize>)> {
    let mut plan = FloatReducePlan::<T>::new(gpu, variant, x.len())?;
    let input = gpu.upload(x)?;
    plan.enqueue(&input)?;
    let got = plan.finish()?;
    Ok((got, plan.grids().iter().map(|&g| g as usize).collect()))
}

/// The accuracy case of `variant` on `input`: the GPU sum within the
/// variant's declared bound of the exact sum and, for a deterministic
/// variant, equal bit for bit to the model's replay of its tree.
fn accuracy_case<T: SweepFloat + 'static>(
    input: &Input<FloatCase<T>>,
    case_id: CaseId,
    variant: FloatReduceVariant,
    n: usize,
) -> GpuCase {
    input.case(
        case_id,
        variant.name(),
        move |c| expected_digest(c, variant, n),
        move |gpu, c| {
            let (got, grids) = match run_planned(gpu, variant, &c.x) {
                Ok(v) => v,
                Err(e) => return gpu_error(&e),
            };
            let bound = check_accuracy(variant, c.x.iter().map(T::widen), n, got);
            match schedule_of(variant) {
                None => bound,
                Some(schedule) => check_replay(schedule, n, c.replay(schedule), &grids, got, bound),
            }
        },
    )
}

/// The sizes of `plan` the float cases visit (those the exact sum is computed for).
pub(crate) fn sizes(plan: &SweepPlan) -> impl Iterator<Item = usize> + '_ {
    plan.sizes.iter().copied().filter(|&n| n <= MAX_EXACT_N)
}

/// The conditions of the ill-conditioned f32 inputs at `n` (none for the
/// sanitizer's plan and outside 2..=[`MAX_ILL_N`]); every input at `n`
/// has the seed `case_seed(plan.seed, "float_reduce", n, 0)`.
pub(crate) fn ill_conditions(plan: &SweepPlan, n: usize) -> &'static [f64] {
    if plan.one_family || !(2..=MAX_ILL_N).contains(&n) {
        &[]
    } else {
        &[1e10, 1e30]
    }
}

/// Scratch and result bytes of the largest plan at `n`: the compensated
/// tree's pairs (8 bytes a tile), its later levels at most as many again.
fn largest_scratch(n: usize) -> u64 {
    16 * n.div_ceil(kernels::float_reduce::FLOAT_TILE_ITEMS) as u64 + 64
}

/// Every variant at a size past 2^32, f32 and bf16, on the streamed sparse
/// integer input whose every partial sum is exact ([`super::sparse_sum`]):
/// each result must be the exact sum bit for bit. The replay and the bound of
/// the smaller sizes add nothing there (any order gives the same bits).
fn streamed_cases(plan: &SweepPlan, n: usize, out: &mut Vec<GpuCase>) {
    sparse_cases::<FloatReduceSum, f32>(plan, n, streamed_runs::<f32>(), largest_scratch, out);
    sparse_cases::<FloatReduceSum, bf16>(plan, n, streamed_runs::<bf16>(), largest_scratch, out);
}

/// One run per variant of a plan on an input already on the device.
fn streamed_runs<T: FloatElement + SparseElement>() -> Vec<(&'static str, SparseRun<T>)> {
    FloatReduceVariant::ALL
        .into_iter()
        .map(|variant| {
            let run: SparseRun<T> = Arc::new(move |gpu: &kernels::Gpu, input: &OnDevice<f32, T>| {
                let mut plan = FloatReducePlan::<T>::new(gpu, variant, input.buffer.len())?;
                plan.enqueue(&input.buffer)?;
                plan.finish()
            });
            (variant.name(), run)
        })
        .collect()
}

/// Appends every float-reduction case of `plan`.
pub fn cases(plan: &SweepPlan, out: &mut Vec<GpuCase>) {
    for &n in plan.sizes.iter().filter(|&&n| n >= STREAMED_FROM) {
        streamed_cases(plan, n, out);
    }
    let f32_inputs: Inputs<FloatCase<f32>> = Inputs::default();
    let bf16_inputs: Inputs<FloatCase<bf16>> = Inputs::default();
    let ill_inputs: Inputs<FloatCase<f32>> = Inputs::default();
    for n in sizes(plan) {
        let seed = case_seed(plan.seed, "float_reduce", n, 0);
        let uniform = f32_inputs.input(
            format!("{n}/f32/{seed}"),
            move || Ok(FloatCase::new(uniform_f32(n, seed))),
            |c| Fingerprint::new().f32s(&c.x).finish(),
        );
        let narrow = bf16_inputs.input(
            format!("{n}/bf16/{seed}"),
            move || Ok(FloatCase::new(uniform_bf16(n, seed))),
            |c| Fingerprint::new().bf16s(&c.x).finish(),
        );
        let ill: Vec<_> = ill_conditions(plan, n)
            .iter()
            .map(|&condition| {
                let input = ill_inputs.input(
                    format!("{n}/ill{condition:e}/{seed}"),
                    move || {
                        let (x, _achieved) = ill_conditioned_f32(n, condition, seed).map_err(|e| e.to_string())?;
                        Ok(FloatCase::new(x))
                    },
                    |c| Fingerprint::new().f32s(&c.x).finish(),
                );
                (condition, input)
            })
            .collect();
        for variant in FloatReduceVariant::ALL {
            let case_id = sized_id("float_reduce", format!("{}.f32", variant.name()), n, "uniform_float", seed);
            out.push(accuracy_case(&uniform, case_id, variant, n));
            if plan.one_family && n > 4099 {
                continue;
            }
            let case_id = sized_id("float_reduce", format!("{}.bf16", variant.name()), n, "uniform_bf16", seed);
            out.push(accuracy_case(&narrow, case_id, variant, n));
            for (condition, input) in &ill {
                let case_id = sized_id(
                    "float_reduce",
                    format!("{}.f32.cond{condition:e}", variant.name()),
                    n,
                    &format!("ill_conditioned_{condition:e}"),
                    seed,
                );
                out.push(accuracy_case(input, case_id, variant, n));
            }
        }
    }
    // Run-to-run determinism: the fixed-order variants give the same bits 100
    // times, and those are the replay's.
    let sizes: &[usize] = if plan.one_family { &[] } else { &[4099, 262_145, 1 << 22] };
    let repeat_inputs: Inputs<Vec<f32>> = Inputs::default();
    for &n in sizes {
        let seed = case_seed(plan.seed, "float_reduce.repeat", n, 0);
        let input = repeat_inputs.input(
            format!("{n}/repeat/{seed}"),
            move || ill_conditioned_f32(n, 1e30, seed).map(|(x, _)| x).map_err(|e| e.to_string()),
            |x| Fingerprint::new().f32s(x).finish(),
        );
        for variant in FloatReduceVariant::ALL {
            let Some(schedule) = schedule_of(variant) else { continue };
            let case_id = sized_id(
                "float_reduce",
                format!("{}.f32.bitwise_x100", variant.name()),
                n,
                "ill_conditioned_1e30",
                seed,
            );
            let replay =
                move |x: &Vec<f32>| replay_float_sum_planned(schedule, FloatInput::F32(x)).map_err(|e| e.to_string());
            out.push(input.case(
                case_id,
                &format!("bitwise {}", variant.name()),
                move |x| {
                    let print = Fingerprint::new().text("the same bits in 100 runs, the replay's");
                    match replay(x) {
                        Ok(bits) => print.u64s([bits.to_bits() as u64].into_iter()).finish(),
                        Err(e) => print.text(&format!("replay error: {e}")).finish(),
                    }
                },
                move |gpu, x| {
                    let (first, grids) = match run_planned(gpu, variant, x) {
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
                    check_replay(schedule, n, &replay(x), &grids, first, Verdict::Pass)
                },
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exactly_the_deterministic_variants_are_replayed() {
        for variant in FloatReduceVariant::ALL {
            assert_eq!(schedule_of(variant).is_some(), variant.is_deterministic(), "{}", variant.name());
            if let Some(schedule) = schedule_of(variant) {
                assert_eq!(schedule.name(), variant.name());
            }
        }
    }

    #[test]
    fn the_replay_tile_is_the_kernels_tile() {
        assert_eq!(model::hardware::float_tile::FLOAT_TILE_ITEMS, kernels::float_reduce::FLOAT_TILE_ITEMS);
        assert_eq!(model::float_reduce::FLOAT_TWO_PASS_MAX_BLOCKS, kernels::float_reduce::FLOAT_TWO_PASS_MAX_BLOCKS);
    }

    #[test]
    fn the_replay_geometry_has_the_kernels_depths() {
        // The kernels derive tree_depth from their own grids: FixedTree and Compensated
        // 12 per pass; TwoPass ceil(tiles / G) + 24.
        for n in [1usize, 4096, 4097, 1 << 20, (1 << 24) + 1, 4096 * 4096 * 3] {
            for variant in FloatReduceVariant::ALL {
                let Some(schedule) = schedule_of(variant) else { continue };
                let grids = FloatLaunch::of(schedule, n).unwrap().grids;
                let depth = match schedule {
                    FloatTreeSchedule::TwoPass => n.div_ceil(4096).div_ceil(grids[0]) + 24,
                    _ => 12 * grids.len(),
                };
                assert_eq!(depth as u32, variant.tree_depth(n), "{} n={n} grids {grids:?}", variant.name());
            }
        }
    }

    #[test]
    fn the_expected_digest_covers_the_replay_bits() {
        let case = FloatCase::new(vec![1.0f32, 2.0]);
        let digest = expected_digest(&case, FloatReduceVariant::FixedTree, 2);
        assert_eq!(case.replay(FloatTreeSchedule::FixedTree), &Ok(3.0));
        let other = FloatCase::new(vec![1.0f32, 2.0]);
        assert!(other.replays[0].set(Ok(4.0)).is_ok());
        assert_ne!(digest, expected_digest(&other, FloatReduceVariant::FixedTree, 2));
        // The atomic variants have no replay: their digest ignores it.
        let atomic = FloatReduceVariant::AtomicPerBlock;
        assert_eq!(expected_digest(&case, atomic, 2), expected_digest(&other, atomic, 2));
    }

    #[test]
    fn every_catalogue_reference_is_computed_without_a_gpu() {
        let plan = SweepPlan {
            seed: 1,
            sizes: vec![33, 4097],
            quick: false,
            primitives: vec![crate::registry::primitive::Primitive::FloatReduce],
            variants: Vec::new(),
            one_family: false,
        };
        let mut cases = Vec::new();
        super::cases(&plan, &mut cases);
        // 2 sizes x 5 variants x (f32, bf16, two ill-conditioned), then 3 sizes x 3 repeats.
        assert_eq!(cases.len(), 2 * 5 * 4 + 3 * 3);
        for case in cases.iter().filter(|c| c.id.n < 1 << 20) {
            let digest = case.standalone_reference();
            assert!(digest.is_ok(), "{}/{}: {digest:?}", case.id.variant, case.id.size);
        }
    }
}

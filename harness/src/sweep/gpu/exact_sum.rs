//! GPU cases of the correctly rounded sums (`exact_sum`): every result must
//! equal the model's correctly rounded f32 **bit for bit**. The expected
//! values come from the model's binned-limb accumulator
//! (`model::exact::binned`, proved equal to the rug reference by the model's
//! tests), computed in parallel chunks, so that the receipt gate can
//! recompute 2^28-input expectations quickly; up to [`RUG_CROSS_CHECK_MAX`]
//! inputs the rug reference is computed too and must agree.
//!
//! Families: uniform f32 and bf16 at the sweep sizes; ill-conditioned f32
//! (condition 1e10, 1e30, 1e38); fixed contract inputs (cancelling 2^127
//! terms, overflow to ±inf, all-subnormal, NaN and infinities, `-0.0`);
//! same-sign large values that carry through the limbs; and a determinism
//! case: several forced launch configurations and 1,000 runs of one input.

use super::pieces::{pieced, Part};
use super::sparse_sum::{sparse_cases, ExactSumSum, SparseElement, SparseRun};
use super::streamed::{OnDevice, STREAMED_FROM};
use super::{case_seed, gpu_error, id, sized_id, GpuCase, Inputs, Keep, Pieced};
use crate::sweep::case::Verdict;
use crate::sweep::digest::Fingerprint;
use crate::sweep::SweepPlan;
use half::bf16;
use kernels::exact_sum::{EXACT_MAX_BLOCKS, EXACT_RECORD_WORDS};
use kernels::{ExactSumGrid, ExactSumPlan, ExactSumVariant, FloatElement};
use model::exact::{correctly_rounded_sum_f32, BinnedAccumulator};
use model::generators::{ill_conditioned_f32, uniform_bf16, uniform_f32, uniform_f32_pieces, Rng};
use rayon::prelude::*;
use std::sync::Arc;

/// Largest n whose expectation is also computed by rug and compared.
const RUG_CROSS_CHECK_MAX: usize = 1 << 16;
/// Largest n of the ill-conditioned generator in the sweep.
const MAX_ILL_N: usize = 1 << 20;
/// Largest bf16 n (the f32 cases go to every sweep size).
const MAX_BF16_N: usize = 1 << 26;
/// Size of the determinism case and its number of repeated runs.
const REPEAT_N: usize = 1 << 20;
const REPEATS: usize = 1000;

/// An input (f32 values; bf16 inputs are widened exactly) and its expected sum.
struct SumCase<T> {
    x: Vec<T>,
    expected: Result<f32, String>,
}

/// The binned-limb sum of `x`, over parallel chunks merged exactly.
fn binned_sum(x: &[f32]) -> f32 {
    binned_accumulator(x).round()
}

/// The binned accumulator of `x`, over parallel chunks merged exactly.
fn binned_accumulator(x: &[f32]) -> BinnedAccumulator {
    x.par_chunks(1 << 16)
        .map(|chunk| {
            let mut acc = BinnedAccumulator::new();
            chunk.iter().for_each(|&v| acc.add(v));
            acc
        })
        .reduce(BinnedAccumulator::new, |mut a, b| {
            a.merge(&b);
            a
        })
}

/// The uniform f32 input of (n, seed) and its correctly rounded sum, a
/// piece at a time (accumulators of disjoint pieces merge exactly).
fn uniform_pieced(n: usize, seed: u64, keep: Keep) -> Result<Pieced<SumCase<f32>>, String> {
    let mut input = Part::<f32>::new(keep, n);
    let mut sum = BinnedAccumulator::new();
    let mut small = Vec::new();
    for piece in uniform_f32_pieces(n, seed) {
        sum.merge(&binned_accumulator(&piece));
        if n <= RUG_CROSS_CHECK_MAX {
            small.extend_from_slice(&piece);
        }
        input.push(&piece);
    }
    let small = (n <= RUG_CROSS_CHECK_MAX).then_some(small.as_slice());
    let case = SumCase { x: vec![], expected: cross_checked(sum.round(), small) };
    let (digest, x) = input.finish()?;
    let answer = expected_digest(&case);
    Ok(pieced(digest, vec![(ExactSumVariant::CorrectlyRounded.name(), answer)], || Some(SumCase { x: x?, ..case })))
}

/// The expected sum of `wide`, cross-checked against rug for small inputs.
pub(crate) fn expected_of(wide: &[f32]) -> Result<f32, String> {
    cross_checked(binned_sum(wide), (wide.len() <= RUG_CROSS_CHECK_MAX).then_some(wide))
}

/// `binned`, the binned model's sum of an input, cross-checked against rug
/// on `small`, the input itself when it is small enough (`None` past
/// [`RUG_CROSS_CHECK_MAX`]: the rug sum of every input is too slow).
fn cross_checked(binned: f32, small: Option<&[f32]>) -> Result<f32, String> {
    if let Some(wide) = small {
        let rug = correctly_rounded_sum_f32(wide);
        if rug.to_bits() != binned.to_bits() {
            return Err(format!(
                "binned model {binned:e} ({:#x}) != rug {rug:e} ({:#x})",
                binned.to_bits(),
                rug.to_bits()
            ));
        }
    }
    Ok(binned)
}

fn f32_case(x: Vec<f32>) -> SumCase<f32> {
    let expected = expected_of(&x);
    SumCase { x, expected }
}

fn bf16_case(x: Vec<bf16>) -> SumCase<bf16> {
    let wide: Vec<f32> = x.iter().map(|v| v.to_f32()).collect();
    SumCase { expected: expected_of(&wide), x }
}

fn expected_digest<T>(case: &SumCase<T>) -> String {
    match &case.expected {
        Ok(v) => Fingerprint::new().u64s([u64::from(v.to_bits())].into_iter()).finish(),
        Err(e) => Fingerprint::new().text(&format!("model error: {e}")).finish(),
    }
}

/// Pass when `got` has the expected bits.
fn compare(expected: &Result<f32, String>, got: f32) -> Verdict {
    match expected {
        Ok(e) if e.to_bits() == got.to_bits() => Verdict::Pass,
        Ok(e) => Verdict::fail(
            format!("{e:e} ({:#010x})", e.to_bits()),
            format!("{got:e} ({:#010x})", got.to_bits()),
            "bitwise sum",
        ),
        Err(e) => Verdict::fail("a model result", e, "model"),
    }
}

/// Runs the sum on `grid` and compares.
fn run_on<T: FloatElement>(gpu: &kernels::Gpu, grid: ExactSumGrid, x: &[T], expected: &Result<f32, String>) -> Verdict {
    match gpu.exact_sum(ExactSumVariant::CorrectlyRounded, grid, x) {
        Ok(got) => compare(expected, got),
        Err(e) => gpu_error(&e),
    }
}

/// The fixed contract inputs: (family name, values); their seed is
/// `case_seed(plan.seed, "exact_sum.contract", 0, 0)`.
pub(crate) fn contract_inputs(seed: u64) -> Vec<(&'static str, Vec<f32>)> {
    let p127 = 2f32.powi(127);
    let mut cancel = vec![p127, p127, -p127, -p127];
    cancel.resize(4099, 0.0);
    let mut rng = Rng::new(seed);
    let subnormals: Vec<f32> = (0..100_003)
        .map(|_| {
            let bits = 1 + rng.below((1 << 23) - 1) as u32;
            f32::from_bits(bits | if rng.chance(0.4) { 0x8000_0000 } else { 0 })
        })
        .collect();
    let mut with_nan = uniform_f32(4099, seed);
    with_nan[4000] = f32::NAN;
    let mut both_inf = uniform_f32(70_001, seed);
    both_inf[3] = f32::INFINITY;
    both_inf[69_999] = f32::NEG_INFINITY;
    let mut pos_inf = vec![-f32::MAX; 513];
    pos_inf[512] = f32::INFINITY;
    let mut neg_inf = uniform_f32(262_145, seed);
    neg_inf[131_072] = f32::NEG_INFINITY;
    vec![
        ("cancel_2^127", cancel),
        ("overflow_pos", vec![f32::MAX; 33]),
        ("overflow_neg", vec![-f32::MAX; 262_145]),
        ("overflow_boundary", vec![f32::MAX, 2f32.powi(102), 2f32.powi(102)]),
        ("below_overflow", vec![f32::MAX, 2f32.powi(102)]),
        ("overflow_and_back", vec![f32::MAX, f32::MAX, f32::MAX, -f32::MAX, -f32::MAX]),
        ("all_subnormal", subnormals),
        ("negative_zeros", vec![-0.0; 257]),
        ("nan", with_nan),
        ("pos_and_neg_inf", both_inf),
        ("pos_inf_over_finite", pos_inf),
        ("neg_inf", neg_inf),
    ]
}

/// Same-sign values whose limbs carry at every normalisation: the largest
/// term of bins 0..6 (significand 2^24 - 1 at exponent 32 b + 31, from
/// 2^-96 to 2^96), all positive, alternating with values in [2^60, 2^64).
pub(crate) fn carry_input(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|i| {
            if i % 2 == 0 {
                let e = 32 * (1 + rng.below(7) as u32) - 1;
                f32::from_bits((e << 23) | 0x7f_ffff)
            } else {
                2f32.powi(60) * (1.0 + rng.unit_f64() as f32) * (1 + rng.below(8)) as f32
            }
        })
        .collect()
}

/// The sizes of the carry inputs; size n's seed is
/// `case_seed(plan.seed, "exact_sum.carries", n, 0)`.
pub(crate) const CARRY_SIZES: [usize; 2] = [4099, 1 << 22];

/// The conditions of the ill-conditioned f32 inputs at `n` (none for the
/// sanitizer's plan and outside 2..=[`MAX_ILL_N`]); their seed is the
/// uniform input's, `case_seed(plan.seed, "exact_sum", n, 0)`.
pub(crate) fn ill_conditions(plan: &SweepPlan, n: usize) -> &'static [f64] {
    if plan.one_family || !(2..=MAX_ILL_N).contains(&n) {
        &[]
    } else {
        &[1e10, 1e30, 1e38]
    }
}

/// Records and result bytes of a plan at any n: at most `EXACT_MAX_BLOCKS`
/// records of `EXACT_RECORD_WORDS` words, the arrival counter and the result.
fn largest_scratch(_n: usize) -> u64 {
    8 * (EXACT_MAX_BLOCKS as usize * EXACT_RECORD_WORDS) as u64 + 64
}

/// The correctly rounded sum of `T` on an input already on the device.
fn streamed_run<T: FloatElement + SparseElement>() -> Vec<(&'static str, SparseRun<T>)> {
    let run: SparseRun<T> = Arc::new(|gpu: &kernels::Gpu, input: &OnDevice<f32, T>| {
        let n = input.buffer.len();
        let mut plan = ExactSumPlan::<T>::new(gpu, ExactSumVariant::CorrectlyRounded, n, ExactSumGrid::Auto)?;
        plan.enqueue(&input.buffer)?;
        plan.finish()
    });
    vec![(ExactSumVariant::CorrectlyRounded.name(), run)]
}

/// Appends every correctly-rounded-sum case of `plan`. Past 2^32 items, f32
/// and bf16 on the streamed sparse integer input ([`super::sparse_sum`]),
/// whose correctly rounded sum is its exact integer sum.
pub fn cases(plan: &SweepPlan, out: &mut Vec<GpuCase>) {
    let variant = ExactSumVariant::CorrectlyRounded.name();
    let f32_inputs: Inputs<SumCase<f32>> = Inputs::default();
    let bf16_inputs: Inputs<SumCase<bf16>> = Inputs::default();
    let digest_f32 = |c: &SumCase<f32>| Fingerprint::new().f32s(&c.x).finish();
    for &n in &plan.sizes {
        if n >= STREAMED_FROM {
            sparse_cases::<ExactSumSum, f32>(plan, n, streamed_run::<f32>(), largest_scratch, out);
            sparse_cases::<ExactSumSum, bf16>(plan, n, streamed_run::<bf16>(), largest_scratch, out);
            continue;
        }
        let seed = case_seed(plan.seed, "exact_sum", n, 0);
        let uniform = f32_inputs.pieced(format!("{n}/f32/{seed}"), move |keep| uniform_pieced(n, seed, keep));
        let case_id = sized_id("exact_sum", format!("{variant}.f32"), n, "uniform_float", seed);
        out.push(
            uniform
                .case(case_id, variant, expected_digest, |gpu, c| run_on(gpu, ExactSumGrid::Auto, &c.x, &c.expected)),
        );
        if plan.one_family && n > 4099 {
            continue;
        }
        if n <= MAX_BF16_N {
            let narrow = bf16_inputs.input(
                format!("{n}/bf16/{seed}"),
                move || Ok(bf16_case(uniform_bf16(n, seed))),
                |c| Fingerprint::new().bf16s(&c.x).finish(),
            );
            let case_id = sized_id("exact_sum", format!("{variant}.bf16"), n, "uniform_bf16", seed);
            out.push(
                narrow.case(case_id, variant, expected_digest, |gpu, c| {
                    run_on(gpu, ExactSumGrid::Auto, &c.x, &c.expected)
                }),
            );
        }
        for &condition in ill_conditions(plan, n) {
            let input = f32_inputs.input(
                format!("{n}/ill{condition:e}/{seed}"),
                move || Ok(f32_case(ill_conditioned_f32(n, condition, seed).map_err(|e| e.to_string())?.0)),
                digest_f32,
            );
            let case_id = sized_id(
                "exact_sum",
                format!("{variant}.f32.cond{condition:e}"),
                n,
                &format!("ill_conditioned_{condition:e}"),
                seed,
            );
            out.push(
                input.case(case_id, variant, expected_digest, |gpu, c| {
                    run_on(gpu, ExactSumGrid::Auto, &c.x, &c.expected)
                }),
            );
        }
    }
    if plan.one_family {
        return;
    }
    let seed = case_seed(plan.seed, "exact_sum.contract", 0, 0);
    for (family, x) in contract_inputs(seed) {
        let n = x.len();
        let input = f32_inputs.input(format!("contract/{family}/{seed}"), move || Ok(f32_case(x.clone())), digest_f32);
        let case_id = sized_id("exact_sum", format!("{variant}.f32.{family}"), n, family, seed);
        out.push(input.case(case_id, variant, expected_digest, |gpu, c| {
            // The small grid and the automatic one must agree with the model.
            match run_on(gpu, ExactSumGrid::Blocks(3), &c.x, &c.expected) {
                Verdict::Pass => run_on(gpu, ExactSumGrid::Auto, &c.x, &c.expected),
                failed => failed,
            }
        }));
    }
    for n in CARRY_SIZES {
        let seed = case_seed(plan.seed, "exact_sum.carries", n, 0);
        let input =
            f32_inputs.input(format!("{n}/carries/{seed}"), move || Ok(f32_case(carry_input(n, seed))), digest_f32);
        let case_id = sized_id("exact_sum", format!("{variant}.f32.carries"), n, "same_sign_large", seed);
        out.push(input.case(case_id, variant, expected_digest, |gpu, c| {
            run_on(gpu, ExactSumGrid::BlocksPerSm(1), &c.x, &c.expected)
        }));
    }
    let seed = case_seed(plan.seed, "exact_sum.repeat", REPEAT_N, 0);
    let input = f32_inputs.input(
        format!("{REPEAT_N}/repeat/{seed}"),
        move || Ok(f32_case(ill_conditioned_f32(REPEAT_N, 1e30, seed).map_err(|e| e.to_string())?.0)),
        digest_f32,
    );
    let case_id = id(
        "exact_sum",
        format!("{variant}.f32.grids_and_x{REPEATS}"),
        REPEAT_N.to_string(),
        REPEAT_N,
        "ill_conditioned_1e30",
        seed,
    );
    out.push(input.case(case_id, variant, expected_digest, |gpu, c| determinism(gpu, &c.x, &c.expected)));
}

/// The same bits on every forced launch configuration, then in
/// [`REPEATS`] runs of one plan.
fn determinism(gpu: &kernels::Gpu, x: &[f32], expected: &Result<f32, String>) -> Verdict {
    let grids = [
        ExactSumGrid::Auto,
        ExactSumGrid::Blocks(1),
        ExactSumGrid::Blocks(7),
        ExactSumGrid::BlocksPerSm(1),
        ExactSumGrid::BlocksPerSm(3),
        ExactSumGrid::Blocks(kernels::exact_sum::EXACT_MAX_BLOCKS),
    ];
    for grid in grids {
        if let Verdict::Fail(mut m) = run_on(gpu, grid, x, expected) {
            m.what = format!("bitwise sum on {grid:?}");
            return Verdict::Fail(m);
        }
    }
    let repeat = || -> kernels::GpuResult<Option<(usize, f32)>> {
        let mut plan = ExactSumPlan::<f32>::new(gpu, ExactSumVariant::CorrectlyRounded, x.len(), ExactSumGrid::Auto)?;
        let input = gpu.upload(x)?;
        for run in 0..REPEATS {
            plan.poison_result()?;
            plan.enqueue(&input)?;
            let got = plan.finish()?;
            if expected.as_ref().map(|e| e.to_bits()) != Ok(got.to_bits()) {
                return Ok(Some((run, got)));
            }
        }
        Ok(None)
    };
    match repeat() {
        Ok(None) => Verdict::Pass,
        Ok(Some((run, got))) => match compare(expected, got) {
            Verdict::Fail(mut m) => {
                m.index = Some(run);
                m.what = "bitwise repeat".into();
                Verdict::Fail(m)
            }
            other => other,
        },
        Err(e) => gpu_error(&e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contract_inputs_expect_what_the_contract_says() {
        let expected: Vec<(&str, u32)> = vec![
            ("cancel_2^127", 0),
            ("overflow_pos", f32::INFINITY.to_bits()),
            ("overflow_neg", f32::NEG_INFINITY.to_bits()),
            ("overflow_boundary", f32::INFINITY.to_bits()),
            ("below_overflow", f32::MAX.to_bits()),
            ("overflow_and_back", f32::MAX.to_bits()),
            ("negative_zeros", 0),
            ("nan", 0x7fc0_0000),
            ("pos_and_neg_inf", 0x7fc0_0000),
            ("pos_inf_over_finite", f32::INFINITY.to_bits()),
            ("neg_inf", f32::NEG_INFINITY.to_bits()),
        ];
        let inputs = contract_inputs(7);
        for (family, bits) in expected {
            let (_, x) = inputs.iter().find(|(f, _)| *f == family).expect("listed");
            assert_eq!(expected_of(x).map(f32::to_bits), Ok(bits), "{family}");
        }
        let (_, subnormals) = inputs.iter().find(|(f, _)| *f == "all_subnormal").expect("listed");
        assert!(subnormals.iter().all(|x| x.is_subnormal()));
        assert!(expected_of(subnormals).is_ok());
    }

    #[test]
    fn the_carry_input_is_positive_with_large_terms() {
        let x = carry_input(1000, 3);
        assert!(x.iter().all(|&v| v > 0.0 && v.is_finite()));
        assert!(x.iter().filter(|&&v| v >= 2f32.powi(60)).count() >= 500);
    }

    /// Every case of a small plan has a reference (the model agrees with
    /// rug where both are computed), and the ids are unique.
    #[test]
    fn every_reference_of_a_small_plan_computes() {
        let plan = SweepPlan {
            seed: 0x5eed,
            sizes: vec![1, 33, 4099],
            quick: true,
            primitives: vec![],
            variants: vec![],
            one_family: false,
        };
        let mut cases_out = Vec::new();
        cases(&plan, &mut cases_out);
        crate::sweep::gpu::assert_unique_ids_and_references(&cases_out, |_| true);
    }
}

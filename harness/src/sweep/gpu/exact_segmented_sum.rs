//! GPU cases of the correctly rounded segmented sums (variant
//! `segmented_correctly_rounded` of `exact_sum`): every segment's result must
//! equal the model's correctly rounded f32 **bit for bit**. A segment's
//! expectation is [`expected_of`] (the rug reference for segments up to
//! 2^16 inputs, and the binned-limb model, cross-checked against rug there,
//! beyond).
//!
//! Segment shapes (lengths cycling 0, 1, 31, 32, 33, 1000, 0; random
//! lengths; one segment; a huge segment between empty ones) x data families
//! (uniform, ill-conditioned 1e30 per segment, overflowing and cancelling
//! 2^127-scale terms, subnormals, mixed signs over every exponent, sparse
//! NaN and infinities, uniform bf16, normals near 2^-126 whose sums fall subnormal) x every schedule; the hand-made
//! segments of the model's tests; bad offsets rejected; and a determinism
//! case over eight launch configurations and 1,000 runs of one plan.

use super::exact_sum::expected_of;
use super::segmented_reduce::cycled_offsets;
use super::{case_seed, contract_case, gpu_error, id, sized_id, GpuCase, Inputs};
use crate::sweep::case::Verdict;
use crate::sweep::digest::Fingerprint;
use crate::sweep::SweepPlan;
use half::bf16;
use kernels::exact_segmented_sum::SEGMENTED_VARIANT;
use kernels::{ExactSegmentedLaunch, ExactSegmentedSchedule, ExactSegmentedSumPlan, FloatElement, GpuError};
use model::generators::{ill_conditioned_f32, segment_offsets, uniform_bf16, uniform_f32, Rng};
use rayon::prelude::*;

/// Largest n of the segmented cases (the references of 2^28 would
/// dominate the sweep; 2^24 already runs every loop of every schedule).
const MAX_N: usize = 1 << 24;
/// Largest n of the families other than uniform (their generators and
/// rug references run per segment).
const MAX_FAMILY_N: usize = 1 << 20;
/// The lengths cycled by the "lengths" shape: empty, single, both sides of
/// a warp, and a length of whole 32-lane passes plus a partial one.
const CYCLE: [usize; 7] = [0, 1, 31, 32, 33, 1000, 0];
/// Size of the determinism case and its number of repeated runs.
const REPEAT_N: usize = 1 << 20;
const REPEATS: usize = 1000;

/// Offsets of a named shape over n items.
fn offsets_for(shape: &str, n: usize, seed: u64) -> Vec<usize> {
    match shape {
        "random" => segment_offsets(n, seed),
        "lengths" => cycled_offsets(n, &CYCLE),
        "one_segment" => vec![0, n],
        _ => vec![0, 0, n / 3, n / 3, n],
    }
}

/// The shapes visited at `n`; shape `s`'s seed is
/// `case_seed(plan.seed, "exact_sum.segmented", n, s)`.
fn shapes(plan: &SweepPlan, n: usize) -> &'static [&'static str] {
    if plan.one_family {
        &["lengths", "one_segment"]
    } else if n > MAX_FAMILY_N {
        &["random", "one_segment"]
    } else {
        &["lengths", "random", "one_segment", "huge_with_empties"]
    }
}

/// The f32 data families (the first is the sanitizer's and the only one
/// above [`MAX_FAMILY_N`]).
const FAMILIES: [&str; 7] =
    ["uniform_float", "ill_conditioned_1e30", "overflow", "subnormal", "tiny_normal", "mixed_sign", "nan_inf"];

/// A random f32 of `rng` from `pick`'s list, negated half the time.
fn signed_pick(rng: &mut Rng, pick: &[f32]) -> f32 {
    let x = pick[rng.index(pick.len())];
    if rng.chance(0.5) {
        -x
    } else {
        x
    }
}

/// The values of `family` over the segments of `offsets` (n items).
fn family_values(family: &str, offsets: &[usize], n: usize, seed: u64) -> Result<Vec<f32>, String> {
    let mut rng = Rng::new(seed ^ 0x5e9_5e9);
    let segments = offsets.windows(2);
    Ok(match family {
        "ill_conditioned_1e30" => {
            // Each segment of two or more inputs is ill-conditioned by itself.
            let mut x = uniform_f32(n, seed);
            for (s, w) in segments.enumerate() {
                if w[1] - w[0] >= 2 {
                    let (values, _) =
                        ill_conditioned_f32(w[1] - w[0], 1e30, seed ^ s as u64).map_err(|e| e.to_string())?;
                    x[w[0]..w[1]].copy_from_slice(&values);
                }
            }
            x
        }
        "overflow" => {
            // Terms whose f32 partial sums overflow; every other segment is
            // a term list followed by its negation (exact sum 0), shuffled.
            let big = [2f32.powi(127), f32::MAX, 2f32.powi(126), 2f32.powi(102), 2f32.powi(104), 1.0];
            let mut x = vec![0.0f32; n];
            for (s, w) in segments.enumerate() {
                let segment = &mut x[w[0]..w[1]];
                let half = segment.len() / 2;
                for v in segment.iter_mut() {
                    *v = signed_pick(&mut rng, &big);
                }
                if s % 2 == 1 {
                    for k in 0..half {
                        segment[half + k] = -segment[k];
                    }
                    rng.shuffle(segment);
                }
            }
            x
        }
        "subnormal" => (0..n)
            .map(|_| {
                let bits = if rng.chance(0.05) { 0x0080_0000 } else { 1 + rng.below((1 << 23) - 1) as u32 };
                f32::from_bits(bits | if rng.chance(0.4) { 0x8000_0000 } else { 0 })
            })
            .collect(),
        // Normal values of exponents 1..=4, each odd one the negation of the
        // one before moved by 0..3 ulps: sums of pairs are subnormal (the
        // register window must hand those to the bins), an unpaired value
        // keeps a sum normal.
        "tiny_normal" => {
            let mut x: Vec<f32> = Vec::with_capacity(n);
            for i in 0..n {
                let bits = if i % 2 == 1 {
                    x[i - 1].to_bits() ^ 0x8000_0000
                } else {
                    (u32::from(rng.chance(0.5)) << 31) | ((1 + rng.below(4) as u32) << 23) | rng.below(1 << 23) as u32
                };
                x.push(f32::from_bits(if i % 2 == 1 { bits + rng.below(4) as u32 } else { bits }));
            }
            x
        }
        "mixed_sign" => (0..n)
            .map(|_| {
                let exponent = rng.below(255) as u32;
                let fraction = rng.below(1 << 23) as u32;
                f32::from_bits((u32::from(rng.chance(0.5)) << 31) | (exponent << 23) | fraction)
            })
            .collect(),
        "nan_inf" => {
            let mut x = uniform_f32(n, seed);
            for v in x.iter_mut() {
                if rng.chance(0.01) {
                    *v = match rng.below(3) {
                        0 => f32::from_bits(0x7f80_0001 | rng.below(1 << 22) as u32 | (rng.below(2) as u32) << 31),
                        1 => f32::INFINITY,
                        _ => f32::NEG_INFINITY,
                    };
                }
            }
            x
        }
        _ => uniform_f32(n, seed),
    })
}

/// Segmented values (f32, or bf16 widened exactly) and their expected sums.
struct SegmentedSums<T> {
    offsets: Vec<usize>,
    x: Vec<T>,
    expected: Result<Vec<f32>, String>,
}

/// The expected sum of every segment of `wide`.
fn expected_sums(wide: &[f32], offsets: &[usize]) -> Result<Vec<f32>, String> {
    (0..offsets.len() - 1)
        .into_par_iter()
        .map(|s| expected_of(&wide[offsets[s]..offsets[s + 1]]).map_err(|e| format!("segment {s}: {e}")))
        .collect()
}

fn f32_sums(offsets: Vec<usize>, x: Vec<f32>) -> SegmentedSums<f32> {
    let expected = expected_sums(&x, &offsets);
    SegmentedSums { offsets, x, expected }
}

fn bf16_sums(offsets: Vec<usize>, x: Vec<bf16>) -> SegmentedSums<bf16> {
    let wide: Vec<f32> = x.iter().map(|v| v.to_f32()).collect();
    SegmentedSums { expected: expected_sums(&wide, &offsets), offsets, x }
}

fn expected_digest<T>(case: &SegmentedSums<T>) -> String {
    match &case.expected {
        Ok(v) => Fingerprint::new().u64s(v.iter().map(|x| u64::from(x.to_bits()))).finish(),
        Err(e) => Fingerprint::new().text(&format!("model error: {e}")).finish(),
    }
}

fn offsets_digest(offsets: &[usize]) -> Fingerprint {
    Fingerprint::new().u64s(offsets.iter().map(|&o| o as u64))
}

/// Pass when every segment has the expected bits; else the first segment
/// that differs.
fn compare(expected: &Result<Vec<f32>, String>, got: &[f32]) -> Verdict {
    let expected = match expected {
        Ok(e) => e,
        Err(e) => return Verdict::fail("a model result", e, "model"),
    };
    if expected.len() != got.len() {
        return Verdict::fail(expected.len(), got.len(), "segment count");
    }
    match (0..got.len()).find(|&s| expected[s].to_bits() != got[s].to_bits()) {
        None => Verdict::Pass,
        Some(s) => Verdict::fail_at(
            s,
            format!("{:e} ({:#010x})", expected[s], expected[s].to_bits()),
            format!("{:e} ({:#010x})", got[s], got[s].to_bits()),
            "bitwise segment sum",
        ),
    }
}

/// Runs the sums with `launch` and compares.
fn run_on<T: FloatElement>(gpu: &kernels::Gpu, launch: ExactSegmentedLaunch, c: &SegmentedSums<T>) -> Verdict {
    match gpu.segmented_exact_sum(launch, &c.x, &c.offsets) {
        Ok(got) => compare(&c.expected, &got),
        Err(e) => gpu_error(&e),
    }
}

fn forced(schedule: ExactSegmentedSchedule) -> ExactSegmentedLaunch {
    ExactSegmentedLaunch { schedule: Some(schedule), blocks: None }
}

/// The sizes of `plan` the segmented cases visit.
fn sizes(plan: &SweepPlan) -> Vec<usize> {
    plan.sizes.iter().copied().filter(|&n| n <= MAX_N).collect()
}

/// Appends every correctly-rounded-segmented-sum case of `plan`.
pub fn cases(plan: &SweepPlan, out: &mut Vec<GpuCase>) {
    let f32_inputs: Inputs<SegmentedSums<f32>> = Inputs::default();
    let bf16_inputs: Inputs<SegmentedSums<bf16>> = Inputs::default();
    let digest_f32 = |c: &SegmentedSums<f32>| offsets_digest(&c.offsets).f32s(&c.x).finish();
    let digest_bf16 = |c: &SegmentedSums<bf16>| offsets_digest(&c.offsets).bf16s(&c.x).finish();
    for n in sizes(plan) {
        for (s, &shape) in shapes(plan, n).iter().enumerate() {
            let families = if plan.one_family || n > MAX_FAMILY_N { &FAMILIES[..1] } else { &FAMILIES[..] };
            for (f, &family) in families.iter().enumerate() {
                let seed = case_seed(plan.seed, "exact_sum.segmented", n, 16 * s + f);
                let input = f32_inputs.input(
                    format!("{n}/{shape}/{family}/{seed}"),
                    move || {
                        let offsets = offsets_for(shape, n, seed);
                        let x = family_values(family, &offsets, n, seed)?;
                        Ok(f32_sums(offsets, x))
                    },
                    digest_f32,
                );
                for schedule in ExactSegmentedSchedule::ALL {
                    let variant = format!("{SEGMENTED_VARIANT}.{}.f32.{family}.{shape}", schedule.name());
                    out.push(input.case(
                        sized_id("exact_sum", variant, n, family, seed),
                        SEGMENTED_VARIANT,
                        expected_digest,
                        move |gpu, c| run_on(gpu, forced(schedule), c),
                    ));
                }
            }
            if n <= MAX_FAMILY_N && (shape == "lengths" || !plan.one_family) {
                let seed = case_seed(plan.seed, "exact_sum.segmented.bf16", n, s);
                let input = bf16_inputs.input(
                    format!("{n}/{shape}/bf16/{seed}"),
                    move || Ok(bf16_sums(offsets_for(shape, n, seed), uniform_bf16(n, seed))),
                    digest_bf16,
                );
                for schedule in ExactSegmentedSchedule::ALL {
                    let variant = format!("{SEGMENTED_VARIANT}.{}.bf16.{shape}", schedule.name());
                    out.push(input.case(
                        sized_id("exact_sum", variant, n, "uniform_bf16", seed),
                        SEGMENTED_VARIANT,
                        expected_digest,
                        move |gpu, c| run_on(gpu, forced(schedule), c),
                    ));
                }
            }
        }
    }
    if plan.one_family {
        return;
    }
    hand_made_cases(&f32_inputs, out);
    rejection_cases(out);
    let seed = case_seed(plan.seed, "exact_sum.segmented.repeat", REPEAT_N, 0);
    let input = f32_inputs.input(
        format!("{REPEAT_N}/repeat/{seed}"),
        move || {
            let offsets = offsets_for("random", REPEAT_N, seed);
            Ok(f32_sums(offsets.clone(), family_values("ill_conditioned_1e30", &offsets, REPEAT_N, seed)?))
        },
        digest_f32,
    );
    let case_id = id(
        "exact_sum",
        format!("{SEGMENTED_VARIANT}.f32.launches_and_x{REPEATS}"),
        REPEAT_N.to_string(),
        REPEAT_N,
        "ill_conditioned_1e30",
        seed,
    );
    out.push(input.case(case_id, SEGMENTED_VARIANT, expected_digest, determinism));
}

/// The model's hand-checked segments side by side, on every schedule: the
/// GPU must give the bits written by hand, which the rug reference must give
/// too.
fn hand_made_cases(inputs: &Inputs<SegmentedSums<f32>>, out: &mut Vec<GpuCase>) {
    let segments = model::exact::hand_checked_segments();
    let n: usize = segments.iter().map(|(x, _)| x.len()).sum();
    let input = inputs.input(
        "hand_made".into(),
        move || {
            let mut x = Vec::new();
            let mut offsets = vec![0];
            let mut by_hand = Vec::new();
            for (segment, bits) in &segments {
                x.extend_from_slice(segment);
                offsets.push(x.len());
                by_hand.push(f32::from_bits(*bits));
            }
            let expected = match model::exact::segmented_correctly_rounded_sum_f32(&x, &offsets) {
                Ok(rug) if rug.iter().map(|v| v.to_bits()).eq(by_hand.iter().map(|v| v.to_bits())) => Ok(by_hand),
                Ok(rug) => Err(format!("rug gives {rug:?}, the hand-checked sums are {by_hand:?}")),
                Err(e) => Err(e.to_string()),
            };
            Ok(SegmentedSums { offsets, x, expected })
        },
        |c| offsets_digest(&c.offsets).f32s(&c.x).finish(),
    );
    for schedule in ExactSegmentedSchedule::ALL {
        let variant = format!("{SEGMENTED_VARIANT}.{}.f32.hand_made", schedule.name());
        out.push(input.case(
            sized_id("exact_sum", variant, n, "contract", 0),
            SEGMENTED_VARIANT,
            expected_digest,
            move |gpu, c| run_on(gpu, forced(schedule), c),
        ));
    }
}

/// Bad offsets are rejected on the host with an error naming the primitive
/// and the variant, never run.
fn rejection_cases(out: &mut Vec<GpuCase>) {
    for (what, offsets) in [("decreasing", vec![0usize, 5, 4, 8]), ("past_n", vec![0usize, 4, 9]), ("none", vec![])] {
        let case_id =
            id("exact_sum", format!("{SEGMENTED_VARIANT}.rejects_{what}_offsets"), "8".into(), 8, "seed_x", 0);
        out.push(contract_case(
            case_id,
            format!("segmented_exact_sum_f32 [1, 2, 3, 4, 5, 6, 7, 8] offsets {offsets:?}"),
            "InvalidInput exact_sum/segmented_correctly_rounded".into(),
            move |gpu| {
                let x = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
                match gpu.segmented_exact_sum_f32(&x, &offsets) {
                    Err(GpuError::InvalidInput { primitive: "exact_sum", variant, .. })
                        if variant == SEGMENTED_VARIANT =>
                    {
                        Verdict::Pass
                    }
                    Err(e) => Verdict::fail("InvalidInput exact_sum/segmented_correctly_rounded", e, "bad offsets"),
                    Ok(v) => Verdict::fail("InvalidInput", format!("{v:?}"), "bad offsets"),
                }
            },
        ));
    }
}

/// The launch configurations of the determinism case: every schedule on
/// their natural grids, and forced grids that make blocks loop over many
/// segments.
pub(crate) fn determinism_launches() -> [ExactSegmentedLaunch; 8] {
    use ExactSegmentedSchedule::{BlockPerSegment, WarpPerSegment, WarpWindow};
    let on = |schedule, blocks| ExactSegmentedLaunch { schedule: Some(schedule), blocks };
    [
        ExactSegmentedLaunch::default(),
        on(WarpPerSegment, Some(1)),
        on(WarpPerSegment, Some(7)),
        on(WarpWindow, None),
        on(WarpWindow, Some(5)),
        on(BlockPerSegment, None),
        on(BlockPerSegment, Some(3)),
        on(BlockPerSegment, Some(1000)),
    ]
}

/// The same bits on every launch of [`determinism_launches`], then in
/// [`REPEATS`] runs of one plan.
fn determinism(gpu: &kernels::Gpu, c: &SegmentedSums<f32>) -> Verdict {
    for launch in determinism_launches() {
        if let Verdict::Fail(mut m) = run_on(gpu, launch, c) {
            m.what = format!("bitwise segment sum on {launch:?}");
            return Verdict::Fail(m);
        }
    }
    let repeat = || -> kernels::GpuResult<Option<(usize, Vec<f32>)>> {
        let n = c.x.len();
        let segments = c.offsets.len() - 1;
        let mut plan = ExactSegmentedSumPlan::<f32>::new(gpu, n, segments, ExactSegmentedLaunch::default())?;
        let offsets = gpu.upload_segment_offsets(&c.offsets, n)?;
        let input = gpu.upload(&c.x)?;
        let mut output = gpu.alloc_poisoned::<f32>(segments)?;
        for run in 0..REPEATS {
            gpu.poison(&mut output)?;
            plan.enqueue(&input, &offsets, &mut output)?;
            let got = gpu.download(&output)?;
            if !matches!(compare(&c.expected, &got), Verdict::Pass) {
                return Ok(Some((run, got)));
            }
        }
        Ok(None)
    };
    match repeat() {
        Ok(None) => Verdict::Pass,
        Ok(Some((run, got))) => match compare(&c.expected, &got) {
            Verdict::Fail(mut m) => {
                m.what = format!("bitwise segment sums of repeat {run}");
                Verdict::Fail(m)
            }
            other => other,
        },
        Err(e) => gpu_error(&e),
    }
}

#[cfg(test)]
#[path = "exact_segmented_sum_tests.rs"]
mod tests;

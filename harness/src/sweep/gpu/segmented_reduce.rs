//! GPU cases of the segmented reductions over half-open offsets: int64 sum
//! and max of int32, f32 sum (order-free error bound against the exact
//! value), f32 argmax (lowest index on ties); every schedule, segment shapes
//! from many tiny segments to a few huge ones, empty segments included; and
//! the rejection of bad offsets. The int64 sums and the argmaxes also run
//! with u64 offsets (`.o64` twins, the `_o64` kernels an input past 2^32
//! items takes, `segmented_reduce_streamed`), so both offset widths are
//! proved at every size the sweep and the sanitizers visit.

use super::pieces::{pieced, Part};
use super::streamed::STREAMED_FROM;
use super::{case_seed, contract_case, gpu_error, id, sized_id, GpuCase, Inputs, Keep, Pieced};
use crate::sweep::case::Verdict;
use crate::sweep::compare;
use crate::sweep::digest::Fingerprint;
use crate::sweep::float_check::{error_of, order_free_bound};
use crate::sweep::SweepPlan;
use kernels::segmented_reduce::{OffsetWidth, SegmentedArgMaxF32, SegmentedSumI32};
use kernels::{GpuError, SegmentedVariant};
use model::generators::{int_pieces, segment_offsets, uniform_f32_pieces, DataFamily};
use model::pieces::{SegmentsF32, SegmentsI32};
use rayon::prelude::*;

/// The segment lengths cycled by the "lengths" shape: empty, single, and
/// both sides of a warp.
const CYCLE: [usize; 6] = [0, 1, 31, 32, 33, 0];

/// Offsets over n items whose segment lengths repeat `cycle` (not all
/// zeros) as long as they fit, then one last segment of the rest.
pub(crate) fn cycled_offsets(n: usize, cycle: &[usize]) -> Vec<usize> {
    let mut offsets = vec![0];
    let mut at = 0;
    for len in cycle.iter().cycle() {
        if at + len > n {
            break;
        }
        at += len;
        offsets.push(at);
    }
    if at < n {
        offsets.push(n);
    }
    offsets
}

/// Offsets of a named shape over n items.
fn offsets_for(shape: &str, n: usize, seed: u64) -> Vec<usize> {
    match shape {
        "random" => segment_offsets(n, seed),
        "uniform1024" => (0..n.div_ceil(1024)).map(|s| s * 1024).chain([n]).collect(),
        "lengths" => cycled_offsets(n, &CYCLE),
        "one_segment" => vec![0, n],
        // Two empty segments around a third and the rest (the multi-block shape).
        _ => vec![0, 0, n / 3, n / 3, n],
    }
}

/// The operations of the segmented cases (the expected parts' names).
const OPS: [&str; 4] = ["sum_i32", "max_i32", "sum_f32", "argmax_f32"];
/// The operations whose cases also run with u64 offsets (`.o64`): the sum
/// reads every item of its segment, the argmax's index is relative to the
/// segment's start offset.
const O64_OPS: [&str; 2] = ["sum_i32", "argmax_f32"];

/// One segmented input (offsets, int32 and f32 values) and the model's
/// answers of every operation, made a piece at a time.
struct SegmentedCase {
    offsets: Vec<usize>,
    ints: Vec<i32>,
    floats: Vec<f32>,
    sums: Vec<i64>,
    maxima: Vec<i64>,
    argmax: Vec<(f32, u64)>,
}

/// The input of `shape` at (n, seed) with the model's answers, digested as it
/// is made: the offsets, then the ints (summed and maximised per segment),
/// then the floats (summed exactly and arg-maximised per segment), in the
/// order of the input's digest.
fn segmented_pieced(shape: &'static str, n: usize, seed: u64, keep: Keep) -> Result<Pieced<SegmentedCase>, String> {
    let offsets = offsets(shape, n, seed);
    let fingerprint = Fingerprint::new().u64s(offsets.iter().map(|&o| o as u64));
    let mut ints = Part::<i32>::after(fingerprint, keep, n);
    let mut int_segments = SegmentsI32::new(&offsets, n).map_err(|e| e.to_string())?;
    for piece in int_pieces(DataFamily::SmallInts, n, seed).map_err(|e| e.to_string())? {
        int_segments.piece(&piece);
        ints.push(&piece);
    }
    let (sums, maxima) = int_segments.finish();
    let (fingerprint, ints) = ints.end()?;
    let mut floats = Part::<f32>::after(fingerprint, keep, n);
    // The f32 answers only where a case compares with them (their exact sums cost most).
    let float_answers = visits("sum_f32", n) || visits("argmax_f32", n);
    let mut float_segments =
        if float_answers { Some(SegmentsF32::new(&offsets, n).map_err(|e| e.to_string())?) } else { None };
    for piece in uniform_f32_pieces(n, seed) {
        if let Some(segments) = &mut float_segments {
            segments.piece(&piece).map_err(|e| e.to_string())?;
        }
        floats.push(&piece);
    }
    let (exact, argmax) = match float_segments {
        Some(segments) => segments.finish().map_err(|e| e.to_string())?,
        None => (vec![], vec![]),
    };
    let (digest, floats) = floats.finish()?;
    let mut answers = vec![
        ("sum_i32", Fingerprint::new().i64s(&sums).finish()),
        ("max_i32", Fingerprint::new().i64s(&maxima).finish()),
    ];
    if float_answers {
        answers.extend([("sum_f32", Fingerprint::new().f64s(&exact).finish()), ("argmax_f32", argmax_digest(&argmax))]);
    }
    Ok(pieced(digest, answers, || Some(SegmentedCase { offsets, ints: ints?, floats: floats?, sums, maxima, argmax })))
}

fn argmax_digest(pairs: &[(f32, u64)]) -> String {
    Fingerprint::new().f32s(&pairs.iter().map(|p| p.0).collect::<Vec<_>>()).u64s(pairs.iter().map(|p| p.1)).finish()
}

/// The segment shapes visited at `n`; shape `s`'s seed is
/// `case_seed(plan.seed, "segmented_reduce", n, s)`.
pub(crate) fn shapes(plan: &SweepPlan, n: usize) -> Vec<&'static str> {
    if plan.one_family {
        vec!["random", "lengths"]
    } else if n >= 1 << 24 {
        vec!["uniform1024", "one_segment"]
    } else {
        vec!["random", "uniform1024", "lengths", "one_segment", "huge_with_empties"]
    }
}

/// The size of the case with one segment of exactly 512^2 + 1 items
/// between short ones, added to every plan but the sanitizer's.
pub(crate) const LONG_SEGMENT_N: usize = 97 + 262_145 + 5;

/// The sizes of `plan`'s segmented cases: its sizes and [`LONG_SEGMENT_N`].
pub(crate) fn sizes(plan: &SweepPlan) -> Vec<usize> {
    let mut sizes = plan.sizes.clone();
    if !plan.one_family {
        sizes.push(LONG_SEGMENT_N);
    }
    sizes
}

/// The name of `shape` at `n` (the long-segment size has its own).
pub(crate) fn shape_name(shape: &'static str, n: usize) -> &'static str {
    if n == LONG_SEGMENT_N {
        "len_512sq_plus_1"
    } else {
        shape
    }
}

/// The offsets of `shape` over n items (the long-segment size has its own).
pub(crate) fn offsets(shape: &str, n: usize, seed: u64) -> Vec<usize> {
    if n == LONG_SEGMENT_N {
        vec![0, 0, 1, 32, 64, 97, 97, 97 + 262_145]
    } else {
        offsets_for(shape, n, seed)
    }
}

/// Whether `op` is checked at `n` (the costliest references stop at 2^24).
pub(crate) fn visits(op: &str, n: usize) -> bool {
    !(n >= 1 << 24 && (op == "max_i32" || op == "argmax_f32" || (op == "sum_f32" && n > 1 << 24)))
}

/// Appends every segmented-reduction case of `plan`: on host-held inputs
/// below 2^32 items, streamed to the device past it (`segmented_reduce_streamed`).
pub fn cases(plan: &SweepPlan, out: &mut Vec<GpuCase>) {
    let inputs: Inputs<SegmentedCase> = Inputs::default();
    for n in sizes(plan) {
        if n >= STREAMED_FROM {
            super::segmented_reduce_streamed::cases(plan, n, out);
            continue;
        }
        for (s, shape) in shapes(plan, n).into_iter().enumerate() {
            let seed = case_seed(plan.seed, "segmented_reduce", n, s);
            let shape_name = shape_name(shape, n);
            let input =
                inputs.pieced(format!("{n}/{shape_name}/{seed}"), move |keep| segmented_pieced(shape, n, seed, keep));
            for op in OPS {
                if !visits(op, n) {
                    continue;
                }
                let widths: &[(OffsetWidth, &str)] = if O64_OPS.contains(&op) {
                    &[(OffsetWidth::U32, ""), (OffsetWidth::U64, ".o64")]
                } else {
                    &[(OffsetWidth::U32, "")]
                };
                for variant in SegmentedVariant::ALL {
                    for &(width, suffix) in widths {
                        let case_id = sized_id(
                            "segmented_reduce",
                            format!("{}.{op}.{shape_name}{suffix}", variant.name()),
                            n,
                            if op.ends_with("f32") { "uniform_float" } else { "small_ints" },
                            seed,
                        );
                        out.push(input.case(
                            case_id,
                            op,
                            |_| "the digest is made with the pieces".to_string(),
                            move |gpu, c| run_op(gpu, variant, op, width, c),
                        ));
                    }
                }
            }
        }
    }
    // Bad offsets are rejected with a clear error, never run.
    for (what, offsets) in [("decreasing", vec![0usize, 5, 4, 8]), ("past_n", vec![0usize, 4, 9])] {
        for variant in SegmentedVariant::ALL {
            let case_id = id(
                "segmented_reduce",
                format!("{}.rejects_{what}_offsets", variant.name()),
                "8".into(),
                8,
                "seed_x",
                0,
            );
            let offsets = offsets.clone();
            out.push(contract_case(
                case_id,
                format!("segmented_sum_i32 [3, -1, 4, 1, 5, -9, 2, 6] offsets {offsets:?}"),
                "InvalidInput".into(),
                move |gpu| {
                    let x = [3, -1, 4, 1, 5, -9, 2, 6];
                    match gpu.segmented_sum_i32(variant, &x, &offsets) {
                        Err(GpuError::InvalidInput { .. }) => Verdict::Pass,
                        Err(e) => Verdict::fail("InvalidInput", format!("{e}"), "bad offsets"),
                        Ok(v) => Verdict::fail("InvalidInput", format!("{v:?}"), "bad offsets"),
                    }
                },
            ));
        }
    }
}

/// Runs `op` with offsets of `width` on the device and compares with the model.
fn run_op(
    gpu: &kernels::Gpu,
    variant: SegmentedVariant,
    op: &str,
    width: OffsetWidth,
    case: &SegmentedCase,
) -> Verdict {
    let offsets = &case.offsets;
    match op {
        "sum_i32" => {
            let got = gpu.segmented_reduce_as::<SegmentedSumI32>(variant, &case.ints, offsets, width);
            both(Ok(case.sums.clone()), got, |e, g| compare::exact(&e, &g, "segment sums"))
        }
        "max_i32" => both(Ok(case.maxima.clone()), gpu.segmented_max_i32(variant, &case.ints, offsets), |e, g| {
            compare::exact(&e, &g, "segment maxima (empty = i64::MIN)")
        }),
        "sum_f32" => match gpu.segmented_sum_f32(variant, &case.floats, offsets) {
            Err(e) => gpu_error(&e),
            Ok(got) => {
                if got.len() + 1 != offsets.len() {
                    return Verdict::fail(offsets.len() - 1, got.len(), "segment count");
                }
                let bad = (0..got.len()).into_par_iter().find_first(|&s| {
                    let segment = &case.floats[offsets[s]..offsets[s + 1]];
                    match error_of(segment.iter().map(|&x| x as f64), got[s]) {
                        Ok((error, sum_abs)) => error.abs() > order_free_bound(segment.len(), sum_abs),
                        Err(_) => true,
                    }
                });
                match bad {
                    None => Verdict::Pass,
                    Some(s) => {
                        let segment = &case.floats[offsets[s]..offsets[s + 1]];
                        let (error, sum_abs) =
                            error_of(segment.iter().map(|&x| x as f64), got[s]).unwrap_or((f64::NAN, f64::NAN));
                        Verdict::fail_at(
                            s,
                            format!(
                                "|error| <= {:e} (order-free bound, len {})",
                                order_free_bound(segment.len(), sum_abs),
                                segment.len()
                            ),
                            format!("{} (error {error:e})", got[s]),
                            "segment f32 sum accuracy",
                        )
                    }
                }
            }
        },
        _ => {
            let got = gpu
                .segmented_reduce_as::<SegmentedArgMaxF32>(variant, &case.floats, offsets, width)
                .map(|pairs| pairs.into_iter().map(|p| p.to_pair()).collect::<Vec<_>>());
            both(Ok(case.argmax.clone()), got, |expected, got| {
                if expected.len() != got.len() {
                    return Verdict::fail(expected.len(), got.len(), "segment count");
                }
                // The model's index is global, the GPU's relative to the segment start.
                compare::each(
                    got.len(),
                    "segment argmax (value, index within segment; empty = (-inf, MAX))",
                    |s| {
                        let (value, index) = got[s];
                        if offsets[s] == offsets[s + 1] {
                            index == usize::MAX
                        } else {
                            value == expected[s].0 && offsets[s] + index == expected[s].1 as usize
                        }
                    },
                    |s| (format!("{:?} (global)", expected[s]), format!("{:?} (relative)", got[s])),
                )
            })
        }
    }
}

/// `compare` of the model's and the GPU's answers when both exist; else the model's error (a
/// harness bug: the catalogue generated the input) before the GPU's.
fn both<E, G>(
    model: Result<E, model::ModelError>,
    gpu: Result<G, GpuError>,
    compare: impl FnOnce(E, G) -> Verdict,
) -> Verdict {
    match (model, gpu) {
        (Ok(e), Ok(g)) => compare(e, g),
        (Err(e), _) => super::model_error(&e),
        (_, Err(e)) => gpu_error(&e),
    }
}

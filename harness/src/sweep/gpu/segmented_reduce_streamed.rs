//! The segmented int32 reductions past 2^32 items ([`STREAMED_FROM`]),
//! where u32 offsets wrap: the offsets go to the device as u64 and the
//! `_o64` kernels read them. One input of small integers is streamed to the
//! device as the model's generator makes it, summed and maximised per
//! segment by the model on the way ([`StreamedSegments`]), and run by every
//! schedule for the int64 sum and the int64 max. Its offsets
//! ([`large_offsets`]) put an empty segment first, a segment of 2^31 + 5
//! items across 2^31 (longer than any i32 length), then segments of
//! [`STRIDE`] items (odd, so their starts fall at every alignment), one of
//! them across 2^32, the rest up to n, and an empty segment at n (offsets
//! past 2^32 wrap in u32). The f32 operations stay below 2^32 (the argmax's
//! index within a segment is i32).

use super::streamed::{fits_beside_input, skip_or_fail, streamed_case, OnDevice, PartDigests, StreamedInts};
use super::streamed::{StreamedModel, STREAMED_FROM};
use super::{case_seed, model_error, sized_id, GpuCase};
use crate::sweep::case::Verdict;
use crate::sweep::compare;
use crate::sweep::digest::Fingerprint;
use crate::sweep::SweepPlan;
use kernels::segmented_reduce::{SegmentedMaxI32, SegmentedOp, SegmentedSumI32};
use kernels::{Gpu, GpuError, SegmentedPlan, SegmentedVariant};
use model::generators::DataFamily;
use model::pieces::SegmentsI32;
use std::borrow::Cow;
use std::sync::Arc;

/// Items of each segment after the long one: odd, so consecutive segments
/// start at every offset modulo 4 (the kernels' scalar heads and tails), and
/// about 2^20, so a warp's segment is a few MB.
pub(crate) const STRIDE: usize = (1 << 20) + 3;

/// Items of the long segment: past 2^31, so its length and the indices in
/// it pass i32.
const LONG: usize = (1 << 31) + 5;

/// Device bytes a plan needs beside its input at most: two int64 outputs a
/// segment, u64 offsets and the multi-block partials (8 bytes each, at most
/// 4096 a segment) of about 2^12 segments a 2^32 items: under 256 MB at
/// 2^33 items.
const PLAN_SCRATCH_BYTES: u64 = 256 << 20;

/// The offsets of the streamed case at `n` items (`n > 2^32`): see the
/// module doc.
pub(crate) fn large_offsets(n: usize) -> Vec<usize> {
    let mut offsets = vec![0, 0, LONG];
    let mut at = LONG;
    while at + STRIDE < n {
        at += STRIDE;
        offsets.push(at);
    }
    offsets.extend([n, n]);
    offsets
}

/// The model of the streamed input: the int64 sum and max of every segment
/// of [`large_offsets`], taken a piece at a time.
pub(crate) struct StreamedSegments {
    segments: Result<SegmentsI32, model::ModelError>,
}

impl StreamedModel for StreamedSegments {
    /// (sums, maxima), one per segment.
    type Answer = (Vec<i64>, Vec<i64>);
    type Device = i32;
    const PRIMITIVE: &'static str = "segmented_reduce";
    const DEVICE_TYPE: &'static str = "int32";

    fn to_device(items: &[i32]) -> Cow<'_, [i32]> {
        Cow::Borrowed(items)
    }

    fn new(n: usize) -> Self {
        StreamedSegments { segments: SegmentsI32::new(&large_offsets(n), n) }
    }

    fn piece(&mut self, items: &[i32]) -> Result<(), Verdict> {
        match &mut self.segments {
            Ok(segments) => {
                segments.piece(items);
                Ok(())
            }
            Err(e) => Err(model_error(e)),
        }
    }

    fn finish(self) -> Result<((Vec<i64>, Vec<i64>), PartDigests), Verdict> {
        let (sums, maxima) = self.segments.map_err(|e| model_error(&e))?.finish();
        let parts = vec![
            ("sum_i32".to_string(), Fingerprint::new().i64s(&sums).finish()),
            ("max_i32".to_string(), Fingerprint::new().i64s(&maxima).finish()),
        ];
        Ok(((sums, maxima), parts))
    }
}

/// One schedule of operator `O` on the streamed input already on the
/// device: its offsets uploaded (u64 past u32::MAX items), a fresh plan, a
/// poisoned output, compared segment by segment with the model's `want`.
fn run_on_device<O: SegmentedOp<Input = i32, Output = i64>>(
    gpu: &Gpu,
    variant: SegmentedVariant,
    input: &OnDevice<(Vec<i64>, Vec<i64>)>,
    want: &[i64],
) -> Verdict {
    let n = input.buffer.len();
    let run = || -> Result<Vec<i64>, GpuError> {
        fits_beside_input(gpu, O::PRIMITIVE, variant.name(), n, PLAN_SCRATCH_BYTES)?;
        let offsets = gpu.upload_segment_offsets(&large_offsets(n), n)?;
        let mut plan = SegmentedPlan::<O>::new(gpu, variant, n, offsets.segments())?;
        let mut output = gpu.alloc_poisoned::<i64>(offsets.segments())?;
        plan.enqueue(&input.buffer, &offsets, &mut output)?;
        gpu.download(&output)
    };
    match run() {
        Ok(got) => compare::exact(want, &got, "segment results (u64 offsets)"),
        Err(e) => skip_or_fail(&e),
    }
}

/// Appends the streamed cases at `n` (past [`STREAMED_FROM`]): the int64
/// sum and max, every schedule, on one input of small integers.
pub(crate) fn cases(plan: &SweepPlan, n: usize, out: &mut Vec<GpuCase>) {
    debug_assert!(n >= STREAMED_FROM);
    let family = DataFamily::SmallInts;
    let seed = case_seed(plan.seed, "segmented_reduce.streamed", n, 0);
    let recipe = Arc::new(StreamedInts::<StreamedSegments>::new(family, n, seed));
    for variant in SegmentedVariant::ALL {
        for op in ["sum_i32", "max_i32"] {
            let id =
                sized_id("segmented_reduce", format!("{}.{op}.large_offsets", variant.name()), n, &family.name(), seed);
            let beside = |_: &Gpu| Ok((PLAN_SCRATCH_BYTES, "the plan's offsets, outputs and partials".to_string()));
            let run = move |gpu: &Gpu, input: &OnDevice<(Vec<i64>, Vec<i64>)>| match op {
                "sum_i32" => run_on_device::<SegmentedSumI32>(gpu, variant, input, &input.answer.0),
                _ => run_on_device::<SegmentedMaxI32>(gpu, variant, input, &input.answer.1),
            };
            out.push(streamed_case(id, &recipe, op, beside, run));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::primitive::Primitive;
    use crate::sweep::gpu::streamed::large_offset_cases;
    use model::generators::ints;

    /// Past 2^32 the catalogue holds the streamed cases only: every schedule,
    /// both operators, made a piece at a time.
    #[test]
    fn large_offset_sizes_have_streamed_cases() {
        for (n, at) in large_offset_cases(Primitive::SegmentedReduce) {
            assert_eq!(at.len(), SegmentedVariant::ALL.len() * 2, "n={n}");
            assert!(at.iter().all(|c| c.pieced() && c.id.variant.ends_with(".large_offsets")), "n={n}");
        }
    }

    /// The offsets are valid for n, start with an empty segment, hold one
    /// segment longer than 2^31, one across 2^32 and an empty one past it,
    /// and need u64 on the device.
    #[test]
    fn large_offsets_straddle_both_boundaries() {
        for n in crate::sweep::sizes::LARGE_OFFSET_SIZES {
            let offsets = large_offsets(n);
            let summary = kernels::segmented_reduce::validate_segment_offsets(&offsets, n).expect("valid");
            assert_eq!((summary.first, summary.last), (0, n));
            assert_eq!(&offsets[..3], &[0, 0, LONG]);
            assert!(summary.longest > i32::MAX as usize, "a segment longer than i32");
            let segments: Vec<(usize, usize)> = offsets.windows(2).map(|w| (w[0], w[1])).collect();
            assert!(segments.iter().any(|&(a, b)| a < 1 << 31 && b > 1 << 31), "across 2^31");
            assert!(segments.iter().any(|&(a, b)| a < 1 << 32 && b > 1 << 32), "across 2^32");
            assert!(segments.iter().any(|&(a, b)| a == b && a > 1 << 32), "empty past 2^32");
            assert!(segments.len() < 1 << 14, "{} segments", segments.len());
            assert_eq!(kernels::segmented_reduce::OffsetWidth::for_len(n), kernels::segmented_reduce::OffsetWidth::U64);
        }
    }

    /// The model's answers on a streamed input are the whole input's, and
    /// its digests name both answer parts: the fold of [`StreamedSegments`]
    /// over the generator's pieces, on offsets of a short input.
    #[test]
    fn streamed_answers_are_the_whole_inputs() {
        let piece = model::generators::PIECE;
        let n = 2 * piece + 333;
        let offsets = vec![0, 0, 5, piece + 1, piece + 1, n];
        let mut fold = StreamedSegments { segments: SegmentsI32::new(&offsets, n) };
        let recipe = StreamedInts::<StreamedSegments>::new(DataFamily::SmallInts, n, 7);
        for (_, items) in recipe.pieces().unwrap_or_else(|v| panic!("{v:?}")) {
            fold.piece(&items).unwrap_or_else(|v| panic!("{v:?}"));
        }
        let ((sums, maxima), parts) = fold.finish().unwrap_or_else(|v| panic!("{v:?}"));
        let whole = ints(DataFamily::SmallInts, n, 7).unwrap();
        for s in 0..offsets.len() - 1 {
            let segment = &whole[offsets[s]..offsets[s + 1]];
            assert_eq!(sums[s], segment.iter().map(|&x| x as i64).sum::<i64>(), "segment {s}");
            assert_eq!(maxima[s], segment.iter().map(|&x| x as i64).max().unwrap_or(i64::MIN), "segment {s}");
        }
        let names: Vec<&str> = parts.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, ["sum_i32", "max_i32"]);
        // Offsets the model refuses fail every piece, naming the model.
        let mut bad = StreamedSegments { segments: SegmentsI32::new(&[0, 9], 4) };
        assert!(bad.piece(&[1, 2]).is_err());
    }
}

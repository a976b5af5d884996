//! The int32 histogram past 2^32 samples ([`STREAMED_FROM`]), where a u32
//! count can wrap: the plans count into u64 in windows of 2^31 samples
//! (`kernels::histogram::HistogramPlan::enqueue_wide`). Three inputs,
//! streamed to the device as the model's generator makes them and counted
//! by the model's piece-wise histogram on the way ([`StreamedCounts`]),
//! each run by every variant:
//! * one bin over the small integers: every sample lands in it, so its
//!   count is n itself, past u32::MAX (a wrapped count, or a window left
//!   out, is off by 2^32 or by a whole window);
//! * 19 bins over the small integers: every bin counted in every window;
//! * 4096 bins over the full int32 range: the 64-bit exact binner.

use super::streamed::{fits_beside_input, skip_or_fail, streamed_case, OnDevice, PartDigests, StreamedInts};
use super::streamed::{StreamedModel, STREAMED_FROM};
use super::{case_seed, model_error, sized_id, GpuCase};
use crate::sweep::case::Verdict;
use crate::sweep::compare;
use crate::sweep::digest::Fingerprint;
use crate::sweep::SweepPlan;
use kernels::{Gpu, GpuError, HistogramPlan, HistogramSpec, HistogramVariant};
use model::generators::DataFamily;
use model::pieces::histogram_piece_i32;
use std::borrow::Cow;
use std::marker::PhantomData;
use std::sync::Arc;

/// Device bytes a plan needs beside its input, at most: the u64 totals and
/// the u32 window counts of 4096 bins, under 1 MB.
const PLAN_SCRATCH_BYTES: u64 = 1 << 20;

/// (name, family, bins, lower, upper) of a streamed input's shape (the
/// names of the host-held int32 shapes with the same spec).
pub(crate) type StreamedShape = (&'static str, DataFamily, usize, i32, i32);

/// The bins of a streamed input's cases (one marker type a shape, so each
/// model knows its spec).
pub(crate) trait StreamedBins: Send + Sync + 'static {
    /// The shape: name, family, bins, lower, upper.
    const SHAPE: StreamedShape;
    /// The spec of [`StreamedBins::SHAPE`].
    fn spec() -> HistogramSpec<i32> {
        let (_, _, bins, lower, upper) = Self::SHAPE;
        HistogramSpec { bins: bins as u32, lower, upper }
    }
}

/// One bin over the small integers: its count is every sample.
pub(crate) struct OneBin;
impl StreamedBins for OneBin {
    const SHAPE: StreamedShape = ("bins1", DataFamily::SmallInts, 1, -9, 10);
}

/// 19 bins over the small integers.
pub(crate) struct Bins19;
impl StreamedBins for Bins19 {
    const SHAPE: StreamedShape = ("bins19", DataFamily::SmallInts, 19, -9, 10);
}

/// 4096 bins over the full int32 range (the 64-bit binner).
pub(crate) struct Bins4096FullRange;
impl StreamedBins for Bins4096FullRange {
    const SHAPE: StreamedShape = ("bins4096_full_range", DataFamily::FullRangeI32, 4096, i32::MIN, i32::MAX);
}

/// The model of a streamed input: its bin counts under `B`'s spec, added
/// up a piece at a time (counts of disjoint pieces add up to the whole's).
pub(crate) struct StreamedCounts<B> {
    counts: Vec<u64>,
    bins: PhantomData<fn() -> B>,
}

impl<B: StreamedBins> StreamedModel for StreamedCounts<B> {
    type Answer = Vec<u64>;
    type Device = i32;
    const PRIMITIVE: &'static str = "histogram";
    const DEVICE_TYPE: &'static str = "int32";

    fn to_device(items: &[i32]) -> Cow<'_, [i32]> {
        Cow::Borrowed(items)
    }

    fn new(_n: usize) -> Self {
        StreamedCounts { counts: vec![0; B::SHAPE.2], bins: PhantomData }
    }

    fn piece(&mut self, items: &[i32]) -> Result<(), Verdict> {
        histogram_piece_i32(items, &B::spec(), &mut self.counts).map_err(|e| model_error(&e))
    }

    fn finish(self) -> Result<(Vec<u64>, PartDigests), Verdict> {
        let digest = Fingerprint::new().u64s(self.counts.iter().copied()).finish();
        Ok((self.counts, vec![("counts".to_string(), digest)]))
    }
}

/// One variant's run on a streamed input already on the device: a fresh
/// plan, its totals poisoned, counted into u64 in windows of 2^31 and
/// compared bin by bin with the model's.
fn run_on_device<B: StreamedBins>(gpu: &Gpu, variant: HistogramVariant, input: &OnDevice<Vec<u64>>) -> Verdict {
    let n = input.buffer.len();
    let run = || -> Result<Vec<u64>, GpuError> {
        fits_beside_input(gpu, "histogram_even_i32", variant.name(), n, PLAN_SCRATCH_BYTES)?;
        let mut plan = HistogramPlan::<i32>::new(gpu, variant, n, B::spec())?;
        let mut totals = gpu.alloc_poisoned::<u64>(plan.bins())?;
        plan.enqueue_wide(&input.buffer, &mut totals)?;
        gpu.download(&totals)
    };
    match run() {
        Ok(got) => compare::exact(&input.answer, &got, "bin counts (u64, in windows of 2^31)"),
        Err(e) => skip_or_fail(&e),
    }
}

/// Every variant's case on the input of shape `B` (the `index`th streamed
/// shape, for its seed) at `n`.
fn cases_of<B: StreamedBins>(plan: &SweepPlan, n: usize, index: usize, out: &mut Vec<GpuCase>) {
    let (shape, family, ..) = B::SHAPE;
    let seed = case_seed(plan.seed, "histogram.streamed", n, index);
    let recipe = Arc::new(StreamedInts::<StreamedCounts<B>>::new(family, n, seed));
    for variant in HistogramVariant::ALL {
        let id = sized_id("histogram", format!("{}.i32.{shape}.windows", variant.name()), n, &family.name(), seed);
        let beside = |_: &Gpu| Ok((PLAN_SCRATCH_BYTES, "the plan's totals and window counts".to_string()));
        let run = move |gpu: &Gpu, input: &OnDevice<Vec<u64>>| run_on_device::<B>(gpu, variant, input);
        out.push(streamed_case(id, &recipe, "counts", beside, run));
    }
}

/// Appends the streamed int32 cases at `n` (past [`STREAMED_FROM`]).
pub(crate) fn cases(plan: &SweepPlan, n: usize, out: &mut Vec<GpuCase>) {
    debug_assert!(n >= STREAMED_FROM);
    cases_of::<OneBin>(plan, n, 0, out);
    cases_of::<Bins19>(plan, n, 1, out);
    cases_of::<Bins4096FullRange>(plan, n, 2, out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::primitive::Primitive;
    use crate::sweep::gpu::streamed::{large_offset_cases, stream_pieces};
    use model::generators::ints;

    /// Past 2^32 the catalogue holds the streamed cases only: three inputs,
    /// every variant, unique ids, made a piece at a time.
    #[test]
    fn large_offset_sizes_have_streamed_cases() {
        for (n, at) in large_offset_cases(Primitive::Histogram) {
            assert_eq!(at.len(), 3 * HistogramVariant::ALL.len(), "n={n}");
            assert!(at.iter().all(|c| c.pieced() && c.id.variant.ends_with(".windows")), "n={n}");
        }
    }

    /// The model's counts on a streamed input are the whole input's, at
    /// sizes around a piece, for every shape; the one-bin shape counts
    /// every sample.
    #[test]
    fn streamed_counts_are_the_whole_inputs() {
        fn check<B: StreamedBins>(n: usize) -> Vec<u64> {
            let recipe = StreamedInts::<StreamedCounts<B>>::new(B::SHAPE.1, n, 7);
            let mut written = Vec::new();
            let (counts, digests) = stream_pieces(&recipe, |_, p| {
                written.extend_from_slice(p);
                Ok(())
            })
            .unwrap_or_else(|v| panic!("{v:?}"));
            let whole = ints(B::SHAPE.1, n, 7).unwrap();
            assert_eq!(written, whole);
            assert_eq!(counts, model::histogram::histogram_even(&whole, &B::spec()).unwrap(), "{} n={n}", B::SHAPE.0);
            assert!(digests.contains_key("counts"));
            counts
        }
        let piece = model::generators::PIECE;
        for n in [1, 33, piece + 7, 2 * piece + 333] {
            assert_eq!(check::<OneBin>(n), vec![n as u64], "n={n}");
            assert_eq!(check::<Bins19>(n).iter().sum::<u64>(), n as u64, "n={n}");
            check::<Bins4096FullRange>(n);
        }
    }
}

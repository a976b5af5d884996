//! The whole-array arg reductions past 2^32 items ([`STREAMED_FROM`]), where
//! the plans run in windows of 2^30 and fold the windows' answers on the host
//! (`kernels::arg_reduce::arg_windows`): inputs of the integer families
//! ([`int_families`]) streamed to the device as int32, and as f32 through an
//! exact map ([`ArgDevice::from_item`]), folded by the model's piece-wise
//! arg max and arg min on the way. The full-range family puts each extremum
//! at a position drawn over the whole array, so most often past the first
//! window (a window's start left out of its index moves the answer); the
//! small-integer family repeats both extrema in every window, so the fold's
//! tie rule decides (a later window must not replace an equal value).

use super::arg_pairs::{extremum_name, pair_digest_f32, pair_digest_i32};
use super::streamed::{fits_beside_input, skip_or_fail, streamed_case, OnDevice, PartDigests, StreamedInts};
use super::streamed::{StreamedModel, STREAMED_FROM};
use super::{case_seed, int_families, model_error, sized_id, GpuCase};
use crate::sweep::case::Verdict;
use crate::sweep::SweepPlan;
use kernels::{ArgElement, ArgReducePlan, ArgReduceVariant, Extremum, Gpu, GpuError};
use model::arg_reduce::PieceArg;
use model::pieces::Extremes;
use std::borrow::Cow;
use std::sync::Arc;

/// Device bytes a plan needs beside its input, at most: its partials (one
/// 8-byte pair a block of a resident grid) and one 16-byte answer a window
/// (a thousand windows at 2^40 items): under 1 MB on any device we run.
const PLAN_SCRATCH_BYTES: u64 = 1 << 20;

/// An element the arg kernels read, made from a generator's int32 item.
pub(crate) trait ArgDevice: ArgElement + model::scalar::Scalar + Send + Sync {
    /// `int32` or `f32` (keys, case ids).
    const NAME: &'static str;
    /// The case-id suffix of the element: `i32` or `f32`.
    const ID: &'static str;
    /// The seed namespace of the element's cases.
    const SEED_NAME: &'static str;
    /// The element an item becomes on the device and in the model (the same map, exact).
    fn from_item(x: i32) -> Self;
    /// The digest of `(value, index)` answers.
    fn pair_digest(pairs: &[(Self, usize)]) -> String;
}

impl ArgDevice for i32 {
    const NAME: &'static str = "int32";
    const ID: &'static str = "i32";
    const SEED_NAME: &'static str = "arg_reduce";
    fn from_item(x: i32) -> i32 {
        x
    }
    fn pair_digest(pairs: &[(i32, usize)]) -> String {
        pair_digest_i32(pairs)
    }
}

impl ArgDevice for f32 {
    const NAME: &'static str = "f32";
    const ID: &'static str = "f32";
    const SEED_NAME: &'static str = "arg_reduce.f32";
    /// `x` itself where f32 holds it exactly (|x| < 2^24), else `x >> 8`
    /// (|x >> 8| <= 2^23): every value exact, so the device and the model
    /// see the same numbers; the shift makes runs of equal values out of
    /// full-range items (ties).
    fn from_item(x: i32) -> f32 {
        if x.unsigned_abs() < 1 << 24 {
            x as f32
        } else {
            (x >> 8) as f32
        }
    }
    fn pair_digest(pairs: &[(f32, usize)]) -> String {
        pair_digest_f32(pairs)
    }
}

/// The model of a streamed input: its arg max and arg min, folded a piece
/// at a time (the first index of the extreme value).
pub(crate) struct StreamedArgs<E: ArgDevice> {
    max: PieceArg<E>,
    min: PieceArg<E>,
}

impl<E: ArgDevice> StreamedModel for StreamedArgs<E> {
    type Answer = Extremes<E>;
    type Device = E;
    const PRIMITIVE: &'static str = "arg_reduce";
    const DEVICE_TYPE: &'static str = <E as ArgDevice>::NAME;

    fn to_device(items: &[i32]) -> Cow<'_, [E]> {
        Cow::Owned(items.iter().map(|&x| E::from_item(x)).collect())
    }

    fn new(_n: usize) -> Self {
        StreamedArgs { max: PieceArg::max(), min: PieceArg::min() }
    }

    fn piece(&mut self, items: &[i32]) -> Result<(), Verdict> {
        let values = Self::to_device(items);
        self.max.piece(&values).map_err(|e| model_error(&e))?;
        self.min.piece(&values).map_err(|e| model_error(&e))
    }

    fn finish(self) -> Result<(Extremes<E>, PartDigests), Verdict> {
        let max = self.max.finish().map_err(|e| model_error(&e))?;
        let min = self.min.finish().map_err(|e| model_error(&e))?;
        let parts = vec![
            (extremum_name(Extremum::Max).to_string(), E::pair_digest(&[max])),
            (extremum_name(Extremum::Min).to_string(), E::pair_digest(&[min])),
        ];
        Ok(((max, min), parts))
    }
}

/// One (variant, extremum) run on a streamed input already on the device:
/// a fresh plan (its answers poisoned), the `(value, index)` compared with
/// the model's.
fn run_on_device<E: ArgDevice>(
    gpu: &Gpu,
    variant: ArgReduceVariant,
    e: Extremum,
    input: &OnDevice<Extremes<E>, E>,
) -> Verdict {
    let n = input.buffer.len();
    let want = match e {
        Extremum::Max => input.answer.0,
        Extremum::Min => input.answer.1,
    };
    let run = || -> Result<(E, usize), GpuError> {
        fits_beside_input(gpu, extremum_name(e), variant.name(), n, PLAN_SCRATCH_BYTES)?;
        let mut plan = ArgReducePlan::<E>::new(gpu, variant, e, n)?;
        plan.enqueue(&input.buffer)?;
        plan.finish()
    };
    match run() {
        Ok(got) if got == want => Verdict::Pass,
        Ok(got) => Verdict::fail(format!("{want:?}"), format!("{got:?}"), "(value, index)"),
        Err(e) => skip_or_fail(&e),
    }
}

/// The whole-array cases of element `E` at a size past [`STREAMED_FROM`]:
/// every integer family ([`int_families`]), every variant and extremum,
/// each input streamed to the device once for its four cases.
fn cases_of<E: ArgDevice>(plan: &SweepPlan, n: usize, out: &mut Vec<GpuCase>) {
    for (f, family) in int_families(plan, n).into_iter().enumerate() {
        let seed = case_seed(plan.seed, E::SEED_NAME, n, f);
        let recipe = Arc::new(StreamedInts::<StreamedArgs<E>>::new(family, n, seed));
        for variant in ArgReduceVariant::ALL {
            for e in Extremum::ALL {
                let variant_id = format!("{}.{}.{}", variant.name(), extremum_name(e), E::ID);
                let id = sized_id("arg_reduce", variant_id, n, &family.name(), seed);
                let beside = |_: &Gpu| Ok((PLAN_SCRATCH_BYTES, "the plan's partials and answers".to_string()));
                let run = move |gpu: &Gpu, input: &OnDevice<Extremes<E>, E>| run_on_device(gpu, variant, e, input);
                out.push(streamed_case(id, &recipe, extremum_name(e), beside, run));
            }
        }
    }
}

/// Appends the whole-array cases at `n` (past [`STREAMED_FROM`]), int32 and f32.
pub(crate) fn cases(plan: &SweepPlan, n: usize, out: &mut Vec<GpuCase>) {
    debug_assert!(n >= STREAMED_FROM);
    cases_of::<i32>(plan, n, out);
    cases_of::<f32>(plan, n, out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::primitive::Primitive;
    use crate::sweep::gpu::streamed::{large_offset_cases, stream_pieces};
    use model::generators::{ints, DataFamily};

    /// Past 2^32 the catalogue holds the streamed whole-array cases: both
    /// families, both elements, every variant and extremum, unique ids, made
    /// a piece at a time, and no whole-array case on a host copy.
    #[test]
    fn large_offset_sizes_have_streamed_cases() {
        for (n, at) in large_offset_cases(Primitive::ArgReduce) {
            assert_eq!(at.len(), 2 * 2 * 2 * 2, "n={n}");
            assert!(at.iter().all(|c| c.pieced()));
            for id in ["i32", "f32"] {
                let of: Vec<_> = at.iter().filter(|c| c.id.variant.ends_with(id)).collect();
                assert_eq!(of.len(), 8, "n={n} {id}");
            }
        }
    }

    /// The model's answers on a streamed input are the direct definitions'
    /// on the whole mapped input, at sizes around a piece, for both elements.
    #[test]
    fn streamed_answers_are_the_whole_inputs() {
        fn check<E: ArgDevice + PartialEq + std::fmt::Debug>(family: DataFamily, n: usize) {
            let recipe = StreamedInts::<StreamedArgs<E>>::new(family, n, 7);
            let mut written: Vec<E> = Vec::new();
            let (answer, digests) = stream_pieces(&recipe, |_, p| {
                written.extend(StreamedArgs::<E>::to_device(p).iter().copied());
                Ok(())
            })
            .unwrap_or_else(|v| panic!("{v:?}"));
            let whole: Vec<E> = ints(family, n, 7).unwrap().into_iter().map(E::from_item).collect();
            assert_eq!(written, whole);
            assert_eq!(answer.0, model::arg_reduce::argmax(&whole).unwrap(), "{family:?} n={n}");
            assert_eq!(answer.1, model::arg_reduce::argmin(&whole).unwrap(), "{family:?} n={n}");
            assert!(digests.contains_key("argmax") && digests.contains_key("argmin"));
        }
        let piece = model::generators::PIECE;
        for family in [DataFamily::SmallInts, DataFamily::FullRangeI32] {
            for n in [1, 33, piece + 7, 2 * piece + 333] {
                check::<i32>(family, n);
                check::<f32>(family, n);
            }
        }
    }

    /// The f32 map is exact and keeps small integers as they are.
    #[test]
    fn the_f32_map_is_exact() {
        for x in [0, 9, -9, (1 << 24) - 1, -(1 << 24) + 1, 1 << 24, i32::MAX, i32::MIN] {
            let v = f32::from_item(x);
            assert_eq!(v as i64 as f32, v, "{x}: an integer");
            let want = if x.unsigned_abs() < 1 << 24 { x as i64 } else { (x >> 8) as i64 };
            assert_eq!(v as i64, want, "{x}");
        }
    }
}

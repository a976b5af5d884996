//! GPU cases of the integer reduce (int32 -> int64) and of the affine-map
//! reduce (the non-commutative operator, proving each schedule keeps order).
//!
//! Past 2^32 items ([`STREAMED_FROM`], where a 32-bit count wraps) an int32 input is made a
//! piece at a time and written to the device as it is made, digested and
//! summed by the model on the way, so the host holds one piece (2^20 items,
//! 4 MB) whatever n; the device holds the input (4 bytes an item) and the
//! plan's scratch (at most 8 bytes per 512 items). A case whose buffers do
//! not fit the free device memory is skipped for memory, with the numbers
//! ([`kernels::GpuError::DeviceMemory`]), and counted as skipped.

use super::pieces::{pieced, Part};
use super::streamed::{
    fits_beside_input, skip_or_fail, streamed_case, OnDevice, PartDigests, StreamedInts, StreamedModel,
};
use super::GpuCase;
use super::HARDWARE_MODEL_MAX;
use super::{affine_input, affine_words, gpu_error, int_family_inputs, model_error, sized_id, Inputs, Keep, Pieced};
use super::{case_seed, int_families};
use crate::sweep::case::{CaseId, Verdict};
use crate::sweep::digest::Fingerprint;
use crate::sweep::SweepPlan;
use kernels::{AffineMap, Gpu, GpuError, ReducePlan, ReduceVariant};
use model::generators::{affine_map_pieces, int_pieces, DataFamily};
use model::hardware::block_reduce::BlockLayout;
use model::hardware::multipass_reduce::multipass_reduce;
use model::operator::{Affine, SumI64};
use model::pieces::SumI32;
use model::reduce::PieceReduce;
use std::sync::Arc;

/// An int32 input and its exact sum.
pub(crate) struct IntInput {
    pub(crate) x: Vec<i32>,
    pub(crate) sum: i64,
}

/// The generated input of one (size, family) with the model's sum of it.
pub(crate) fn int_input(family: DataFamily, n: usize, seed: u64) -> Result<IntInput, String> {
    int_pieced(family, n, seed, Keep::Data)?.data.ok_or_else(|| "no data kept".to_string())
}

/// [`int_input`] a piece at a time: the input digested and summed as it is made.
fn int_pieced(family: DataFamily, n: usize, seed: u64, keep: Keep) -> Result<Pieced<IntInput>, String> {
    let mut input = Part::<i32>::new(keep, n);
    let mut sum = SumI32::new(n);
    for piece in int_pieces(family, n, seed).map_err(|e| e.to_string())? {
        sum.piece(&piece).map_err(|e| e.to_string())?;
        input.push(&piece);
    }
    let (digest, x) = input.finish()?;
    let sum = sum.value();
    Ok(pieced(digest, vec![("sum", sum_digest(sum))], || Some(IntInput { x: x?, sum })))
}

fn sum_digest(sum: i64) -> String {
    Fingerprint::new().i64s(&[sum]).finish()
}

/// Affine maps and their left-to-right composition.
struct AffineInput {
    x: Vec<AffineMap>,
    composed: AffineMap,
}

/// The digest of affine maps (a, b pairs in order).
pub fn affine_digest(maps: &[AffineMap]) -> String {
    Fingerprint::new().u64s(affine_words(maps).into_iter()).finish()
}

/// The affine maps of (n, seed) and their composition, a piece at a time.
fn affine_case(n: usize, seed: u64, keep: Keep) -> Result<Pieced<AffineInput>, String> {
    let mut words = Part::<u64>::new(Keep::DigestsOnly, 2 * n);
    let mut maps = (keep == Keep::Data).then(|| Vec::with_capacity(n));
    let mut composed = PieceReduce::new(&Affine);
    for piece in affine_map_pieces(n, seed) {
        composed.piece(&piece).map_err(|e| e.to_string())?;
        words.push(&affine_words(&piece));
        if let Some(maps) = &mut maps {
            maps.extend_from_slice(&piece);
        }
    }
    let composed = *composed.value();
    let (digest, _) = words.finish()?;
    Ok(pieced(digest, vec![("composed", affine_digest(&[composed]))], || Some(AffineInput { x: maps?, composed })))
}

pub use super::streamed::STREAMED_FROM;

/// Appends every reduce case of `plan`.
pub fn cases(plan: &SweepPlan, out: &mut Vec<GpuCase>) {
    let int_inputs: Inputs<IntInput> = Inputs::default();
    let affine_inputs: Inputs<AffineInput> = Inputs::default();
    for &n in &plan.sizes {
        if n >= STREAMED_FROM {
            streamed_cases(plan, n, out);
            continue;
        }
        for (family_name, seed, input) in int_family_inputs(plan, "reduce", n, &int_inputs, int_pieced) {
            for variant in ReduceVariant::ALL.into_iter().filter(|v| n <= v.max_len()) {
                let case_id = sized_id("reduce", format!("{}.i32", variant.name()), n, &family_name, seed);
                out.push(input.case(
                    case_id,
                    "sum",
                    |p| sum_digest(p.sum),
                    move |gpu, p| {
                        let got = match gpu.reduce_i32(variant, &p.x) {
                            Ok(v) => v,
                            Err(e) => return gpu_error(&e),
                        };
                        if got != p.sum {
                            return Verdict::fail(p.sum, got, "sum");
                        }
                        // The hardware-scope model of the multi-pass tree must agree too.
                        if variant == ReduceVariant::Multipass && n <= HARDWARE_MODEL_MAX {
                            let wide: Vec<i64> = p.x.iter().map(|&v| v as i64).collect();
                            match multipass_reduce(&SumI64, &wide, BlockLayout::Adjacent) {
                                Ok((tree, _)) if tree == got => {}
                                Ok((tree, _)) => return Verdict::fail(tree, got, "hardware-scope multipass model"),
                                Err(e) => return model_error(&e),
                            }
                        }
                        Verdict::Pass
                    },
                ));
            }
        }
        // The non-commutative operator through every schedule.
        let Some((seed, input)) = affine_input(plan, "reduce.affine", n, &affine_inputs, affine_case) else {
            continue;
        };
        for variant in ReduceVariant::ALL.into_iter().filter(|v| n <= v.max_len()) {
            let case_id =
                sized_id("reduce", format!("{}.affine", variant.name()), n, &DataFamily::AffineMaps.name(), seed);
            out.push(input.case(
                case_id,
                "composed",
                |p| affine_digest(&[p.composed]),
                move |gpu, p| match gpu.reduce_affine(variant, &p.x) {
                    Ok(got) if got == p.composed => Verdict::Pass,
                    Ok(got) => Verdict::fail(format!("{:?}", p.composed), format!("{got:?}"), "composed map"),
                    Err(e) => gpu_error(&e),
                },
            ));
        }
    }
}

/// The variants that run at `n` (every one but the serial baseline past its limit).
fn variants_at(n: usize) -> impl Iterator<Item = ReduceVariant> {
    ReduceVariant::ALL.into_iter().filter(move |v| n <= v.max_len())
}

/// The reduce's model of a streamed input: the sum, and its digest.
pub(crate) struct StreamedSum(SumI32);

impl StreamedModel for StreamedSum {
    type Answer = i64;
    const PRIMITIVE: &'static str = "reduce";
    type Device = i32;
    const DEVICE_TYPE: &'static str = "int32";

    fn to_device(items: &[i32]) -> std::borrow::Cow<'_, [i32]> {
        std::borrow::Cow::Borrowed(items)
    }

    fn new(n: usize) -> Self {
        StreamedSum(SumI32::new(n))
    }

    fn piece(&mut self, items: &[i32]) -> Result<(), Verdict> {
        self.0.piece(items).map_err(|e| model_error(&e))
    }

    fn finish(self) -> Result<(i64, PartDigests), Verdict> {
        let sum = self.0.value();
        Ok((sum, vec![("sum".to_string(), sum_digest(sum))]))
    }
}

/// Device bytes of every variant's output and scratch at `n`, the largest
/// (the multipass's first two levels of partials), in words.
fn largest_scratch(gpu: &Gpu, n: usize) -> Result<(u64, String), GpuError> {
    let mut most = 0;
    for variant in variants_at(n) {
        most = most.max(ReducePlan::<i32>::device_bytes(gpu, variant, n)?.1);
    }
    Ok((most, "the largest plan's output and scratch".into()))
}

/// One variant's run on a streamed input already on the device: a fresh
/// plan, a poisoned output, the sum compared with the model's.
fn run_on_device(gpu: &Gpu, variant: ReduceVariant, input: &OnDevice<i64>) -> Verdict {
    let n = input.buffer.len();
    let run = || -> Result<i64, GpuError> {
        let (_, other) = ReducePlan::<i32>::device_bytes(gpu, variant, n)?;
        fits_beside_input(gpu, "reduce", variant.name(), n, other)?;
        let mut output = gpu.alloc_poisoned::<i64>(1)?;
        let mut plan = ReducePlan::<i32>::new(gpu, variant, n)?;
        plan.enqueue(&input.buffer, &mut output)?;
        gpu.synchronize()?;
        plan.check_fault()?;
        Ok(gpu.download(&output)?[0])
    };
    match run() {
        Ok(got) if got == input.answer => Verdict::Pass,
        Ok(got) => Verdict::fail(input.answer, got, "sum"),
        Err(e) => skip_or_fail(&e),
    }
}

/// The int32 cases at a size past [`STREAMED_FROM`]: the families of
/// [`int_families`] (the seeds of [`int_family_inputs`]), every variant
/// but the serial baseline, each input streamed to the device once for all
/// of its variants ([`super::streamed`]). No affine-map case runs here
/// (`affine_cases_at`).
fn streamed_cases(plan: &SweepPlan, n: usize, out: &mut Vec<GpuCase>) {
    for (f, family) in int_families(plan, n).into_iter().enumerate() {
        let seed = case_seed(plan.seed, "reduce", n, f);
        let recipe = Arc::new(StreamedInts::<StreamedSum>::new(family, n, seed));
        for variant in variants_at(n) {
            let id: CaseId = sized_id("reduce", format!("{}.i32", variant.name()), n, &family.name(), seed);
            let beside = move |gpu: &Gpu| largest_scratch(gpu, n);
            out.push(streamed_case(id, &recipe, "sum", beside, move |gpu, input| run_on_device(gpu, variant, input)));
        }
    }
}

#[cfg(test)]
mod streamed_tests {
    use super::*;
    use crate::registry::primitive::Primitive;
    use crate::sweep::gpu::streamed::stream_pieces;
    use crate::sweep::gpu::InputSource;
    use std::collections::BTreeMap;

    fn plan(sizes: Vec<usize>) -> SweepPlan {
        crate::sweep::gpu::streamed::test_plan(Primitive::Reduce, sizes)
    }

    /// Past 2^32 the catalogue holds the streamed cases: both large-size
    /// families, every variant but the serial baseline, no affine case,
    /// each input made a piece at a time, with the seeds of the whole path.
    #[test]
    fn large_offset_sizes_have_streamed_cases() {
        let sizes = crate::sweep::sizes::LARGE_OFFSET_SIZES.to_vec();
        let cases = super::super::catalogue(&plan(sizes.clone()));
        let mut ids: Vec<String> = cases.iter().map(|c| c.id.marker()).collect();
        ids.dedup();
        assert_eq!(ids.len(), cases.len(), "unique ids");
        for n in sizes {
            let at: Vec<&GpuCase> = cases.iter().filter(|c| c.id.n == n).collect();
            assert_eq!(at.len(), 2 * 3, "n={n}: {ids:?}");
            for case in &at {
                assert!(case.pieced(), "{}", case.id.marker());
                assert!(case.id.variant.ends_with(".i32") && !case.id.variant.starts_with("serial"));
                assert_eq!(case.id.size, n.to_string());
            }
            for (f, family) in [DataFamily::SmallInts, DataFamily::FullRangeI32].into_iter().enumerate() {
                let seed = case_seed(0x5eed, "reduce", n, f);
                assert_eq!(at.iter().filter(|c| c.id.family == family.name() && c.id.seed == seed).count(), 3);
            }
            // No digest before a case ran (the gate digests the pieces itself).
            assert!(at[0].reference(&at[0].prepare()).is_err());
        }
        // Below 2^32 the whole path is unchanged.
        let whole = super::super::catalogue(&plan(vec![u32::MAX as usize - 6]));
        assert!(whole.iter().all(|c| c.id.n == u32::MAX as usize - 6));
        assert!(whole.iter().any(|c| c.id.variant == "single_pass.i32"));
    }

    /// The streamed path writes the very values of the whole input, in
    /// order, and makes the same digests and sum, at sizes around a piece.
    #[test]
    fn streamed_pieces_are_the_whole_input() {
        let piece = model::generators::PIECE;
        for family in [DataFamily::SmallInts, DataFamily::FullRangeI32] {
            for n in [1, 33, piece - 1, piece + 7, 2 * piece + 333] {
                let recipe = StreamedInts::<StreamedSum>::new(family, n, 99);
                let mut written = vec![0i32; n];
                let mut next = 0;
                let (sum, digests) = stream_pieces(&recipe, |at, p| {
                    assert_eq!(at, next, "pieces in order");
                    written[at..at + p.len()].copy_from_slice(p);
                    next = at + p.len();
                    Ok(())
                })
                .unwrap_or_else(|v| panic!("{v:?}"));
                assert_eq!(next, n);
                let whole = int_input(family, n, 99).unwrap();
                assert_eq!(written, whole.x, "{family:?} n={n}");
                assert_eq!(sum, whole.sum);
                let pieced = int_pieced(family, n, 99, Keep::DigestsOnly).unwrap();
                assert_eq!(digests, pieced.digests.into_iter().collect::<BTreeMap<_, _>>());
                assert_eq!(recipe.digests_only().unwrap().unwrap(), digests);
            }
        }
    }
}

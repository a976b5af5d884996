//! GPU cases of the integer reduce (int32 -> int64) and of the affine-map
//! reduce (the non-commutative operator, proving each schedule keeps order).
//!
//! Past 2^32 items ([`STREAMED_FROM`], issue 36) an int32 input is made a
//! piece at a time and written to the device as it is made, digested and
//! summed by the model on the way, so the host holds one piece (2^20 items,
//! 4 MB) whatever n; the device holds the input (4 bytes an item) and the
//! plan's scratch (at most 8 bytes per 512 items). A case whose buffers do
//! not fit the free device memory is skipped for memory, with the numbers
//! ([`kernels::GpuError::DeviceMemory`]), and counted as skipped.

use super::pieces::{pieced, Part};
use super::GpuCase;
use super::HARDWARE_MODEL_MAX;
use super::{affine_input, affine_words, gpu_error, int_family_inputs, model_error, sized_id, Inputs, Keep, Pieced};
use super::{case_seed, int_families, InputSource, PreparedInput, INPUT_PART};
use crate::sweep::case::{CaseId, Verdict};
use crate::sweep::digest::{CaseDigest, Fingerprint};
use crate::sweep::SweepPlan;
use kernels::cudarc::driver::CudaSlice;
use kernels::{AffineMap, Gpu, GpuError, ReducePlan, ReduceVariant};
use model::generators::{affine_map_pieces, int_pieces, DataFamily};
use model::hardware::block_reduce::BlockLayout;
use model::hardware::multipass_reduce::multipass_reduce;
use model::operator::{Affine, SumI64};
use model::pieces::SumI32;
use model::reduce::PieceReduce;
use std::collections::BTreeMap;
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

/// Sizes from which the int32 cases stream their input to the device
/// (n > u32::MAX: where a 32-bit count, offset or tile base would wrap).
pub const STREAMED_FROM: usize = (u32::MAX as usize) + 1;

// Every large-offset size streams.
const _: () = assert!(crate::sweep::sizes::LARGE_OFFSET_SIZES[0] >= STREAMED_FROM);

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

/// The recipe of a streamed int32 input: made a piece at a time from the
/// model's generators ([`int_pieced`]'s values, digests and sum).
#[derive(Debug, Clone)]
struct StreamedInts {
    key: String,
    family: model::generators::DataFamily,
    n: usize,
    seed: u64,
}

impl InputSource for StreamedInts {
    fn key(&self) -> &str {
        &self.key
    }

    /// Nothing is made here: the first case writes the input to the device
    /// ([`on_device`]).
    fn prepare(&self) -> PreparedInput {
        PreparedInput::holding(self.clone())
    }

    fn digests_only(&self) -> Option<Result<BTreeMap<String, String>, String>> {
        Some(int_pieced(self.family, self.n, self.seed, Keep::DigestsOnly).map(|p| p.digests.into_iter().collect()))
    }

    fn pieced(&self) -> bool {
        true
    }
}

/// A streamed input on the device, with what the model made on the way.
struct OnDevice {
    buffer: CudaSlice<i32>,
    sum: i64,
    digests: BTreeMap<String, String>,
}

/// What the first case of a streamed input leaves for the others.
enum Upload {
    Done(OnDevice),
    /// Skipped, and why (device memory, with the numbers).
    Skipped(String),
    /// The generator, the model or a copy failed: every case's verdict.
    Failed(Verdict),
}

/// The part name of a streamed input's upload.
const UPLOAD_PART: &str = "device:reduce.i32";

/// Device bytes of every variant's scratch at `n`, the largest (the
/// multipass's first two levels of partials).
fn largest_scratch(gpu: &Gpu, n: usize) -> Result<u64, GpuError> {
    let mut most = 0;
    for variant in variants_at(n) {
        most = most.max(ReducePlan::<i32>::device_bytes(gpu, variant, n)?.1);
    }
    Ok(most)
}

/// A device-memory refusal as a skip; any other error as the case's failure.
fn skip_or_fail(e: &GpuError) -> Verdict {
    match e {
        GpuError::DeviceMemory { .. } => Verdict::Skipped { reason: format!("skipped for device memory: {e}") },
        _ => gpu_error(e),
    }
}

/// Writes the input of `recipe` to a new device buffer a piece at a time,
/// digesting it and summing it with the model as it goes (the same digests
/// as [`int_pieced`]'s); skipped when the input and the largest plan's
/// scratch do not fit the free device memory.
fn on_device(gpu: &Gpu, recipe: &StreamedInts) -> Upload {
    let n = recipe.n;
    let scratch = match largest_scratch(gpu, n) {
        Ok(bytes) => bytes,
        Err(e) => return Upload::Failed(gpu_error(&e)),
    };
    let input_bytes = 4 * n as u64;
    let what = || {
        format!(
            "int32 input {}, the largest plan's output and scratch {}",
            kernels::error::gigabytes(input_bytes),
            kernels::error::gigabytes(scratch)
        )
    };
    if let Err(e) = gpu.check_device_memory("reduce", "streamed input", n, input_bytes + scratch, what) {
        return match skip_or_fail(&e) {
            Verdict::Skipped { reason } => Upload::Skipped(reason),
            failed => Upload::Failed(failed),
        };
    }
    let mut buffer = match gpu.alloc_uninit::<i32>(n) {
        Ok(b) => b,
        Err(e) => return Upload::Failed(gpu_error(&e)),
    };
    let written = stream_pieces(recipe, |at, piece| {
        let mut view = buffer.slice_mut(at..at + piece.len());
        // From pageable memory: the piece is staged before this returns, so it may go.
        gpu.stream().memcpy_htod(piece, &mut view).map_err(|source| {
            let context = format!("reduce n={n}: writing items {at}..{}", at + piece.len());
            gpu_error(&GpuError::Driver { context, source })
        })
    });
    match written {
        Ok((sum, digests)) => Upload::Done(OnDevice { buffer, sum, digests }),
        Err(verdict) => Upload::Failed(verdict),
    }
}

/// Makes the input of `recipe` a piece at a time, hands each piece to
/// `write(first item, piece)`, and returns the model's sum with the digests
/// of the input and the sum, as [`int_pieced`] makes them, holding one
/// piece at a time.
fn stream_pieces(
    recipe: &StreamedInts,
    mut write: impl FnMut(usize, &[i32]) -> Result<(), Verdict>,
) -> Result<(i64, BTreeMap<String, String>), Verdict> {
    let mut input = Part::<i32>::new(Keep::DigestsOnly, recipe.n);
    let mut sum = SumI32::new(recipe.n);
    let pieces = int_pieces(recipe.family, recipe.n, recipe.seed)
        .map_err(|e| Verdict::fail("an input", e.to_string(), "generator"))?;
    let mut at = 0;
    for piece in pieces {
        sum.piece(&piece).map_err(|e| model_error(&e))?;
        input.push(&piece);
        write(at, &piece)?;
        at += piece.len();
    }
    let (input_digest, _) = input.finish().map_err(|e| Verdict::fail("an input", e, "generator"))?;
    let sum = sum.value();
    Ok((sum, [(INPUT_PART.to_string(), input_digest), ("sum".to_string(), sum_digest(sum))].into()))
}

/// One variant's run on a streamed input already on the device: a fresh
/// plan, a poisoned output, the sum compared with the model's.
fn run_on_device(gpu: &Gpu, variant: ReduceVariant, input: &OnDevice) -> Verdict {
    let n = input.buffer.len();
    let run = || -> Result<i64, GpuError> {
        let (_, other) = ReducePlan::<i32>::device_bytes(gpu, variant, n)?;
        gpu.check_device_memory("reduce", variant.name(), n, other, || {
            format!("output and scratch {} beside the input on the device", kernels::error::gigabytes(other))
        })?;
        let mut output = gpu.alloc_poisoned::<i64>(1)?;
        let mut plan = ReducePlan::<i32>::new(gpu, variant, n)?;
        plan.enqueue(&input.buffer, &mut output)?;
        gpu.synchronize()?;
        plan.check_fault()?;
        Ok(gpu.download(&output)?[0])
    };
    match run() {
        Ok(got) if got == input.sum => Verdict::Pass,
        Ok(got) => Verdict::fail(input.sum, got, "sum"),
        Err(e) => skip_or_fail(&e),
    }
}

/// The int32 cases at a size past [`STREAMED_FROM`]: the families of
/// [`int_families`] (the seeds of [`int_family_inputs`]), every variant
/// but the serial baseline, each input streamed to the device once for all
/// of its variants. No affine-map case runs here (`affine_cases_at`).
fn streamed_cases(plan: &SweepPlan, n: usize, out: &mut Vec<GpuCase>) {
    for (f, family) in int_families(plan, n).into_iter().enumerate() {
        let seed = case_seed(plan.seed, "reduce", n, f);
        let name = family.name();
        let recipe = Arc::new(StreamedInts { key: format!("reduce.i32.streamed:{n}/{name}/{seed}"), family, n, seed });
        for variant in variants_at(n) {
            let id: CaseId = sized_id("reduce", format!("{}.i32", variant.name()), n, &name, seed);
            let upload = |prepared: &PreparedInput| prepared.shared_if_made::<Upload>(UPLOAD_PART);
            out.push(GpuCase {
                id,
                input: recipe.clone(),
                expected_part: "sum".into(),
                // The digests made while the input was written (a run's); none for a case that did not
                // run (the receipt gate digests the pieces itself, `digests_only`).
                reference: Box::new(move |prepared| match upload(prepared).as_deref() {
                    Some(Upload::Done(input)) => Ok(CaseDigest {
                        input_digest: input.digests[INPUT_PART].clone(),
                        expected_digest: input.digests["sum"].clone(),
                    }),
                    Some(Upload::Skipped(reason)) => Err(reason.clone()),
                    Some(Upload::Failed(_)) => Err("the input could not be made".into()),
                    None => Err("the input is made when a case runs".into()),
                }),
                run: Box::new(move |gpu, prepared| {
                    let recipe = match prepared.held::<StreamedInts>() {
                        Ok(r) => r.clone(),
                        Err(e) => return Verdict::fail("an input", e, "generator"),
                    };
                    match &*prepared.shared(UPLOAD_PART, || on_device(gpu, &recipe)) {
                        Upload::Done(input) => run_on_device(gpu, variant, input),
                        Upload::Skipped(reason) => Verdict::Skipped { reason: reason.clone() },
                        Upload::Failed(verdict) => verdict.clone(),
                    }
                }),
            });
        }
    }
}

#[cfg(test)]
mod streamed_tests {
    use super::*;
    use crate::registry::primitive::Primitive;

    fn plan(sizes: Vec<usize>) -> SweepPlan {
        SweepPlan {
            seed: 0x5eed,
            sizes,
            quick: false,
            primitives: vec![Primitive::Reduce],
            variants: vec![],
            one_family: false,
        }
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
                let recipe = StreamedInts { key: String::new(), family, n, seed: 99 };
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

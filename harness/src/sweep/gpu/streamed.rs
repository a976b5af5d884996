//! Integer inputs past 2^32 items ([`STREAMED_FROM`], where a 32-bit count wraps), shared by
//! the reduce, the scan and the float sums: made a piece at a time by the model's generator
//! and written to the device as they are made (as int32, or widened exactly to the
//! primitive's element, [`StreamedModel::Device`]), digested and folded by the
//! primitive's model on the way ([`StreamedModel`]), so the host holds one
//! piece (2^20 items, 4 MB) whatever n. The first case of an input writes it
//! to the device once for all the cases of that input; a case whose buffers
//! do not fit the free device memory is skipped for memory, with the numbers
//! ([`kernels::GpuError::DeviceMemory`]), and counted as skipped.

use super::pieces::Part;
use super::{gpu_error, GpuCase, InputSource, Keep, PreparedInput, INPUT_PART};
use crate::sweep::case::{CaseId, Verdict};
use crate::sweep::digest::CaseDigest;
use kernels::cudarc::driver::{CudaSlice, DeviceRepr};
use kernels::{Gpu, GpuError};
use model::generators::{int_pieces, DataFamily};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::sync::Arc;

/// Sizes from which the int32 cases stream their input to the device
/// (n > u32::MAX: where a 32-bit count, offset or tile base would wrap).
pub const STREAMED_FROM: usize = (u32::MAX as usize) + 1;

// Every large-offset size streams.
const _: () = assert!(crate::sweep::sizes::LARGE_OFFSET_SIZES[0] >= STREAMED_FROM);

/// (part name, digest) pairs of a model's answer parts.
pub(crate) type PartDigests = Vec<(String, String)>;

/// What a primitive's model makes of a streamed input on the way to the
/// device: the answer its cases compare with (the reduce's sum; nothing for
/// the scans, which recompute their prefixes beside the output) and the
/// digests of its answer parts, the same as its whole path's.
pub(crate) trait StreamedModel: Send + Sync + 'static {
    /// What the cases read from the model.
    type Answer: Send + Sync + 'static;
    /// The element the device holds: the generator's int32 items as the kernels read them.
    type Device: DeviceRepr + Copy + Send + Sync + 'static;
    /// The primitive's name (keys, errors).
    const PRIMITIVE: &'static str;
    /// The device element's name (keys, messages): `int32`, `f32`, `bf16`.
    const DEVICE_TYPE: &'static str;
    /// A generated piece as the device holds it (the kernels' element; exact).
    fn to_device(items: &[i32]) -> Cow<'_, [Self::Device]>;
    /// The fold of an input of `n` items.
    fn new(n: usize) -> Self;
    /// Takes the next piece.
    fn piece(&mut self, items: &[i32]) -> Result<(), Verdict>;
    /// The answer and the (part, digest) of every answer part.
    fn finish(self) -> Result<(Self::Answer, PartDigests), Verdict>;
}

/// The recipe of a streamed int32 input: made a piece at a time from the
/// model's generators.
pub(crate) struct StreamedInts<M> {
    pub(crate) key: String,
    pub(crate) family: DataFamily,
    pub(crate) n: usize,
    pub(crate) seed: u64,
    pub(crate) model: PhantomData<fn() -> M>,
}

impl<M> Clone for StreamedInts<M> {
    fn clone(&self) -> Self {
        StreamedInts { key: self.key.clone(), family: self.family, n: self.n, seed: self.seed, model: PhantomData }
    }
}

impl<M: StreamedModel> StreamedInts<M> {
    /// The recipe of (family, n, seed), keyed `<primitive>.<device type>.streamed:n/family/seed`.
    pub(crate) fn new(family: DataFamily, n: usize, seed: u64) -> Self {
        let key = format!("{}.{}.streamed:{n}/{}/{seed}", M::PRIMITIVE, M::DEVICE_TYPE, family.name());
        StreamedInts { key, family, n, seed, model: PhantomData }
    }

    /// The input's pieces in order, each with its first item's index.
    pub(crate) fn pieces(&self) -> Result<impl Iterator<Item = (usize, Vec<i32>)>, Verdict> {
        let pieces = int_pieces(self.family, self.n, self.seed)
            .map_err(|e| Verdict::fail("an input", e.to_string(), "generator"))?;
        Ok(pieces.scan(0usize, |at, piece| {
            let first = *at;
            *at += piece.len();
            Some((first, piece))
        }))
    }
}

impl<M: StreamedModel> InputSource for StreamedInts<M> {
    fn key(&self) -> &str {
        &self.key
    }

    /// Nothing is made here: the first case writes the input to the device
    /// ([`on_device`]).
    fn prepare(&self) -> PreparedInput {
        PreparedInput::holding(self.clone())
    }

    fn digests_only(&self) -> Option<Result<BTreeMap<String, String>, String>> {
        let digests = stream_pieces(self, |_, _| Ok(())).map(|(_, digests)| digests);
        Some(digests.map_err(|v| format!("{v:?}")))
    }

    fn pieced(&self) -> bool {
        true
    }
}

/// A streamed input on the device, with what the model made on the way.
pub(crate) struct OnDevice<A, D = i32> {
    pub(crate) buffer: CudaSlice<D>,
    pub(crate) answer: A,
    pub(crate) digests: BTreeMap<String, String>,
}

/// What the first case of a streamed input leaves for the others.
pub(crate) enum Upload<A, D = i32> {
    Done(OnDevice<A, D>),
    /// Skipped, and why (device memory, with the numbers).
    Skipped(String),
    /// The generator, the model or a copy failed: every case's verdict.
    Failed(Verdict),
}

/// `Ok` when a case's output and scratch (`beside` bytes) fit the device's
/// free memory beside its streamed input, else [`GpuError::DeviceMemory`]
/// naming them (the case is then skipped for memory, [`skip_or_fail`]).
pub(crate) fn fits_beside_input(
    gpu: &Gpu,
    primitive: &'static str,
    variant: &'static str,
    n: usize,
    beside: u64,
) -> Result<(), GpuError> {
    gpu.check_device_memory(primitive, variant, n, beside, || {
        format!("output and scratch {} beside the input on the device", kernels::error::gigabytes(beside))
    })
}

/// A device-memory refusal as a skip; any other error as the case's failure.
pub(crate) fn skip_or_fail(e: &GpuError) -> Verdict {
    match e {
        GpuError::DeviceMemory { .. } => Verdict::Skipped { reason: format!("skipped for device memory: {e}") },
        _ => gpu_error(e),
    }
}

/// Makes the input of `recipe` a piece at a time, hands each piece to
/// `write(first item, piece)`, and returns the model's answer with the
/// digests of the input and of the answer parts, as the whole path makes
/// them, holding one piece at a time.
pub(crate) fn stream_pieces<M: StreamedModel>(
    recipe: &StreamedInts<M>,
    mut write: impl FnMut(usize, &[i32]) -> Result<(), Verdict>,
) -> Result<(M::Answer, BTreeMap<String, String>), Verdict> {
    let mut input = Part::<i32>::new(Keep::DigestsOnly, recipe.n);
    let mut model = M::new(recipe.n);
    for (at, piece) in recipe.pieces()? {
        model.piece(&piece)?;
        input.push(&piece);
        write(at, &piece)?;
    }
    let (input_digest, _) = input.finish().map_err(|e| Verdict::fail("an input", e, "generator"))?;
    let (answer, parts) = model.finish()?;
    let mut digests: BTreeMap<String, String> = parts.into_iter().collect();
    digests.insert(INPUT_PART.to_string(), input_digest);
    Ok((answer, digests))
}

/// Writes the input of `recipe` to a new device buffer a piece at a time
/// ([`stream_pieces`]); skipped when the input and `beside` bytes (the
/// largest plan's output and scratch, described by `beside_what`) do not
/// fit the free device memory.
pub(crate) fn on_device<M: StreamedModel>(
    gpu: &Gpu,
    recipe: &StreamedInts<M>,
    beside: u64,
    beside_what: &str,
) -> Upload<M::Answer, M::Device> {
    let n = recipe.n;
    let input_bytes = (std::mem::size_of::<M::Device>() * n) as u64;
    let what = || {
        format!(
            "{} input {}, {beside_what} {}",
            M::DEVICE_TYPE,
            kernels::error::gigabytes(input_bytes),
            kernels::error::gigabytes(beside)
        )
    };
    if let Err(e) = gpu.check_device_memory(M::PRIMITIVE, "streamed input", n, input_bytes + beside, what) {
        return match skip_or_fail(&e) {
            Verdict::Skipped { reason } => Upload::Skipped(reason),
            failed => Upload::Failed(failed),
        };
    }
    let mut buffer = match gpu.alloc_uninit::<M::Device>(n) {
        Ok(b) => b,
        Err(e) => return Upload::Failed(gpu_error(&e)),
    };
    let written = stream_pieces(recipe, |at, piece| {
        let mut view = buffer.slice_mut(at..at + piece.len());
        let piece = M::to_device(piece);
        // From pageable memory: the piece is staged before this returns, so it may go.
        gpu.stream().memcpy_htod(piece.as_ref(), &mut view).map_err(|source| {
            let context = format!("{} n={n}: writing items {at}..{}", M::PRIMITIVE, at + piece.len());
            gpu_error(&GpuError::Driver { context, source })
        })
    });
    match written {
        Ok((answer, digests)) => Upload::Done(OnDevice { buffer, answer, digests }),
        Err(verdict) => Upload::Failed(verdict),
    }
}

/// The part name of a streamed input's upload.
const UPLOAD_PART: &str = "device:streamed";

/// One case on a streamed input: `id`, compared with the answer part
/// `expected_part`; its run writes the input to the device if no case of
/// that input did yet (skipped, with the numbers, when the input and
/// `beside(gpu)` bytes do not fit), then runs `run` on it.
pub(crate) fn streamed_case<M: StreamedModel>(
    id: CaseId,
    recipe: &Arc<StreamedInts<M>>,
    expected_part: &str,
    beside: impl Fn(&Gpu) -> Result<(u64, String), GpuError> + Send + Sync + 'static,
    run: impl Fn(&Gpu, &OnDevice<M::Answer, M::Device>) -> Verdict + Send + Sync + 'static,
) -> GpuCase {
    let upload = |prepared: &PreparedInput| prepared.shared_if_made::<Upload<M::Answer, M::Device>>(UPLOAD_PART);
    let part = expected_part.to_string();
    GpuCase {
        id,
        input: recipe.clone(),
        expected_part: expected_part.into(),
        // The digests made while the input was written (a run's); none for a case that did not
        // run (the receipt gate digests the pieces itself, `digests_only`).
        reference: Box::new(move |prepared| match upload(prepared).as_deref() {
            Some(Upload::Done(input)) => Ok(CaseDigest {
                input_digest: input.digests[INPUT_PART].clone(),
                expected_digest: input.digests[&part].clone(),
            }),
            Some(Upload::Skipped(reason)) => Err(reason.clone()),
            Some(Upload::Failed(_)) => Err("the input could not be made".into()),
            None => Err("the input is made when a case runs".into()),
        }),
        run: Box::new(move |gpu, prepared| {
            let recipe = match prepared.held::<StreamedInts<M>>() {
                Ok(r) => r.clone(),
                Err(e) => return Verdict::fail("an input", e, "generator"),
            };
            let made = prepared.shared(UPLOAD_PART, || match beside(gpu) {
                Ok((bytes, what)) => on_device(gpu, &recipe, bytes, &what),
                Err(e) => Upload::Failed(gpu_error(&e)),
            });
            match &*made {
                Upload::Done(input) => run(gpu, input),
                Upload::Skipped(reason) => Verdict::Skipped { reason: reason.clone() },
                Upload::Failed(verdict) => verdict.clone(),
            }
        }),
    }
}

/// The plan of one primitive at `sizes` (seed 0x5eed, every family), for
/// the streamed-catalogue tests of the primitives.
#[cfg(test)]
pub(crate) fn test_plan(
    primitive: crate::registry::primitive::Primitive,
    sizes: Vec<usize>,
) -> crate::sweep::SweepPlan {
    crate::sweep::SweepPlan {
        seed: 0x5eed,
        sizes,
        quick: false,
        primitives: vec![primitive],
        variants: vec![],
        one_family: false,
    }
}

/// The catalogue of `primitive` at each large-offset size
/// ([`crate::sweep::sizes::LARGE_OFFSET_SIZES`]), after asserting that its
/// case ids are unique, for the streamed-catalogue tests of the primitives.
#[cfg(test)]
pub(crate) fn large_offset_cases(primitive: crate::registry::primitive::Primitive) -> Vec<(usize, Vec<GpuCase>)> {
    let sizes = crate::sweep::sizes::LARGE_OFFSET_SIZES.to_vec();
    let mut cases = super::catalogue(&test_plan(primitive, sizes.clone()));
    let mut ids: Vec<String> =
        cases.iter().map(|c| format!("{} {} {}", c.id.marker(), c.id.family, c.id.seed)).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), cases.len(), "{primitive:?}: unique ids");
    sizes
        .into_iter()
        .map(|n| {
            let (at, rest) = cases.drain(..).partition(|c| c.id.n == n);
            cases = rest;
            (n, at)
        })
        .collect()
}

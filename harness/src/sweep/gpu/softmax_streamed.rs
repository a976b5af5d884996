//! The row softmax past 2^32 logits ([`STREAMED_FROM`]): rows of
//! [`LARGE_COLS`] logits, enough of them to pass the size asked for, so a
//! row straddles 2^31 and 2^32 (and 2^33) and every variant's row offset
//! `row * cols` passes them. The logits (random masks, never an all-masked
//! row) are made a block of rows at a time by the model's generator
//! ([`softmax_row_pieces`]) and written to the device as they are made, as
//! f32 or rounded to bf16, once for every variant of that dtype.
//!
//! The exact (MPFR) softmax of 4 x 10^9 logits would take hours, so the
//! output is read back a block of rows at a time and judged in two ways:
//! * every row: a masked logit's probability is exactly 0, every other one
//!   lies in [0, 1], and the row sums to 1 within the variant's declared
//!   bound; a row never written keeps its poison and fails here;
//! * the sampled rows ([`sampled`]: the first and last rows, the rows
//!   around each of 2^31, 2^32 and 2^33 logits, and every 997th row): every
//!   probability within the declared tolerance of the exact softmax, which
//!   the model computes as the rows are made. A row read from the wrong
//!   place, the failure a wrapped offset makes, sums to 1 like any other;
//!   these rows are where such a wrap lands.

use super::pieces::Part;
use super::streamed::{fits_beside_input, skip_or_fail, OnDevice, Upload, STREAMED_FROM};
use super::{case_seed, gpu_error, id, GpuCase, InputSource, Keep, PreparedInput, INPUT_PART};
use crate::sweep::case::{CaseId, Verdict};
use crate::sweep::digest::{CaseDigest, Fingerprint};
use crate::sweep::SweepPlan;
use half::bf16;
use kernels::cudarc::driver::{CudaSlice, DeviceRepr};
use kernels::{softmax_tolerance, Gpu, GpuError, SoftmaxElement, SoftmaxPlan, SoftmaxVariant};
use model::generators::{softmax_row_pieces, MaskPolicy};
use model::softmax::softmax_exact_f32;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::sync::Arc;

/// Logits a row of the large cases: every variant takes it (the warp's
/// registers hold up to 1024), it is a multiple of both vector widths (4
/// f32, 8 bf16), so the 16-byte paths run, and 2^31, 2^32 and 2^33 fall
/// inside a row, not between two.
pub(crate) const LARGE_COLS: usize = 1000;

/// The mask policy of the large cases: masked logits in every row, no row
/// all masked (each row then has a distribution to check).
const MASK: MaskPolicy = MaskPolicy::RandomMasks;

/// Every this many rows one is sampled for the exact check.
const SAMPLE_EVERY: usize = 997;

/// The rows of the large case at `n` logits: enough rows of [`LARGE_COLS`]
/// to hold at least `n`.
pub(crate) fn large_rows(n: usize) -> usize {
    n.div_ceil(LARGE_COLS)
}

/// Whether row `r` of `rows` rows of `cols` logits is checked exactly: the
/// first two and last two rows, the rows within one of the row holding
/// logit 2^31, 2^32 or 2^33, and every [`SAMPLE_EVERY`]th row.
pub(crate) fn sampled(rows: usize, cols: usize, r: usize) -> bool {
    let near = |logit: usize| (logit / cols).abs_diff(r) <= 1;
    r < 2 || r + 2 >= rows || r % SAMPLE_EVERY == 0 || [1 << 31, 1 << 32, 1 << 33].into_iter().any(near)
}

/// A softmax element the large cases run: f32, or bf16 (the logits rounded
/// to it; the exact reference is the softmax of the rounded values).
pub(crate) trait LargeElement: SoftmaxElement + DeviceRepr + Copy + Send + Sync {
    /// The logit as the device holds it.
    fn from_logit(x: f32) -> Self;
    /// The element widened exactly to f32.
    fn widen(self) -> f32;
}

impl LargeElement for f32 {
    fn from_logit(x: f32) -> f32 {
        x
    }
    fn widen(self) -> f32 {
        self
    }
}

impl LargeElement for bf16 {
    fn from_logit(x: f32) -> bf16 {
        bf16::from_f32(x)
    }
    fn widen(self) -> f32 {
        self.to_f32()
    }
}

/// The exact softmax of every sampled row, by row.
pub(crate) type SampledRows = BTreeMap<usize, Vec<f64>>;

/// The recipe of one large input: `rows` rows of [`LARGE_COLS`] logits
/// from `seed`, as element `E`.
pub(crate) struct StreamedRows<E> {
    key: String,
    rows: usize,
    seed: u64,
    element: PhantomData<fn() -> E>,
}

impl<E> Clone for StreamedRows<E> {
    fn clone(&self) -> Self {
        StreamedRows { key: self.key.clone(), rows: self.rows, seed: self.seed, element: PhantomData }
    }
}

impl<E: LargeElement> StreamedRows<E> {
    fn new(rows: usize, seed: u64) -> Self {
        let key = format!("softmax.{}.streamed:{rows}x{LARGE_COLS}/{}/{seed}", E::DTYPE.name(), MASK.name());
        StreamedRows { key, rows, seed, element: PhantomData }
    }

    fn len(&self) -> usize {
        self.rows * LARGE_COLS
    }

    /// Makes the logits a block of rows at a time as the device holds them,
    /// hands each block to `write(first logit, block)`, and returns the
    /// exact softmax of the sampled rows with the digests of the input (the
    /// widened elements) and of those rows.
    fn stream(
        &self,
        mut write: impl FnMut(usize, &[E]) -> Result<(), Verdict>,
    ) -> Result<(SampledRows, BTreeMap<String, String>), Verdict> {
        let (rows, cols) = (self.rows, LARGE_COLS);
        let generator = |e: model::ModelError| Verdict::fail("an input", e.to_string(), "generator");
        let pieces = softmax_row_pieces(rows, cols, self.seed, MASK).map_err(generator)?;
        let mut input = Part::<f32>::new(Keep::DigestsOnly, self.len());
        let mut exact = SampledRows::new();
        let mut at = 0;
        for piece in pieces {
            let device: Vec<E> = piece.iter().map(|&x| E::from_logit(x)).collect();
            let widened: Vec<f32> = device.iter().map(|&v| v.widen()).collect();
            for (k, row) in widened.chunks(cols).enumerate() {
                let r = at / cols + k;
                if sampled(rows, cols, r) {
                    let p = softmax_exact_f32(row).map_err(|e| super::model_error(&e))?;
                    exact.insert(r, p);
                }
            }
            input.push(&widened);
            write(at, &device)?;
            at += piece.len();
        }
        let (input_digest, _) = input.finish().map_err(|e| Verdict::fail("an input", e, "generator"))?;
        let mut sampled_digest = Fingerprint::new().text(&format!("{rows}x{cols} sampled rows"));
        for (r, p) in &exact {
            sampled_digest = sampled_digest.u64s([*r as u64].into_iter()).f64s(p);
        }
        let digests =
            BTreeMap::from([(INPUT_PART.to_string(), input_digest), (expected_part::<E>(), sampled_digest.finish())]);
        Ok((exact, digests))
    }
}

/// The answer part of element `E`'s cases: `f32.rows` or `bf16.rows`.
fn expected_part<E: SoftmaxElement>() -> String {
    format!("{}.rows", E::DTYPE.name())
}

impl<E: LargeElement> InputSource for StreamedRows<E> {
    fn key(&self) -> &str {
        &self.key
    }

    /// Nothing is made here: the first case writes the input to the device.
    fn prepare(&self) -> PreparedInput {
        PreparedInput::holding(self.clone())
    }

    fn digests_only(&self) -> Option<Result<BTreeMap<String, String>, String>> {
        Some(self.stream(|_, _| Ok(())).map(|(_, digests)| digests).map_err(|v| format!("{v:?}")))
    }

    fn pieced(&self) -> bool {
        true
    }
}

/// Writes the input of `recipe` to a new device buffer a block at a time;
/// skipped for memory when it and an output of the same size (and a byte a
/// row) do not fit the free device memory.
fn on_device<E: LargeElement>(gpu: &Gpu, recipe: &StreamedRows<E>) -> Upload<SampledRows, E> {
    let n = recipe.len();
    let bytes = (std::mem::size_of::<E>() * n) as u64;
    let what = || format!("{} logits {} and an output as large", E::DTYPE.name(), kernels::error::gigabytes(bytes));
    if let Err(e) = gpu.check_device_memory("softmax", "streamed input", n, 2 * bytes + recipe.rows as u64, what) {
        return match skip_or_fail(&e) {
            Verdict::Skipped { reason } => Upload::Skipped(reason),
            failed => Upload::Failed(failed),
        };
    }
    let mut buffer = match gpu.alloc_uninit::<E>(n) {
        Ok(b) => b,
        Err(e) => return Upload::Failed(gpu_error(&e)),
    };
    let written = recipe.stream(|at, piece| {
        let mut view = buffer.slice_mut(at..at + piece.len());
        // From pageable memory: the piece is staged before this returns.
        gpu.stream().memcpy_htod(piece, &mut view).map_err(|source| {
            let context = format!("softmax n={n}: writing logits {at}..{}", at + piece.len());
            gpu_error(&GpuError::Driver { context, source })
        })
    });
    match written {
        Ok((answer, digests)) => Upload::Done(OnDevice { buffer, answer, digests }),
        Err(verdict) => Upload::Failed(verdict),
    }
}

/// Reads `len` elements of `buffer` from `at` back to the host, widened.
fn read_back<E: LargeElement>(gpu: &Gpu, buffer: &CudaSlice<E>, at: usize, len: usize) -> Result<Vec<f32>, Verdict> {
    match gpu.stream().clone_dtoh(&buffer.slice(at..at + len)) {
        Ok(values) => Ok(values.into_iter().map(LargeElement::widen).collect()),
        Err(source) => {
            let context = format!("softmax: reading elements {at}..{}", at + len);
            Err(gpu_error(&GpuError::Driver { context, source }))
        }
    }
}

/// Judges row `r` (its logits `x`, its probabilities `p`, flat index of its
/// first logit `first`) as the module says: every row by its masks, range
/// and sum, a sampled row also element by element against `exact`.
fn judge_row(x: &[f32], p: &[f32], first: usize, exact: Option<&Vec<f64>>, tol: &kernels::SoftmaxTolerance) -> Verdict {
    let m = x.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
    let mut sum = 0.0f64;
    for (c, (&xi, &pi)) in x.iter().zip(p).enumerate() {
        let (i, got) = (first + c, pi as f64);
        if xi == f32::NEG_INFINITY {
            if got != 0.0 {
                return Verdict::fail_at(i, "0 (masked)", got, "masked logit");
            }
            continue;
        }
        if !(0.0..=1.0).contains(&got) {
            return Verdict::fail_at(i, "a probability in [0, 1]", format!("{got:e}"), "probability range");
        }
        if let Some(exact) = exact {
            if !tol.allows(exact[c], xi as f64 - m, got) {
                let bound = tol.element_bound(exact[c], xi as f64 - m);
                let want = format!("{:e} +- {bound:e}", exact[c]);
                return Verdict::fail_at(i, want, format!("{got:e}"), "probability within the declared tolerance");
            }
        }
        sum += got;
    }
    if (sum - 1.0).abs() > tol.row_sum {
        return Verdict::fail_at(first, format!("1 +- {:e}", tol.row_sum), format!("{sum:.12}"), "row sum");
    }
    Verdict::Pass
}

/// One variant's run on a streamed input already on the device: a fresh
/// plan into a poisoned output, then the input and the output read back a
/// block of rows at a time and every row judged ([`judge_row`]).
fn run_on_device<E: LargeElement>(gpu: &Gpu, variant: SoftmaxVariant, input: &OnDevice<SampledRows, E>) -> Verdict {
    let n = input.buffer.len();
    let (rows, cols) = (n / LARGE_COLS, LARGE_COLS);
    let run = || -> Result<CudaSlice<E>, GpuError> {
        fits_beside_input(gpu, "softmax", variant.name(), n, (std::mem::size_of::<E>() * n + rows) as u64)?;
        let mut output = gpu.alloc_poisoned::<E>(n)?;
        let mut plan = SoftmaxPlan::<E>::new(gpu, variant, rows, cols)?;
        plan.enqueue(&input.buffer, &mut output)?;
        plan.finish()?;
        Ok(output)
    };
    let output = match run() {
        Ok(output) => output,
        Err(e) => return skip_or_fail(&e),
    };
    let tol = softmax_tolerance(cols, variant, E::DTYPE);
    // Blocks of 2^24 logits read back, their rows judged on every core.
    let rows_a_block = (16 * model::generators::PIECE / cols).max(1);
    for first_row in (0..rows).step_by(rows_a_block) {
        let block = rows_a_block.min(rows - first_row);
        let at = first_row * cols;
        let (x, p) = match (read_back(gpu, &input.buffer, at, block * cols), read_back(gpu, &output, at, block * cols))
        {
            (Ok(x), Ok(p)) => (x, p),
            (Err(v), _) | (_, Err(v)) => return v,
        };
        let failed = x.par_chunks(cols).zip(p.par_chunks(cols)).enumerate().find_map_first(|(k, (xr, pr))| {
            let r = first_row + k;
            let verdict = judge_row(xr, pr, r * cols, input.answer.get(&r), &tol);
            (!verdict.passed()).then_some(verdict)
        });
        if let Some(verdict) = failed {
            return verdict;
        }
    }
    Verdict::Pass
}

/// One case on a streamed input: writes the input to the device if no case
/// of it did yet (skipped, with the numbers, when it does not fit), then
/// runs `variant` on it.
fn streamed_case<E: LargeElement>(id: CaseId, recipe: &Arc<StreamedRows<E>>, variant: SoftmaxVariant) -> GpuCase {
    const UPLOAD: &str = "device:streamed rows";
    let part = expected_part::<E>();
    let reference_part = part.clone();
    let reference =
        move |prepared: &PreparedInput| match prepared.shared_if_made::<Upload<SampledRows, E>>(UPLOAD).as_deref() {
            Some(Upload::Done(input)) => Ok(CaseDigest {
                input_digest: input.digests[INPUT_PART].clone(),
                expected_digest: input.digests[&reference_part].clone(),
            }),
            Some(Upload::Skipped(reason)) => Err(reason.clone()),
            Some(Upload::Failed(_)) => Err("the input could not be made".into()),
            None => Err("the input is made when a case runs".into()),
        };
    let run = move |gpu: &Gpu, prepared: &PreparedInput| {
        let recipe = match prepared.held::<StreamedRows<E>>() {
            Ok(r) => r.clone(),
            Err(e) => return Verdict::fail("an input", e, "generator"),
        };
        match &*prepared.shared(UPLOAD, || on_device(gpu, &recipe)) {
            Upload::Done(input) => run_on_device(gpu, variant, input),
            Upload::Skipped(reason) => Verdict::Skipped { reason: reason.clone() },
            Upload::Failed(verdict) => verdict.clone(),
        }
    };
    GpuCase { id, input: recipe.clone(), expected_part: part, reference: Box::new(reference), run: Box::new(run) }
}

/// Appends the large cases at `n` (past [`STREAMED_FROM`]): every variant,
/// f32 and bf16, on one input of each.
pub(crate) fn cases(plan: &SweepPlan, n: usize, out: &mut Vec<GpuCase>) {
    debug_assert!(n >= STREAMED_FROM);
    cases_of::<f32>(plan, n, out);
    cases_of::<bf16>(plan, n, out);
}

fn cases_of<E: LargeElement>(plan: &SweepPlan, n: usize, out: &mut Vec<GpuCase>) {
    let rows = large_rows(n);
    let seed = case_seed(plan.seed, "softmax.streamed", n, 0);
    let recipe = Arc::new(StreamedRows::<E>::new(rows, seed));
    let family = format!("softmax_rows_{}", MASK.name());
    for variant in SoftmaxVariant::ALL.into_iter().filter(|v| LARGE_COLS <= v.max_cols()) {
        let name = format!("{}.{}.rows", variant.name(), E::DTYPE.name());
        let id = id("softmax", name, format!("{rows}x{LARGE_COLS}"), rows * LARGE_COLS, &family, seed);
        out.push(streamed_case(id, &recipe, variant));
    }
}

#[cfg(test)]
#[path = "softmax_streamed_tests.rs"]
mod tests;

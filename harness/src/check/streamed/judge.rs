//! Judging a run of a streamed case a piece at a time: the inputs read back
//! and held to their digests, the model folded over them on its own thread,
//! each piece's output elements read back and compared at once, then the
//! outputs given at the end, the guards and the poisoned tails. And the
//! self-test that proves a device's copies by range before a check trusts
//! them. All over [`DeviceBytes`]: the device's buffers in a check, host
//! memory in the tests (so that every rule here is proven without a GPU).

use super::contracts::StreamedCase;
use super::folds::{Answers, PieceModel};
use super::upload::{digest, upload, Uploaded, UploadedPiece};
use super::{DeviceBytes, BATCH};
use crate::check::launch::{front_guard_bytes, front_untouched, read_output, tail_untouched, Layout, GUARD_ELEMENTS};
use crate::check::poison::Poison;
use crate::check::runs::not_made;
use crate::sweep::case::Verdict;
use crate::sweep::raw::mismatch::{lines, record, summarize_output};
use crate::sweep::raw::{Array, Buffer, Contract, RawCase};
use rayon::prelude::*;
use std::sync::mpsc::sync_channel;

/// Items per piece of the self-test (many pieces in a small case).
const SELF_TEST_PIECE: usize = 1000;

/// Proves `device`'s copies by range against its ordinary whole copies
/// before a check trusts them with a large case: `case` (a small case,
/// `whole` made whole) uploaded a piece at a time reads back whole as the
/// whole case's bytes, and every input and output read in ranges (its
/// start, a range across pieces, its end) equals the same bytes of the
/// buffer read whole. Error: what differed.
pub fn self_test(
    contract: &Contract,
    case: &StreamedCase,
    whole: &RawCase,
    device: &mut dyn DeviceBytes,
) -> Result<(), String> {
    let text = |v: Verdict| format!("{v:?}");
    upload(contract, case, SELF_TEST_PIECE, device).map_err(text)?;
    for (k, input) in whole.inputs.iter().enumerate() {
        let bytes = device.whole_input(k).map_err(text)?;
        if bytes != input.to_le_bytes() {
            return Err(format!("input {k} ({}) written in pieces does not read back whole", contract.inputs[k].role));
        }
        ranges_match(&bytes, |at, len| device.read_input(k, at, len)).map_err(|e| format!("input {k}: {e}"))?;
    }
    for k in 0..contract.outputs.len() {
        let bytes = device.whole_output(k).map_err(text)?;
        ranges_match(&bytes, |at, len| device.read_output(k, at, len)).map_err(|e| format!("output {k}: {e}"))?;
    }
    Ok(())
}

/// Whether ranges of `whole` read by `read` (at its start, across its middle, at its end) are its bytes.
fn ranges_match(whole: &[u8], mut read: impl FnMut(usize, usize) -> Result<Vec<u8>, Verdict>) -> Result<(), String> {
    let len = whole.len();
    let ranges = [(0, len.min(7)), (len / 3, (len / 3).min(len - len / 3)), (len.saturating_sub(5), len.min(5))];
    for (at, count) in ranges {
        let got = read(at, count).map_err(|v| format!("{v:?}"))?;
        if got != whole[at..at + count] {
            return Err(format!("bytes {at}..{} read as a range differ from the buffer read whole", at + count));
        }
    }
    Ok(())
}

/// What a run of a streamed case is judged against.
pub struct Judged<'a> {
    /// The contract.
    pub contract: &'a Contract,
    /// The case.
    pub case: &'a StreamedCase,
    /// Its uploaded inputs.
    pub uploaded: &'a Uploaded,
}

impl Judged<'_> {
    /// Where output `k`'s elements sit in its buffer, `model` of them compared.
    fn layout(&self, k: usize, model: usize) -> Layout {
        let size = self.contract.outputs[k].dtype.size();
        Layout { front: front_guard_bytes(size), elements: self.case.output_elements[k], model }
    }
}

/// The verdict on one run whose outputs were filled with `poison`: every
/// guard and poisoned tail untouched, every input as uploaded, and every
/// output equal to the model's by the contract's comparison (a failure at
/// an element names its index in the whole output).
pub fn judge(on: &Judged, poison: Poison, device: &mut dyn DeviceBytes) -> Verdict {
    match judge_run(on, poison, device) {
        Ok(()) => Verdict::Pass,
        Err(verdict) => verdict,
    }
}

fn judge_run(on: &Judged, poison: Poison, device: &mut dyn DeviceBytes) -> Result<(), Verdict> {
    for whole in &on.uploaded.whole {
        if digest(&device.read_input(whole.k, 0, whole.bytes)?) != whole.digest {
            let role = on.contract.inputs[whole.k].role;
            return Err(Verdict::fail(format!("{role} as uploaded"), "changed by the run", "input untouched"));
        }
    }
    let outputs = on.contract.outputs;
    for (k, out) in outputs.iter().enumerate() {
        let layout = on.layout(k, 0);
        front_untouched(poison, out, layout, &device.read_output(k, 0, layout.front)?)?;
    }
    let mut appended = vec![0usize; outputs.len()];
    let mut model = fold_and_compare(on, device, &mut appended)?;
    for (k, answer) in model.finish().map_err(model_failed)?.into_iter().enumerate() {
        match answer {
            Some(expected) => compare_whole(on, poison, k, &expected, device)?,
            None => tail(on, poison, k, appended[k], device)?,
        }
    }
    Ok(())
}

/// A model's failure (a count its contract's type cannot hold) as the case's verdict: not the kernel's.
fn model_failed(e: String) -> Verdict {
    not_made(format!("the model's answer: {e}"))
}

/// Reads every piece back, folds the model over them and compares the
/// elements each piece appends to an output (`appended[k]`: output `k`'s
/// so far); gives the model, every piece in. The model folds batch i on
/// its own thread while this one reads batch i + 1 back and compares
/// batch i - 1.
fn fold_and_compare(
    on: &Judged,
    device: &mut dyn DeviceBytes,
    appended: &mut [usize],
) -> Result<Box<dyn PieceModel>, Verdict> {
    std::thread::scope(|scope| {
        let (to_model, batches) = sync_channel::<Vec<Vec<Array>>>(1);
        let (answered, from_model) = sync_channel::<Result<Vec<Answers>, String>>(1);
        let mut model = on.case.model();
        let folding = scope.spawn(move || {
            for batch in batches {
                let answers = model.batch(&batch);
                let failed = answers.is_err();
                if answered.send(answers).is_err() || failed {
                    break;
                }
            }
            model
        });
        let stopped = || model_failed("the model's fold stopped".into());
        let mut compare_next = |device: &mut dyn DeviceBytes| -> Result<(), Verdict> {
            let answers = from_model.recv().map_err(|_| stopped())?.map_err(model_failed)?;
            compare_regions(on, regions(answers, appended), device)
        };
        let (mut start, mut at, mut pending) = (0usize, vec![0usize; on.uploaded.streamed.len()], false);
        for batch in on.uploaded.pieces.chunks(BATCH) {
            let inputs = read_back(on, batch, start, &mut at, device)?;
            start += batch.iter().map(|p| p.items).sum::<usize>();
            to_model.send(inputs).map_err(|_| stopped())?;
            if std::mem::replace(&mut pending, true) {
                compare_next(device)?;
            }
        }
        if pending {
            compare_next(device)?;
        }
        drop(to_model);
        folding.join().map_err(|_| model_failed("the model's fold panicked".into()))
    })
}

/// The appended answers of a batch's pieces as regions of their outputs,
/// `appended[k]` (output `k`'s elements so far) moved past them.
fn regions(answers: Vec<Answers>, appended: &mut [usize]) -> Vec<Region> {
    let mut regions = Vec::new();
    for piece in answers {
        for (k, answer) in piece.into_iter().enumerate() {
            if let Some(expected) = answer {
                let offset = appended[k];
                appended[k] += expected.count();
                regions.push(Region { k, offset, expected });
            }
        }
    }
    regions
}

/// The inputs of a batch of pieces (from item `start`, input `k` from byte
/// `at[k]`) read back, each piece seen to be as uploaded.
fn read_back(
    on: &Judged,
    batch: &[UploadedPiece],
    start: usize,
    at: &mut [usize],
    device: &mut dyn DeviceBytes,
) -> Result<Vec<Vec<Array>>, Verdict> {
    let items: usize = batch.iter().map(|p| p.items).sum();
    let streamed: Vec<(usize, &Buffer)> = on.uploaded.streamed.iter().map(|&k| (k, &on.contract.inputs[k])).collect();
    let mut read = Vec::with_capacity(at.len());
    for (s, &(k, input)) in streamed.iter().enumerate() {
        read.push(device.read_input(k, at[s], items * input.dtype.size())?);
        at[s] += items * input.dtype.size();
    }
    let firsts: Vec<usize> =
        batch.iter().scan(start, |first, p| Some(std::mem::replace(first, *first + p.items))).collect();
    let pieces: Vec<Result<Vec<Array>, Verdict>> = batch
        .par_iter()
        .zip(firsts.par_iter())
        .map(|(piece, &first)| {
            let mut arrays = Vec::with_capacity(read.len());
            for (s, &(_, input)) in streamed.iter().enumerate() {
                let from = (first - start) * input.dtype.size();
                let bytes = &read[s][from..from + piece.items * input.dtype.size()];
                if digest(bytes) != piece.digests[s] {
                    let expected = format!("{}[{first}..{}) as uploaded", input.role, first + piece.items);
                    return Err(Verdict::fail(expected, "changed by the run", "input untouched"));
                }
                arrays
                    .push(Array::from_le_bytes(input.dtype, bytes).map_err(|e| Verdict::fail("an input", e, "input"))?);
            }
            Ok(arrays)
        })
        .collect();
    pieces.into_iter().collect()
}

/// The model's elements `offset..` of output `k`.
struct Region {
    k: usize,
    offset: usize,
    expected: Array,
}

/// Each region's elements read back (in order), then compared side by
/// side; the first failure in output order is the verdict.
fn compare_regions(on: &Judged, regions: Vec<Region>, device: &mut dyn DeviceBytes) -> Result<(), Verdict> {
    let mut read = Vec::with_capacity(regions.len());
    for r in &regions {
        let (out, layout) = (&on.contract.outputs[r.k], on.layout(r.k, r.offset + r.expected.count()));
        if layout.model > layout.elements {
            return Err(Verdict::fail(format!("at most {} elements", layout.elements), layout.model, "model"));
        }
        let size = out.dtype.size();
        read.push(device.read_output(r.k, layout.front + r.offset * size, r.expected.count() * size)?);
    }
    let verdicts: Vec<Result<(), Verdict>> = regions
        .par_iter()
        .zip(read.par_iter())
        .map(|(r, bytes)| {
            let got = Array::from_le_bytes(on.contract.outputs[r.k].dtype, bytes)
                .map_err(|e| Verdict::fail("the output", e, "output"))?;
            // Integers equal as values are equal as the rule sees them; floats
            // (NaN, signed zeros) and any difference go to the rule.
            let integers = !matches!(got, Array::Float32(_) | Array::Float64(_) | Array::Bfloat16(_));
            if integers && got == r.expected {
                return Ok(());
            }
            compare(on, r.k, r.offset, &r.expected, got)
        })
        .collect();
    if let Some(at) = verdicts.iter().position(Result::is_err) {
        record_detail(on, &regions[at], &read[at]);
    }
    verdicts.into_iter().collect()
}

thread_local! {
    /// The summary of the first failed piece of the case in flight.
    static DETAIL: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Takes the summary of the first failed piece of the case in flight (and
/// clears it for the next case): printed under the failure line, as the
/// whole case's summary is.
pub fn take_detail() -> Vec<String> {
    DETAIL.with(|d| std::mem::take(&mut *d.borrow_mut()))
}

/// Keeps the summary of a failed piece (its elements, indices in the whole
/// output), unless one is kept already.
fn record_detail(on: &Judged, region: &Region, bytes: &[u8]) {
    let Ok(got) = Array::from_le_bytes(on.contract.outputs[region.k].dtype, bytes) else { return };
    let case = RawCase::new(vec![], vec![region.expected.clone()]);
    let mut summary = summarize_output(&one_output(on.contract, region.k), &case, 0, &got);
    let (from, to) = (region.offset, region.offset + region.expected.count());
    summary.role = format!("{} [{from}..{to})", summary.role);
    summary.first.iter_mut().for_each(|d| d.index += from);
    for at in
        [summary.max_abs.as_mut().map(|m| &mut m.1), summary.max_rel.as_mut().map(|m| &mut m.1)].into_iter().flatten()
    {
        *at += from;
    }
    if let Some((_, at)) = summary.max_ulp.as_mut() {
        *at += from;
    }
    DETAIL.with(|d| {
        let mut d = d.borrow_mut();
        if d.is_empty() {
            *d = lines(&[summary]);
        }
    });
}

/// Output `k` of `contract` alone, compared by the contract's rule and named as in the contract.
fn one_output(contract: &Contract, k: usize) -> Contract {
    Contract { inputs: &[], params: &[], outputs: &contract.outputs[k..=k], what: contract.what_of(k), ..*contract }
}

/// `got` against `expected` by output `k`'s comparison, a failing index moved by `offset`.
fn compare(on: &Judged, k: usize, offset: usize, expected: &Array, got: Array) -> Result<(), Verdict> {
    let case = RawCase::new(vec![], vec![expected.clone()]);
    match one_output(on.contract, k).compare(&case, &[got]) {
        Verdict::Pass => Ok(()),
        Verdict::Fail(mut m) => {
            m.index = m.index.map(|i| i + offset);
            Err(Verdict::Fail(m))
        }
        other => Err(other),
    }
}

/// Output `k`, guards included, against `expected` (an output the model gives at the end: small).
fn compare_whole(
    on: &Judged,
    poison: Poison,
    k: usize,
    expected: &Array,
    device: &mut dyn DeviceBytes,
) -> Result<(), Verdict> {
    let (out, layout) = (&on.contract.outputs[k], on.layout(k, expected.count()));
    let bytes = device.read_output(k, 0, layout.front + (layout.elements + GUARD_ELEMENTS) * out.dtype.size())?;
    let got = read_output(poison, out, layout, &bytes)?;
    let verdict = compare(on, k, 0, expected, got.clone());
    if verdict.is_err() {
        record(&one_output(on.contract, k), &RawCase::new(vec![], vec![expected.clone()]), &[got]);
    }
    verdict
}

/// Output `k` past its `model` compared elements, and its guard after,
/// still holding `poison`, a piece at a time.
fn tail(on: &Judged, poison: Poison, k: usize, model: usize, device: &mut dyn DeviceBytes) -> Result<(), Verdict> {
    let (out, layout) = (&on.contract.outputs[k], on.layout(k, model));
    let size = out.dtype.size();
    let end = layout.elements + GUARD_ELEMENTS;
    let mut from = model.min(end);
    while from < end {
        let count = super::PIECE.min(end - from);
        let bytes = device.read_output(k, layout.front + from * size, count * size)?;
        tail_untouched(poison, out, layout, from, &bytes)?;
        from += count;
    }
    Ok(())
}

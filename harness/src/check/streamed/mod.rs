//! Large cases made, uploaded and judged a piece at a time, so that a case
//! past 2^31 elements needs a few pieces of host memory, not the tens of GB
//! its whole input, model answer and downloaded output would take.
//!
//! * **Made a piece at a time.** A streamed case's inputs come from the very
//!   generators of the raw catalogue, a piece at a time
//!   ([`model::generators`]' piece streams, which collected are the whole
//!   generators' values); each piece is uploaded into its place in the
//!   device buffer as soon as it is made, and only its digest is kept.
//! * **Judged a piece at a time.** After each run the inputs are read back
//!   from the device a piece at a time; a piece whose digest changed was
//!   written by the kernel (`input untouched`: a kernel may not use its input
//!   as scratch). Each piece is folded into the model's piece fold
//!   ([`model::pieces`]), which gives the output elements that piece
//!   determines (a scan's prefixes, a compaction's kept items); those are
//!   downloaded and compared at once. The outputs the fold gives only at the
//!   end (a sum, a count, bins) are compared whole, then the guards and
//!   poisoned tails a piece at a time.
//! * **The same verdict as the whole case.** Each streamed contract's inputs
//!   and answers equal its raw cases' for every family the catalogue holds
//!   (tests prove it at small sizes with small pieces), and its comparison is
//!   the contract's own, on each piece, with the index of the whole output.
//!
//! Which contracts stream: those in [`contracts`]' table (exact rules whose
//! model folds a piece at a time); any other contract, and every case below
//! [`STREAM_FROM`] elements, is made whole.
//!
//! The rooms: [`contracts`] (each streamed contract's cases), [`folds`] (its
//! model a piece at a time), [`generators`] (the catalogue's inputs made on
//! every core), [`upload`] (the inputs written, digests kept), [`judge`] (a
//! run judged, and the self-test of a device's copies), [`gpu`] (all of it
//! on the device's buffers).

pub mod contracts;
pub mod folds;
pub mod generators;
pub mod gpu;
pub mod judge;
pub mod upload;

#[cfg(test)]
mod streamed_tests;

#[cfg(test)]
pub use contracts::streams;
pub use contracts::{streamed, StreamedCase};

use crate::sweep::case::{CaseId, Verdict};
use crate::sweep::raw::{self, Array, Contract, Dtype, RawCase};

/// From this many elements on, a case of a streamed contract is made and
/// judged a piece at a time (below it the whole case is what the H200 runs
/// have measured).
pub const STREAM_FROM: usize = 1 << 31;

/// The environment variable that moves [`STREAM_FROM`] (`2^24`, `16777216`):
/// to run the streamed path at the default sizes, beside the whole one.
pub const STREAM_FROM_VARIABLE: &str = "PRIMLAB_STREAM_FROM";

/// Where streaming starts: [`STREAM_FROM_VARIABLE`] when set, else
/// [`STREAM_FROM`]. Error: a value that is not a size.
pub fn stream_from() -> Result<usize, String> {
    stream_from_value(std::env::var(STREAM_FROM_VARIABLE).ok())
}

/// Where streaming starts when [`STREAM_FROM_VARIABLE`] holds `value`.
fn stream_from_value(value: Option<String>) -> Result<usize, String> {
    match value {
        Some(text) => crate::grammar::parse_size(text.trim())
            .map_err(|e| format!("{STREAM_FROM_VARIABLE}={text:?} is not a size (2^24, 16777216): {e}")),
        None => Ok(STREAM_FROM),
    }
}

/// Items per piece: the model's generators' piece.
pub const PIECE: usize = model::generators::PIECE;

/// Pieces read back and compared at once by a run's judge (their reads in
/// order, their digests, parsing and comparisons side by side).
pub const BATCH: usize = 16;

/// Bytes of host memory a streamed case of `bytes_per_item` bytes per item
/// (every input and output element of one index) needs at most, whatever
/// n: two batches of pieces in flight ([`BATCH`]), each held about
/// twice (the bytes read back and their parsed values; the model's answer
/// and the output read back).
pub fn host_bytes(bytes_per_item: usize) -> u64 {
    (4 * BATCH * PIECE * bytes_per_item) as u64
}

/// The case `id` of `contract` made a piece at a time: when it has at least
/// `from` elements ([`stream_from`]) and the contract streams.
pub fn case_of(contract: &Contract, id: &CaseId, from: usize) -> Option<StreamedCase> {
    (id.n >= from).then(|| streamed(contract, id)).flatten()
}

/// From this many elements on, a case of a streamed contract below
/// [`stream_from`] is still made from its pieces, whole ([`whole_case`]): its
/// inputs and answer on every core rather than one, the case itself as the
/// catalogue makes it (the tests prove the two equal).
pub const WHOLE_FROM_PIECES: usize = 1 << 20;

/// The case `id` of `contract` made whole from its pieces ([`WHOLE_FROM_PIECES`]
/// and more elements, a streamed contract and family); `None` otherwise.
/// Error: a generator's or the model's refusal.
pub fn whole_case(contract: &Contract, id: &CaseId) -> Option<Result<RawCase, String>> {
    if id.n < WHOLE_FROM_PIECES {
        return None;
    }
    streamed(contract, id).map(|case| whole_from_pieces(contract, &case))
}

/// Every piece of `case` collected, and its model's answers: the inputs
/// and the model's outputs end to end, then the outputs given at the end.
fn whole_from_pieces(contract: &Contract, case: &StreamedCase) -> Result<RawCase, String> {
    let empty = |buffers: &[raw::Buffer], elements: &[usize]| -> Vec<Array> {
        buffers.iter().zip(elements).map(|(b, &e)| empty_array(b.dtype, e)).collect()
    };
    let mut inputs = empty(contract.inputs, &case.input_elements);
    let mut streams = Vec::new();
    for (k, input) in case.inputs(PIECE)?.into_iter().enumerate() {
        match input {
            contracts::Input::Whole(array) => inputs[k] = array,
            contracts::Input::Pieces(pieces) => streams.push((k, pieces)),
        }
    }
    let mut expected = empty(contract.outputs, &case.output_elements);
    let mut model = case.model();
    loop {
        let next = |streams: &mut Vec<(usize, contracts::Pieces)>| {
            streams.iter_mut().map(|(_, s)| s.next()).collect::<Option<Vec<Array>>>()
        };
        let batch: Vec<Vec<Array>> = (0..BATCH).map_while(|_| next(&mut streams)).collect();
        if batch.is_empty() {
            break;
        }
        for answers in model.batch(&batch)? {
            for (k, answer) in answers.into_iter().enumerate() {
                answer.map_or(Ok(()), |a| append(&mut expected[k], a))?;
            }
        }
        for piece in batch {
            for ((k, _), array) in streams.iter().zip(piece) {
                append(&mut inputs[*k], array)?;
            }
        }
    }
    for (k, answer) in model.finish()?.into_iter().enumerate() {
        if let Some(answer) = answer {
            expected[k] = answer;
        }
    }
    Ok(RawCase { inputs, params: case.params.clone(), expected })
}

/// An empty array of `dtype` with room for `capacity` elements.
fn empty_array(dtype: Dtype, capacity: usize) -> Array {
    match dtype {
        Dtype::Int32 => Array::Int32(Vec::with_capacity(capacity)),
        Dtype::Int64 => Array::Int64(Vec::with_capacity(capacity)),
        Dtype::Float32 => Array::Float32(Vec::with_capacity(capacity)),
        Dtype::Float64 => Array::Float64(Vec::with_capacity(capacity)),
        Dtype::Bfloat16 => Array::Bfloat16(Vec::with_capacity(capacity)),
        Dtype::Uint8 => Array::Uint8(Vec::with_capacity(capacity)),
        Dtype::Uint32 => Array::Uint32(Vec::with_capacity(capacity)),
        Dtype::Float16 => Array::Float16(Vec::with_capacity(capacity)),
    }
}

/// `piece`'s elements after `whole`'s. Error: a piece of another type (a catalogue bug).
fn append(whole: &mut Array, piece: Array) -> Result<(), String> {
    match (whole, piece) {
        (Array::Int32(w), Array::Int32(p)) => w.extend(p),
        (Array::Int64(w), Array::Int64(p)) => w.extend(p),
        (Array::Float32(w), Array::Float32(p)) => w.extend(p),
        (Array::Float64(w), Array::Float64(p)) => w.extend(p),
        (Array::Bfloat16(w), Array::Bfloat16(p)) => w.extend(p),
        (Array::Uint8(w), Array::Uint8(p)) => w.extend(p),
        (Array::Uint32(w), Array::Uint32(p)) => w.extend(p),
        (Array::Float16(w), Array::Float16(p)) => w.extend(p),
        (w, p) => return Err(format!("a piece of {} after {} (a catalogue bug)", p.dtype().name(), w.dtype().name())),
    }
    Ok(())
}

/// Bytes of every input and output element of one index of `contract`.
pub fn bytes_per_item(contract: &Contract) -> usize {
    contract.inputs.iter().chain(contract.outputs).map(|b| b.dtype.size()).sum()
}

/// Where streaming starts, as [`stream_from`] says; [`STREAM_FROM`] when the
/// variable does not parse (`check` refuses such a value before any case).
pub fn stream_from_checked() -> usize {
    stream_from().unwrap_or(STREAM_FROM)
}

/// A case's buffers, byte-addressed. An output buffer's byte 0 is the first
/// byte of its guard before ([`crate::check::launch::front_guard_bytes`] of
/// them), then its elements, then [`crate::check::launch::GUARD_ELEMENTS`]
/// guard elements.
pub trait DeviceBytes {
    /// Writes `bytes` into input `k` from byte `at`.
    fn write_input(&mut self, k: usize, at: usize, bytes: &[u8]) -> Result<(), Verdict>;
    /// Reads `len` bytes of input `k` from byte `at`.
    fn read_input(&mut self, k: usize, at: usize, len: usize) -> Result<Vec<u8>, Verdict>;
    /// Reads `len` bytes of output buffer `k` from byte `at`.
    fn read_output(&mut self, k: usize, at: usize, len: usize) -> Result<Vec<u8>, Verdict>;
    /// Input `k` read whole, by the device's ordinary copy (the whole case's path).
    fn whole_input(&mut self, k: usize) -> Result<Vec<u8>, Verdict>;
    /// Output buffer `k` read whole, guards included, by the device's ordinary copy.
    fn whole_output(&mut self, k: usize) -> Result<Vec<u8>, Verdict>;
}

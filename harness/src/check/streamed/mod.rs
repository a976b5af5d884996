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

pub use contracts::{streamed, streams, StreamedCase};

use crate::sweep::case::{CaseId, Verdict};
use crate::sweep::raw::Contract;

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

//! Making a streamed case's inputs and writing them into its buffers: an
//! input held whole at once, the others a piece at a time, each made on its
//! own thread and turned into bytes on another; only the digests are kept,
//! which every run's read-back is held to.

use super::contracts::{Input, Pieces, StreamedCase};
use super::DeviceBytes;
use crate::check::runs::not_made;
use crate::sweep::case::Verdict;
use crate::sweep::raw::{Array, Contract, Dtype};
use rayon::prelude::*;
use std::sync::mpsc::{sync_channel, Receiver};

/// One uploaded piece: its items and the digest of each streamed input's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct UploadedPiece {
    pub(super) items: usize,
    pub(super) digests: Vec<u64>,
}

/// An input uploaded whole: its index, bytes and digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct UploadedWhole {
    pub(super) k: usize,
    pub(super) bytes: usize,
    pub(super) digest: u64,
}

/// What was uploaded: the inputs made in pieces (their indices, then the
/// pieces in order: the run reads them back the same way) and those held whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uploaded {
    pub(super) streamed: Vec<usize>,
    pub(super) pieces: Vec<UploadedPiece>,
    pub(super) whole: Vec<UploadedWhole>,
}

/// A 64-bit digest of `bytes`: each word is mixed in by a bijection of the
/// state, so a change to any one word always changes the digest (and two
/// or more collide with probability about 2^-64).
pub(super) fn digest(bytes: &[u8]) -> u64 {
    const ODD: u64 = 0x9e37_79b9_7f4a_7c15;
    let mix = |h: u64, w: u64| (h ^ w).wrapping_mul(ODD).rotate_left(29);
    let mut words = bytes.chunks_exact(8);
    let mut h = 0x243f_6a88_85a3_08d3 ^ bytes.len() as u64;
    for w in &mut words {
        h = mix(h, u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]));
    }
    words.remainder().iter().fold(h, |h, &b| mix(h, u64::from(b)))
}

/// Pieces made ahead of the upload, per input and stage (and turned into
/// bytes side by side).
const AHEAD: usize = 8;

/// One piece of one input, ready to upload: its bytes and their digest.
struct Made {
    items: usize,
    dtype: Dtype,
    bytes: Vec<u8>,
    digest: u64,
}

impl Made {
    fn of(array: Array) -> Made {
        let bytes = array.to_le_bytes();
        Made { items: array.count(), dtype: array.dtype(), digest: digest(&bytes), bytes }
    }
}

/// `items` run through `f` on a thread of `scope`, at most [`AHEAD`] ahead of the receiver.
fn stage<'s, T: Send + 's, U: Send + 's>(
    scope: &'s std::thread::Scope<'s, '_>,
    items: impl Iterator<Item = T> + Send + 's,
    f: impl Fn(T) -> U + Send + 's,
) -> Receiver<U> {
    let (tx, rx) = sync_channel(AHEAD);
    scope.spawn(move || {
        for item in items {
            // The receiver gave up (a failed write): stop making.
            if tx.send(f(item)).is_err() {
                break;
            }
        }
    });
    rx
}

/// Makes `case`'s inputs and writes each into its place on `device`,
/// keeping only digests: an input held whole at once, the others in pieces
/// of `piece` items, each made on its own thread and turned into bytes on
/// another, so the upload waits only for the slowest generator. Error: a
/// generator's failure (`generator`), inputs not of the contract's shape,
/// or the device's.
pub fn upload(
    contract: &Contract,
    case: &StreamedCase,
    piece: usize,
    device: &mut dyn DeviceBytes,
) -> Result<Uploaded, Verdict> {
    let inputs = case.inputs(piece).map_err(generator)?;
    if inputs.len() != contract.inputs.len() {
        return Err(generator(format!("{} inputs made for {} (a catalogue bug)", inputs.len(), contract.inputs.len())));
    }
    let (mut streams, mut whole) = (Vec::new(), Vec::new());
    for (k, input) in inputs.into_iter().enumerate() {
        match input {
            Input::Pieces(pieces) => streams.push((k, pieces)),
            Input::Whole(array) => {
                if array.dtype() != contract.inputs[k].dtype || array.count() != case.input_elements[k] {
                    return Err(generator(format!("input {k} is not of the contract's shape (a catalogue bug)")));
                }
                let made = Made::of(array);
                device.write_input(k, 0, &made.bytes)?;
                whole.push(UploadedWhole { k, bytes: made.bytes.len(), digest: made.digest });
            }
        }
    }
    let streamed: Vec<usize> = streams.iter().map(|(k, _)| *k).collect();
    let pieces = upload_pieces(contract, streams, device)?;
    let items: usize = pieces.iter().map(|p| p.items).sum();
    if items != case.n {
        return Err(generator(format!("the pieces hold {items} items, not n = {} (a catalogue bug)", case.n)));
    }
    Ok(Uploaded { streamed, pieces, whole })
}

/// A generator's failure as the case's verdict: not the kernel's.
fn generator(e: String) -> Verdict {
    not_made(e)
}

/// The pieces of one input turned into bytes, [`AHEAD`] at a time side by side.
struct Incoming {
    k: usize,
    batches: Receiver<Vec<Made>>,
    ready: std::collections::VecDeque<Made>,
}

impl Incoming {
    /// The pieces of `stream` (input `k`): made on one thread of `scope`, turned into bytes on another.
    fn new<'s>(scope: &'s std::thread::Scope<'s, '_>, k: usize, mut stream: Pieces) -> Incoming {
        let next_batch = move || Some(stream.by_ref().take(AHEAD).collect::<Vec<_>>()).filter(|b| !b.is_empty());
        let made = stage(scope, std::iter::from_fn(next_batch), |batch| batch);
        let batches = stage(scope, made.into_iter(), |batch: Vec<Array>| batch.into_par_iter().map(Made::of).collect());
        Incoming { k, batches, ready: Default::default() }
    }

    fn next(&mut self) -> Option<Made> {
        if self.ready.is_empty() {
            self.ready.extend(self.batches.recv().ok()?);
        }
        self.ready.pop_front()
    }
}

/// Writes the pieces of the inputs `streams` (each with its index) side by side.
fn upload_pieces(
    contract: &Contract,
    streams: Vec<(usize, Pieces)>,
    device: &mut dyn DeviceBytes,
) -> Result<Vec<UploadedPiece>, Verdict> {
    std::thread::scope(|scope| {
        let mut made: Vec<Incoming> = streams.into_iter().map(|(k, stream)| Incoming::new(scope, k, stream)).collect();
        let mut at = vec![0usize; made.len()];
        let mut pieces = Vec::new();
        loop {
            let row: Vec<Option<Made>> = made.iter_mut().map(Incoming::next).collect();
            if row.iter().all(Option::is_none) {
                return Ok(pieces);
            }
            let len = row[0].as_ref().map_or(0, |m| m.items);
            let shaped = row.iter().zip(&made).all(|(m, input)| {
                m.as_ref().is_some_and(|m| m.items == len && m.dtype == contract.inputs[input.k].dtype)
            });
            if !shaped {
                let why =
                    format!("piece {} of the inputs is not of the contract's shape (a catalogue bug)", pieces.len());
                return Err(generator(why));
            }
            let mut digests = Vec::with_capacity(row.len());
            for (s, m) in row.into_iter().flatten().enumerate() {
                device.write_input(made[s].k, at[s], &m.bytes)?;
                at[s] += m.bytes.len();
                digests.push(m.digest);
            }
            pieces.push(UploadedPiece { items: len, digests });
        }
    })
}

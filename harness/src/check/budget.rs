//! What each size of a check needs of this machine, from the manifest's own
//! buffers, and which sizes fit: a size whose cases fit is kept, any other
//! is left out with a line naming it, what it needs and what is available;
//! no size ever refuses the whole check.
//!
//! On the device at once, for one case (`launch.rs`, `streamed/gpu.rs`):
//! each contract input as uploaded (its elements, no guards); each output
//! between its guards ([`front_guard_bytes`] before, [`GUARD_ELEMENTS`]
//! after); every scratch buffer at the largest length a case so far asked
//! (scratch is kept from case to case and only grows; cases run smallest
//! size first). The runs of a case (both poisons, the perturbed run) reuse
//! those buffers, and a case's buffers are freed before the next case's are
//! allocated. Each allocation is counted rounded up to [`GRANULE`]; the
//! context, the module and the perturbing kernel's one-word flag live in the
//! share of the device a check leaves free ([`DEVICE_SHARE`]).
//!
//! On the host, for one case ([`host_bytes`]): a case made whole holds its
//! inputs, the model's answer and the outputs read back; one made and judged
//! a piece at a time ([`super::streamed`]) a few pieces, whatever n.

use super::launch::{front_guard_bytes, GUARD_ELEMENTS};
use super::manifest::Manifest;
use crate::sweep::case::CaseId;
use crate::sweep::raw::{Buffer, Contract, Len};

/// The share of the GPU's memory a check plans to use (the rest: the
/// context, the module, the allocator's rounding).
pub const DEVICE_SHARE: f64 = 0.9;

/// The share of the host's memory a check plans to use (the rest: the
/// process, the page cache the copies need, other processes).
pub const HOST_SHARE: f64 = 0.85;

/// Each device allocation counted rounded up to this: the driver hands out
/// large allocations in 2 MiB pages.
pub const GRANULE: u128 = 2 << 20;

/// The machine a check plans for (bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Machine {
    /// The GPU's memory.
    pub device: u64,
    /// The host's memory, when the host says.
    pub host: Option<u64>,
}

/// Elements of each device buffer of one case, in the contract's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseBuffers {
    /// Elements of each input.
    pub inputs: Vec<usize>,
    /// Elements of each output (its guards apart).
    pub outputs: Vec<usize>,
}

impl CaseBuffers {
    /// The buffers of case `id` of `contract`: exact for a case made a piece
    /// at a time from `stream_from` elements on (its buffers are known
    /// before any input is made); else the bound the contract's lengths give
    /// at `id.n` ([`CaseBuffers::bound`]).
    pub fn of(contract: &Contract, id: &CaseId, stream_from: usize) -> CaseBuffers {
        match super::streamed::case_of(contract, id, stream_from) {
            Some(case) => CaseBuffers { inputs: case.input_elements, outputs: case.output_elements },
            None => CaseBuffers::bound(contract, id.n),
        }
    }

    /// Upper bounds at input size `n`: n elements for a per-item buffer, one
    /// for a scalar, and n + 1 for a per-case buffer (offsets of n segments
    /// of one item; segment results, bins and kept items are fewer).
    pub fn bound(contract: &Contract, n: usize) -> CaseBuffers {
        let bound = |b: &Buffer| match b.len {
            Len::N => n,
            Len::One => 1,
            Len::PerCase => n + 1,
        };
        CaseBuffers {
            inputs: contract.inputs.iter().map(bound).collect(),
            outputs: contract.outputs.iter().map(bound).collect(),
        }
    }
}

/// `bytes` rounded up to [`GRANULE`] (at least one granule: a buffer is allocated even when empty).
fn allocated(bytes: u128) -> u128 {
    bytes.max(1).div_ceil(GRANULE) * GRANULE
}

/// Bytes of each of `manifest`'s scratch buffers at `n` (at least one: see
/// [`super::launch::Scratch::prepare`]). Error: a length that does not evaluate at `n`.
pub fn scratch_bytes(manifest: &Manifest, n: usize) -> Result<Vec<u128>, String> {
    manifest
        .scratch
        .iter()
        .map(|s| {
            let len = s.len.eval(n).map_err(|e| format!("scratch {}: {e}", s.name))?;
            Ok((len.max(1) as u128) * s.dtype.size() as u128)
        })
        .collect()
}

/// Device bytes of one case, by kind of buffer, each allocation rounded up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeviceBytes {
    /// The contract's inputs.
    pub inputs: u128,
    /// The contract's outputs with their guards.
    pub outputs: u128,
    /// The manifest's scratch, as held while the case runs.
    pub scratch: u128,
}

impl DeviceBytes {
    /// All of them.
    pub fn total(&self) -> u128 {
        self.inputs + self.outputs + self.scratch
    }
}

/// The device bytes of a case with `buffers` while `scratch` (bytes per scratch buffer) is held.
pub fn device_bytes(contract: &Contract, buffers: &CaseBuffers, scratch: &[u128]) -> DeviceBytes {
    let inputs = contract.inputs.iter().zip(&buffers.inputs);
    let outputs = contract.outputs.iter().zip(&buffers.outputs);
    let output = |(b, &e): (&Buffer, &usize)| {
        let size = b.dtype.size();
        allocated((front_guard_bytes(size) + (e + GUARD_ELEMENTS) * size) as u128)
    };
    DeviceBytes {
        inputs: inputs.map(|(b, &e)| allocated(e as u128 * b.dtype.size() as u128)).sum(),
        outputs: outputs.map(output).sum(),
        scratch: scratch.iter().map(|&s| allocated(s)).sum(),
    }
}

/// Bytes of host memory case `id` of `manifest` needs at most. Made a piece
/// at a time (a streamed contract from `stream_from` elements on): two
/// batches of pieces, whatever n. Made whole: each input twice (the array
/// and its bytes for the upload) and each output three times (the model's,
/// the downloaded bytes, the parsed array), at [`CaseBuffers::bound`]'s
/// lengths plus the guards, an output at the wider of its type and the
/// model's (a float sum's exact values are float64); a typed contract's
/// judge also reads each input as float64 once.
pub fn host_bytes(manifest: &Manifest, id: &CaseId, stream_from: usize) -> u128 {
    let contract = manifest.contract;
    if super::streamed::case_of(contract, id, stream_from).is_some() {
        return u128::from(super::streamed::host_bytes(super::streamed::bytes_per_item(contract)));
    }
    let bound = CaseBuffers::bound(contract, id.n);
    let bytes = |elements: usize, size: usize| (elements + GUARD_ELEMENTS) as u128 * size as u128;
    let inputs = contract.inputs.iter().zip(&bound.inputs);
    let outputs = contract.outputs.iter().zip(&bound.outputs).enumerate();
    let input_bytes: u128 = inputs.clone().map(|(b, &e)| 2 * bytes(e, b.dtype.size())).sum();
    let output_bytes: u128 =
        outputs.map(|(k, (b, &e))| 3 * bytes(e, b.dtype.size().max(contract.expected_dtype(k).size()))).sum();
    let typed = crate::cases::typed::of(contract).is_some() || crate::cases::typed::rows::of(contract).is_some();
    let typed_view: u128 = if typed { inputs.map(|(_, &e)| bytes(e, 8)).sum() } else { 0 };
    input_bytes + output_bytes + typed_view
}

/// What the largest case of one size needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Needs {
    /// Its input size.
    pub n: usize,
    /// Device bytes, by kind.
    pub device: DeviceBytes,
    /// Host bytes.
    pub host: u128,
}

/// The sizes a check keeps, and a line for each size left out and each large size kept.
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    /// The sizes kept, in the order given.
    pub sizes: Vec<usize>,
    /// One line per size left out: the size, what it needs and what is available.
    pub left_out: Vec<String>,
    /// One line per size kept from 2^28 on: what it needs.
    pub notes: Vec<String>,
}

/// From this many elements on a kept size says what it needs.
const NOTED_FROM: usize = 1 << 28;

/// Keeps the sizes whose every case fits `machine` (device: [`DEVICE_SHARE`]
/// of its memory; host: [`HOST_SHARE`]). `cases_at(n)` gives the cases a
/// check plans at size `n` (a size may hold cases of other lengths: a
/// softmax's rows). Sizes are visited smallest first, as the cases run, so
/// that scratch held from a smaller size counts. Error: a scratch length
/// that does not evaluate (the manifest's validation prevents it).
pub fn fit(
    manifest: &Manifest,
    sizes: &[usize],
    cases_at: impl Fn(usize) -> Vec<CaseId>,
    machine: Machine,
) -> Result<Fitted, String> {
    let stream_from = super::streamed::stream_from_checked();
    let mut ascending = sizes.to_vec();
    ascending.sort_unstable();
    let mut held = vec![0u128; manifest.scratch.len()];
    let mut kept = std::collections::BTreeSet::new();
    let mut fitted = Fitted { sizes: Vec::new(), left_out: Vec::new(), notes: Vec::new() };
    for n in ascending {
        let (needs, scratch) = needs_at(manifest, &cases_at(n), &held, stream_from)?;
        match refusal(n, &needs, machine) {
            Some(line) => fitted.left_out.push(line),
            None => {
                kept.insert(n);
                held = scratch;
                if n >= NOTED_FROM {
                    fitted.notes.push(format!("n = {n}: {}", needs_words(&needs)));
                }
            }
        }
    }
    fitted.sizes = sizes.iter().copied().filter(|n| kept.contains(n)).collect();
    Ok(fitted)
}

/// What the largest of `cases` needs while scratch `held` is kept, and the
/// scratch held after them. An empty list needs nothing.
fn needs_at(
    manifest: &Manifest,
    cases: &[CaseId],
    held: &[u128],
    stream_from: usize,
) -> Result<(Needs, Vec<u128>), String> {
    let mut worst = Needs { n: 0, device: DeviceBytes::default(), host: 0 };
    let mut after = held.to_vec();
    for id in cases {
        let scratch: Vec<u128> = scratch_bytes(manifest, id.n)?.iter().zip(&after).map(|(&s, &h)| s.max(h)).collect();
        let device = device_bytes(manifest.contract, &CaseBuffers::of(manifest.contract, id, stream_from), &scratch);
        let host = host_bytes(manifest, id, stream_from);
        if device.total() > worst.device.total() {
            worst = Needs { n: id.n, device, host: worst.host };
        }
        worst.host = worst.host.max(host);
        after = scratch;
    }
    Ok((worst, after))
}

/// Why size `n` does not fit `machine`, if it does not.
fn refusal(n: usize, needs: &Needs, machine: Machine) -> Option<String> {
    let device_budget = machine.device as f64 * DEVICE_SHARE;
    if needs.device.total() as f64 > device_budget {
        return Some(format!(
            "n = {n} left out: {}; {} of device memory may be used ({:.0} % of the GPU's {})",
            needs_words(needs),
            gb(device_budget),
            DEVICE_SHARE * 100.0,
            gb(machine.device as f64)
        ));
    }
    let host = machine.host?;
    let host_budget = host as f64 * HOST_SHARE;
    (needs.host as f64 > host_budget).then(|| {
        format!(
            "n = {n} left out: {}; {} of host memory may be used ({:.0} % of the host's {})",
            needs_words(needs),
            gb(host_budget),
            HOST_SHARE * 100.0,
            gb(host as f64)
        )
    })
}

/// `its largest case (n = N) needs about 17.2 GB of device memory (inputs 17.2 GB, outputs with guards 0.0 GB, scratch 0.0 GB: 4.0 bytes per element) and about 0.8 GB of host memory`.
fn needs_words(needs: &Needs) -> String {
    let d = needs.device;
    format!(
        "its largest case (n = {}) needs about {} of device memory (inputs {}, outputs with guards {}, scratch {}: \
         {:.1} bytes per element) and about {} of host memory",
        needs.n,
        gb(d.total() as f64),
        gb(d.inputs as f64),
        gb(d.outputs as f64),
        gb(d.scratch as f64),
        d.total() as f64 / needs.n.max(1) as f64,
        gb(needs.host as f64)
    )
}

/// `17.2 GB` (10^9 bytes).
fn gb(bytes: f64) -> String {
    format!("{:.1} GB", bytes / 1e9)
}

#[cfg(test)]
#[path = "budget_tests.rs"]
mod tests;

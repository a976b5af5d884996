//! The sizes `harness check` visits beyond the sweep's, and why:
//!
//! * by default one size just past 2^28 ([`PAST_2_28`]), and with `--deep` large-offset
//!   cases past 2^31 elements ([`PAST_2_31`], where a signed 32-bit index or byte offset wraps)
//!   and past 2^32 ([`PAST_2_32`], where an unsigned one wraps; dropped for a kernel given
//!   `n32`), every data family there, each skipped with a message when the GPU's memory cannot
//!   hold the case ([`fit_memory`]);
//! * under `--sanitize`, sizes chosen from the manifest's launch grids ([`sanitizer_sizes`]):
//!   every launch with one block, several blocks, a partial last block and only full blocks.

use super::error::ManifestError;
use super::expr::Expr;
use super::manifest::Manifest;
use crate::sweep::raw::Len;

/// One past 2^28: the first size past the sweep's largest.
pub use crate::cases::export::PAST_2_28;

/// Past 2^31 elements: an `int` index, or an `int` byte offset of a 1-byte type, wraps negative.
pub const PAST_2_31: usize = (1 << 31) + 1000;

/// Past 2^32 elements: an `unsigned int` index or tile number wraps to 0 (for a kernel given n
/// as 64 bits; one given `n32` cannot be checked there, and the size is dropped, said so).
pub const PAST_2_32: usize = (1 << 32) + 1000;

/// The sizes this module adds, each with its label.
const ADDED: [(usize, &str); 3] =
    [(PAST_2_28, "past 2^28"), (PAST_2_31, "past 2^31, --deep"), (PAST_2_32, "past 2^32, --deep")];

/// Whether `n` is a size this module adds.
fn added(n: usize) -> bool {
    ADDED.iter().any(|&(a, _)| a == n)
}

/// The share of the GPU's memory a case may plan to use (the rest: the context, the module,
/// the allocator's rounding).
const MEMORY_SHARE: f64 = 0.9;

/// The sizes of a default `check`: the sweep's (boundary, random, 2^24, 2^28), then
/// [`PAST_2_28`]; with `deep` (`check --deep`) [`PAST_2_31`] and [`PAST_2_32`] too; each
/// once. (A case past 2^31 takes tens of GB of device memory and seconds of every core of
/// the host, so it is asked for.)
pub fn default_sizes(seed: u64, deep: bool) -> Vec<usize> {
    let mut sizes = crate::sweep::sizes::sweep_sizes(&[], seed, false, true);
    let extra: &[usize] = if deep { &[PAST_2_28, PAST_2_31, PAST_2_32] } else { &[PAST_2_28] };
    for &n in extra {
        if !sizes.contains(&n) {
            sizes.push(n);
        }
    }
    sizes
}

/// Bytes of device memory the case of size `n` needs at most: every contract buffer (one of
/// `n` elements for [`Len::N`]; a per-case buffer, bins or offsets, is counted as `n`
/// elements, an upper bound), the output guards, and every scratch buffer at `len(n)`.
/// Error: a scratch length that does not evaluate at `n`.
pub fn device_bytes(manifest: &Manifest, n: usize) -> Result<u128, String> {
    let contract = manifest.contract;
    let buffers = contract.inputs.iter().chain(contract.outputs);
    let mut bytes: u128 = buffers
        .map(|b| {
            let elements = match b.len {
                Len::N | Len::PerCase => n,
                Len::One => 1,
            };
            (elements + super::launch::GUARD_ELEMENTS) as u128 * b.dtype.size() as u128
        })
        .sum();
    for s in &manifest.scratch {
        let len = s.len.eval(n).map_err(|e| format!("scratch {}: {e}", s.name))?;
        bytes += len.max(1) as u128 * s.dtype.size() as u128;
    }
    Ok(bytes)
}

/// Bytes of host memory the case of size `n` needs at most: each input twice (the array and
/// its bytes for the upload) and each output three times (the model's, the downloaded bytes,
/// the parsed array), every buffer counted as in [`device_bytes`], an output at the wider of
/// its type and the model's (a float sum's exact values are float64); a typed contract's
/// judge also reads each input as float64 once; a few pieces' worth for a case made and
/// judged a piece at a time ([`super::streamed`]).
pub fn host_bytes(manifest: &Manifest, n: usize) -> u128 {
    let contract = manifest.contract;
    if n >= super::streamed::stream_from_checked() && super::streamed::streams(contract) {
        // Made and judged a piece at a time: a few pieces, whatever n.
        return u128::from(super::streamed::host_bytes(super::streamed::bytes_per_item(contract)));
    }
    let bytes = |b: &crate::sweep::raw::Buffer, size: usize| {
        let elements = if b.len == Len::One { 1 } else { n };
        (elements + super::launch::GUARD_ELEMENTS) as u128 * size as u128
    };
    let inputs: u128 = contract.inputs.iter().map(|b| 2 * bytes(b, b.dtype.size())).sum();
    let outputs: u128 = (contract.outputs.iter().enumerate())
        .map(|(k, b)| 3 * bytes(b, b.dtype.size().max(contract.expected_dtype(k).size())))
        .sum();
    let typed = crate::cases::typed::of(contract).is_some() || crate::cases::typed::rows::of(contract).is_some();
    let typed_view: u128 = if typed { contract.inputs.iter().map(|b| bytes(b, 8)).sum() } else { 0 };
    inputs + outputs + typed_view
}

/// The sizes a check runs and the ones it skipped for memory, each with its reason.
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    /// The sizes kept, in order.
    pub sizes: Vec<usize>,
    /// One line per skipped size.
    pub skipped: Vec<String>,
    /// One line per large size kept: what it needs.
    pub notes: Vec<String>,
}

/// Keeps the sizes whose case fits [`MEMORY_SHARE`] of `total_memory` bytes of device memory;
/// only [`PAST_2_28`], [`PAST_2_31`] and [`PAST_2_32`] (the defaults this module adds) are ever skipped: a
/// size the user asked for that does not fit is refused later, as before. Each skip says what
/// the case needs (device and host memory: the host holds the input, the model's output and
/// the downloaded output, about as much again as the device).
pub fn fit_memory(manifest: &Manifest, sizes: &[usize], total_memory: usize) -> Fitted {
    let budget = total_memory as f64 * MEMORY_SHARE;
    let mut fitted = Fitted { sizes: Vec::new(), skipped: Vec::new(), notes: Vec::new() };
    for &n in sizes {
        if !added(n) {
            fitted.sizes.push(n);
            continue;
        }
        let host = host_bytes(manifest, n) as f64;
        match device_bytes(manifest, n) {
            Ok(bytes) if (bytes as f64) <= budget => {
                fitted.sizes.push(n);
                fitted.notes.push(format!("n = {n} ({}): {}", label(n), needs(n, bytes as f64, host)));
            }
            Ok(bytes) => fitted.skipped.push(format!(
                "n = {n} ({}) skipped for memory: {}, more than {:.0} % of the GPU's {:.1} GB",
                label(n),
                needs(n, bytes as f64, host),
                MEMORY_SHARE * 100.0,
                total_memory as f64 / 1e9
            )),
            Err(e) => fitted.skipped.push(format!("n = {n} skipped: its device memory is unknown ({e})")),
        }
    }
    fitted
}

/// `past 2^28`, `past 2^31, --deep` or `past 2^32, --deep`.
fn label(n: usize) -> &'static str {
    ADDED.iter().find(|&&(a, _)| a == n).map_or("", |&(_, label)| label)
}

/// `the case needs about 25.8 GB of device memory (12.0 bytes per element: ...) and about 68.7 GB of host memory`.
fn needs(n: usize, device: f64, host: f64) -> String {
    format!(
        "the case needs about {:.1} GB of device memory ({:.1} bytes per element: the contract's buffers and \
         the manifest's scratch) and about {:.1} GB of host memory",
        device / 1e9,
        device / n as f64,
        host / 1e9
    )
}

/// Loads the manifest at `path` for `sizes` (as [`super::manifest::load`]); where its geometry
/// cannot launch a size this module added ([`PAST_2_28`], [`PAST_2_31`], [`PAST_2_32`]: a grid
/// of more than 2^31 - 1 blocks, say), or its launches pass n as `n32` at a size past 2^32,
/// that size is dropped with a line saying why and the manifest is loaded for the rest. Returns the manifest, the sizes kept and the lines.
pub fn load_launchable(
    path: &std::path::Path,
    mut sizes: Vec<usize>,
    gpu_arch: Option<&str>,
) -> Result<(Manifest, Vec<usize>, Vec<String>), ManifestError> {
    let mut dropped = Vec::new();
    loop {
        match super::manifest::load(path, &sizes, gpu_arch) {
            Ok(manifest) => return Ok((manifest, sizes, dropped)),
            Err(e @ ManifestError::Geometry { n, .. }) if added(n) => {
                dropped.push(format!("n = {n} skipped: the launch geometry does not hold there ({e})"));
                sizes.retain(|&s| s != n);
            }
            Err(ManifestError::NarrowN { n }) if added(n) => {
                dropped.push(format!(
                    "n = {n} ({}) skipped: a launch passes n32, which cannot hold it (pass n, 64-bit, to be \
                     checked past 2^32)",
                    label(n)
                ));
                sizes.retain(|&s| s != n);
            }
            Err(e) => return Err(e),
        }
    }
}

/// The most sizes [`sanitizer_sizes`] chooses (the tools run every case four times, slowly).
pub const SANITIZER_MAX_SIZES: usize = 12;

/// The largest size [`sanitizer_sizes`] chooses unless a launch needs more to reach two
/// blocks.
pub const SANITIZER_SIZE_LIMIT: usize = 1 << 22;

/// Where the search for a grid step gives up: our kernels refuse n > `u32::MAX`.
const SEARCH_LIMIT: usize = u32::MAX as usize;

/// One sanitizer size and why it was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SanitizerSize {
    /// The size.
    pub n: usize,
    /// Why: the launch and what its grid does there.
    pub why: String,
}

/// The blocks of `grid` at `n` (None where it does not evaluate).
fn blocks(grid: &Expr, n: usize) -> Option<i128> {
    grid.eval(n).ok()
}

/// The smallest n in `1..=SEARCH_LIMIT` with `grid(n) >= target`, by doubling then binary
/// search. The binary search keeps `grid(lo) < target <= grid(hi)`, so the n it returns is a
/// step (`grid(n - 1) < target <= grid(n)`) even if the grid is not monotone; None where the
/// doubling never reaches `target`.
fn first_reaching(grid: &Expr, target: i128) -> Option<usize> {
    let reaches = |n: usize| blocks(grid, n).is_some_and(|b| b >= target);
    if reaches(1) {
        return Some(1);
    }
    let mut lo = 1;
    let mut hi = 2;
    while !reaches(hi) {
        if hi >= SEARCH_LIMIT {
            return None;
        }
        lo = hi;
        hi = (hi * 2).min(SEARCH_LIMIT);
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if reaches(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// One candidate of a launch: the size, and whether it may pass [`SANITIZER_SIZE_LIMIT`] (the
/// first step to a second block: without it the launch never runs several blocks).
type Candidate = (SanitizerSize, bool);

/// The candidate sizes of one launch, most important first: n = 1; the first step of its grid
/// (one more block than at n = 1: the last block partial) and the size just below (full blocks
/// only); the second step and the size below it (several full blocks); where the grid stops
/// growing (a cap such as `min(.., 132)`), the first size at the cap and one of three times
/// that (blocks loop over several tiles, the last partial). A grid that never grows (constant,
/// or growing only past [`SEARCH_LIMIT`]) gives n = 1 alone.
fn launch_sizes(kernel: &str, grid: &Expr) -> Vec<Candidate> {
    let at = |n: usize| blocks(grid, n).map(|b| b.to_string()).unwrap_or_else(|| "?".into());
    let size = |n: usize, what: &str| SanitizerSize { n, why: format!("{kernel}: grid {} ({what})", at(n)) };
    let Some(base) = blocks(grid, 1) else { return Vec::new() };
    let what_at_one = if base <= 1 { "one block" } else { "several blocks at n = 1" };
    let mut out = vec![(size(1, what_at_one), false)];
    let Some(step1) = first_reaching(grid, base + 1) else { return out };
    out.push((size(step1, "one more block, the last partial"), true));
    if step1 > 1 {
        out.push((size(step1 - 1, "full blocks only"), true));
    }
    if let Some(step2) = first_reaching(grid, base + 2) {
        out.push((size(step2 - 1, "several full blocks"), false));
        out.push((size(step2, "several blocks, the last partial"), false));
    }
    if let Some(cap) = grid_cap(grid) {
        out.push((size(cap, "the grid at its cap"), false));
        out.push((size(3 * cap, "past the cap: blocks loop, the last tile partial"), false));
    }
    out
}

/// The first size at which a capped grid reaches its largest value, when that value is reached
/// well before [`SEARCH_LIMIT`] (the grid at `SANITIZER_SIZE_LIMIT` equals the one at
/// `SEARCH_LIMIT`); None for a grid that keeps growing.
fn grid_cap(grid: &Expr) -> Option<usize> {
    let top = blocks(grid, SEARCH_LIMIT)?;
    if blocks(grid, SANITIZER_SIZE_LIMIT)? != top || blocks(grid, 1)? >= top {
        return None;
    }
    first_reaching(grid, top)
}

/// The sanitizer sizes for launches `(kernel, grid)`: each launch's candidates
/// ([`launch_sizes`]) taken in turn (every launch's most important first), each size once (its
/// first reason kept), sizes above [`SANITIZER_SIZE_LIMIT`] only where a launch needs one to
/// reach a second block; then `defaults` (the sanitizer's fixed sizes: the items-per-block
/// boundaries of our kernels, which a grid expression cannot show, such as a one-block pass
/// over per-block sums) while room is left; at most [`SANITIZER_MAX_SIZES`], sorted.
pub fn sanitizer_sizes(launches: &[(String, Expr)], defaults: &[usize]) -> Vec<SanitizerSize> {
    let per_launch: Vec<Vec<Candidate>> = launches.iter().map(|(k, g)| launch_sizes(k, g)).collect();
    let mut chosen: Vec<SanitizerSize> = Vec::new();
    let add = |s: &SanitizerSize, chosen: &mut Vec<SanitizerSize>| {
        if !chosen.iter().any(|c| c.n == s.n) && chosen.len() < SANITIZER_MAX_SIZES {
            chosen.push(s.clone());
        }
    };
    let depth = per_launch.iter().map(Vec::len).max().unwrap_or(0);
    for rank in 0..depth {
        for (s, may_pass_limit) in per_launch.iter().filter_map(|c| c.get(rank)) {
            if s.n <= SANITIZER_SIZE_LIMIT || *may_pass_limit {
                add(s, &mut chosen);
            }
        }
    }
    let constant = per_launch.iter().all(|c| c.len() <= 1);
    let why =
        if constant { "every grid is constant in n: a default sanitizer size" } else { "a default sanitizer size" };
    for &n in defaults {
        add(&SanitizerSize { n, why: why.to_string() }, &mut chosen);
    }
    chosen.sort_by_key(|s| s.n);
    chosen
}

/// [`sanitizer_sizes`] for `manifest`'s launches, with [`crate::sweep::sizes::SANITIZE_SIZES`] as
/// the defaults.
pub fn manifest_sanitizer_sizes(manifest: &Manifest) -> Vec<SanitizerSize> {
    let launches: Vec<(String, Expr)> = manifest.launches.iter().map(|l| (l.kernel.clone(), l.grid.clone())).collect();
    sanitizer_sizes(&launches, &crate::sweep::sizes::SANITIZE_SIZES)
}

#[cfg(test)]
#[path = "extra_sizes_tests.rs"]
mod tests;

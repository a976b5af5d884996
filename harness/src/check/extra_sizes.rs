//! The sizes `harness check` visits beyond the sweep's, and why:
//!
//! * by default one size just past 2^28 ([`PAST_2_28`]), and with `--deep` large-offset
//!   cases past 2^31 elements ([`PAST_2_31`], where a signed 32-bit index or byte offset wraps)
//!   and past 2^32 ([`PAST_2_32`], where an unsigned one wraps; dropped for a kernel given
//!   `n32`), every data family there (each size, as any other, left out with a line when this
//!   machine cannot hold its cases: [`super::budget`]);
//! * under `--sanitize`, sizes chosen from the manifest's launch grids ([`sanitizer_sizes`]):
//!   every launch with one block, several blocks, a partial last block and only full blocks.

use super::error::ManifestError;
use super::expr::Expr;
use super::manifest::Manifest;

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

/// `past 2^28`, `past 2^31, --deep` or `past 2^32, --deep`.
fn label(n: usize) -> &'static str {
    ADDED.iter().find(|&&(a, _)| a == n).map_or("", |&(_, label)| label)
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

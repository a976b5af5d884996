//! Prefix scans (`cuda/scan.cu`): int32 input with int64 output, and
//! in-order compositions of [`AffineMap`]s, exclusive and inclusive, in
//! three schedules ([`ScanVariant`]).
//!
//! Contract, for every variant:
//! * exclusive: `out[0]` = identity (0, or [`AffineMap::IDENTITY`]),
//!   `out[i] = x[0] (+) ... (+) x[i-1]`; inclusive: `out[i] = exclusive[i]
//!   (+) x[i]`. For affine maps `(+)` is [`AffineMap::combine`] with the
//!   earlier elements on the left (wrapping u64: no bound from the values).
//! * int32: every prefix is added modulo 2^64 (the kernels add the
//!   two's-complement bits, `SumI64` in `operators.cuh`), so each output is
//!   the exact prefix whenever that prefix fits int64, in every schedule:
//!   always so for `n <= 2^32` (`|prefix| <= n * 2^31 <= 2^63`, and `-2^63`
//!   fits). Past 2^32 items a prefix *can* leave int64 (2^32 + 1 copies of
//!   `i32::MIN`); that output is then the exact prefix wrapped to int64, and
//!   the later ones go on from the wrapped value (they are still the exact
//!   prefixes modulo 2^64), as CUB's and `torch.cumsum`'s int64 scans give.
//!   No overflow is reported.
//! * An empty input returns an empty output without a launch.
//! * `n > variant.max_len()` is [`GpuError::InvalidInput`]: [`SERIAL_MAX_LEN`]
//!   for the one-thread baseline, [`BLELLOCH_MAX_LEN`] (2^40 - 512) and
//!   [`LOOKBACK_MAX_LEN`] (about 2^43.1): the most items whose launches fit
//!   a grid, far past any device memory. The limit in practice is device
//!   memory: [`Gpu::scan`] refuses an input whose buffers do not fit the
//!   device's free memory with [`GpuError::DeviceMemory`], naming both.
//! * A look-back spin that runs out is [`GpuError::KernelFault`].
//! * Every item index, block or tile base and count is 64-bit on the device
//!   and on the host ([`ScanGeometry`] holds a plan's launches and scratch
//!   in u64; tests build it past 2^32 and 2^33). Tile ids stay 32-bit: a
//!   tile id is below the grid size, at most 2^31 - 1.

use crate::affine::AffineMap;
use crate::device::Gpu;
use crate::error::{DriverContext, GpuError, GpuResult};
use crate::int_element;
pub use crate::int_element::SERIAL_MAX_LEN;
use crate::kernel_family::KernelFamily;
use crate::launch::{check_vector_aligned, config, BLOCK_THREADS};
use crate::lookback::LookbackScratch;
use crate::plan_description::PlanDescription;
use crate::policy::{BLOCK, SCAN};
pub use crate::reduce::MAX_GRID_BLOCKS;
use cudarc::driver::{CudaFunction, CudaSlice, CudaView, CudaViewMut, DeviceRepr, PushKernelArg, ValidAsZeroBits};

/// Items per block of the Blelloch block scan (`kBlockItems`).
pub const BLELLOCH_BLOCK_ITEMS: usize = (BLOCK.threads * BLOCK.hierarchical_items_per_thread) as usize;
/// Threads per block of the look-back scan (`kScanBlockThreads`).
pub const LOOKBACK_BLOCK_THREADS: u32 = SCAN.block_threads;
/// Items per thread of the look-back scan (`kScanItemsPerThread`).
pub const LOOKBACK_ITEMS_PER_THREAD: usize = SCAN.items_per_thread as usize;
/// Items per tile of the look-back scan, int32 and affine alike (`kScanTileItems`).
pub const LOOKBACK_TILE_ITEMS: usize = LOOKBACK_BLOCK_THREADS as usize * LOOKBACK_ITEMS_PER_THREAD;

/// The longest input of the Blelloch multi-pass scan: its level 0 has the
/// most blocks, ceil(n / 512), and they must fit [`MAX_GRID_BLOCKS`]:
/// `(2^31 - 1) * 512 = 2^40 - 512` items (the reduce's multipass limit).
/// That takes five levels (past 512^4 = 2^36 items).
pub const BLELLOCH_MAX_LEN: usize = MAX_GRID_BLOCKS as usize * BLELLOCH_BLOCK_ITEMS;
/// The longest input of the decoupled look-back scan: one block a tile, so
/// `(2^31 - 1)` tiles of [`LOOKBACK_TILE_ITEMS`] (about 9.6e12 items, 2^43.1).
/// Its tile ids and tile counter are u32 and never pass 2^31 - 1.
pub const LOOKBACK_MAX_LEN: usize = MAX_GRID_BLOCKS as usize * LOOKBACK_TILE_ITEMS;
/// The longest input every scan variant but the serial baseline accepts
/// (the smaller of [`BLELLOCH_MAX_LEN`] and [`LOOKBACK_MAX_LEN`]): 2^40 - 512
/// items, 4.4 TB of int32 (13.2 TB with its int64 output); device memory
/// always runs out first ([`GpuError::DeviceMemory`]).
pub const MAX_LEN: usize = if BLELLOCH_MAX_LEN < LOOKBACK_MAX_LEN { BLELLOCH_MAX_LEN } else { LOOKBACK_MAX_LEN };

/// Exclusive or inclusive scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScanKind {
    /// `out[0]` = identity, `out[i] = x[0] (+) ... (+) x[i-1]`.
    Exclusive,
    /// `out[i] = x[0] (+) ... (+) x[i] = exclusive[i] (+) x[i]`.
    Inclusive,
}

impl ScanKind {
    /// Both kinds, in report order.
    pub const ALL: [ScanKind; 2] = [ScanKind::Exclusive, ScanKind::Inclusive];

    /// The snake_case name used in reports and kernel names.
    pub fn name(&self) -> &'static str {
        match self {
            ScanKind::Exclusive => "exclusive",
            ScanKind::Inclusive => "inclusive",
        }
    }
}

/// The schedules of a prefix scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScanVariant {
    /// One thread, left to right (`<<<1, 1>>>`): the baseline.
    /// `n <= SERIAL_MAX_LEN`.
    Serial,
    /// Multi-pass: a Blelloch scan of 512 items per block, block totals
    /// scanned recursively by the same kernel to any depth
    /// ([`blelloch_levels`]), then the offsets added back level by level.
    Blelloch,
    /// Single pass with decoupled look-back (tile ids from an atomic counter,
    /// status X/A/P published with release/acquire, bounded spin).
    DecoupledLookback,
}

impl ScanVariant {
    /// Every variant, in report order.
    pub const ALL: [ScanVariant; 3] = [ScanVariant::Serial, ScanVariant::Blelloch, ScanVariant::DecoupledLookback];

    /// The snake_case name used in reports.
    pub fn name(&self) -> &'static str {
        match self {
            ScanVariant::Serial => "serial",
            ScanVariant::Blelloch => "blelloch",
            ScanVariant::DecoupledLookback => "decoupled_lookback",
        }
    }

    /// The variant called `name` (as [`ScanVariant::name`] spells it).
    pub fn from_name(name: &str) -> Option<ScanVariant> {
        ScanVariant::ALL.into_iter().find(|v| v.name() == name)
    }

    /// The largest n this variant accepts (inclusive): [`SERIAL_MAX_LEN`]
    /// for `Serial`, the grid limits [`BLELLOCH_MAX_LEN`] and
    /// [`LOOKBACK_MAX_LEN`] for the others (device memory runs out first).
    pub fn max_len(&self) -> usize {
        match self {
            ScanVariant::Serial => SERIAL_MAX_LEN,
            ScanVariant::Blelloch => BLELLOCH_MAX_LEN,
            ScanVariant::DecoupledLookback => LOOKBACK_MAX_LEN,
        }
    }
}

/// The item counts of the Blelloch recursion levels: `m_0 = n`, `m_{k+1} =
/// ceil(m_k / 512)`, up to the first level that fits one block (`<= 512`).
/// Empty for n = 0.
pub fn blelloch_level_sizes(n: usize) -> Vec<usize> {
    let mut sizes = Vec::new();
    if n == 0 {
        return sizes;
    }
    sizes.push(n);
    while let Some(&last) = sizes.last().filter(|&&m| m > BLELLOCH_BLOCK_ITEMS) {
        sizes.push(last.div_ceil(BLELLOCH_BLOCK_ITEMS));
    }
    sizes
}

/// How many recursion levels (block-scan launches) the Blelloch multi-pass
/// scan launches for n items: 0 for n = 0 (nothing is launched), 1 for
/// n <= 512, 2 up to 512^2 = 262,144, 3 from 262,145 up to 512^3, 4 up to
/// 512^4 = 2^36, 5 up to [`BLELLOCH_MAX_LEN`].
/// It also launches `levels - 1` offset-adding kernels.
pub fn blelloch_levels(n: usize) -> usize {
    blelloch_level_sizes(n).len()
}

/// An input element type of the scans: `i32` (int64 prefixes) or
/// [`AffineMap`] (in-order compositions). Sealed: the kernels exist for these two.
pub trait ScanElement: DeviceRepr + Copy + int_element::Sealed {
    /// The output element: `i64` for `i32`, `AffineMap` for itself.
    type Output: DeviceRepr + ValidAsZeroBits + Copy + std::fmt::Debug + PartialEq;
    /// The primitive's name in errors and reports.
    const PRIMITIVE: &'static str;
    /// Kernel-name suffix of the input type.
    const INPUT_SUFFIX: &'static str;
    /// Kernel-name suffix of the output (and block-total) type.
    const OUTPUT_SUFFIX: &'static str;
}

impl ScanElement for i32 {
    type Output = i64;
    const PRIMITIVE: &'static str = "scan";
    const INPUT_SUFFIX: &'static str = "i32";
    const OUTPUT_SUFFIX: &'static str = "i64";
}

impl ScanElement for AffineMap {
    type Output = AffineMap;
    const PRIMITIVE: &'static str = "scan_affine";
    const INPUT_SUFFIX: &'static str = "affine";
    const OUTPUT_SUFFIX: &'static str = "affine";
}

fn invalid(primitive: &'static str, variant: ScanVariant, n: usize, reason: String) -> GpuError {
    GpuError::InvalidInput { primitive, variant: variant.name(), n, reason }
}

fn check_len<E: ScanElement>(variant: ScanVariant, n: usize) -> GpuResult<()> {
    GpuError::check_max_len(E::PRIMITIVE, variant.name(), variant.max_len(), n)
}

/// `ceil(m / 512)` as a grid size, at least 1. Past [`MAX_GRID_BLOCKS`]
/// blocks (m > [`BLELLOCH_MAX_LEN`]) the reason in words.
fn blelloch_grid(m: usize) -> Result<u32, String> {
    grid_of(m.div_ceil(BLELLOCH_BLOCK_ITEMS).max(1))
}

/// `blocks` as a one-dimensional grid, or why not.
fn grid_of(blocks: usize) -> Result<u32, String> {
    match u32::try_from(blocks) {
        Ok(grid) if u64::from(grid) <= MAX_GRID_BLOCKS => Ok(grid),
        _ => Err(format!("a launch of {blocks} blocks, more than the {MAX_GRID_BLOCKS} a grid may have")),
    }
}

/// What one launch of a scan plan runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanStep {
    /// `scan_serial_<k>_<t>` `<<<1, 1>>>`.
    Serial,
    /// Blelloch level `k`'s block scans: level 0 over the input into the
    /// output (`scan_blelloch_level_<k>_<t>`), level k >= 1 over the block
    /// totals of level k - 1, in place (`scan_blelloch_level_inplace_<o>`);
    /// each writes its blocks' totals into totals buffer k.
    Level(usize),
    /// The scanned totals of level `into + 1` added back into level `into`'s
    /// data: the output for 0 (`scan_blelloch_add_offsets_<o>`), totals
    /// buffer `into - 1` otherwise (`scan_blelloch_add_offsets_totals_<o>`).
    AddOffsets {
        /// The level whose data the offsets go into.
        into: usize,
    },
    /// `scan_decoupled_lookback_<k>_<t>`, one block a tile.
    Lookback,
}

/// One launch of a scan plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanLaunch {
    /// Its kernel.
    pub step: ScanStep,
    /// Blocks (`gridDim.x`), at most [`MAX_GRID_BLOCKS`].
    pub grid: u32,
    /// Threads per block.
    pub block: u32,
    /// Elements the launch covers (its `count` argument).
    pub items: u64,
}

/// The launch geometry of a [`ScanPlan`], computed on the host in u64
/// before any allocation: the plan allocates and launches exactly this
/// (CPU tests build it for n past 2^32 and 2^33, where a 32-bit count,
/// grid or offset would wrap).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanGeometry {
    /// The launches one `enqueue` makes, in order.
    pub launches: Vec<ScanLaunch>,
    /// Blelloch: elements (of the output type) of each level's totals
    /// buffer, `ceil(m_k / 512)` for level k (the top level's is 1). Empty
    /// otherwise.
    pub totals: Vec<u64>,
    /// Look-back: the tiles (its grid), one descriptor each. 0 otherwise.
    pub tiles: u64,
    /// Look-back: `u64` words of its scratch, zeroed before the launch
    /// ([`crate::lookback::scratch_words`]). 0 otherwise.
    pub scratch_words: u64,
}

impl ScanGeometry {
    /// The geometry of scanning `n` elements of `E` with `variant`. Error:
    /// `n` is 0 or a grid would pass [`MAX_GRID_BLOCKS`] (the reason in
    /// words).
    pub fn new<E: ScanElement>(variant: ScanVariant, n: usize) -> Result<Self, String> {
        if n == 0 {
            return Err("a plan needs at least one element".into());
        }
        let none = ScanGeometry { launches: vec![], totals: vec![], tiles: 0, scratch_words: 0 };
        Ok(match variant {
            ScanVariant::Serial => ScanGeometry {
                launches: vec![ScanLaunch { step: ScanStep::Serial, grid: 1, block: 1, items: n as u64 }],
                ..none
            },
            ScanVariant::Blelloch => {
                let sizes = blelloch_level_sizes(n);
                let grids = sizes.iter().map(|&m| blelloch_grid(m)).collect::<Result<Vec<u32>, String>>()?;
                let launch =
                    |step, k: usize| ScanLaunch { step, grid: grids[k], block: BLOCK_THREADS, items: sizes[k] as u64 };
                let mut launches: Vec<ScanLaunch> = (0..sizes.len()).map(|k| launch(ScanStep::Level(k), k)).collect();
                // Offsets, top level first: level k's scanned totals into level k - 1.
                launches.extend((1..sizes.len()).rev().map(|k| launch(ScanStep::AddOffsets { into: k - 1 }, k - 1)));
                ScanGeometry { launches, totals: grids.iter().map(|&g| u64::from(g)).collect(), ..none }
            }
            ScanVariant::DecoupledLookback => {
                let tiles = n.div_ceil(LOOKBACK_TILE_ITEMS);
                let grid = grid_of(tiles)?;
                ScanGeometry {
                    launches: vec![ScanLaunch {
                        step: ScanStep::Lookback,
                        grid,
                        block: LOOKBACK_BLOCK_THREADS,
                        items: n as u64,
                    }],
                    tiles: tiles as u64,
                    scratch_words: crate::lookback::scratch_words(tiles, std::mem::size_of::<E::Output>()) as u64,
                    ..none
                }
            }
        })
    }

    /// Bytes of device scratch the plan allocates (totals or look-back words).
    pub fn scratch_bytes<E: ScanElement>(&self) -> u64 {
        let output = std::mem::size_of::<E::Output>() as u64;
        self.totals.iter().map(|&t| t * output).sum::<u64>() + 8 * self.scratch_words
    }
}

enum Schedule<P> {
    Serial {
        kernel: CudaFunction,
    },
    Blelloch {
        level0: CudaFunction,
        inplace: CudaFunction,
        add_into_output: CudaFunction,
        add_into_totals: CudaFunction,
        /// `totals[k]`: the block totals of level k (`ScanGeometry::totals`),
        /// scanned in place as level k + 1; the top level's is one slot.
        totals: Vec<CudaSlice<P>>,
    },
    DecoupledLookback {
        kernel: CudaFunction,
        /// Tile counter, error word and one descriptor per tile, zeroed
        /// before each launch.
        scratch: LookbackScratch,
        values: std::marker::PhantomData<P>,
    },
}

/// A scan of `n` device-resident elements, with every scratch buffer
/// allocated up front, for timing: [`ScanPlan::enqueue`] only launches (plus
/// the memset named below) on the [`Gpu`]'s stream, with no allocation, host
/// copy or synchronisation.
///
/// What `enqueue` puts on the stream, per variant (`<k>` = exclusive or
/// inclusive, `<t>` = i32 or affine, `<o>` = i64 or affine):
/// * `Serial`: one launch `scan_serial_<k>_<t>` `<<<1, 1>>>`.
/// * `Blelloch` with L = [`blelloch_levels`]`(n)` levels of sizes m_k: L
///   block-scan launches, `scan_blelloch_level_<k>_<t>` over the input into
///   the output (level 0), then `scan_blelloch_level_inplace_<o>` over the
///   block totals of each level (levels 1 .. L-1), each `<<<ceil(m_k/512),
///   256>>>`; then L - 1 offset launches, top level first:
///   `scan_blelloch_add_offsets_totals_<o>` into totals levels (only when
///   L >= 3) and `scan_blelloch_add_offsets_<o>` into the output. No memset.
/// * `DecoupledLookback`: a memset to 0 of the look-back scratch (16 header
///   bytes and one descriptor per tile: 16 bytes for int64 values, 32 for
///   affine maps; see [`crate::lookback`]), then one launch
///   `scan_decoupled_lookback_<k>_<t>` `<<<tiles, LOOKBACK_BLOCK_THREADS>>>`,
///   tiles = ceil(n / [`LOOKBACK_TILE_ITEMS`]) (224 threads x 20 items, for
///   both element types).
///
/// [`ScanPlan::launch_geometry`] lists these launches with their grids and
/// counts ([`ScanGeometry`], computed in u64 before anything is allocated).
///
/// Buffers are the caller's: whole `CudaSlice`s ([`ScanPlan::enqueue`]) or
/// views starting at a [`BUFFER_ALIGN`](crate::launch::BUFFER_ALIGN)-byte boundary
/// ([`ScanPlan::enqueue_view`]), on the plan's [`Gpu`] context. After a synchronisation,
/// [`ScanPlan::check_fault`] reports a look-back spin that ran out.
pub struct ScanPlan<'g, E: ScanElement = i32> {
    gpu: &'g Gpu,
    variant: ScanVariant,
    kind: ScanKind,
    n: usize,
    geometry: ScanGeometry,
    schedule: Schedule<E::Output>,
}

impl<'g, E: ScanElement> ScanPlan<'g, E> {
    /// Compiles (once per process) and loads the kernels and allocates the
    /// scratch for a `kind` scan of `n` elements with `variant`. `1 <= n <=
    /// variant.max_len()`, else [`GpuError::InvalidInput`] (the host methods
    /// answer n = 0 without a plan).
    pub fn new(gpu: &'g Gpu, variant: ScanVariant, kind: ScanKind, n: usize) -> GpuResult<Self> {
        let geometry = Self::geometry(variant, n)?;
        let function = |name: String| gpu.function(KernelFamily::Scan, &name);
        let (k, t, o) = (kind.name(), E::INPUT_SUFFIX, E::OUTPUT_SUFFIX);
        let schedule = match variant {
            ScanVariant::Serial => Schedule::Serial { kernel: function(format!("scan_serial_{k}_{t}"))? },
            ScanVariant::Blelloch => Schedule::Blelloch {
                level0: function(format!("scan_blelloch_level_{k}_{t}"))?,
                inplace: function(format!("scan_blelloch_level_inplace_{o}"))?,
                add_into_output: function(format!("scan_blelloch_add_offsets_{o}"))?,
                add_into_totals: function(format!("scan_blelloch_add_offsets_totals_{o}"))?,
                totals: geometry
                    .totals
                    .iter()
                    .map(|&len| gpu.alloc_uninit::<E::Output>(len as usize))
                    .collect::<GpuResult<Vec<_>>>()?,
            },
            ScanVariant::DecoupledLookback => Schedule::DecoupledLookback {
                kernel: function(format!("scan_decoupled_lookback_{k}_{t}"))?,
                scratch: LookbackScratch::new::<E::Output>(gpu, geometry.tiles as usize)?,
                values: std::marker::PhantomData,
            },
        };
        Ok(ScanPlan { gpu, variant, kind, n, geometry, schedule })
    }

    /// The [`ScanGeometry`] of a plan of `variant` for `n` elements, after
    /// the length checks of [`ScanPlan::new`].
    fn geometry(variant: ScanVariant, n: usize) -> GpuResult<ScanGeometry> {
        GpuError::check_plan_len(E::PRIMITIVE, variant.name(), variant.max_len(), n, "scans to an empty output")?;
        ScanGeometry::new::<E>(variant, n).map_err(|reason| invalid(E::PRIMITIVE, variant, n, reason))
    }

    /// The device memory, in bytes, that scanning `n` elements with
    /// `variant` takes: (the input, the output plus the plan's scratch).
    /// [`Gpu::scan`] checks their sum against the free memory before it
    /// uploads anything; the sweep skips a case that does not fit for the
    /// same sum. Errors as [`ScanPlan::new`]'s length checks.
    pub fn device_bytes(variant: ScanVariant, n: usize) -> GpuResult<(u64, u64)> {
        let geometry = Self::geometry(variant, n)?;
        let input = n as u64 * std::mem::size_of::<E>() as u64;
        let output = n as u64 * std::mem::size_of::<E::Output>() as u64;
        Ok((input, output + geometry.scratch_bytes::<E>()))
    }

    /// The launches and scratch this plan makes ([`ScanGeometry`]).
    pub fn launch_geometry(&self) -> &ScanGeometry {
        &self.geometry
    }

    /// The variant this plan runs.
    pub fn variant(&self) -> ScanVariant {
        self.variant
    }

    /// Exclusive or inclusive.
    pub fn kind(&self) -> ScanKind {
        self.kind
    }

    view_plan_methods! {
        /// The number of elements this plan scans.
        len;
        /// Enqueues the scan of `input` into `output` (both exactly `n`
        /// elements). Only launches and the memset listed on [`ScanPlan`]; no
        /// synchronisation.
        enqueue;
    }

    /// [`ScanPlan::enqueue`] on views of caller-owned device memory: the same
    /// launches with the same arguments. Both hold exactly `n` elements and
    /// start at a [`BUFFER_ALIGN`](crate::launch::BUFFER_ALIGN)-byte boundary, else
    /// [`GpuError::InvalidInput`].
    pub fn enqueue_view(&mut self, input: &CudaView<'_, E>, output: &mut CudaViewMut<'_, E::Output>) -> GpuResult<()> {
        let (n, variant) = (self.n, self.variant);
        if input.len() != n || output.len() != n {
            return Err(invalid(
                E::PRIMITIVE,
                variant,
                n,
                format!("the input buffer holds {} and the output buffer {} elements", input.len(), output.len()),
            ));
        }
        let stream = self.gpu.stream().clone();
        check_vector_aligned(input, &*output, &stream).map_err(|reason| invalid(E::PRIMITIVE, variant, n, reason))?;
        let kind = self.kind.name();
        let what = |step: &str| format!("{}/{} ({kind}) n={n}: {step}", E::PRIMITIVE, variant.name());
        let count = n as u64;
        match &mut self.schedule {
            Schedule::Serial { kernel } => {
                let mut launch = stream.launch_builder(kernel);
                launch.arg(input).arg(&mut *output).arg(&count);
                // SAFETY: (const In* in, Out* out, u64 count); both hold n elements.
                unsafe { launch.launch(config(1, 1, 0)) }.context(|| what("serial launch"))?;
            }
            Schedule::Blelloch { level0, inplace, add_into_output, add_into_totals, totals } => {
                // ScanGeometry's order: the level scans, then the offsets top level first.
                for step in &self.geometry.launches {
                    let (items, cfg) = (step.items, config(step.grid, step.block, 0));
                    match step.step {
                        ScanStep::Level(0) => {
                            // Level 0: the input into the output, block totals into totals[0].
                            let mut launch = stream.launch_builder(level0);
                            launch.arg(input).arg(&mut *output).arg(&mut totals[0]).arg(&items);
                            // SAFETY: (const In* in, Out* out, Out* totals, u64 count);
                            // totals[0] holds ceil(n/512) = grid slots.
                            unsafe { launch.launch(cfg) }.context(|| what("blelloch level 0"))?;
                        }
                        ScanStep::Level(k) => {
                            // Level k >= 1: totals[k-1] (m_k items) in place, its block
                            // totals into totals[k].
                            let (low, high) = totals.split_at_mut(k);
                            let mut launch = stream.launch_builder(inplace);
                            launch.arg(&mut low[k - 1]).arg(&mut high[0]).arg(&items);
                            // SAFETY: (Out* data, Out* totals, u64 count); data holds m_k
                            // items, totals ceil(m_k/512) = grid slots.
                            unsafe { launch.launch(cfg) }.context(|| what(&format!("blelloch level {k}")))?;
                        }
                        ScanStep::AddOffsets { into: 0 } => {
                            let mut launch = stream.launch_builder(add_into_output);
                            launch.arg(&mut *output).arg(&totals[0]).arg(&items);
                            // SAFETY: (Out* data, const Out* offsets, u64 count).
                            unsafe { launch.launch(cfg) }.context(|| what("blelloch offsets into the output"))?;
                        }
                        ScanStep::AddOffsets { into } => {
                            // The scanned level into + 1 (totals[into], now final) into
                            // level into's data (totals[into - 1]).
                            let (low, high) = totals.split_at_mut(into);
                            let mut launch = stream.launch_builder(add_into_totals);
                            launch.arg(&mut low[into - 1]).arg(&high[0]).arg(&items);
                            // SAFETY: (Out* data, const Out* offsets, u64 count); data
                            // is level `into` (m_into items), offsets level into + 1.
                            unsafe { launch.launch(cfg) }
                                .context(|| what(&format!("blelloch offsets into level {into}")))?;
                        }
                        ScanStep::Serial | ScanStep::Lookback => unreachable!("a Blelloch geometry"),
                    }
                }
            }
            Schedule::DecoupledLookback { kernel, scratch, .. } => {
                let grid = self.geometry.launches[0].grid;
                scratch.reset(&stream)?;
                let mut launch = stream.launch_builder(kernel);
                launch.arg(input).arg(&mut *output).arg(&count).arg(scratch.buffer());
                // SAFETY: (const In* in, Out* out, u64 count, u64* scratch);
                // the scratch holds the header and `grid` descriptors of Out
                // values (zeroed above).
                unsafe { launch.launch(config(grid, LOOKBACK_BLOCK_THREADS, 0)) }
                    .context(|| what("look-back launch"))?;
            }
        }
        Ok(())
    }

    /// What one [`ScanPlan::enqueue`] puts on the stream, read from the
    /// schedule it runs. DRAM estimate: the input read and the output written
    /// once; Blelloch adds the output read and written again by the offsets
    /// (more than one level) and every level of block totals written and
    /// read; the look-back adds its scratch (cleared, then each descriptor
    /// written and read).
    pub fn describe(&self) -> PlanDescription {
        let (k, t, o) = (self.kind.name(), E::INPUT_SUFFIX, E::OUTPUT_SUFFIX);
        let output = std::mem::size_of::<E::Output>() as u64;
        let n = self.n as u64;
        let d = PlanDescription::new("ScanPlan").moves(n * (std::mem::size_of::<E>() as u64 + output));
        let name = |step: ScanStep| match step {
            ScanStep::Serial => format!("scan_serial_{k}_{t}"),
            ScanStep::Level(0) => format!("scan_blelloch_level_{k}_{t}"),
            ScanStep::Level(_) => format!("scan_blelloch_level_inplace_{o}"),
            ScanStep::AddOffsets { into: 0 } => format!("scan_blelloch_add_offsets_{o}"),
            ScanStep::AddOffsets { .. } => format!("scan_blelloch_add_offsets_totals_{o}"),
            ScanStep::Lookback => format!("scan_decoupled_lookback_{k}_{t}"),
        };
        let g = &self.geometry;
        let d = match &self.schedule {
            Schedule::DecoupledLookback { scratch, .. } => {
                d.memset("tile counter, error word, tile descriptors", scratch.bytes() as u64)
            }
            _ => d,
        };
        let d = g.launches.iter().fold(d, |d, l| d.launch(name(l.step), l.grid, l.block, 0));
        match &self.schedule {
            Schedule::Serial { .. } => d,
            Schedule::Blelloch { .. } => {
                let totals: u64 = g.totals.iter().map(|&slots| 2 * output * slots).sum();
                d.moves(totals + if g.totals.len() > 1 { 2 * output * n } else { 0 })
            }
            Schedule::DecoupledLookback { scratch, .. } => d.moves(2 * scratch.bytes() as u64),
        }
    }

    /// After the enqueued work has completed (this call synchronises):
    /// [`GpuError::KernelFault`] if the look-back kernel's bounded spin ran
    /// out (its error word is set). Other variants always pass.
    pub fn check_fault(&self) -> GpuResult<()> {
        if let Schedule::DecoupledLookback { scratch, .. } = &self.schedule {
            if scratch.timed_out(self.gpu.stream())? {
                return Err(GpuError::KernelFault {
                    primitive: E::PRIMITIVE,
                    variant: self.variant.name(),
                    n: self.n,
                    reason: "a look-back spin ran out waiting for a predecessor tile's status".into(),
                });
            }
        }
        Ok(())
    }
}

impl Gpu {
    /// The `kind` scan of int32 `input` as int64 with `variant` (see the
    /// module docs for the contract): empty for an empty input;
    /// [`GpuError::InvalidInput`] for `n > variant.max_len()`;
    /// [`GpuError::DeviceMemory`] when the input, the output and the plan's
    /// scratch do not fit the device's free memory;
    /// [`GpuError::KernelFault`] if the look-back spin ran out.
    pub fn scan_i32(&self, variant: ScanVariant, kind: ScanKind, input: &[i32]) -> GpuResult<Vec<i64>> {
        self.scan(variant, kind, input)
    }

    /// The `kind` scan of `input` under in-order composition
    /// ([`AffineMap::combine`], earlier elements first) with `variant`:
    /// exclusive starts at [`AffineMap::IDENTITY`]; errors as [`Gpu::scan_i32`].
    pub fn scan_affine(&self, variant: ScanVariant, kind: ScanKind, input: &[AffineMap]) -> GpuResult<Vec<AffineMap>> {
        self.scan(variant, kind, input)
    }

    /// Either scan, generic over the element type: checks that its buffers
    /// fit the free device memory ([`ScanPlan::device_bytes`]), uploads
    /// `input`, poisons the output, runs a fresh [`ScanPlan`], synchronises,
    /// checks the kernel's error word and downloads every element.
    pub fn scan<E: ScanElement>(&self, variant: ScanVariant, kind: ScanKind, input: &[E]) -> GpuResult<Vec<E::Output>> {
        check_len::<E>(variant, input.len())?;
        if input.is_empty() {
            return Ok(Vec::new());
        }
        let (input_bytes, other_bytes) = ScanPlan::<E>::device_bytes(variant, input.len())?;
        self.check_device_memory(E::PRIMITIVE, variant.name(), input.len(), input_bytes + other_bytes, || {
            format!(
                "input {}, output and scratch {}",
                crate::error::gigabytes(input_bytes),
                crate::error::gigabytes(other_bytes)
            )
        })?;
        let device_input = self.upload(input)?;
        let mut output = self.alloc_poisoned::<E::Output>(input.len())?;
        let mut plan = ScanPlan::<E>::new(self, variant, kind, input.len())?;
        plan.enqueue(&device_input, &mut output)?;
        self.synchronize()?;
        plan.check_fault()?;
        self.download(&output)
    }
}

#[cfg(test)]
#[path = "scan_tests.rs"]
mod tests;

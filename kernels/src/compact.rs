//! Stream compaction of int32 items (`cuda/compact.cu`): keep flags ->
//! exclusive scan -> scatter.
//!
//! Contract of every variant:
//! * **Stable**: the kept items appear in input order.
//! * **Count**: the number of kept items is written to a device word (u32
//!   from [`CompactPlan::enqueue`], u64 from [`CompactPlan::enqueue_wide`])
//!   and returned.
//! * **A rejected item writes nothing**: after a run, elements
//!   `[count, n)` of the output buffer still hold whatever they held before
//!   (the host methods poison the whole buffer first, see
//!   [`Gpu::compact_i32_raw`]).
//! * **Selection**: [`Selector::Positive`] keeps `x > 0`;
//!   [`Selector::Flags`] keeps item `i` when `flags[i] != 0` (one `u8` per
//!   item).
//! * **Limits**: [`CompactPlan::new`] takes `n <= u32::MAX` ([`MAX_ITEMS`]:
//!   positions and the count are u32 on the device, the launches it always
//!   had); [`CompactPlan::new_wide`] takes `n` up to [`MAX_LEN`] = 2^40 with a
//!   u64 count: the single pass runs its `_c64` entry point (its look-back
//!   and destinations are 64-bit already), the three-phase schedule runs its
//!   unchanged flag and scan kernels on windows of at most [`WIDE_WINDOW`]
//!   items and `compact_scatter_window`, which adds the earlier windows'
//!   count (a device word) to each destination. Longer inputs get
//!   [`GpuError::InvalidInput`]. `n = 0` gives an empty result and launches
//!   nothing but a memset of the count.

use crate::device::Gpu;
use crate::error::{DriverContext, GpuError, GpuResult};
use crate::kernel_family::KernelFamily;
use crate::launch::{config, BLOCK_THREADS};
use crate::lookback::LookbackScratch;
use crate::plan_description::PlanDescription;
use crate::policy::COMPACT;
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, CudaView, DeviceRepr, PushKernelArg, ValidAsZeroBits};
use std::sync::Arc;

/// Items per single-pass tile (`kSinglePassTileItems` in compact.cu).
pub const SINGLE_PASS_TILE_ITEMS: usize = (BLOCK_THREADS * COMPACT.single_pass_vectors_per_thread * 4) as usize;
/// `kPackedFieldBits`: the width of one packed count field (the policy's).
pub const PACKED_FIELD_BITS: u32 = COMPACT.packed_field_bits;
/// Flags per scan tile of the three-phase schedule (`kThreePhaseTileItems`).
pub const THREE_PHASE_TILE_ITEMS: usize = (BLOCK_THREADS * COMPACT.three_phase_items_per_thread) as usize;
/// The largest input of [`CompactPlan::new`]: positions and the count are
/// u32 on the device.
pub const MAX_ITEMS: usize = u32::MAX as usize;
/// The largest input of [`CompactPlan::new_wide`]: 2^40 items (a u64 count;
/// 4 TB of int32, past any device's memory).
pub const MAX_LEN: usize = 1 << 40;
/// Items of one three-phase window of [`CompactPlan::new_wide`] at most:
/// 2^30, so the window's flags and positions (8 bytes an item, 8.6 GB) stay
/// bounded whatever n, its u32 positions below 2^32, and every window starts
/// at a multiple of the 2048-flag scan tile and of 4 items (16-byte aligned
/// input, 4-byte aligned selector flags: the kernels' vector loads).
pub const WIDE_WINDOW: usize = 1 << 30;

/// Blocks a grid may have (CUDA's `gridDim.x` limit): the single pass
/// launches one block a tile, so it takes at most this many tiles.
pub(crate) const GRID_MAX_BLOCKS: u64 = (1 << 31) - 1;

// The window rules above, and the single pass's grid at MAX_LEN: one block a
// tile, at most GRID_MAX_BLOCKS blocks (and u32 tile ids).
const _: () = assert!(WIDE_WINDOW % THREE_PHASE_TILE_ITEMS == 0 && WIDE_WINDOW % 4 == 0);
const _: () = assert!(MAX_LEN.div_ceil(SINGLE_PASS_TILE_ITEMS) as u64 <= GRID_MAX_BLOCKS);

const PRIMITIVE: &str = "compact";
/// Grid cap of the grid-stride (element-wise) kernels.
const MAX_GRID_STRIDE_BLOCKS: usize = 1 << 20;

/// How the compaction is scheduled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompactVariant {
    /// Four kinds of kernel: one u32 keep flag per item; a multi-pass
    /// exclusive scan of the flags (2048-flag tiles, tile totals scanned
    /// recursively, then pushed back down); a scatter that writes each kept
    /// item to its position.
    ThreePhase,
    /// One kernel: [`SINGLE_PASS_TILE_ITEMS`]-item tiles whose ids come from an atomic counter;
    /// each tile counts its kept items, finds the count of all earlier tiles
    /// by decoupled look-back, stages its kept items in order in shared
    /// memory and writes them out coalesced.
    SinglePass,
}

impl CompactVariant {
    /// Every variant.
    pub const ALL: [CompactVariant; 2] = [CompactVariant::ThreePhase, CompactVariant::SinglePass];

    /// Snake-case name used in reports.
    pub fn name(&self) -> &'static str {
        match self {
            CompactVariant::ThreePhase => "three_phase",
            CompactVariant::SinglePass => "single_pass",
        }
    }
}

/// Which items to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selector<'a> {
    /// Keep `x > 0`.
    Positive,
    /// Keep item `i` when `flags[i] != 0`; `flags.len()` must equal the
    /// input length.
    Flags(&'a [u8]),
}

impl Selector<'_> {
    /// The kind of selection, without the flags.
    pub fn kind(&self) -> SelectorKind {
        match self {
            Selector::Positive => SelectorKind::Positive,
            Selector::Flags(_) => SelectorKind::Flags,
        }
    }
}

/// The selection a [`CompactPlan`] is built for (the flags themselves are
/// passed to [`CompactPlan::enqueue`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SelectorKind {
    /// Keep `x > 0`.
    Positive,
    /// Keep item `i` when the `u8` flag `i` is nonzero.
    Flags,
}

impl SelectorKind {
    /// Snake-case name used in reports and kernel names.
    pub fn name(&self) -> &'static str {
        match self {
            SelectorKind::Positive => "positive",
            SelectorKind::Flags => "flagged",
        }
    }
}

/// The result of a compaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactOutput {
    /// The kept items in input order (`kept.len() == count`).
    pub kept: Vec<i32>,
    /// How many items were kept.
    pub count: usize,
}

/// Lengths of the three-phase scan levels above the flags: `lens[0]` is the
/// number of 2048-flag tiles, `lens[k]` the number of tiles of level k, and
/// the last entry is 1 (the level whose single tile holds the grand total).
pub fn three_phase_level_lens(n: usize) -> Vec<usize> {
    let mut lens = Vec::new();
    let mut len = n.max(1);
    loop {
        let tiles = len.div_ceil(THREE_PHASE_TILE_ITEMS);
        lens.push(tiles);
        if tiles == 1 {
            return lens;
        }
        len = tiles;
    }
}

/// The width of a plan's count word, and of its destinations on the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Width {
    /// [`CompactPlan::new`]: u32, `n <= MAX_ITEMS`, [`CompactPlan::enqueue`].
    U32,
    /// [`CompactPlan::new_wide`]: u64, `n <= MAX_LEN`, [`CompactPlan::enqueue_wide`].
    U64,
}

impl Width {
    /// What error contexts add after `n=`: nothing for u32.
    fn label(self) -> &'static str {
        match self {
            Width::U32 => "",
            Width::U64 => " (u64 count)",
        }
    }

    /// How the enqueue that takes this width is named, for errors.
    fn enqueue(self) -> &'static str {
        match self {
            Width::U32 => "enqueue (u32 count; a plan from CompactPlan::new)",
            Width::U64 => "enqueue_wide (u64 count; a plan from CompactPlan::new_wide)",
        }
    }
}

/// The three-phase scratch of the longest run scanned at once: the whole
/// input of a u32 plan, one window of a wide plan.
struct ThreePhaseScratch {
    keep_flags: CudaSlice<u32>,
    positions: CudaSlice<u32>,
    /// S_1 .. S_K of the longest run: `levels[k]` has `three_phase_level_lens(len)[k]` entries.
    levels: Vec<CudaSlice<u32>>,
    flags_kernel: CudaFunction,
    scan_tiles: CudaFunction,
    add_tile_offsets: CudaFunction,
    /// `compact_scatter` (u32 plans) or `compact_scatter_window` (wide plans).
    scatter: CudaFunction,
}

struct SinglePassScratch {
    tiles: usize,
    /// Tile counter, error word and one int64 descriptor per tile.
    lookback: LookbackScratch,
    kernel: CudaFunction,
}

enum Scratch {
    Empty,
    ThreePhase(Box<ThreePhaseScratch>),
    /// A wide three-phase plan: the scratch of one window and its windows'
    /// base words (word `w` holds the kept count of the windows before `w`;
    /// word 0 is zeroed before every run, the last window writes the count).
    ThreePhaseWindows(Box<ThreePhaseScratch>, CudaSlice<u64>),
    SinglePass(Box<SinglePassScratch>),
}

/// A compaction of `n` items with every scratch buffer allocated, for
/// timing.
///
/// [`CompactPlan::enqueue`] (a plan from [`CompactPlan::new`], u32 count) puts on the stream,
/// and nothing else (no allocation, no host copy, no synchronisation):
/// * `n == 0`: a 4-byte memset that writes count = 0.
/// * ThreePhase ([`CompactVariant::ThreePhase`]): `compact_keep_flags_<selector>`
///   (n u32 flags); `compact_scan_tiles` once per scan level (1 level up to
///   2048 items, 2 up to 2^22, 3 up to 2^32 - 1); `compact_add_tile_offsets`
///   for every level except the top two; `compact_scatter`, which also writes
///   the count.
/// * SinglePass ([`CompactVariant::SinglePass`]): a memset of the look-back
///   scratch (16 header bytes and a 16-byte descriptor per [`SINGLE_PASS_TILE_ITEMS`]-item tile;
///   see [`crate::lookback`]), then `compact_single_pass_<selector>`, which
///   also writes the count.
///
/// [`CompactPlan::enqueue_wide`] (a plan from [`CompactPlan::new_wide`], u64 count, n up to
/// [`MAX_LEN`]) puts on the stream:
/// * `n == 0`: an 8-byte memset that writes count = 0.
/// * ThreePhase: an 8-byte memset of the first window's base word, then for each window of
///   at most [`CompactPlan::window`] items ([`CompactPlan::windows`]) the same flag and scan
///   kernels as above over the window, and `compact_scatter_window`, which adds the kept count
///   of the earlier windows to every destination and writes the next window's base (the last
///   window: the count).
/// * SinglePass: the look-back memset, then `compact_single_pass_<selector>_c64`.
pub struct CompactPlan {
    variant: CompactVariant,
    selector: SelectorKind,
    n: usize,
    width: Width,
    /// Items of a three-phase window (`n` itself for a u32 plan).
    window: usize,
    stream: Arc<CudaStream>,
    scratch: Scratch,
}

impl std::fmt::Debug for CompactPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompactPlan")
            .field("variant", &self.variant)
            .field("selector", &self.selector)
            .field("n", &self.n)
            .field("width", &self.width)
            .field("window", &self.window)
            .finish_non_exhaustive()
    }
}

/// Blocks of a one-item-per-thread grid-stride kernel over `len` items.
pub(crate) fn grid_stride_grid(len: usize) -> u32 {
    len.div_ceil(BLOCK_THREADS as usize).clamp(1, MAX_GRID_STRIDE_BLOCKS) as u32
}

/// Blocks of `compact_keep_flags_*` over `len` items: one 16-byte vector (4
/// items) a thread, at most 2^20 blocks (the kernel strides over the rest).
pub(crate) fn keep_flags_grid(len: usize) -> u32 {
    len.div_ceil(4).div_ceil(BLOCK_THREADS as usize).clamp(1, MAX_GRID_STRIDE_BLOCKS) as u32
}

/// Tiles (blocks) of the single pass over `n` items: one block a tile.
pub(crate) fn single_pass_tiles(n: usize) -> usize {
    n.div_ceil(SINGLE_PASS_TILE_ITEMS)
}

/// The windows `(first item, length)` a wide three-phase plan of `n` items
/// scans one after the other, each at most `window` long: one window of `n`
/// when `n <= window`.
pub fn wide_windows(n: usize, window: usize) -> Vec<(usize, usize)> {
    crate::windows::windows(n, window, window)
}

/// `Ok` for a window [`CompactPlan::new_wide_with_window`] takes: a multiple
/// of 4 items (each window's input 16-byte and its selector flags 4-byte
/// aligned, the vector loads of the flag kernels) in `4..=WIDE_WINDOW` (the
/// window's flags and positions are allocated for it).
pub(crate) fn check_window(window: usize) -> Result<(), String> {
    if window == 0 || window % 4 != 0 || window > WIDE_WINDOW {
        return Err(format!("a window must be a multiple of 4 in 4..={WIDE_WINDOW} items, got {window}"));
    }
    Ok(())
}

/// Device bytes a plan of [`CompactPlan::new_wide`] allocates for `n`
/// items beside the caller's buffers (input, flags, output, count): the
/// three-phase schedule one window's keep flags and positions (8 bytes an
/// item of the longest window), its scan levels (4 bytes a tile) and a base
/// word a window; the single pass its look-back scratch (16 bytes a tile
/// and a 16-byte header). Nothing for `n == 0`.
pub fn wide_scratch_bytes(variant: CompactVariant, n: usize) -> u64 {
    if n == 0 {
        return 0;
    }
    let bytes = match variant {
        CompactVariant::ThreePhase => {
            let longest = n.min(WIDE_WINDOW);
            8 * longest
                + 4 * three_phase_level_lens(longest).iter().sum::<usize>()
                + 8 * wide_windows(n, WIDE_WINDOW).len()
        }
        CompactVariant::SinglePass => 8 * crate::lookback::scratch_words(single_pass_tiles(n), 8),
    };
    bytes as u64
}

fn invalid(variant: CompactVariant, n: usize, reason: String) -> GpuError {
    GpuError::InvalidInput { primitive: PRIMITIVE, variant: variant.name(), n, reason }
}

impl ThreePhaseScratch {
    /// The scratch for runs of up to `len` items (`len >= 1`) of `selector`,
    /// scattered by `scatter`.
    fn new(gpu: &Gpu, selector: SelectorKind, len: usize, scatter: &str) -> GpuResult<ThreePhaseScratch> {
        let mut levels = Vec::new();
        for level in three_phase_level_lens(len) {
            levels.push(gpu.alloc_uninit::<u32>(level)?);
        }
        Ok(ThreePhaseScratch {
            keep_flags: gpu.alloc_uninit::<u32>(len)?,
            positions: gpu.alloc_uninit::<u32>(len)?,
            levels,
            flags_kernel: gpu.function(KernelFamily::Compact, &format!("compact_keep_flags_{}", selector.name()))?,
            scan_tiles: gpu.function(KernelFamily::Compact, "compact_scan_tiles")?,
            add_tile_offsets: gpu.function(KernelFamily::Compact, "compact_add_tile_offsets")?,
            scatter: gpu.function(KernelFamily::Compact, scatter)?,
        })
    }

    /// Phases 1 and 2 over the `len` items of `selected` (the input for the
    /// positive selector, the selector flags for the flagged one; a u32
    /// plan's whole input or one window, `len` at most the scratch's): keep
    /// flags, their exclusive positions within this run, and the scan
    /// levels' tile offsets, pushed down into `levels[0]`. Returns
    /// `has_tile_offsets` (whether the flags took more than one tile, so
    /// that the scatter adds `levels[0]`).
    fn scan<T: DeviceRepr>(
        &mut self,
        stream: &Arc<CudaStream>,
        selected: &CudaView<'_, T>,
        what: &dyn Fn(&str) -> String,
    ) -> GpuResult<u32> {
        let len = selected.len();
        let len_u64 = len as u64;
        let level_lens = three_phase_level_lens(len);
        // Phase 1: keep flags.
        let mut launch = stream.launch_builder(&self.flags_kernel);
        launch.arg(selected).arg(&len_u64).arg(&mut self.keep_flags);
        // SAFETY: matches compact_keep_flags_{positive(input, n, flags),
        // flagged(selector_flags, n, flags)}; `selected` holds len items and
        // keep_flags at least len.
        unsafe { launch.launch(config(keep_flags_grid(len), BLOCK_THREADS, 0)) }.context(|| what("keep flags"))?;

        // Phase 2: level 0 (the flags), then every level with more than one tile.
        let mut launch = stream.launch_builder(&self.scan_tiles);
        launch.arg(&self.keep_flags).arg(&len_u64).arg(&mut self.positions).arg(&mut self.levels[0]);
        // SAFETY: matches compact_scan_tiles(values, len, exclusive_out,
        // tile_totals); levels[0] holds at least ceil(len / 2048) entries (the
        // level lengths grow with len and the scratch is for the longest).
        unsafe { launch.launch(config(level_lens[0] as u32, BLOCK_THREADS, 0)) }.context(|| what("scan level 0"))?;
        let top = level_lens.len() - 1;
        let level_u64: Vec<u64> = level_lens.iter().map(|&l| l as u64).collect();
        for k in 0..top {
            let (lower, upper) = self.levels.split_at_mut(k + 1);
            let values = &lower[k];
            let mut launch = stream.launch_builder(&self.scan_tiles);
            // In place: each thread reads its own values before writing them.
            launch.arg(values).arg(&level_u64[k]).arg(values).arg(&mut upper[0]);
            // SAFETY: matches compact_scan_tiles; levels[k + 1] holds at least
            // ceil(level_lens[k] / 2048) entries.
            unsafe { launch.launch(config(level_lens[k + 1] as u32, BLOCK_THREADS, 0)) }
                .context(|| what("scan upper level"))?;
        }
        // Push the complete offsets down: level top - 1 was scanned as one
        // tile, so it is complete; every level below needs the one above.
        for k in (0..top.saturating_sub(1)).rev() {
            let (lower, upper) = self.levels.split_at_mut(k + 1);
            let grid = grid_stride_grid(level_lens[k]);
            let mut launch = stream.launch_builder(&self.add_tile_offsets);
            launch.arg(&mut lower[k]).arg(&level_u64[k]).arg(&upper[0]);
            // SAFETY: matches compact_add_tile_offsets(values, len, tile_offsets).
            unsafe { launch.launch(config(grid, BLOCK_THREADS, 0)) }.context(|| what("add tile offsets"))?;
        }
        Ok(u32::from(top >= 1))
    }

    /// Phases 1 and 2 over `len` items at `start` of the selected array: the
    /// input, or the selector flags when there are some.
    fn scan_range(
        &mut self,
        stream: &Arc<CudaStream>,
        input: &CudaSlice<i32>,
        flags: Option<&CudaSlice<u8>>,
        (start, len): (usize, usize),
        what: &dyn Fn(&str) -> String,
    ) -> GpuResult<u32> {
        match flags {
            None => self.scan(stream, &input.slice(start..start + len), what),
            Some(f) => self.scan(stream, &f.slice(start..start + len), what),
        }
    }

    /// The launches of one run over `len` items, as [`ThreePhaseScratch::scan`]
    /// and the scatter put them on the stream.
    fn describe(d: PlanDescription, selector: SelectorKind, len: usize, scatter: &str) -> PlanDescription {
        let level_lens = three_phase_level_lens(len);
        let top = level_lens.len() - 1;
        let mut d = d
            .launch(format!("compact_keep_flags_{}", selector.name()), keep_flags_grid(len), BLOCK_THREADS, 0)
            .launch("compact_scan_tiles", level_lens[0] as u32, BLOCK_THREADS, 0);
        for k in 0..top {
            d = d.launch("compact_scan_tiles", level_lens[k + 1] as u32, BLOCK_THREADS, 0);
        }
        for k in (0..top.saturating_sub(1)).rev() {
            d = d.launch("compact_add_tile_offsets", grid_stride_grid(level_lens[k]), BLOCK_THREADS, 0);
        }
        d.launch(scatter, grid_stride_grid(len), BLOCK_THREADS, 0)
    }
}

impl CompactPlan {
    /// Allocates every scratch buffer of `variant` for `n` items selected by
    /// `selector`, for [`CompactPlan::enqueue`] (a u32 count). Fails with
    /// [`GpuError::InvalidInput`] when `n > MAX_ITEMS`
    /// ([`CompactPlan::new_wide`] takes those).
    pub fn new(gpu: &Gpu, variant: CompactVariant, selector: SelectorKind, n: usize) -> GpuResult<CompactPlan> {
        check_len(variant, n)?;
        let scratch = match (n, variant) {
            (0, _) => Scratch::Empty,
            (_, CompactVariant::ThreePhase) => {
                Scratch::ThreePhase(Box::new(ThreePhaseScratch::new(gpu, selector, n, "compact_scatter")?))
            }
            (_, CompactVariant::SinglePass) => Scratch::SinglePass(Box::new(Self::single_pass(gpu, selector, n, "")?)),
        };
        Ok(CompactPlan { variant, selector, n, width: Width::U32, window: n, stream: gpu.stream().clone(), scratch })
    }

    /// As [`CompactPlan::new`], for [`CompactPlan::enqueue_wide`] (a u64
    /// count) and any `n` up to [`MAX_LEN`], the three-phase schedule in
    /// windows of [`WIDE_WINDOW`] items. [`GpuError::InvalidInput`] when
    /// `n > MAX_LEN`.
    pub fn new_wide(gpu: &Gpu, variant: CompactVariant, selector: SelectorKind, n: usize) -> GpuResult<CompactPlan> {
        Self::new_wide_with_window(gpu, variant, selector, n, WIDE_WINDOW)
    }

    /// As [`CompactPlan::new_wide`], the three-phase windows `window` items
    /// long, so that small inputs run in several windows (how the sweep
    /// proves the windows' edges and bases; the single pass has no
    /// windows). [`GpuError::InvalidInput`] when `n > MAX_LEN` or `window`
    /// is not a multiple of 4 in `4..=WIDE_WINDOW`.
    pub fn new_wide_with_window(
        gpu: &Gpu,
        variant: CompactVariant,
        selector: SelectorKind,
        n: usize,
        window: usize,
    ) -> GpuResult<CompactPlan> {
        check_wide_len(variant, n, window)?;
        let scratch = match (n, variant) {
            (0, _) => Scratch::Empty,
            (_, CompactVariant::ThreePhase) => {
                let scan = ThreePhaseScratch::new(gpu, selector, n.min(window), "compact_scatter_window")?;
                let bases = gpu.alloc_poisoned::<u64>(wide_windows(n, window).len())?;
                Scratch::ThreePhaseWindows(Box::new(scan), bases)
            }
            (_, CompactVariant::SinglePass) => {
                Scratch::SinglePass(Box::new(Self::single_pass(gpu, selector, n, "_c64")?))
            }
        };
        Ok(CompactPlan { variant, selector, n, width: Width::U64, window, stream: gpu.stream().clone(), scratch })
    }

    /// The single-pass scratch of `n >= 1` items and its kernel
    /// (`compact_single_pass_<selector><suffix>`).
    fn single_pass(gpu: &Gpu, selector: SelectorKind, n: usize, suffix: &str) -> GpuResult<SinglePassScratch> {
        let tiles = single_pass_tiles(n);
        Ok(SinglePassScratch {
            tiles,
            lookback: LookbackScratch::new::<i64>(gpu, tiles)?,
            kernel: gpu.function(KernelFamily::Compact, &format!("compact_single_pass_{}{suffix}", selector.name()))?,
        })
    }

    /// The variant this plan runs.
    pub fn variant(&self) -> CompactVariant {
        self.variant
    }

    /// The number of items this plan was built for.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether the plan is for an empty input.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Items of a three-phase window of [`CompactPlan::enqueue_wide`] (`n`
    /// for a plan of [`CompactPlan::new`]).
    pub fn window(&self) -> usize {
        self.window
    }

    /// The windows `(first item, length)` a three-phase
    /// [`CompactPlan::enqueue_wide`] scans, in order ([`wide_windows`]).
    pub fn windows(&self) -> Vec<(usize, usize)> {
        wide_windows(self.n, self.window)
    }

    /// Logical bytes of one run with `count` items kept: `4n + 4 * count`
    /// (the input read and the kept items written), plus `n` for the flags
    /// of [`SelectorKind::Flags`].
    pub fn logical_bytes(&self, count: usize) -> u64 {
        let flags = if self.selector == SelectorKind::Flags { self.n as u64 } else { 0 };
        4 * self.n as u64 + 4 * count as u64 + flags
    }

    /// What the plan was built for, as its enqueues check their arguments.
    fn built(&self) -> Built {
        Built { variant: self.variant, selector: self.selector, n: self.n, width: self.width }
    }

    /// Enqueues the compaction of `input` (`n` items) into `output` (`n`
    /// elements; only `[0, count)` is written) and the count into
    /// `count[0]`. `flags` must be `Some` (with `n` bytes) exactly when the
    /// plan was built for [`SelectorKind::Flags`]; the plan must come from
    /// [`CompactPlan::new`]. See the type's doc for what is put on the
    /// stream.
    pub fn enqueue(
        &mut self,
        input: &CudaSlice<i32>,
        flags: Option<&CudaSlice<u8>>,
        output: &mut CudaSlice<i32>,
        count: &mut CudaSlice<u32>,
    ) -> GpuResult<()> {
        self.enqueue_counted(input, flags, output, count)
    }

    /// As [`CompactPlan::enqueue`] with a u64 count, for any `n` up to
    /// [`MAX_LEN`]; the plan must come from [`CompactPlan::new_wide`]. See
    /// the type's doc for what is put on the stream.
    pub fn enqueue_wide(
        &mut self,
        input: &CudaSlice<i32>,
        flags: Option<&CudaSlice<u8>>,
        output: &mut CudaSlice<i32>,
        count: &mut CudaSlice<u64>,
    ) -> GpuResult<()> {
        self.enqueue_counted(input, flags, output, count)
    }

    /// The enqueue of count word `C` (its width checked against the plan's
    /// first, so each scratch meets the count word it was built for).
    fn enqueue_counted<C: CountWord>(
        &mut self,
        input: &CudaSlice<i32>,
        flags: Option<&CudaSlice<u8>>,
        output: &mut CudaSlice<i32>,
        count: &mut CudaSlice<C>,
    ) -> GpuResult<()> {
        self.built().check_call(C::WIDTH, input.len(), flags.map(|f| f.len()), output.len(), count.len())?;
        let (n, variant) = (self.n, self.variant);
        let windows = self.windows();
        let stream = self.stream.clone();
        let what = |step: &str| format!("{PRIMITIVE}/{} n={n}{}: {step}", variant.name(), C::WIDTH.label());
        match &mut self.scratch {
            Scratch::Empty => {
                let mut first = count.slice_mut(0..1);
                stream.memset_zeros(&mut first).context(|| what("count memset"))?;
                Ok(())
            }
            Scratch::SinglePass(s) => s.enqueue(&stream, input, flags, output, count, &what),
            three_phase => {
                let run = ThreePhaseRun { stream: &stream, input, flags, output, what: &what };
                C::three_phase(three_phase, run, &windows, count).unwrap_or_else(|| {
                    Err(invalid(
                        variant,
                        n,
                        "the plan's scratch is for the other count width (an internal error)".into(),
                    ))
                })
            }
        }
    }

    /// What one [`CompactPlan::enqueue`] (or, for a plan of
    /// [`CompactPlan::new_wide`], [`CompactPlan::enqueue_wide`]) puts on the
    /// stream, read from the scratch it runs with; `kept` (the items the
    /// selector keeps) only enters the DRAM estimate: the input (and
    /// selector flags) read, the kept items written; three-phase adds its
    /// flags and positions written and read again (16n) and its re-read
    /// input and flags in the scatter (8n); single-pass its tile flags and
    /// two 8-byte payloads per tile.
    pub fn describe(&self, kept: usize) -> PlanDescription {
        let n = self.n as u64;
        let d = PlanDescription::new("CompactPlan").moves(self.logical_bytes(kept));
        let selector = self.selector.name();
        match &self.scratch {
            Scratch::Empty => d.memset("count", if self.width == Width::U64 { 8 } else { 4 }),
            Scratch::ThreePhase(_) => {
                ThreePhaseScratch::describe(d, self.selector, self.n, "compact_scatter").moves(24 * n)
            }
            Scratch::ThreePhaseWindows(..) => {
                let d = d.memset("first window's base", 8);
                let d = self.windows().into_iter().fold(d, |d, (_, len)| {
                    ThreePhaseScratch::describe(d, self.selector, len, "compact_scatter_window")
                });
                d.moves(24 * n)
            }
            Scratch::SinglePass(s) => {
                let suffix = if self.width == Width::U64 { "_c64" } else { "" };
                d.memset("tile counter, error word, tile descriptors", s.lookback.bytes() as u64)
                    .launch(format!("compact_single_pass_{selector}{suffix}"), s.tiles as u32, BLOCK_THREADS, 0)
                    .moves(2 * s.lookback.bytes() as u64)
            }
        }
    }

    /// Waits for the stream and reports a look-back timeout recorded by the
    /// single-pass kernel (a broken protocol, never expected) as
    /// [`GpuError::KernelFault`]. Synchronises; not for timed regions.
    pub fn check_fault(&self) -> GpuResult<()> {
        if let Scratch::SinglePass(s) = &self.scratch {
            if s.lookback.timed_out(&self.stream)? {
                return Err(GpuError::KernelFault {
                    primitive: PRIMITIVE,
                    variant: self.variant.name(),
                    n: self.n,
                    reason: "decoupled look-back spin limit reached (a predecessor tile never published)".into(),
                });
            }
        }
        Ok(())
    }
}

/// What a plan was built for, as its enqueues check their arguments.
#[derive(Debug, Clone, Copy)]
struct Built {
    variant: CompactVariant,
    selector: SelectorKind,
    n: usize,
    width: Width,
}

impl Built {
    /// [`GpuError::InvalidInput`] unless the call counts in the plan's
    /// `width`, `input` and `output` hold `n` items, `count` at least one
    /// word, and `flags` are there (with `n` bytes) exactly for
    /// [`SelectorKind::Flags`].
    fn check_call(
        &self,
        width: Width,
        input: usize,
        flags: Option<usize>,
        output: usize,
        count: usize,
    ) -> GpuResult<()> {
        let (n, variant) = (self.n, self.variant);
        if width != self.width {
            let (asked, built) = (width.enqueue(), self.width.enqueue());
            return Err(invalid(variant, n, format!("{asked} called on a plan built for {built}")));
        }
        if input != n || output != n {
            return Err(invalid(variant, n, format!("plan built for {n} items, got input {input} / output {output}")));
        }
        if count == 0 {
            return Err(invalid(variant, n, "count must hold one word".into()));
        }
        match (self.selector, flags) {
            (SelectorKind::Positive, None) => Ok(()),
            (SelectorKind::Flags, Some(f)) if f == n => Ok(()),
            (kind, f) => {
                Err(invalid(variant, n, format!("plan built for selector {}, got flags of length {f:?}", kind.name())))
            }
        }
    }
}

/// [`GpuError::InvalidInput`] when [`CompactPlan::new`] cannot take `n`
/// items (more than [`MAX_ITEMS`]).
fn check_len(variant: CompactVariant, n: usize) -> GpuResult<()> {
    if n > MAX_ITEMS {
        let reason =
            format!("n must be at most {MAX_ITEMS} (u32 positions and count); CompactPlan::new_wide takes more");
        return Err(invalid(variant, n, reason));
    }
    Ok(())
}

/// [`GpuError::InvalidInput`] when [`CompactPlan::new_wide_with_window`]
/// cannot take `n` items (more than [`MAX_LEN`]) or `window` ([`check_window`]).
fn check_wide_len(variant: CompactVariant, n: usize, window: usize) -> GpuResult<()> {
    if n > MAX_LEN {
        return Err(invalid(variant, n, format!("n must be at most {MAX_LEN} (2^40, a u64 count)")));
    }
    check_window(window).map_err(|reason| invalid(variant, n, reason))
}

impl SinglePassScratch {
    /// The look-back memset and the single-pass kernel (u32 or `_c64`, as
    /// the plan chose; `C` its count word).
    fn enqueue<C: DeviceRepr>(
        &mut self,
        stream: &Arc<CudaStream>,
        input: &CudaSlice<i32>,
        flags: Option<&CudaSlice<u8>>,
        output: &mut CudaSlice<i32>,
        count: &mut CudaSlice<C>,
        what: &dyn Fn(&str) -> String,
    ) -> GpuResult<()> {
        let n_u64 = input.len() as u64;
        self.lookback.reset(stream)?;
        let mut launch = stream.launch_builder(&self.kernel);
        launch.arg(input);
        if let Some(f) = flags {
            launch.arg(f);
        }
        launch.arg(&n_u64).arg(output).arg(count).arg(self.lookback.buffer());
        // SAFETY: matches compact_single_pass_{positive(input, n, ...),
        // flagged(input, selector_flags, n, ...)}[_c64](output, count,
        // scratch): `C` is the kernel's count word (u32, or u64 for _c64); the
        // scratch holds `tiles` descriptors (zeroed above); one block per
        // tile, tiles < 2^31 (MAX_LEN / SINGLE_PASS_TILE_ITEMS).
        unsafe { launch.launch(config(self.tiles as u32, BLOCK_THREADS, 0)) }.context(|| what("single pass"))?;
        Ok(())
    }
}

/// The buffers and the stream of one three-phase enqueue.
struct ThreePhaseRun<'a> {
    stream: &'a Arc<CudaStream>,
    input: &'a CudaSlice<i32>,
    flags: Option<&'a CudaSlice<u8>>,
    output: &'a mut CudaSlice<i32>,
    what: &'a dyn Fn(&str) -> String,
}

impl ThreePhaseScratch {
    /// The u32 path: phases 1 and 2 over the whole input, then
    /// `compact_scatter`, which writes the u32 count.
    fn run_whole(&mut self, run: ThreePhaseRun<'_>, count: &mut CudaSlice<u32>) -> GpuResult<()> {
        let ThreePhaseRun { stream, input, flags, output, what } = run;
        let n = input.len();
        let has_tile_offsets = self.scan_range(stream, input, flags, (0, n), what)?;
        // Phase 3: scatter (+ count). levels[0] holds complete tile
        // offsets whenever the flags took more than one tile.
        let n_u64 = n as u64;
        let mut launch = stream.launch_builder(&self.scatter);
        launch
            .arg(input)
            .arg(&self.keep_flags)
            .arg(&self.positions)
            .arg(&n_u64)
            .arg(&self.levels[0])
            .arg(&has_tile_offsets)
            .arg(output)
            .arg(count);
        // SAFETY: matches compact_scatter(input, flags, positions, n,
        // tile_offsets, has_tile_offsets, output, count).
        unsafe { launch.launch(config(grid_stride_grid(n), BLOCK_THREADS, 0)) }.context(|| what("scatter"))?;
        Ok(())
    }

    /// The wide path: the first base word zeroed, then for each window
    /// phases 1 and 2 over it and `compact_scatter_window`; the last window
    /// writes the u64 count.
    fn run_windows(
        &mut self,
        run: ThreePhaseRun<'_>,
        bases: &mut CudaSlice<u64>,
        windows: &[(usize, usize)],
        count: &mut CudaSlice<u64>,
    ) -> GpuResult<()> {
        let ThreePhaseRun { stream, input, flags, output, what } = run;
        let mut first = bases.slice_mut(0..1);
        stream.memset_zeros(&mut first).context(|| what("zeroing the first window's base"))?;
        for (w, &(start, len)) in windows.iter().enumerate() {
            let at = |step: &str| what(&format!("window [{start}, {}): {step}", start + len));
            let has_tile_offsets = self.scan_range(stream, input, flags, (start, len), &at)?;
            // Window w reads base word w and writes word w + 1, the last
            // window the caller's count: no launch reads a word it writes.
            let (before, mut after) = bases.split_at_mut(w + 1);
            let base_in = before.slice(w..w + 1);
            let mut next = if w + 1 == windows.len() { count.slice_mut(0..1) } else { after.slice_mut(0..1) };
            let (window_input, len_u64) = (input.slice(start..start + len), len as u64);
            let mut launch = stream.launch_builder(&self.scatter);
            launch
                .arg(&window_input)
                .arg(&self.keep_flags)
                .arg(&self.positions)
                .arg(&len_u64)
                .arg(&self.levels[0])
                .arg(&has_tile_offsets)
                .arg(&base_in)
                .arg(&mut *output)
                .arg(&mut next);
            // SAFETY: matches compact_scatter_window(input, flags, positions,
            // n, tile_offsets, has_tile_offsets, base_in, output, next_base):
            // the window's input, its len flags and positions, two distinct
            // u64 words; every destination is below the whole count, at most n.
            unsafe { launch.launch(config(grid_stride_grid(len), BLOCK_THREADS, 0)) }.context(|| at("scatter"))?;
        }
        Ok(())
    }
}

/// A count word: u32 ([`CompactPlan::enqueue`]) or u64
/// ([`CompactPlan::enqueue_wide`]), with the three-phase path that writes it.
trait CountWord: DeviceRepr + ValidAsZeroBits + Copy {
    /// The plan width that writes this word.
    const WIDTH: Width;
    /// The count as read.
    fn count(self) -> u64;
    /// The three-phase run of this width on `scratch`; `None` when the
    /// scratch is not this width's (the plan's width is checked before).
    fn three_phase(
        scratch: &mut Scratch,
        run: ThreePhaseRun<'_>,
        windows: &[(usize, usize)],
        count: &mut CudaSlice<Self>,
    ) -> Option<GpuResult<()>>;
}

impl CountWord for u32 {
    const WIDTH: Width = Width::U32;
    fn count(self) -> u64 {
        u64::from(self)
    }
    fn three_phase(
        scratch: &mut Scratch,
        run: ThreePhaseRun<'_>,
        _windows: &[(usize, usize)],
        count: &mut CudaSlice<u32>,
    ) -> Option<GpuResult<()>> {
        match scratch {
            Scratch::ThreePhase(s) => Some(s.run_whole(run, count)),
            _ => None,
        }
    }
}

impl CountWord for u64 {
    const WIDTH: Width = Width::U64;
    fn count(self) -> u64 {
        self
    }
    fn three_phase(
        scratch: &mut Scratch,
        run: ThreePhaseRun<'_>,
        windows: &[(usize, usize)],
        count: &mut CudaSlice<u64>,
    ) -> Option<GpuResult<()>> {
        match scratch {
            Scratch::ThreePhaseWindows(s, bases) => Some(s.run_windows(run, bases, windows, count)),
            _ => None,
        }
    }
}

impl Gpu {
    /// Compacts `input`: the items `selector` keeps, in input order, and their
    /// count. Errors: [`GpuError::InvalidInput`] for `n > MAX_ITEMS` or
    /// flags of the wrong length; [`GpuError::KernelFault`] if the kernel
    /// reports a broken look-back or a count above `n`.
    pub fn compact_i32(
        &self,
        variant: CompactVariant,
        selector: Selector<'_>,
        input: &[i32],
    ) -> GpuResult<CompactOutput> {
        let (mut kept, count) = self.compact_i32_raw(variant, selector, input)?;
        kept.truncate(count);
        Ok(CompactOutput { kept, count })
    }

    /// As [`Gpu::compact_i32`], but returns the whole output buffer of `n`
    /// elements: the buffer is poisoned (every byte [`Gpu::poison_byte`])
    /// before the launch, so elements `[count, n)`
    /// must still hold the poison pattern afterwards (a rejected item writes
    /// nothing). The count word is poisoned too, so a kernel that never wrote
    /// it is reported as a [`GpuError::KernelFault`].
    pub fn compact_i32_raw(
        &self,
        variant: CompactVariant,
        selector: Selector<'_>,
        input: &[i32],
    ) -> GpuResult<(Vec<i32>, usize)> {
        check_selector(variant, selector, input.len())?;
        let plan = CompactPlan::new(self, variant, selector.kind(), input.len())?;
        self.compact_with::<u32>(plan, selector, input)
    }

    /// As [`Gpu::compact_i32_raw`] through the wide path
    /// ([`CompactPlan::new_wide_with_window`], [`CompactPlan::enqueue_wide`]:
    /// a u64 count, n up to [`MAX_LEN`]), the three-phase windows `window`
    /// items long ([`WIDE_WINDOW`] when `None`). The same poison and the
    /// same checks: [`GpuError::InvalidInput`] for `n > MAX_LEN`, a bad
    /// window or flags of the wrong length; [`GpuError::KernelFault`] for a
    /// broken look-back or a count above `n`.
    pub fn compact_i32_wide_raw(
        &self,
        variant: CompactVariant,
        selector: Selector<'_>,
        input: &[i32],
        window: Option<usize>,
    ) -> GpuResult<(Vec<i32>, usize)> {
        check_selector(variant, selector, input.len())?;
        let window = window.unwrap_or(WIDE_WINDOW);
        let plan = CompactPlan::new_wide_with_window(self, variant, selector.kind(), input.len(), window)?;
        self.compact_with::<u64>(plan, selector, input)
    }

    /// Runs `plan` on `input` (uploaded) into a poisoned output and a
    /// poisoned count word `C`; the whole output and the count, checked
    /// against `n`.
    fn compact_with<C: CountWord>(
        &self,
        mut plan: CompactPlan,
        selector: Selector<'_>,
        input: &[i32],
    ) -> GpuResult<(Vec<i32>, usize)> {
        let (n, variant) = (input.len(), plan.variant());
        if n == 0 {
            return Ok((Vec::new(), 0));
        }
        let device_input = self.upload(input)?;
        let device_flags = match selector {
            Selector::Flags(flags) => Some(self.upload(flags)?),
            Selector::Positive => None,
        };
        let mut output = self.alloc_poisoned::<i32>(n)?;
        let mut count = self.alloc_poisoned::<C>(1)?;
        plan.enqueue_counted(&device_input, device_flags.as_ref(), &mut output, &mut count)?;
        self.synchronize()?;
        plan.check_fault()?;
        let count = self.download(&count)?[0].count();
        if count > n as u64 {
            return Err(GpuError::KernelFault {
                primitive: PRIMITIVE,
                variant: variant.name(),
                n,
                reason: format!("count word holds {count:#x}, more than n (never written?)"),
            });
        }
        Ok((self.download(&output)?, count as usize))
    }
}

/// [`GpuError::InvalidInput`] when the flags of `selector` are not one a
/// item.
fn check_selector(variant: CompactVariant, selector: Selector<'_>, n: usize) -> GpuResult<()> {
    match selector {
        Selector::Flags(flags) if flags.len() != n => {
            Err(invalid(variant, n, format!("{} flags for {n} items", flags.len())))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
#[path = "compact_tests.rs"]
mod tests;

//! Stream compaction of int32 items (`cuda/compact.cu`): keep flags ->
//! exclusive scan -> scatter.
//!
//! Contract of every variant:
//! * **Stable**: the kept items appear in input order.
//! * **Count**: the number of kept items is written to a device word (u32)
//!   and returned.
//! * **A rejected item writes nothing**: after a run, elements
//!   `[count, n)` of the output buffer still hold whatever they held before
//!   (the host methods poison the whole buffer first, see
//!   [`Gpu::compact_i32_raw`]).
//! * **Selection**: [`Selector::Positive`] keeps `x > 0`;
//!   [`Selector::Flags`] keeps item `i` when `flags[i] != 0` (one `u8` per
//!   item).
//! * **Limits**: `n <= u32::MAX` (positions and the count are u32 on the
//!   device); longer inputs get [`GpuError::InvalidInput`]. `n = 0` gives an
//!   empty result and launches nothing.

use crate::device::Gpu;
use crate::error::{DriverContext, GpuError, GpuResult};
use crate::kernel_family::KernelFamily;
use crate::launch::{config, BLOCK_THREADS};
use crate::lookback::LookbackScratch;
use crate::plan_description::PlanDescription;
use crate::policy::COMPACT;
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, PushKernelArg};
use std::sync::Arc;

/// Items per single-pass tile (`kSinglePassTileItems` in compact.cu).
pub const SINGLE_PASS_TILE_ITEMS: usize = (BLOCK_THREADS * COMPACT.single_pass_vectors_per_thread * 4) as usize;
/// `kPackedFieldBits`: the width of one packed count field (the policy's).
pub const PACKED_FIELD_BITS: u32 = COMPACT.packed_field_bits;
/// Flags per scan tile of the three-phase schedule (`kThreePhaseTileItems`).
pub const THREE_PHASE_TILE_ITEMS: usize = (BLOCK_THREADS * COMPACT.three_phase_items_per_thread) as usize;
/// The largest input: positions and the count are u32 on the device.
pub const MAX_ITEMS: usize = u32::MAX as usize;

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

struct ThreePhaseScratch {
    keep_flags: CudaSlice<u32>,
    positions: CudaSlice<u32>,
    /// S_1 .. S_K: `levels[k]` has `level_lens[k]` entries.
    levels: Vec<CudaSlice<u32>>,
    level_lens: Vec<usize>,
    flags_kernel: CudaFunction,
    scan_tiles: CudaFunction,
    add_tile_offsets: CudaFunction,
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
    SinglePass(Box<SinglePassScratch>),
}

/// A compaction of `n` int32 items with every scratch buffer allocated, for
/// timing.
///
/// [`CompactPlan::enqueue`] puts on the stream, and nothing else (no
/// allocation, no host copy, no synchronisation):
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
pub struct CompactPlan {
    variant: CompactVariant,
    selector: SelectorKind,
    n: usize,
    stream: Arc<CudaStream>,
    grid_stride_blocks: u32,
    scratch: Scratch,
}

impl std::fmt::Debug for CompactPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompactPlan")
            .field("variant", &self.variant)
            .field("selector", &self.selector)
            .field("n", &self.n)
            .finish_non_exhaustive()
    }
}

/// Blocks of a one-item-per-thread grid-stride kernel over `len` items.
fn grid_stride_grid(len: usize) -> u32 {
    len.div_ceil(BLOCK_THREADS as usize).clamp(1, MAX_GRID_STRIDE_BLOCKS) as u32
}

fn invalid(variant: CompactVariant, n: usize, reason: String) -> GpuError {
    GpuError::InvalidInput { primitive: PRIMITIVE, variant: variant.name(), n, reason }
}

impl CompactPlan {
    /// Allocates every scratch buffer of `variant` for `n` items selected by
    /// `selector`. Fails with [`GpuError::InvalidInput`] when
    /// `n > MAX_ITEMS`.
    pub fn new(gpu: &Gpu, variant: CompactVariant, selector: SelectorKind, n: usize) -> GpuResult<CompactPlan> {
        if n > MAX_ITEMS {
            return Err(invalid(variant, n, format!("n must be at most {MAX_ITEMS} (u32 positions and count)")));
        }
        let grid_stride_blocks = n.div_ceil(4).div_ceil(BLOCK_THREADS as usize).clamp(1, MAX_GRID_STRIDE_BLOCKS) as u32;
        let scratch = if n == 0 {
            Scratch::Empty
        } else {
            match variant {
                CompactVariant::ThreePhase => {
                    let level_lens = three_phase_level_lens(n);
                    let mut levels = Vec::with_capacity(level_lens.len());
                    for &len in &level_lens {
                        levels.push(gpu.alloc_uninit::<u32>(len)?);
                    }
                    Scratch::ThreePhase(Box::new(ThreePhaseScratch {
                        keep_flags: gpu.alloc_uninit::<u32>(n)?,
                        positions: gpu.alloc_uninit::<u32>(n)?,
                        levels,
                        level_lens,
                        flags_kernel: gpu
                            .function(KernelFamily::Compact, &format!("compact_keep_flags_{}", selector.name()))?,
                        scan_tiles: gpu.function(KernelFamily::Compact, "compact_scan_tiles")?,
                        add_tile_offsets: gpu.function(KernelFamily::Compact, "compact_add_tile_offsets")?,
                        scatter: gpu.function(KernelFamily::Compact, "compact_scatter")?,
                    }))
                }
                CompactVariant::SinglePass => {
                    let tiles = n.div_ceil(SINGLE_PASS_TILE_ITEMS);
                    Scratch::SinglePass(Box::new(SinglePassScratch {
                        tiles,
                        lookback: LookbackScratch::new::<i64>(gpu, tiles)?,
                        kernel: gpu
                            .function(KernelFamily::Compact, &format!("compact_single_pass_{}", selector.name()))?,
                    }))
                }
            }
        };
        Ok(CompactPlan { variant, selector, n, stream: gpu.stream().clone(), grid_stride_blocks, scratch })
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

    /// Logical bytes of one run with `count` items kept: `4n + 4 * count`
    /// (the input read and the kept items written), plus `n` for the flags
    /// of [`SelectorKind::Flags`].
    pub fn logical_bytes(&self, count: usize) -> u64 {
        let flags = if self.selector == SelectorKind::Flags { self.n as u64 } else { 0 };
        4 * self.n as u64 + 4 * count as u64 + flags
    }

    /// Enqueues the compaction of `input` (`n` items) into `output` (`n`
    /// elements; only `[0, count)` is written) and the count into
    /// `count[0]`. `flags` must be `Some` (with `n` bytes) exactly when the
    /// plan was built for [`SelectorKind::Flags`]. See the type's doc for
    /// what is put on the stream.
    pub fn enqueue(
        &mut self,
        input: &CudaSlice<i32>,
        flags: Option<&CudaSlice<u8>>,
        output: &mut CudaSlice<i32>,
        count: &mut CudaSlice<u32>,
    ) -> GpuResult<()> {
        let (n, variant) = (self.n, self.variant);
        if input.len() != n || output.len() != n {
            return Err(invalid(
                variant,
                n,
                format!("plan built for {n} items, got input {} / output {}", input.len(), output.len()),
            ));
        }
        if count.is_empty() {
            return Err(invalid(variant, n, "count must hold one u32".into()));
        }
        match (self.selector, flags) {
            (SelectorKind::Positive, None) => {}
            (SelectorKind::Flags, Some(f)) if f.len() == n => {}
            (kind, f) => {
                return Err(invalid(
                    variant,
                    n,
                    format!("plan built for selector {}, got flags of length {:?}", kind.name(), f.map(|f| f.len())),
                ))
            }
        }
        let stream = self.stream.clone();
        let n_u64 = n as u64;
        let what = |step: &str| format!("{PRIMITIVE}/{} n={n}: {step}", variant.name());
        match &mut self.scratch {
            Scratch::Empty => {
                let mut first = count.slice_mut(0..1);
                stream.memset_zeros(&mut first).context(|| what("count memset"))?;
            }
            Scratch::ThreePhase(s) => {
                // Phase 1: keep flags.
                let mut launch = stream.launch_builder(&s.flags_kernel);
                match flags {
                    None => launch.arg(input),
                    Some(f) => launch.arg(f),
                };
                launch.arg(&n_u64).arg(&mut s.keep_flags);
                // SAFETY: matches compact_keep_flags_{positive(input, n, flags),
                // flagged(selector_flags, n, flags)}; every buffer holds n items.
                unsafe { launch.launch(config(self.grid_stride_blocks, BLOCK_THREADS, 0)) }
                    .context(|| what("keep flags"))?;

                // Phase 2: level 0 (the flags), then every level with more than one tile.
                let tiles0 = s.level_lens[0] as u32;
                let mut launch = stream.launch_builder(&s.scan_tiles);
                launch.arg(&s.keep_flags).arg(&n_u64).arg(&mut s.positions).arg(&mut s.levels[0]);
                // SAFETY: matches compact_scan_tiles(values, len, exclusive_out,
                // tile_totals); levels[0] holds ceil(n / 2048) entries.
                unsafe { launch.launch(config(tiles0, BLOCK_THREADS, 0)) }.context(|| what("scan level 0"))?;
                let top = s.level_lens.len() - 1;
                let level_u64: Vec<u64> = s.level_lens.iter().map(|&l| l as u64).collect();
                for k in 0..top {
                    let (lower, upper) = s.levels.split_at_mut(k + 1);
                    let values = &lower[k];
                    let mut launch = stream.launch_builder(&s.scan_tiles);
                    // In place: each thread reads its own values before writing them.
                    launch.arg(values).arg(&level_u64[k]).arg(values).arg(&mut upper[0]);
                    // SAFETY: matches compact_scan_tiles; levels[k + 1] holds
                    // ceil(levels[k].len() / 2048) entries.
                    unsafe { launch.launch(config(s.level_lens[k + 1] as u32, BLOCK_THREADS, 0)) }
                        .context(|| what("scan upper level"))?;
                }
                // Push the complete offsets down: levels[top - 1] was scanned as
                // one tile, so it is complete; every level below needs the one above.
                for k in (0..top.saturating_sub(1)).rev() {
                    let (lower, upper) = s.levels.split_at_mut(k + 1);
                    let len = level_u64[k];
                    let grid = grid_stride_grid(s.level_lens[k]);
                    let mut launch = stream.launch_builder(&s.add_tile_offsets);
                    launch.arg(&mut lower[k]).arg(&len).arg(&upper[0]);
                    // SAFETY: matches compact_add_tile_offsets(values, len, tile_offsets).
                    unsafe { launch.launch(config(grid, BLOCK_THREADS, 0)) }.context(|| what("add tile offsets"))?;
                }

                // Phase 3: scatter (+ count). levels[0] holds complete tile
                // offsets whenever the flags took more than one tile.
                let has_tile_offsets = u32::from(top >= 1);
                let grid = grid_stride_grid(n);
                let mut launch = stream.launch_builder(&s.scatter);
                launch
                    .arg(input)
                    .arg(&s.keep_flags)
                    .arg(&s.positions)
                    .arg(&n_u64)
                    .arg(&s.levels[0])
                    .arg(&has_tile_offsets)
                    .arg(output)
                    .arg(count);
                // SAFETY: matches compact_scatter(input, flags, positions, n,
                // tile_offsets, has_tile_offsets, output, count).
                unsafe { launch.launch(config(grid, BLOCK_THREADS, 0)) }.context(|| what("scatter"))?;
            }
            Scratch::SinglePass(s) => {
                s.lookback.reset(&stream)?;
                let mut launch = stream.launch_builder(&s.kernel);
                launch.arg(input);
                if let Some(f) = flags {
                    launch.arg(f);
                }
                launch.arg(&n_u64).arg(output).arg(count).arg(s.lookback.buffer());
                // SAFETY: matches compact_single_pass_{positive(input, n, ...),
                // flagged(input, selector_flags, n, ...)}(output, count,
                // scratch); the scratch holds `tiles` descriptors (zeroed
                // above); one block per tile, tiles <= 2^20.
                unsafe { launch.launch(config(s.tiles as u32, BLOCK_THREADS, 0)) }.context(|| what("single pass"))?;
            }
        }
        Ok(())
    }

    /// What one [`CompactPlan::enqueue`] puts on the stream, read from the
    /// scratch it runs with; `kept` (the items the selector keeps) only
    /// enters the DRAM estimate: the input (and selector flags) read, the
    /// kept items written; three-phase adds its flags and positions written
    /// and read again (16n) and its re-read input and flags in the scatter
    /// (8n); single-pass its tile flags and two 8-byte payloads per tile.
    pub fn describe(&self, kept: usize) -> PlanDescription {
        let n = self.n as u64;
        let d = PlanDescription::new("CompactPlan").moves(self.logical_bytes(kept));
        let selector = self.selector.name();
        match &self.scratch {
            Scratch::Empty => d.memset("count", 4),
            Scratch::ThreePhase(s) => {
                let top = s.level_lens.len() - 1;
                let mut d = d
                    .launch(format!("compact_keep_flags_{selector}"), self.grid_stride_blocks, BLOCK_THREADS, 0)
                    .launch("compact_scan_tiles", s.level_lens[0] as u32, BLOCK_THREADS, 0);
                for k in 0..top {
                    d = d.launch("compact_scan_tiles", s.level_lens[k + 1] as u32, BLOCK_THREADS, 0);
                }
                for k in (0..top.saturating_sub(1)).rev() {
                    d = d.launch("compact_add_tile_offsets", grid_stride_grid(s.level_lens[k]), BLOCK_THREADS, 0);
                }
                d.launch("compact_scatter", grid_stride_grid(self.n), BLOCK_THREADS, 0).moves(24 * n)
            }
            Scratch::SinglePass(s) => d
                .memset("tile counter, error word, tile descriptors", s.lookback.bytes() as u64)
                .launch(format!("compact_single_pass_{selector}"), s.tiles as u32, BLOCK_THREADS, 0)
                .moves(2 * s.lookback.bytes() as u64),
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
    /// elements: the buffer is poisoned (every byte
    /// [`crate::POISON_BYTE`]) before the launch, so elements `[count, n)`
    /// must still hold the poison pattern afterwards (a rejected item writes
    /// nothing). The count word is poisoned too, so a kernel that never wrote
    /// it is reported as a [`GpuError::KernelFault`].
    pub fn compact_i32_raw(
        &self,
        variant: CompactVariant,
        selector: Selector<'_>,
        input: &[i32],
    ) -> GpuResult<(Vec<i32>, usize)> {
        let n = input.len();
        if let Selector::Flags(flags) = selector {
            if flags.len() != n {
                return Err(invalid(variant, n, format!("{} flags for {n} items", flags.len())));
            }
        }
        let mut plan = CompactPlan::new(self, variant, selector.kind(), n)?;
        if n == 0 {
            return Ok((Vec::new(), 0));
        }
        let device_input = self.upload(input)?;
        let device_flags = match selector {
            Selector::Flags(flags) => Some(self.upload(flags)?),
            Selector::Positive => None,
        };
        let mut output = self.alloc_poisoned::<i32>(n)?;
        let mut count = self.alloc_poisoned::<u32>(1)?;
        plan.enqueue(&device_input, device_flags.as_ref(), &mut output, &mut count)?;
        self.synchronize()?;
        plan.check_fault()?;
        let count = self.download(&count)?[0] as usize;
        if count > n {
            return Err(GpuError::KernelFault {
                primitive: PRIMITIVE,
                variant: variant.name(),
                n,
                reason: format!("count word holds {count:#x}, more than n (never written?)"),
            });
        }
        Ok((self.download(&output)?, count))
    }
}

#[cfg(test)]
#[path = "compact_tests.rs"]
mod tests;

//! Whole-array reductions (`cuda/reduce.cu`): the sum of int32 input in
//! int64, and the in-order composition of [`AffineMap`]s (associative, not
//! commutative), each in four schedules ([`ReduceVariant`]).
//!
//! Contract, for every variant:
//! * int32: the sum `x[0] + ... + x[n-1]` as int64, added modulo 2^64 (the
//!   kernels add the two's-complement bits, `SumI64` in `operators.cuh`).
//!   That is the exact sum whenever the exact sum fits int64, whatever order
//!   a schedule adds in (addition modulo 2^64 is associative and
//!   commutative): always so for `n <= 2^32`, since `|sum| <= n * 2^31 <=
//!   2^63` (and `-2^63` fits). Past 2^32 items an input *can* have a sum
//!   outside int64 (2^32 + 1 copies of `i32::MIN`); the result is then the
//!   exact sum wrapped to int64, as CUB's and `torch.sum`'s int64 sums give.
//!   No overflow is reported: a caller whose data may reach 2^63 in
//!   magnitude must split it.
//! * affine maps: `combine(...combine(combine(x[0], x[1]), x[2])..., x[n-1])`
//!   with [`AffineMap::combine`] (wrapping u64): no bound from the values.
//! * An empty input returns the identity (0, or [`AffineMap::IDENTITY`])
//!   without a launch.
//! * `n > variant.max_len()` is [`GpuError::InvalidInput`]: [`SERIAL_MAX_LEN`]
//!   for the one-thread baseline, else [`MAX_LEN`] (2^40 - 512, the grid
//!   limit, far past any device memory). The limit in practice is device
//!   memory: [`Gpu::reduce`] refuses an input whose buffers do not fit the
//!   device's free memory with [`GpuError::DeviceMemory`], naming both; a
//!   plan's scratch (a few bytes per 512 items) that cannot be allocated is the
//!   driver's out-of-memory error.
//! * Every index, tile base and count is 64-bit on the device and on the
//!   host ([`ReduceGeometry`] holds a plan's grids and partial counts in
//!   u64; tests build it past 2^32 and 2^33).

use crate::affine::AffineMap;
use crate::device::Gpu;
use crate::error::{DriverContext, GpuError, GpuResult};
use crate::int_element;
pub use crate::int_element::SERIAL_MAX_LEN;
use crate::kernel_family::KernelFamily;
use crate::launch::{check_vector_aligned, config, persistent_grid, BLOCK_THREADS};
use crate::plan_description::PlanDescription;
use crate::policy::{BLOCK, REDUCE};
use cudarc::driver::{CudaFunction, CudaSlice, CudaView, CudaViewMut, DeviceRepr, PushKernelArg, ValidAsZeroBits};

/// Items per block of the multipass kernel (`kBlockItems`): 256 threads x 2.
pub const MULTIPASS_BLOCK_ITEMS: usize = (BLOCK.threads * BLOCK.hierarchical_items_per_thread) as usize;

/// int32 items per block of `reduce_block_atomic_i32` (256 threads x 4 int4).
pub const ATOMIC_BLOCK_ITEMS_I32: usize = (BLOCK.threads * REDUCE.atomic_vectors_per_thread * 4) as usize;
/// Affine items per ticket of `reduce_block_atomic_affine` (256 threads x 8).
const ATOMIC_BLOCK_ITEMS_AFFINE: usize = (BLOCK.threads * REDUCE.ordered_thread_items) as usize;
/// Items of one single-pass warp tile (`kReduceWarpTileItems`: 32 lanes x
/// `kReduceItemsPerThread`), int32 and affine alike.
pub const SINGLE_PASS_WARP_TILE_ITEMS: usize = (32 * REDUCE.single_pass_items_per_thread) as usize;
/// Fewest items per block of the single pass: one warp tile per warp.
const SINGLE_PASS_MIN_BLOCK_ITEMS: usize = SINGLE_PASS_WARP_TILE_ITEMS * (BLOCK.threads as usize / 32);
/// Words of the ordered block-atomic scratch: ticket counter, turn, error.
const ORDERED_SYNC_WORDS: usize = 3;

/// The most blocks of a one-dimensional launch (`gridDim.x`, every GPU since
/// sm_30).
pub const MAX_GRID_BLOCKS: u64 = (1 << 31) - 1;

/// The longest input every variant but `Serial` accepts (inclusive): the
/// most items whose every launch fits [`MAX_GRID_BLOCKS`] blocks. The
/// multipass first pass has the most blocks (512 items each), so this is
/// `(2^31 - 1) * 512 = 2^40 - 512` items (4.4 TB of int32, 17.6 TB of affine
/// maps): device memory always runs out first ([`GpuError::DeviceMemory`]).
/// Nothing in the values bounds it (see the module docs on the int64 sum).
pub const MAX_LEN: usize = MAX_GRID_BLOCKS as usize * MULTIPASS_BLOCK_ITEMS;

/// The schedules of a whole-array reduction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceVariant {
    /// One thread folds the input left to right (`<<<1, 1>>>`): the
    /// baseline. `n <= SERIAL_MAX_LEN`.
    Serial,
    /// Hierarchical: 256 threads, 2 adjacent loads per thread, 512 inputs per
    /// block, one partial per block; the same kernel over the partials until
    /// one value is left (4 launches at n = 2^28), all on one stream.
    Multipass,
    /// Each block reduces its range, then one atomic per block: `atomicAdd`
    /// on the int64 output (zeroed by a memset first) for int32; for affine
    /// maps a ticket-ordered fold (blocks take tickets from an atomic counter
    /// and fold into the output in ticket order).
    BlockAtomic,
    /// One launch of a persistent grid: blocks reduce contiguous chunks; the
    /// last block to finish folds the partials in order (last-block-done).
    /// The fast one.
    SinglePass,
}

impl ReduceVariant {
    /// Every variant, in report order.
    pub const ALL: [ReduceVariant; 4] =
        [ReduceVariant::Serial, ReduceVariant::Multipass, ReduceVariant::BlockAtomic, ReduceVariant::SinglePass];

    /// The snake_case name used in reports.
    pub fn name(&self) -> &'static str {
        match self {
            ReduceVariant::Serial => "serial",
            ReduceVariant::Multipass => "multipass",
            ReduceVariant::BlockAtomic => "block_atomic",
            ReduceVariant::SinglePass => "single_pass",
        }
    }

    /// The variant called `name` (as [`ReduceVariant::name`] spells it).
    pub fn from_name(name: &str) -> Option<ReduceVariant> {
        ReduceVariant::ALL.into_iter().find(|v| v.name() == name)
    }

    /// The largest n this variant accepts (inclusive): [`SERIAL_MAX_LEN`]
    /// for `Serial`, [`MAX_LEN`] (2^40 - 512, the grid limit) otherwise;
    /// device memory is the limit below it.
    pub fn max_len(&self) -> usize {
        match self {
            ReduceVariant::Serial => SERIAL_MAX_LEN,
            _ => MAX_LEN,
        }
    }
}

/// An input element type of the reductions: `i32` (summed into `i64`) or
/// [`AffineMap`] (composed in order). Sealed: the kernels exist for these two.
pub trait ReduceElement: DeviceRepr + Copy + int_element::Sealed {
    /// The result and partial type: `i64` for `i32`, `AffineMap` for itself.
    type Output: DeviceRepr + ValidAsZeroBits + Copy + std::fmt::Debug + PartialEq;
    /// The operator's identity: the result of an empty input.
    const IDENTITY: Self::Output;
    /// The primitive's name in errors and reports.
    const PRIMITIVE: &'static str;
    /// Kernel-name suffix of the input type.
    const INPUT_SUFFIX: &'static str;
    /// Kernel-name suffix of the partial type (later multipass passes).
    const PARTIAL_SUFFIX: &'static str;
    /// Whether the block-atomic variant is the ticket-ordered one (a
    /// non-commutative operator) rather than a plain atomicAdd.
    const ORDERED_ATOMIC: bool;
    /// Items per block of the block-atomic kernel.
    const ATOMIC_BLOCK_ITEMS: usize;
}

impl ReduceElement for i32 {
    type Output = i64;
    const IDENTITY: i64 = 0;
    const PRIMITIVE: &'static str = "reduce";
    const INPUT_SUFFIX: &'static str = "i32";
    const PARTIAL_SUFFIX: &'static str = "i64";
    const ORDERED_ATOMIC: bool = false;
    const ATOMIC_BLOCK_ITEMS: usize = ATOMIC_BLOCK_ITEMS_I32;
}

impl ReduceElement for AffineMap {
    type Output = AffineMap;
    const IDENTITY: AffineMap = AffineMap::IDENTITY;
    const PRIMITIVE: &'static str = "reduce_affine";
    const INPUT_SUFFIX: &'static str = "affine";
    const PARTIAL_SUFFIX: &'static str = "affine";
    const ORDERED_ATOMIC: bool = true;
    const ATOMIC_BLOCK_ITEMS: usize = ATOMIC_BLOCK_ITEMS_AFFINE;
}

/// The item counts the multipass passes read: `[n, ceil(n/512), ..., 1]`;
/// pass p reduces `counts[p]` items into `counts[p + 1]` partials. At least
/// one pass (n = 1 gives `[1, 1]`).
pub fn multipass_counts(n: usize) -> Vec<usize> {
    let mut counts = vec![n];
    loop {
        let next = n_blocks(*counts.last().expect("nonempty"), MULTIPASS_BLOCK_ITEMS);
        counts.push(next);
        if next == 1 {
            return counts;
        }
    }
}

/// `max(1, ceil(n / per_block))`.
fn n_blocks(n: usize, per_block: usize) -> usize {
    n.div_ceil(per_block).max(1)
}

/// One launch of a reduction plan: `grid` blocks of 256 threads reading
/// `items` elements (the input, or the partials of the pass before).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReduceLaunch {
    /// Blocks (`gridDim.x`), at most [`MAX_GRID_BLOCKS`].
    pub grid: u32,
    /// Elements the launch reads (its `count` argument).
    pub items: u64,
}

/// The launch geometry of a [`ReducePlan`], computed on the host in u64
/// before any allocation: the plan allocates and launches exactly this
/// (CPU tests build it for n past 2^32 and 2^33, where a 32-bit count, grid
/// or offset would wrap).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReduceGeometry {
    /// The launches one `enqueue` makes, in order.
    pub launches: Vec<ReduceLaunch>,
    /// Elements (of the output type) of each scratch buffer of partials:
    /// multipass, the ping-pong pair (or one, or none); single pass, one per
    /// block; none otherwise.
    pub partials: Vec<u64>,
    /// 32-bit words of zeroed scratch: the single pass's done counter (1),
    /// the ordered block atomic's ticket, turn and error words (3).
    pub sync_words: u64,
}

impl ReduceGeometry {
    /// The geometry of reducing `n` elements of `E` with `variant`;
    /// `persistent_blocks` is the single pass's grid cap (SMs x resident
    /// blocks of its kernel; unused by the other variants). Error: `n` is 0
    /// or a grid would pass [`MAX_GRID_BLOCKS`] (the reason in words).
    pub fn new<E: ReduceElement>(variant: ReduceVariant, n: usize, persistent_blocks: u32) -> Result<Self, String> {
        if n == 0 {
            return Err("a plan needs at least one element".into());
        }
        let launch = |blocks: usize, items: usize| -> Result<ReduceLaunch, String> {
            match u32::try_from(blocks) {
                Ok(grid) if u64::from(grid) <= MAX_GRID_BLOCKS => Ok(ReduceLaunch { grid, items: items as u64 }),
                _ => Err(format!("a launch of {blocks} blocks, more than the {MAX_GRID_BLOCKS} a grid may have")),
            }
        };
        Ok(match variant {
            ReduceVariant::Serial => ReduceGeometry { launches: vec![launch(1, n)?], partials: vec![], sync_words: 0 },
            ReduceVariant::Multipass => {
                let counts = multipass_counts(n);
                let launches =
                    counts.windows(2).map(|pass| launch(pass[1], pass[0])).collect::<Result<Vec<_>, String>>()?;
                // Pass p (not the last) writes counts[p + 1] partials into buffer p % 2.
                let partials = (0..(counts.len() - 2).min(2)).map(|p| counts[p + 1] as u64).collect();
                ReduceGeometry { launches, partials, sync_words: 0 }
            }
            ReduceVariant::BlockAtomic => ReduceGeometry {
                launches: vec![launch(n_blocks(n, E::ATOMIC_BLOCK_ITEMS), n)?],
                partials: vec![],
                sync_words: if E::ORDERED_ATOMIC { ORDERED_SYNC_WORDS as u64 } else { 0 },
            },
            ReduceVariant::SinglePass => {
                let blocks = n_blocks(n, SINGLE_PASS_MIN_BLOCK_ITEMS).min(persistent_blocks as usize).max(1);
                let single = launch(blocks, n)?;
                ReduceGeometry { launches: vec![single], partials: vec![u64::from(single.grid)], sync_words: 1 }
            }
        })
    }

    /// Bytes of device scratch the plan allocates (partials and sync words).
    pub fn scratch_bytes<E: ReduceElement>(&self) -> u64 {
        let partial = std::mem::size_of::<E::Output>() as u64;
        self.partials.iter().map(|&p| p * partial).sum::<u64>() + 4 * self.sync_words
    }
}

fn invalid(primitive: &'static str, variant: ReduceVariant, n: usize, reason: String) -> GpuError {
    GpuError::InvalidInput { primitive, variant: variant.name(), n, reason }
}

fn check_len<E: ReduceElement>(variant: ReduceVariant, n: usize) -> GpuResult<()> {
    GpuError::check_max_len(E::PRIMITIVE, variant.name(), variant.max_len(), n)
}

enum Schedule<P> {
    Serial {
        kernel: CudaFunction,
    },
    Multipass {
        first: CudaFunction,
        later: CudaFunction,
        /// One per pass: its grid and the items it reads.
        passes: Vec<ReduceLaunch>,
        /// Ping-pong partial buffers: [0] holds ceil(n/512) (passes 0, 2, ...),
        /// [1] the next level (passes 1, 3, ...). Empty for a single pass.
        partials: Vec<CudaSlice<P>>,
    },
    BlockAtomic {
        kernel: CudaFunction,
        grid: u32,
        /// Ordered (affine) path only: ticket counter, turn, error word.
        sync: Option<CudaSlice<u32>>,
    },
    SinglePass {
        kernel: CudaFunction,
        grid: u32,
        partials: CudaSlice<P>,
        /// Zeroed once here; the kernel's atomicInc wraps it back to 0.
        done_counter: CudaSlice<u32>,
    },
}

/// A reduction of `n` device-resident elements, with every scratch buffer
/// allocated up front, for timing: [`ReducePlan::enqueue`] only launches
/// (plus the memsets named below) on the [`Gpu`]'s stream, with no
/// allocation, host copy or synchronisation.
///
/// What `enqueue` puts on the stream, per variant:
/// * `Serial`: one launch `reduce_serial_<t>` `<<<1, 1>>>`.
/// * `Multipass`: one launch per pass, `<<<ceil(m/512), 256>>>` over m items:
///   `reduce_multipass_i32` then `reduce_multipass_i64` (int32), or
///   `reduce_multipass_affine` throughout; the last pass writes the output.
///   Passes: 1 for n <= 512, 2 up to 512^2, 3 up to 512^3, 4 up to 512^4 =
///   2^36, 5 up to [`MAX_LEN`].
/// * `BlockAtomic`: int32: a memset of the 8-byte output to 0, then
///   `reduce_block_atomic_i32` `<<<ceil(n/4096), 256>>>`. Affine: a memset of
///   12 bytes of scratch (ticket counter, turn, error word), then
///   `reduce_block_atomic_affine` `<<<ceil(n/2048), 256>>>`.
/// * `SinglePass`: one launch `reduce_single_pass_<t>` `<<<G, 256>>>`, G =
///   min(SMs x resident blocks, ceil(n/4096), at least 1) (one 512-item warp
///   tile per warp at least, for both element types); no memset (the done counter is zeroed when the plan
///   is made and every completed launch leaves it at 0).
///
/// Buffers are the caller's: whole `CudaSlice`s ([`ReducePlan::enqueue`]) or
/// views starting at a [`BUFFER_ALIGN`](crate::launch::BUFFER_ALIGN)-byte boundary
/// ([`ReducePlan::enqueue_view`]), on the plan's [`Gpu`] context. After a synchronisation,
/// [`ReducePlan::check_fault`] reports a kernel-detected fault (the
/// ticket-ordered affine path's spin bound).
pub struct ReducePlan<'g, E: ReduceElement = i32> {
    gpu: &'g Gpu,
    variant: ReduceVariant,
    n: usize,
    schedule: Schedule<E::Output>,
}

impl<'g, E: ReduceElement> ReducePlan<'g, E> {
    /// Compiles (once per process) and loads the kernels and allocates the
    /// scratch for reducing `n` elements with `variant`. `1 <= n <=
    /// variant.max_len()`, else [`GpuError::InvalidInput`] (the host methods
    /// answer n = 0 without a plan).
    pub fn new(gpu: &'g Gpu, variant: ReduceVariant, n: usize) -> GpuResult<Self> {
        let geometry = Self::geometry(gpu, variant, n)?;
        let function = |name: String| gpu.function(KernelFamily::Reduce, &name);
        let schedule = match variant {
            ReduceVariant::Serial => {
                Schedule::Serial { kernel: function(format!("reduce_serial_{}", E::INPUT_SUFFIX))? }
            }
            ReduceVariant::Multipass => Schedule::Multipass {
                first: function(format!("reduce_multipass_{}", E::INPUT_SUFFIX))?,
                later: function(format!("reduce_multipass_{}", E::PARTIAL_SUFFIX))?,
                partials: geometry
                    .partials
                    .iter()
                    .map(|&len| gpu.alloc_uninit::<E::Output>(len as usize))
                    .collect::<GpuResult<_>>()?,
                passes: geometry.launches,
            },
            ReduceVariant::BlockAtomic => Schedule::BlockAtomic {
                kernel: function(format!("reduce_block_atomic_{}", E::INPUT_SUFFIX))?,
                grid: geometry.launches[0].grid,
                sync: if geometry.sync_words > 0 {
                    Some(gpu.alloc_zeroed::<u32>(geometry.sync_words as usize)?)
                } else {
                    None
                },
            },
            ReduceVariant::SinglePass => Schedule::SinglePass {
                kernel: function(format!("reduce_single_pass_{}", E::INPUT_SUFFIX))?,
                grid: geometry.launches[0].grid,
                partials: gpu.alloc_uninit::<E::Output>(geometry.partials[0] as usize)?,
                done_counter: gpu.alloc_zeroed::<u32>(geometry.sync_words as usize)?,
            },
        };
        Ok(ReducePlan { gpu, variant, n, schedule })
    }

    /// The [`ReduceGeometry`] a plan of `variant` for `n` elements has on
    /// `gpu` (the single pass's grid cap read from the GPU), after the
    /// length checks of [`ReducePlan::new`].
    fn geometry(gpu: &Gpu, variant: ReduceVariant, n: usize) -> GpuResult<ReduceGeometry> {
        GpuError::check_plan_len(E::PRIMITIVE, variant.name(), variant.max_len(), n, "reduces to the identity")?;
        let persistent = match variant {
            ReduceVariant::SinglePass => {
                let name = format!("reduce_single_pass_{}", E::INPUT_SUFFIX);
                persistent_grid(gpu, KernelFamily::Reduce, &name, BLOCK_THREADS, 0)?
            }
            _ => 1,
        };
        ReduceGeometry::new::<E>(variant, n, persistent).map_err(|reason| invalid(E::PRIMITIVE, variant, n, reason))
    }

    /// The device memory, in bytes, that reducing `n` elements with
    /// `variant` takes: (the input, the one-element output plus the plan's
    /// scratch). [`Gpu::reduce`] checks their sum against the free memory
    /// before it uploads anything; the sweep skips a case that does not fit
    /// for the same sum. Errors as [`ReducePlan::new`]'s length checks.
    pub fn device_bytes(gpu: &Gpu, variant: ReduceVariant, n: usize) -> GpuResult<(u64, u64)> {
        let geometry = Self::geometry(gpu, variant, n)?;
        let input = n as u64 * std::mem::size_of::<E>() as u64;
        Ok((input, std::mem::size_of::<E::Output>() as u64 + geometry.scratch_bytes::<E>()))
    }

    /// The variant this plan runs.
    pub fn variant(&self) -> ReduceVariant {
        self.variant
    }

    view_plan_methods! {
        /// The number of input elements this plan reduces.
        len;
        /// Enqueues the reduction of `input` (exactly `n` elements) into
        /// `output[0]` (the rest of `output` is not touched). Only launches and
        /// the memsets listed on [`ReducePlan`]; no synchronisation.
        enqueue;
    }

    /// [`ReducePlan::enqueue`] on views of caller-owned device memory: the
    /// same launches with the same arguments. `input` holds exactly `n`
    /// elements, `output` at least one; both start at a [`BUFFER_ALIGN`](crate::launch::BUFFER_ALIGN)-byte
    /// boundary, else [`GpuError::InvalidInput`].
    pub fn enqueue_view(&mut self, input: &CudaView<'_, E>, output: &mut CudaViewMut<'_, E::Output>) -> GpuResult<()> {
        let (n, variant) = (self.n, self.variant);
        if input.len() != n {
            return Err(invalid(E::PRIMITIVE, variant, n, format!("the input buffer holds {} elements", input.len())));
        }
        if output.is_empty() {
            return Err(invalid(E::PRIMITIVE, variant, n, "the output buffer is empty".into()));
        }
        let stream = self.gpu.stream().clone();
        check_vector_aligned(input, &*output, &stream).map_err(|reason| invalid(E::PRIMITIVE, variant, n, reason))?;
        let what = |step: &str| format!("{}/{} n={n}: {step}", E::PRIMITIVE, variant.name());
        let count = n as u64;
        match &mut self.schedule {
            Schedule::Serial { kernel } => {
                let mut launch = stream.launch_builder(kernel);
                launch.arg(input).arg(&count).arg(&mut *output);
                // SAFETY: (const In* in, u64 count, Out* out); `input` holds n elements.
                unsafe { launch.launch(config(1, 1, 0)) }.context(|| what("serial launch"))?;
            }
            Schedule::Multipass { first, later, passes: launches, partials } => {
                let passes = launches.len();
                for p in 0..passes {
                    let ReduceLaunch { grid, items } = launches[p];
                    let cfg = config(grid, BLOCK_THREADS, 0);
                    let last = p + 1 == passes;
                    let kernel = if p == 0 { &*first } else { &*later };
                    let mut launch = stream.launch_builder(kernel);
                    // Every kernel: (const In* in, u64 count, Out* partials).
                    match (p == 0, last) {
                        (true, true) => launch.arg(input).arg(&items).arg(&mut *output),
                        (true, false) => launch.arg(input).arg(&items).arg(&mut partials[0]),
                        (false, true) => launch.arg(&partials[(p - 1) % 2]).arg(&items).arg(&mut *output),
                        (false, false) => {
                            let (low, high) = partials.split_at_mut(1);
                            let (src, dst) = if p % 2 == 1 { (&low[0], &mut high[0]) } else { (&high[0], &mut low[0]) };
                            launch.arg(src).arg(&items).arg(dst)
                        }
                    };
                    // SAFETY: the source holds `items` elements, the destination
                    // `grid` (= ceil(items / 512)) partials (ReduceGeometry).
                    unsafe { launch.launch(cfg) }.context(|| what(&format!("multipass pass {p}")))?;
                }
            }
            Schedule::BlockAtomic { kernel, grid, sync } => {
                let cfg = config(*grid, BLOCK_THREADS, 0);
                match sync {
                    None => {
                        stream.memset_zeros(&mut output.slice_mut(0..1)).context(|| what("zeroing the output"))?;
                        let mut launch = stream.launch_builder(kernel);
                        launch.arg(input).arg(&count).arg(&mut *output);
                        // SAFETY: (const i32* in, u64 count, i64* out); out[0] zeroed above.
                        unsafe { launch.launch(cfg) }.context(|| what("block atomic launch"))?;
                    }
                    Some(sync) => {
                        self.gpu.memset_bytes(sync, 0)?;
                        let mut launch = stream.launch_builder(kernel);
                        launch.arg(input).arg(&count).arg(&mut *output).arg(&mut *sync);
                        // SAFETY: (const AffineMap* in, u64 count, AffineMap* out,
                        // u32* sync[3]); sync zeroed above.
                        unsafe { launch.launch(cfg) }.context(|| what("ordered block atomic launch"))?;
                    }
                }
            }
            Schedule::SinglePass { kernel, grid, partials, done_counter } => {
                let mut launch = stream.launch_builder(kernel);
                launch.arg(input).arg(&count).arg(&mut *partials).arg(&mut *done_counter).arg(&mut *output);
                // SAFETY: (const In* in, u64 count, Out* partials[grid],
                // u32* done_counter, Out* out); the counter is 0 between launches.
                unsafe { launch.launch(config(*grid, BLOCK_THREADS, 0)) }.context(|| what("single pass launch"))?;
            }
        }
        Ok(())
    }

    /// What one [`ReducePlan::enqueue`] puts on the stream, read from the
    /// schedule it runs. DRAM estimate: the input once, plus each multipass
    /// partial level and the single-pass partials written and read back.
    pub fn describe(&self) -> PlanDescription {
        let output = std::mem::size_of::<E::Output>() as u64;
        let d = PlanDescription::new("ReducePlan").moves((self.n * std::mem::size_of::<E>()) as u64);
        let block = BLOCK_THREADS;
        match &self.schedule {
            Schedule::Serial { .. } => d.launch(format!("reduce_serial_{}", E::INPUT_SUFFIX), 1, 1, 0),
            Schedule::Multipass { passes, .. } => passes.iter().enumerate().fold(d, |d, (p, pass)| {
                let suffix = if p == 0 { E::INPUT_SUFFIX } else { E::PARTIAL_SUFFIX };
                let d = d.launch(format!("reduce_multipass_{suffix}"), pass.grid, block, 0);
                if p + 1 < passes.len() {
                    d.moves(2 * output * u64::from(pass.grid))
                } else {
                    d
                }
            }),
            Schedule::BlockAtomic { grid, sync, .. } => match sync {
                None => d.memset("output", output),
                Some(_) => d.memset("ticket counter, turn, error word", 4 * ORDERED_SYNC_WORDS as u64),
            }
            .launch(format!("reduce_block_atomic_{}", E::INPUT_SUFFIX), *grid, block, 0),
            Schedule::SinglePass { grid, .. } => d
                .launch(format!("reduce_single_pass_{}", E::INPUT_SUFFIX), *grid, block, 0)
                .moves(2 * output * *grid as u64),
        }
    }

    /// After the enqueued work has completed (this call synchronises):
    /// [`GpuError::KernelFault`] if a kernel reported a broken protocol (the
    /// ticket-ordered block-atomic path's bounded spin ran out). Other
    /// variants have no error word and always pass.
    pub fn check_fault(&self) -> GpuResult<()> {
        if let Schedule::BlockAtomic { sync: Some(sync), .. } = &self.schedule {
            let error = self
                .gpu
                .stream()
                .clone_dtoh(&sync.slice(2..3))
                .context(|| format!("{}/{}: reading the error word", E::PRIMITIVE, self.variant.name()))?;
            if error[0] != 0 {
                return Err(GpuError::KernelFault {
                    primitive: E::PRIMITIVE,
                    variant: self.variant.name(),
                    n: self.n,
                    reason: "a block waited too long for its turn (spin bound ran out)".into(),
                });
            }
        }
        Ok(())
    }
}

impl Gpu {
    /// The int64 sum of `input` with `variant` (see the module docs for the
    /// contract): 0 for an empty input; [`GpuError::InvalidInput`] for
    /// `n > variant.max_len()`; [`GpuError::DeviceMemory`] when the input and
    /// the plan's buffers do not fit the device's free memory.
    pub fn reduce_i32(&self, variant: ReduceVariant, input: &[i32]) -> GpuResult<i64> {
        self.reduce(variant, input)
    }

    /// The in-order composition `x[0]` then `x[1]` ... then `x[n-1]` of
    /// `input` with `variant`: [`AffineMap::IDENTITY`] for an empty input;
    /// [`GpuError::InvalidInput`] for `n > variant.max_len()`;
    /// [`GpuError::DeviceMemory`] as for [`Gpu::reduce_i32`].
    pub fn reduce_affine(&self, variant: ReduceVariant, input: &[AffineMap]) -> GpuResult<AffineMap> {
        self.reduce(variant, input)
    }

    /// Either reduction, generic over the element type: checks that its
    /// buffers fit the free device memory ([`ReducePlan::device_bytes`]),
    /// uploads `input`, poisons the output, runs a fresh [`ReducePlan`],
    /// synchronises, checks the kernel's error word and downloads the result.
    pub fn reduce<E: ReduceElement>(&self, variant: ReduceVariant, input: &[E]) -> GpuResult<E::Output> {
        check_len::<E>(variant, input.len())?;
        if input.is_empty() {
            return Ok(E::IDENTITY);
        }
        let (input_bytes, other_bytes) = ReducePlan::<E>::device_bytes(self, variant, input.len())?;
        self.check_device_memory(E::PRIMITIVE, variant.name(), input.len(), input_bytes + other_bytes, || {
            format!(
                "input {}, output and scratch {}",
                crate::error::gigabytes(input_bytes),
                crate::error::gigabytes(other_bytes)
            )
        })?;
        let device_input = self.upload(input)?;
        let mut output = self.alloc_poisoned::<E::Output>(1)?;
        let mut plan = ReducePlan::<E>::new(self, variant, input.len())?;
        plan.enqueue(&device_input, &mut output)?;
        self.synchronize()?;
        plan.check_fault()?;
        let result = self.download(&output)?;
        Ok(result[0])
    }
}

#[cfg(test)]
#[path = "reduce_tests.rs"]
mod tests;

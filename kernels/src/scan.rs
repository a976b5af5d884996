//! Prefix scans (`cuda/scan.cu`): int32 input with int64 output, and
//! in-order compositions of [`AffineMap`]s, exclusive and inclusive, in
//! three schedules ([`ScanVariant`]).
//!
//! Contract, for every variant:
//! * exclusive: `out[0]` = identity (0, or [`AffineMap::IDENTITY`]),
//!   `out[i] = x[0] (+) ... (+) x[i-1]`; inclusive: `out[i] = exclusive[i]
//!   (+) x[i]`. For affine maps `(+)` is [`AffineMap::combine`] with the
//!   earlier elements on the left.
//! * int32: `1 <= n < 2^32` on the device, so every prefix obeys
//!   `|prefix| <= n * 2^31 < 2^63`; longer inputs are rejected.
//! * An empty input returns an empty output without a launch.
//! * `n > variant.max_len()` is [`GpuError::InvalidInput`]; a look-back spin
//!   that runs out is [`GpuError::KernelFault`].

use crate::affine::AffineMap;
use crate::device::Gpu;
use crate::error::{DriverContext, GpuError, GpuResult};
use crate::int_element;
pub use crate::int_element::{MAX_LEN, SERIAL_MAX_LEN};
use crate::kernel_family::KernelFamily;
use crate::launch::{check_vector_aligned, config, BLOCK_THREADS};
use crate::lookback::LookbackScratch;
use crate::plan_description::PlanDescription;
use crate::policy::{BLOCK, SCAN};
use cudarc::driver::{CudaFunction, CudaSlice, CudaView, CudaViewMut, DeviceRepr, PushKernelArg, ValidAsZeroBits};

/// Items per block of the Blelloch block scan (`kBlockItems`).
pub const BLELLOCH_BLOCK_ITEMS: usize = (BLOCK.threads * BLOCK.hierarchical_items_per_thread) as usize;
/// Threads per block of the look-back scan (`kScanBlockThreads`).
pub const LOOKBACK_BLOCK_THREADS: u32 = SCAN.block_threads;
/// Items per thread of the look-back scan (`kScanItemsPerThread`).
pub const LOOKBACK_ITEMS_PER_THREAD: usize = SCAN.items_per_thread as usize;
/// Items per tile of the look-back scan, int32 and affine alike (`kScanTileItems`).
pub const LOOKBACK_TILE_ITEMS: usize = LOOKBACK_BLOCK_THREADS as usize * LOOKBACK_ITEMS_PER_THREAD;

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
    /// for `Serial`, [`MAX_LEN`] (2^32 - 1) otherwise.
    pub fn max_len(&self) -> usize {
        match self {
            ScanVariant::Serial => SERIAL_MAX_LEN,
            _ => MAX_LEN,
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
/// n <= 512, 2 up to 512^2 = 262,144, 3 from 262,145 up to 512^3, 4 above.
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

/// `ceil(m / 512)` as a grid size (m <= 2^32 - 1 gives at most 2^23 blocks).
fn blelloch_grid(m: usize) -> u32 {
    m.div_ceil(BLELLOCH_BLOCK_ITEMS).max(1) as u32
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
        /// `blelloch_level_sizes(n)`.
        sizes: Vec<usize>,
        /// `totals[k]`: the block totals of level k (ceil(m_k/512) items),
        /// scanned in place as level k + 1; the top level's is one slot.
        totals: Vec<CudaSlice<P>>,
    },
    DecoupledLookback {
        kernel: CudaFunction,
        tiles: u32,
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
/// Buffers are the caller's: whole `CudaSlice`s ([`ScanPlan::enqueue`]) or
/// views starting at a [`BUFFER_ALIGN`](crate::launch::BUFFER_ALIGN)-byte boundary
/// ([`ScanPlan::enqueue_view`]), on the plan's [`Gpu`] context. After a synchronisation,
/// [`ScanPlan::check_fault`] reports a look-back spin that ran out.
pub struct ScanPlan<'g, E: ScanElement = i32> {
    gpu: &'g Gpu,
    variant: ScanVariant,
    kind: ScanKind,
    n: usize,
    schedule: Schedule<E::Output>,
}

impl<'g, E: ScanElement> ScanPlan<'g, E> {
    /// Compiles (once per process) and loads the kernels and allocates the
    /// scratch for a `kind` scan of `n` elements with `variant`. `1 <= n <=
    /// variant.max_len()`, else [`GpuError::InvalidInput`] (the host methods
    /// answer n = 0 without a plan).
    pub fn new(gpu: &'g Gpu, variant: ScanVariant, kind: ScanKind, n: usize) -> GpuResult<Self> {
        GpuError::check_plan_len(E::PRIMITIVE, variant.name(), variant.max_len(), n, "scans to an empty output")?;
        let function = |name: String| gpu.function(KernelFamily::Scan, &name);
        let (k, t, o) = (kind.name(), E::INPUT_SUFFIX, E::OUTPUT_SUFFIX);
        let schedule = match variant {
            ScanVariant::Serial => Schedule::Serial { kernel: function(format!("scan_serial_{k}_{t}"))? },
            ScanVariant::Blelloch => {
                let sizes = blelloch_level_sizes(n);
                let totals = sizes
                    .iter()
                    .map(|&m| gpu.alloc_uninit::<E::Output>(blelloch_grid(m) as usize))
                    .collect::<GpuResult<Vec<_>>>()?;
                Schedule::Blelloch {
                    level0: function(format!("scan_blelloch_level_{k}_{t}"))?,
                    inplace: function(format!("scan_blelloch_level_inplace_{o}"))?,
                    add_into_output: function(format!("scan_blelloch_add_offsets_{o}"))?,
                    add_into_totals: function(format!("scan_blelloch_add_offsets_totals_{o}"))?,
                    sizes,
                    totals,
                }
            }
            ScanVariant::DecoupledLookback => {
                let tiles = n.div_ceil(LOOKBACK_TILE_ITEMS);
                Schedule::DecoupledLookback {
                    kernel: function(format!("scan_decoupled_lookback_{k}_{t}"))?,
                    tiles: tiles as u32,
                    scratch: LookbackScratch::new::<E::Output>(gpu, tiles)?,
                    values: std::marker::PhantomData,
                }
            }
        };
        Ok(ScanPlan { gpu, variant, kind, n, schedule })
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
            Schedule::Blelloch { level0, inplace, add_into_output, add_into_totals, sizes, totals } => {
                let levels = sizes.len();
                // Level 0: the input into the output, block totals into totals[0].
                {
                    let mut launch = stream.launch_builder(level0);
                    launch.arg(input).arg(&mut *output).arg(&mut totals[0]).arg(&count);
                    // SAFETY: (const In* in, Out* out, Out* totals, u64 count);
                    // totals[0] holds ceil(n/512) slots.
                    unsafe { launch.launch(config(blelloch_grid(n), BLOCK_THREADS, 0)) }
                        .context(|| what("blelloch level 0"))?;
                }
                // Level k >= 1: scan totals[k-1] (m_k items) in place, its block
                // totals into totals[k].
                for k in 1..levels {
                    let items = sizes[k] as u64;
                    let (low, high) = totals.split_at_mut(k);
                    let mut launch = stream.launch_builder(inplace);
                    launch.arg(&mut low[k - 1]).arg(&mut high[0]).arg(&items);
                    // SAFETY: (Out* data, Out* totals, u64 count); data holds m_k
                    // items, totals ceil(m_k/512) slots.
                    unsafe { launch.launch(config(blelloch_grid(sizes[k]), BLOCK_THREADS, 0)) }
                        .context(|| what(&format!("blelloch level {k}")))?;
                }
                // Offsets, top level first: the scanned level k (totals[k-1],
                // now final) is added into level k-1's data.
                for k in (1..levels).rev() {
                    let items = sizes[k - 1] as u64;
                    let cfg = config(blelloch_grid(sizes[k - 1]), BLOCK_THREADS, 0);
                    if k == 1 {
                        let mut launch = stream.launch_builder(add_into_output);
                        launch.arg(&mut *output).arg(&totals[0]).arg(&items);
                        // SAFETY: (Out* data, const Out* offsets, u64 count).
                        unsafe { launch.launch(cfg) }.context(|| what("blelloch offsets into the output"))?;
                    } else {
                        let (low, high) = totals.split_at_mut(k - 1);
                        let mut launch = stream.launch_builder(add_into_totals);
                        launch.arg(&mut low[k - 2]).arg(&high[0]).arg(&items);
                        // SAFETY: (Out* data, const Out* offsets, u64 count); data
                        // is level k-1 (m_{k-1} items), offsets level k.
                        unsafe { launch.launch(cfg) }
                            .context(|| what(&format!("blelloch offsets into level {}", k - 1)))?;
                    }
                }
            }
            Schedule::DecoupledLookback { kernel, tiles, scratch, .. } => {
                scratch.reset(&stream)?;
                let mut launch = stream.launch_builder(kernel);
                launch.arg(input).arg(&mut *output).arg(&count).arg(scratch.buffer());
                // SAFETY: (const In* in, Out* out, u64 count, u64* scratch);
                // the scratch holds the header and `tiles` descriptors of Out
                // values (zeroed above).
                unsafe { launch.launch(config(*tiles, LOOKBACK_BLOCK_THREADS, 0)) }
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
        let block = BLOCK_THREADS;
        match &self.schedule {
            Schedule::Serial { .. } => d.launch(format!("scan_serial_{k}_{t}"), 1, 1, 0),
            Schedule::Blelloch { sizes, .. } => {
                let levels = sizes.len();
                let mut d = d.launch(format!("scan_blelloch_level_{k}_{t}"), blelloch_grid(sizes[0]), block, 0);
                for &m in &sizes[1..] {
                    d = d.launch(format!("scan_blelloch_level_inplace_{o}"), blelloch_grid(m), block, 0);
                }
                for level in (1..levels).rev() {
                    let into = if level == 1 { "" } else { "_totals" };
                    d = d.launch(
                        format!("scan_blelloch_add_offsets{into}_{o}"),
                        blelloch_grid(sizes[level - 1]),
                        block,
                        0,
                    );
                }
                let totals: u64 = sizes.iter().map(|&m| 2 * output * blelloch_grid(m) as u64).sum();
                d.moves(totals + if levels > 1 { 2 * output * n } else { 0 })
            }
            Schedule::DecoupledLookback { tiles, scratch, .. } => d
                .memset("tile counter, error word, tile descriptors", scratch.bytes() as u64)
                .launch(format!("scan_decoupled_lookback_{k}_{t}"), *tiles, LOOKBACK_BLOCK_THREADS, 0)
                .moves(2 * scratch.bytes() as u64),
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

    /// Either scan, generic over the element type: uploads `input`, poisons
    /// the output, runs a fresh [`ScanPlan`], synchronises, checks the
    /// kernel's error word and downloads every element.
    pub fn scan<E: ScanElement>(&self, variant: ScanVariant, kind: ScanKind, input: &[E]) -> GpuResult<Vec<E::Output>> {
        check_len::<E>(variant, input.len())?;
        if input.is_empty() {
            return Ok(Vec::new());
        }
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

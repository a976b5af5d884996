//! Segmented reductions (`cuda/segmented_reduce.cu`) over half-open offsets:
//! segment `s` covers `input[offsets[s]..offsets[s + 1]]`, so `offsets`
//! holds `segments + 1` entries (at least one).
//!
//! Operators and identities (the result of an empty segment):
//! * sum int32 -> int64 ([`Gpu::segmented_sum_i32`]): 0.
//! * sum float32 ([`Gpu::segmented_sum_f32`]): +0.0. Each schedule is a
//!   fixed tree (`__fadd_rn`), so a result is bitwise reproducible for the
//!   same schedule, offsets and GPU; NaN and inf propagate as in IEEE
//!   addition.
//! * max int32 -> int64 ([`Gpu::segmented_max_i32`]): `i64::MIN`.
//! * argmax float32 ([`Gpu::segmented_argmax_f32`]): `(value, index)` with
//!   `index` **relative to the segment start**; the lowest index wins ties;
//!   an empty segment gives `(f32::NEG_INFINITY, usize::MAX)` ("no
//!   element"). NaN or ±inf in any segment is rejected before launching
//!   ([`GpuError::NonFinite`], absolute index of the first one).
//!
//! Offsets are `&[usize]` in the API; on the device they are u32 when `n <=
//! u32::MAX` and u64 past it ([`OffsetWidth`], the kernels' `_o64` entry
//! points), for any `n` up to [`MAX_LEN`]. The int64 sums add modulo 2^64
//! (exact whenever a segment's sum fits int64, always so below 2^32 items).
//! Offsets that decrease or pass `n` get
//! [`GpuError::InvalidInput`] naming the first bad position and its values,
//! checked on the host before anything is launched. Elements outside
//! `[offsets[0], offsets[segments])` are never read.

use crate::device::Gpu;
use crate::error::{DriverContext, GpuError, GpuResult};
use crate::kernel_family::KernelFamily;
use crate::launch::{config, BLOCK_THREADS};
use crate::plan_description::PlanDescription;
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, DeviceRepr, PushKernelArg};
use std::marker::PhantomData;
use std::sync::Arc;

/// The largest input u32 offsets address (and the limit of the exact
/// segmented sum, whose offsets stay u32).
pub const MAX_ITEMS: usize = u32::MAX as usize;
/// The largest input of a [`SegmentedPlan`]: 2^40 (4 TB of int32, past any
/// device's memory); past [`MAX_ITEMS`] its offsets are u64.
pub const MAX_LEN: usize = 1 << 40;
/// Items per block that [`SegmentedVariant::MultiBlockPerSegment`] aims for:
/// a segment of `len` items gets `ceil(len / 8192)` blocks (at least 1, at
/// most [`MAX_BLOCKS_PER_SEGMENT`]), judged from the average length.
pub const MULTI_BLOCK_CHUNK_ITEMS: usize = 8192;
/// The most blocks one segment gets.
pub const MAX_BLOCKS_PER_SEGMENT: usize = 4096;
/// The longest segment argmax accepts: indices within a segment are i32 on
/// the device, with `i32::MAX` reserved for "no element".
pub const ARGMAX_MAX_SEGMENT_LEN: usize = i32::MAX as usize;

const WARPS_PER_BLOCK: usize = BLOCK_THREADS as usize / 32;
/// `kSegmentsPerWarp`: consecutive segments a [`SegmentedVariant::WarpBatched`]
/// warp holds at a time (its grid covers `segments / (8 * 4)` blocks).
pub const SEGMENTS_PER_WARP: usize = 4;
/// The longest average segment [`SegmentedVariant::best_for`] gives to
/// [`SegmentedVariant::WarpBatched`], and the fewest segments. H200, one run,
/// cold medians, f32 sums (batched vs warp per segment): 32-wide segments at
/// 2^28 1389 us vs 1983 us, 2^24 94.3 vs 130.1, 2^20 13.1 vs 14.3, 2^18 8.74
/// vs 8.67, 2^16 8.37 vs 6.43 (too few segments to fill the GPU four at a
/// warp); 1024-wide segments at 2^28 251 vs 242 (not short: one after
/// another). Its fast path holds segments of up to 128 items.
pub const WARP_BATCHED_MAX_AVG_LEN: usize = 128;
/// See [`WARP_BATCHED_MAX_AVG_LEN`]: 2^15 segments (2^20 items of 32-wide
/// segments), where batching first wins.
pub const WARP_BATCHED_MIN_SEGMENTS: usize = 1 << 15;
/// Grid cap of every (grid-stride) kernel of this family.
const MAX_GRID_BLOCKS: usize = 1 << 22;

/// How segments are mapped to threads. Every schedule is correct for every
/// segment length, 0 included; they differ in speed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SegmentedVariant {
    /// A warp per segment (8 segments per 256-thread block in flight), 16-byte
    /// loads: for many short segments.
    WarpPerSegment,
    /// A 256-thread block per segment: for medium segments.
    BlockPerSegment,
    /// Several blocks per segment, each writing one partial; a second kernel
    /// combines the partials of a segment in order (a warp per segment): for
    /// few huge segments.
    MultiBlockPerSegment,
    /// A warp per segment as [`SegmentedVariant::WarpPerSegment`] (the same
    /// combine order, so the same bits), but [`SEGMENTS_PER_WARP`] segments
    /// per warp at a time, every load of a batch of short (at most 128-item)
    /// segments issued before any is combined: for very many tiny segments.
    /// A batch holding a longer segment goes one segment after another.
    WarpBatched,
}

impl SegmentedVariant {
    /// Every variant.
    pub const ALL: [SegmentedVariant; 4] = [
        SegmentedVariant::WarpPerSegment,
        SegmentedVariant::BlockPerSegment,
        SegmentedVariant::MultiBlockPerSegment,
        SegmentedVariant::WarpBatched,
    ];

    /// Snake-case name used in reports.
    pub fn name(&self) -> &'static str {
        match self {
            SegmentedVariant::WarpPerSegment => "warp_per_segment",
            SegmentedVariant::BlockPerSegment => "block_per_segment",
            SegmentedVariant::MultiBlockPerSegment => "multi_block_per_segment",
            SegmentedVariant::WarpBatched => "warp_batched",
        }
    }

    /// The schedule expected to be fastest for `segments` segments of
    /// `avg_len` items on average: batched warps for at least
    /// [`WARP_BATCHED_MIN_SEGMENTS`] segments of at most
    /// [`WARP_BATCHED_MAX_AVG_LEN`], a warp up to 4096 items (16 KB of f32), a
    /// block up to 65,536, several blocks beyond.
    pub fn best_for(avg_len: usize, segments: usize) -> SegmentedVariant {
        if avg_len <= WARP_BATCHED_MAX_AVG_LEN && segments >= WARP_BATCHED_MIN_SEGMENTS {
            SegmentedVariant::WarpBatched
        } else if avg_len <= 4096 {
            SegmentedVariant::WarpPerSegment
        } else if avg_len <= 65536 {
            SegmentedVariant::BlockPerSegment
        } else {
            SegmentedVariant::MultiBlockPerSegment
        }
    }

    fn kernel_prefix(&self) -> &'static str {
        match self {
            SegmentedVariant::WarpPerSegment => "segmented_warp_per_segment",
            SegmentedVariant::BlockPerSegment => "segmented_block_per_segment",
            SegmentedVariant::MultiBlockPerSegment => "segmented_multi_block_partials",
            SegmentedVariant::WarpBatched => "segmented_warp_batched",
        }
    }
}

/// The device result of a segmented argmax (`ArgF32` in
/// cuda/common/operators.cuh): `index` is relative to the segment start, and
/// `i32::MAX` means "no element" (an empty segment; `value` is then
/// meaningless).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SegmentArgF32 {
    /// The maximum value.
    pub value: f32,
    /// Its index within the segment (lowest on ties), or `i32::MAX`.
    pub index: i32,
}
// SAFETY: plain old data with the layout of the CUDA struct (8 bytes, 4-aligned);
// all-zero bits are a valid value.
device_pod!(SegmentArgF32);

impl SegmentArgF32 {
    /// The API form: `(value, index)`, or `(f32::NEG_INFINITY, usize::MAX)`
    /// for an empty segment.
    pub fn to_pair(self) -> (f32, usize) {
        if self.index == i32::MAX {
            (f32::NEG_INFINITY, usize::MAX)
        } else {
            (self.value, self.index as usize)
        }
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A segmented operator: the element type it reads and the type the device
/// writes per segment. Implemented by the marker types
/// [`SegmentedSumI32`], [`SegmentedSumF32`], [`SegmentedMaxI32`] and
/// [`SegmentedArgMaxF32`].
pub trait SegmentedOp: sealed::Sealed {
    /// Input element type.
    type Input: DeviceRepr + Copy + Default;
    /// Per-segment device result type.
    type Output: DeviceRepr + Copy;
    /// Kernel-name suffix, e.g. `sum_f32`.
    const NAME: &'static str;
    /// Primitive name used in errors and reports, e.g. `segmented_sum_f32`.
    const PRIMITIVE: &'static str;
    /// The longest segment the operator accepts.
    const MAX_SEGMENT_LEN: usize;
    /// Index of the first input element (within `[first, last)`) the operator
    /// rejects, if any.
    fn first_rejected(_input: &[Self::Input], _first: usize, _last: usize) -> Option<usize> {
        None
    }
}

/// int32 -> int64 sum; identity 0.
#[derive(Debug, Clone, Copy)]
pub struct SegmentedSumI32;
/// float32 sum; identity +0.0.
#[derive(Debug, Clone, Copy)]
pub struct SegmentedSumF32;
/// int32 -> int64 max; identity `i64::MIN`.
#[derive(Debug, Clone, Copy)]
pub struct SegmentedMaxI32;
/// float32 argmax, index relative to the segment start, lowest index on
/// ties; nonfinite input rejected.
#[derive(Debug, Clone, Copy)]
pub struct SegmentedArgMaxF32;

impl sealed::Sealed for SegmentedArgMaxF32 {}

/// Implements [`SegmentedOp`] for an operator that rejects no input and
/// accepts segments up to [`MAX_LEN`]: `name` is the kernel suffix, the
/// primitive is `segmented_<name>`.
macro_rules! plain_segmented_op {
    ($op:ty, $input:ty, $output:ty, $name:literal) => {
        impl sealed::Sealed for $op {}
        impl SegmentedOp for $op {
            type Input = $input;
            type Output = $output;
            const NAME: &'static str = $name;
            const PRIMITIVE: &'static str = concat!("segmented_", $name);
            const MAX_SEGMENT_LEN: usize = MAX_LEN;
        }
    };
}
plain_segmented_op!(SegmentedSumI32, i32, i64, "sum_i32");
plain_segmented_op!(SegmentedSumF32, f32, f32, "sum_f32");
plain_segmented_op!(SegmentedMaxI32, i32, i64, "max_i32");

impl SegmentedOp for SegmentedArgMaxF32 {
    type Input = f32;
    type Output = SegmentArgF32;
    const NAME: &'static str = "argmax_f32";
    const PRIMITIVE: &'static str = "segmented_argmax_f32";
    const MAX_SEGMENT_LEN: usize = ARGMAX_MAX_SEGMENT_LEN;
    fn first_rejected(input: &[f32], first: usize, last: usize) -> Option<usize> {
        input[first..last].iter().position(|x| !x.is_finite()).map(|i| first + i)
    }
}

/// Stamps a typed `Gpu` method that forwards to [`Gpu::segmented_reduce`]
/// with one operator.
macro_rules! segmented_wrapper {
    ($(#[$doc:meta])* $name:ident, $op:ty, $input:ty, $output:ty) => {
        $(#[$doc])*
        pub fn $name(&self, variant: SegmentedVariant, input: &[$input], offsets: &[usize]) -> GpuResult<Vec<$output>> {
            self.segmented_reduce::<$op>(variant, input, offsets)
        }
    };
}

/// Blocks per segment of [`SegmentedVariant::MultiBlockPerSegment`] for
/// `segments` segments over `n` items.
pub fn blocks_per_segment(n: usize, segments: usize) -> usize {
    let average = n / segments.max(1);
    average.div_ceil(MULTI_BLOCK_CHUNK_ITEMS).clamp(1, MAX_BLOCKS_PER_SEGMENT)
}

/// A segmented reduction with operator `O` over `n` items in `segments`
/// segments, with every scratch buffer allocated, for timing.
///
/// [`SegmentedPlan::enqueue`] puts on the stream, and nothing else (no
/// allocation, no copy, no synchronisation; nothing at all for 0 segments):
/// * WarpPerSegment ([`SegmentedVariant::WarpPerSegment`]):
///   `segmented_warp_per_segment_<op>` (ceil(segments / 8) blocks).
/// * WarpBatched ([`SegmentedVariant::WarpBatched`]):
///   `segmented_warp_batched_<op>` (ceil(segments / 32) blocks: 8 warps of
///   [`SEGMENTS_PER_WARP`] segments at a time).
/// * BlockPerSegment ([`SegmentedVariant::BlockPerSegment`]):
///   `segmented_block_per_segment_<op>` (one block per segment).
/// * MultiBlockPerSegment ([`SegmentedVariant::MultiBlockPerSegment`]):
///   `segmented_multi_block_partials_<op>` (B blocks per segment, see
///   [`blocks_per_segment`]) then `segmented_multi_block_combine_<op>`.
///
/// Each first kernel reads u32 offsets, or u64 ones through its `_o64`
/// twin, as the offsets passed to [`SegmentedPlan::enqueue`] are stored
/// ([`SegmentOffsets::width`]). Grids are capped at 2^22 blocks; the
/// kernels loop over the rest.
pub struct SegmentedPlan<O: SegmentedOp> {
    variant: SegmentedVariant,
    n: usize,
    segments: usize,
    blocks_per_segment: u32,
    stream: Arc<CudaStream>,
    /// The first kernel for u32 offsets.
    kernel: CudaFunction,
    /// The first kernel for u64 offsets (`_o64`).
    kernel_o64: CudaFunction,
    combine: Option<CudaFunction>,
    /// segments * blocks_per_segment partials of up to 8 bytes each.
    partials: Option<CudaSlice<u64>>,
    _op: PhantomData<O>,
}

impl<O: SegmentedOp> std::fmt::Debug for SegmentedPlan<O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SegmentedPlan")
            .field("op", &O::NAME)
            .field("variant", &self.variant)
            .field("n", &self.n)
            .field("segments", &self.segments)
            .field("blocks_per_segment", &self.blocks_per_segment)
            .finish_non_exhaustive()
    }
}

fn grid_for(blocks: usize) -> u32 {
    blocks.clamp(1, MAX_GRID_BLOCKS) as u32
}

impl<O: SegmentedOp> SegmentedPlan<O> {
    /// Allocates the scratch of `variant` for `segments` segments over `n`
    /// items. Fails with [`GpuError::InvalidInput`] when `n > MAX_LEN`.
    pub fn new(gpu: &Gpu, variant: SegmentedVariant, n: usize, segments: usize) -> GpuResult<SegmentedPlan<O>> {
        if n > MAX_LEN {
            return Err(GpuError::InvalidInput {
                primitive: O::PRIMITIVE,
                variant: variant.name(),
                n,
                reason: format!("n must be at most {MAX_LEN} (2^40)"),
            });
        }
        let first = format!("{}_{}", variant.kernel_prefix(), O::NAME);
        let kernel = gpu.function(KernelFamily::SegmentedReduce, &first)?;
        let kernel_o64 = gpu.function(KernelFamily::SegmentedReduce, &format!("{first}_o64"))?;
        let (blocks, combine, partials) = if variant == SegmentedVariant::MultiBlockPerSegment {
            let blocks = blocks_per_segment(n, segments);
            let combine =
                gpu.function(KernelFamily::SegmentedReduce, &format!("segmented_multi_block_combine_{}", O::NAME))?;
            // Every partial is written by pass 1 before pass 2 reads it.
            let partials = if segments > 0 { Some(gpu.alloc_uninit::<u64>(segments * blocks)?) } else { None };
            (blocks, Some(combine), partials)
        } else {
            (1, None, None)
        };
        Ok(SegmentedPlan {
            variant,
            n,
            segments,
            blocks_per_segment: blocks as u32,
            stream: gpu.stream().clone(),
            kernel,
            kernel_o64,
            combine,
            partials,
            _op: PhantomData,
        })
    }

    /// The variant this plan runs.
    pub fn variant(&self) -> SegmentedVariant {
        self.variant
    }

    /// Blocks per segment (1 except for the multi-block schedule).
    pub fn blocks_per_segment(&self) -> usize {
        self.blocks_per_segment as usize
    }

    /// What one enqueue puts on the stream (nothing for zero segments), with
    /// the offsets [`Gpu::upload_segment_offsets`] makes for `n`
    /// ([`OffsetWidth::for_len`]). DRAM estimate: the `n` inputs and the
    /// offsets read, one output per segment written, the multi-block
    /// partials written and read.
    pub fn describe(&self) -> PlanDescription {
        let segments = self.segments;
        let width = OffsetWidth::for_len(self.n);
        let d = PlanDescription::new("SegmentedPlan").moves(
            (self.n * std::mem::size_of::<O::Input>()
                + width.bytes() * (segments + 1)
                + segments * std::mem::size_of::<O::Output>()) as u64,
        );
        if segments == 0 {
            return d;
        }
        let kernel = format!("{}_{}{}", self.variant.kernel_prefix(), O::NAME, width.kernel_suffix());
        match self.variant {
            SegmentedVariant::WarpPerSegment => {
                d.launch(kernel, grid_for(segments.div_ceil(WARPS_PER_BLOCK)), BLOCK_THREADS, 0)
            }
            SegmentedVariant::WarpBatched => {
                d.launch(kernel, grid_for(segments.div_ceil(WARPS_PER_BLOCK * SEGMENTS_PER_WARP)), BLOCK_THREADS, 0)
            }
            SegmentedVariant::BlockPerSegment => d.launch(kernel, grid_for(segments), BLOCK_THREADS, 0),
            SegmentedVariant::MultiBlockPerSegment => {
                let partials = segments * self.blocks_per_segment as usize;
                d.launch(kernel, grid_for(partials), BLOCK_THREADS, 0)
                    .launch(
                        format!("segmented_multi_block_combine_{}", O::NAME),
                        grid_for(segments.div_ceil(WARPS_PER_BLOCK)),
                        BLOCK_THREADS,
                        0,
                    )
                    .moves(16 * partials as u64)
            }
        }
    }

    /// Logical bytes of one run: the elements of every segment
    /// (`(last - first) * size_of::<Input>()`).
    pub fn logical_bytes(&self, offsets: &SegmentOffsets) -> u64 {
        let summary = offsets.summary();
        ((summary.last - summary.first) * std::mem::size_of::<O::Input>()) as u64
    }

    /// Enqueues the reduction of every segment of `input` (at least `n`
    /// elements; a 1-element placeholder when `n == 0`) into `output`
    /// (`segments` elements). See the type's doc for what is put on the stream.
    pub fn enqueue(
        &mut self,
        input: &CudaSlice<O::Input>,
        offsets: &SegmentOffsets,
        output: &mut CudaSlice<O::Output>,
    ) -> GpuResult<()> {
        let (n, segments, variant) = (self.n, self.segments, self.variant);
        let invalid =
            |reason: String| GpuError::InvalidInput { primitive: O::PRIMITIVE, variant: variant.name(), n, reason };
        if input.len() < n || offsets.n() != n || offsets.segments() != segments || output.len() != segments {
            return Err(invalid(format!(
                "plan built for n={n}, {segments} segments; got input {}, offsets for n={} with {} segments, output {}",
                input.len(),
                offsets.n(),
                offsets.segments(),
                output.len()
            )));
        }
        if offsets.summary().longest > O::MAX_SEGMENT_LEN {
            return Err(invalid(format!(
                "a segment of {} elements exceeds the limit of {}",
                offsets.summary().longest,
                O::MAX_SEGMENT_LEN
            )));
        }
        if segments == 0 {
            return Ok(());
        }
        let stream = self.stream.clone();
        let segments_u64 = segments as u64;
        let what = |step: &str| format!("{}/{} n={n} segments={segments}: {step}", O::PRIMITIVE, variant.name());
        // The offsets' width picks the first kernel: `_o64` reads u64 offsets.
        let first_kernel = match offsets.width() {
            OffsetWidth::U64 => &self.kernel_o64,
            _ => &self.kernel,
        };
        match variant {
            SegmentedVariant::WarpPerSegment | SegmentedVariant::BlockPerSegment | SegmentedVariant::WarpBatched => {
                let blocks = match variant {
                    SegmentedVariant::WarpPerSegment => segments.div_ceil(WARPS_PER_BLOCK),
                    SegmentedVariant::WarpBatched => segments.div_ceil(WARPS_PER_BLOCK * SEGMENTS_PER_WARP),
                    _ => segments,
                };
                let mut launch = stream.launch_builder(first_kernel);
                launch.arg(input);
                push_offsets(&mut launch, offsets.device());
                launch.arg(&segments_u64).arg(output);
                // SAFETY: matches segmented_{warp,block}_per_segment_<op>[_o64](input,
                // offsets, segments, out), the kernel picked by the offsets'
                // width; offsets were validated against n.
                unsafe { launch.launch(config(grid_for(blocks), BLOCK_THREADS, 0)) }.context(|| what("launch"))?;
            }
            SegmentedVariant::MultiBlockPerSegment => {
                let (Some(combine), Some(partials)) = (&self.combine, &mut self.partials) else {
                    return Err(invalid("multi-block plan without scratch".into()));
                };
                let blocks_per_segment = self.blocks_per_segment;
                let mut launch = stream.launch_builder(first_kernel);
                launch.arg(input);
                push_offsets(&mut launch, offsets.device());
                launch.arg(&segments_u64).arg(&blocks_per_segment).arg(&mut *partials);
                // SAFETY: matches segmented_multi_block_partials_<op>[_o64](input,
                // offsets, segments, blocks_per_segment, partials), the kernel
                // picked by the offsets' width; partials holds segments *
                // blocks_per_segment 8-byte slots.
                unsafe { launch.launch(config(grid_for(segments * blocks_per_segment as usize), BLOCK_THREADS, 0)) }
                    .context(|| what("partials"))?;
                let mut launch = stream.launch_builder(combine);
                launch.arg(&*partials).arg(&segments_u64).arg(&blocks_per_segment).arg(output);
                // SAFETY: matches segmented_multi_block_combine_<op>(partials,
                // segments, blocks_per_segment, out).
                unsafe { launch.launch(config(grid_for(segments.div_ceil(WARPS_PER_BLOCK)), BLOCK_THREADS, 0)) }
                    .context(|| what("combine"))?;
            }
        }
        Ok(())
    }
}

/// Pushes the device offsets, of either width, as the next kernel argument.
fn push_offsets<'a>(launch: &mut cudarc::driver::LaunchArgs<'a>, offsets: &'a DeviceOffsets) {
    match offsets {
        DeviceOffsets::U32(d) => launch.arg(d),
        DeviceOffsets::U64(d) => launch.arg(d),
    };
}

impl Gpu {
    /// Validates, uploads, runs a [`SegmentedPlan`] into a poisoned output
    /// buffer and downloads the per-segment results, with offsets of the
    /// width [`Gpu::upload_segment_offsets`] picks for the input's length.
    fn segmented_reduce<O: SegmentedOp>(
        &self,
        variant: SegmentedVariant,
        input: &[O::Input],
        offsets: &[usize],
    ) -> GpuResult<Vec<O::Output>> {
        self.segmented_reduce_as::<O>(variant, input, offsets, OffsetWidth::for_len(input.len()))
    }

    /// The per-segment results of operator `O` (the device's form; see the
    /// typed methods such as [`Gpu::segmented_sum_i32`]) with the offsets
    /// stored in `width` on the device ([`Gpu::upload_segment_offsets_as`]):
    /// u64 runs the `_o64` kernels at any size. Errors: as the typed
    /// methods, and u32 offsets for `n > u32::MAX`.
    pub fn segmented_reduce_as<O: SegmentedOp>(
        &self,
        variant: SegmentedVariant,
        input: &[O::Input],
        offsets: &[usize],
        width: OffsetWidth,
    ) -> GpuResult<Vec<O::Output>> {
        let n = input.len();
        let invalid =
            |reason: String| GpuError::InvalidInput { primitive: O::PRIMITIVE, variant: variant.name(), n, reason };
        let summary = validate_segment_offsets(offsets, n).map_err(invalid)?;
        if summary.longest > O::MAX_SEGMENT_LEN {
            return Err(invalid(format!(
                "a segment of {} elements exceeds the limit of {}",
                summary.longest,
                O::MAX_SEGMENT_LEN
            )));
        }
        if let Some(index) = O::first_rejected(input, summary.first, summary.last) {
            return Err(GpuError::NonFinite { primitive: O::PRIMITIVE, variant: variant.name(), n, index });
        }
        let mut plan = SegmentedPlan::<O>::new(self, variant, n, summary.segments)?;
        if summary.segments == 0 {
            return Ok(Vec::new());
        }
        let device_offsets = self.upload_segment_offsets_as(offsets, n, width)?;
        // A poisoned 1-element placeholder when n == 0: never read unless a
        // kernel reads an empty segment (which the poison then exposes).
        let device_input = if n == 0 { self.alloc_poisoned::<O::Input>(1)? } else { self.upload(input)? };
        let mut output = self.alloc_poisoned::<O::Output>(summary.segments)?;
        plan.enqueue(&device_input, &device_offsets, &mut output)?;
        self.download(&output)
    }

    segmented_wrapper! {
        /// Sum of every segment of int32 `input`, in int64 (identity 0; added
        /// modulo 2^64). Errors: bad offsets or `n > MAX_LEN`
        /// ([`GpuError::InvalidInput`]).
        segmented_sum_i32, SegmentedSumI32, i32, i64
    }
    segmented_wrapper! {
        /// Sum of every segment of float32 `input` (identity +0.0; a fixed tree
        /// per schedule, `__fadd_rn`). Errors: as [`Gpu::segmented_sum_i32`].
        segmented_sum_f32, SegmentedSumF32, f32, f32
    }
    segmented_wrapper! {
        /// Maximum of every segment of int32 `input`, as int64; an empty segment
        /// gives `i64::MIN`. Errors: as [`Gpu::segmented_sum_i32`].
        segmented_max_i32, SegmentedMaxI32, i32, i64
    }

    /// `(max value, index relative to the segment start)` of every segment of
    /// float32 `input`; the lowest index wins ties; an empty segment gives
    /// `(f32::NEG_INFINITY, usize::MAX)`. Errors: as
    /// [`Gpu::segmented_sum_i32`], plus [`GpuError::NonFinite`] (absolute
    /// index of the first NaN/±inf inside a segment) and a segment longer
    /// than [`ARGMAX_MAX_SEGMENT_LEN`] ([`GpuError::InvalidInput`]).
    pub fn segmented_argmax_f32(
        &self,
        variant: SegmentedVariant,
        input: &[f32],
        offsets: &[usize],
    ) -> GpuResult<Vec<(f32, usize)>> {
        Ok(self
            .segmented_reduce::<SegmentedArgMaxF32>(variant, input, offsets)?
            .into_iter()
            .map(|r| r.to_pair())
            .collect())
    }
}

#[path = "segment_offsets.rs"]
mod segment_offsets;
use segment_offsets::DeviceOffsets;
pub use segment_offsets::{validate_segment_offsets, OffsetSummary, OffsetWidth, SegmentOffsets};

#[cfg(test)]
#[path = "segmented_reduce_tests.rs"]
mod tests;

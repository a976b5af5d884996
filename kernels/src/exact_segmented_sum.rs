//! Correctly rounded segmented sums (`exact_segmented_sum.cu`): the
//! contract of [`crate::exact_sum`] for every segment of half-open offsets
//! (as in [`crate::segmented_reduce`]): segment `s` is
//! `input[offsets[s]..offsets[s + 1]]`, so `offsets` holds `segments + 1`
//! entries (at least one).
//!
//! # Contract
//!
//! * Segment `s`'s result is the exact real sum of its inputs (`f32`, or
//!   bf16 widened exactly) rounded once to nearest, ties to even, in `f32`
//!   (subnormals included). It is a function of the segment's input
//!   multiset only: bitwise identical for every schedule, grid, run and GPU,
//!   because every addition is an integer addition.
//! * An empty segment and an exact zero sum are `+0.0` (also when every
//!   input is `-0.0`).
//! * An exact sum whose rounding overflows (`|S| >= f32::MAX + ulp/2`) is
//!   `±inf`; partial sums never overflow (a segment has fewer than 2^32
//!   inputs).
//! * Non-finite inputs follow IEEE addition per segment: any NaN, or `+inf`
//!   and `-inf` together, give NaN (always the canonical quiet NaN
//!   `0x7fc0_0000`); otherwise an infinity present is the result.
//! * Errors ([`GpuError::InvalidInput`], primitive `exact_sum`, variant
//!   [`SEGMENTED_VARIANT`], checked on the host before anything is
//!   launched): offsets that are empty, decrease or pass `n`
//!   ([`validate_segment_offsets`]: the error names the first bad position
//!   and its values), `n > u32::MAX` (offsets are u32 on the device), a
//!   forced grid of 0 or more than [`MAX_GRID_BLOCKS`] blocks. Driver
//!   failures are [`GpuError::Driver`]. Elements outside
//!   `[offsets[0], offsets[segments])` are never read.
//!
//! # The algorithm
//!
//! Each thread adds its inputs as `±m << (e & 31)` into bin `e >> 5` of its
//! own column of eight shared-memory `i64` bins and normalises the column
//! (carry propagation) every 256 inputs; a warp
//! ([`ExactSegmentedSchedule::WarpPerSegment`]) or a block
//! ([`ExactSegmentedSchedule::BlockPerSegment`]) per segment then adds its
//! threads' nine words and one thread rounds once.
//! [`ExactSegmentedSchedule::WarpWindow`] adds a segment of at most 32
//! inputs within 32 exponents of its largest as one `i64` (`±m << (e -
//! base)`) and rounds it with one integer-to-float conversion when the
//! result is normal; every other segment takes the bins. The overflow bounds
//! and the rounding argument are in `kernels/cuda/exact_segmented_sum.cu`.

use crate::device::Gpu;
use crate::error::{DriverContext, GpuError, GpuResult};
use crate::float_reduce::FloatElement;
use crate::kernel_family::KernelFamily;
use crate::launch::{config, BLOCK_THREADS};
use crate::plan_description::PlanDescription;
use crate::segmented_reduce::{validate_segment_offsets, OffsetSummary, SegmentOffsets, MAX_ITEMS};
use cudarc::driver::{CudaFunction, CudaSlice, PushKernelArg};
use std::marker::PhantomData;

/// The primitive errors and reports name.
pub const PRIMITIVE: &str = "exact_sum";
/// The variant errors and reports name.
pub const SEGMENTED_VARIANT: &str = "segmented_correctly_rounded";
/// The most blocks of one launch (the kernels loop over the other segments).
pub const MAX_GRID_BLOCKS: u32 = 1 << 22;
/// Segments of one 256-thread block of the warp-per-segment schedule.
const WARPS_PER_BLOCK: usize = BLOCK_THREADS as usize / 32;

/// How segments are mapped to threads; the result never depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ExactSegmentedSchedule {
    /// A warp per segment (8 per 256-thread block): for short segments.
    WarpPerSegment,
    /// A warp per segment that adds a segment of at most 32 inputs within
    /// 32 exponents of its largest in one `i64` register sum and converts
    /// it with one rounding (the others as [`Self::WarpPerSegment`]): for
    /// segments of about 32.
    WarpWindow,
    /// A 256-thread block per segment: for long segments.
    BlockPerSegment,
}

impl ExactSegmentedSchedule {
    /// Every schedule.
    pub const ALL: [ExactSegmentedSchedule; 3] = [
        ExactSegmentedSchedule::WarpPerSegment,
        ExactSegmentedSchedule::WarpWindow,
        ExactSegmentedSchedule::BlockPerSegment,
    ];

    /// Snake-case name used in reports.
    pub fn name(&self) -> &'static str {
        match self {
            ExactSegmentedSchedule::WarpPerSegment => "warp_per_segment",
            ExactSegmentedSchedule::WarpWindow => "warp_window",
            ExactSegmentedSchedule::BlockPerSegment => "block_per_segment",
        }
    }

    /// The schedule expected to be faster for segments of `avg_len` inputs
    /// on average: the register window up to 64, a warp up to 4096, a block
    /// beyond.
    pub fn best_for(avg_len: usize) -> ExactSegmentedSchedule {
        if avg_len <= 64 {
            ExactSegmentedSchedule::WarpWindow
        } else if avg_len <= 4096 {
            ExactSegmentedSchedule::WarpPerSegment
        } else {
            ExactSegmentedSchedule::BlockPerSegment
        }
    }

    /// Blocks that give every segment its own warp or block, capped at
    /// [`MAX_GRID_BLOCKS`] (at least 1).
    fn natural_grid(&self, segments: usize) -> u32 {
        let blocks = match self {
            ExactSegmentedSchedule::WarpPerSegment | ExactSegmentedSchedule::WarpWindow => {
                segments.div_ceil(WARPS_PER_BLOCK)
            }
            ExactSegmentedSchedule::BlockPerSegment => segments,
        };
        blocks.clamp(1, MAX_GRID_BLOCKS as usize) as u32
    }
}

/// A launch configuration. The default picks the schedule by the average
/// segment length and the grid that gives each segment its own warp or
/// block; forcing either is how the harness checks that the bits do not
/// depend on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ExactSegmentedLaunch {
    /// The schedule (`None`: [`ExactSegmentedSchedule::best_for`]).
    pub schedule: Option<ExactSegmentedSchedule>,
    /// Blocks of the launch (`None`: one warp or block per segment, capped
    /// at [`MAX_GRID_BLOCKS`]); blocks loop over the segments past the grid.
    pub blocks: Option<u32>,
}

fn invalid(n: usize, reason: String) -> GpuError {
    GpuError::InvalidInput { primitive: PRIMITIVE, variant: SEGMENTED_VARIANT, n, reason }
}

/// Checks `offsets` against an input of `n` elements with the errors of
/// [`validate_segment_offsets`], under this primitive's name, and `n` against
/// [`MAX_ITEMS`] (its kernels read u32 offsets).
pub fn validate_offsets(offsets: &[usize], n: usize) -> GpuResult<OffsetSummary> {
    if n > MAX_ITEMS {
        return Err(invalid(n, format!("n must be at most {MAX_ITEMS} (offsets are u32 on the device)")));
    }
    validate_segment_offsets(offsets, n).map_err(|reason| invalid(n, reason))
}

/// A correctly rounded segmented sum of `n` inputs in `segments` segments,
/// ready to enqueue. [`ExactSegmentedSumPlan::enqueue`] puts on the stream
/// exactly one launch of `exact_segmented_<schedule>_<t>` (nothing for zero
/// segments): no allocation, memset or synchronisation.
pub struct ExactSegmentedSumPlan<'g, T: FloatElement> {
    gpu: &'g Gpu,
    schedule: ExactSegmentedSchedule,
    n: usize,
    segments: usize,
    grid: u32,
    kernel: CudaFunction,
    _element: PhantomData<T>,
}

impl<'g, T: FloatElement> ExactSegmentedSumPlan<'g, T> {
    /// Plans the sums of `segments` segments over `n <= u32::MAX` inputs
    /// with `launch` (else [`GpuError::InvalidInput`]).
    pub fn new(gpu: &'g Gpu, n: usize, segments: usize, launch: ExactSegmentedLaunch) -> GpuResult<Self> {
        if n > MAX_ITEMS {
            return Err(invalid(n, format!("n must be at most {MAX_ITEMS} (offsets are u32 on the device)")));
        }
        let schedule = launch.schedule.unwrap_or_else(|| ExactSegmentedSchedule::best_for(n / segments.max(1)));
        let grid = launch.blocks.unwrap_or_else(|| schedule.natural_grid(segments));
        if grid == 0 || grid > MAX_GRID_BLOCKS {
            return Err(invalid(n, format!("a forced grid of {grid} blocks; 1..={MAX_GRID_BLOCKS} are allowed")));
        }
        let kernel = gpu.function(
            KernelFamily::ExactSegmentedSum,
            &format!("exact_segmented_{}_{}", schedule.name(), T::TYPE_NAME),
        )?;
        Ok(ExactSegmentedSumPlan { gpu, schedule, n, segments, grid, kernel, _element: PhantomData })
    }

    /// The schedule this plan runs.
    pub fn schedule(&self) -> ExactSegmentedSchedule {
        self.schedule
    }

    /// Blocks of the launch.
    pub fn grid(&self) -> u32 {
        self.grid
    }

    /// What one enqueue puts on the stream (nothing for zero segments).
    /// DRAM estimate: the `n` inputs and the offsets read, one f32 per
    /// segment written.
    pub fn describe(&self) -> PlanDescription {
        let d = PlanDescription::new("ExactSegmentedSumPlan")
            .moves((self.n * std::mem::size_of::<T>() + 4 * (self.segments + 1) + 4 * self.segments) as u64);
        if self.segments == 0 {
            return d;
        }
        d.launch(format!("exact_segmented_{}_{}", self.schedule.name(), T::TYPE_NAME), self.grid, BLOCK_THREADS, 0)
    }

    /// Logical bytes of one run: the elements of every segment.
    pub fn logical_bytes(&self, offsets: &SegmentOffsets) -> u64 {
        let summary = offsets.summary();
        ((summary.last - summary.first) * std::mem::size_of::<T>()) as u64
    }

    /// Enqueues the sums of every segment of `input` (at least `n`
    /// elements; a 1-element placeholder when `n == 0`) into `output`
    /// (`segments` floats), with offsets validated for this `n`.
    pub fn enqueue(
        &mut self,
        input: &CudaSlice<T>,
        offsets: &SegmentOffsets,
        output: &mut CudaSlice<f32>,
    ) -> GpuResult<()> {
        let (n, segments) = (self.n, self.segments);
        if input.len() < n || offsets.n() != n || offsets.segments() != segments || output.len() != segments {
            return Err(invalid(
                n,
                format!(
                    "plan built for n={n}, {segments} segments; got input {}, offsets for n={} with {} segments, output {}",
                    input.len(),
                    offsets.n(),
                    offsets.segments(),
                    output.len()
                ),
            ));
        }
        // Its kernels read u32 offsets (n <= u32::MAX); u64 ones (made on
        // request by `upload_segment_offsets_as`) are refused, not misread.
        let Some(device_offsets) = offsets.device_u32() else {
            return Err(invalid(n, "its kernels take u32 offsets; these are u64".to_string()));
        };
        if segments == 0 {
            return Ok(());
        }
        let segments_u64 = segments as u64;
        let mut launch = self.gpu.stream().launch_builder(&self.kernel);
        launch.arg(input).arg(device_offsets).arg(&segments_u64).arg(output);
        let (schedule, grid) = (self.schedule.name(), self.grid);
        // SAFETY: matches exact_segmented_<schedule>_<t>(const T*, const u32*,
        // u64, float*); the offsets were validated against n <= input.len(),
        // and output holds `segments` floats.
        unsafe { launch.launch(config(grid, BLOCK_THREADS, 0)) }.context(|| {
            format!("{PRIMITIVE}/{SEGMENTED_VARIANT} n={n} segments={segments}: {schedule} launch on {grid} blocks")
        })?;
        Ok(())
    }
}

impl Gpu {
    /// The correctly rounded sum of every segment of `input` (module
    /// documentation: contract and errors).
    pub fn segmented_exact_sum_f32(&self, input: &[f32], offsets: &[usize]) -> GpuResult<Vec<f32>> {
        self.segmented_exact_sum(ExactSegmentedLaunch::default(), input, offsets)
    }

    /// The correctly rounded f32 sum of every segment of bf16 `input`;
    /// contract as [`Gpu::segmented_exact_sum_f32`].
    pub fn segmented_exact_sum_bf16(&self, input: &[half::bf16], offsets: &[usize]) -> GpuResult<Vec<f32>> {
        self.segmented_exact_sum(ExactSegmentedLaunch::default(), input, offsets)
    }

    /// The sums behind `segmented_exact_sum_f32` / `_bf16` with a chosen
    /// launch: validate, plan, upload, enqueue into a poisoned output,
    /// download. Zero segments give an empty vector without a launch.
    pub fn segmented_exact_sum<T: FloatElement>(
        &self,
        launch: ExactSegmentedLaunch,
        input: &[T],
        offsets: &[usize],
    ) -> GpuResult<Vec<f32>> {
        let n = input.len();
        let summary = validate_offsets(offsets, n)?;
        let mut plan = ExactSegmentedSumPlan::<T>::new(self, n, summary.segments, launch)?;
        if summary.segments == 0 {
            return Ok(Vec::new());
        }
        let device_offsets = self.upload_segment_offsets(offsets, n)?;
        // A poisoned 1-element placeholder when n == 0: every segment is
        // empty and nothing reads it.
        let device_input = if n == 0 { self.alloc_poisoned::<T>(1)? } else { self.upload(input)? };
        let mut output = self.alloc_poisoned::<f32>(summary.segments)?;
        plan.enqueue(&device_input, &device_offsets, &mut output)?;
        self.download(&output)
    }
}

#[cfg(test)]
#[path = "exact_segmented_sum_tests.rs"]
mod tests;

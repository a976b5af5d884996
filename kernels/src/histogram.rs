//! Histograms with even bins over `[lower, upper)` (`cuda/histogram.cu`).
//!
//! Contract:
//! * 1 to 4096 bins; samples outside `[lower, upper)` are not counted.
//! * Counts are `u32`: `n` must be at most `u32::MAX` (so no count can wrap).
//! * Bin of an int32 sample `x` with `lower <= x < upper`:
//!   `((x as i64 - lower as i64) * bins as i64) / (upper as i64 - lower as i64)`,
//!   exact integer arithmetic (floor of non-negative numbers); see
//!   [`HistogramSpec::bin_of`]. The kernels reach exactly this without a
//!   64-bit division (an f32 estimate, corrected exactly).
//! * Bin of an f32 sample `x` with `x >= lower && x < upper` (NaN never
//!   counts): `scale = (bins as f32) / (upper - lower)` computed in f32 on the
//!   host; `bin = min(((x - lower) * scale) as i32, bins - 1)` with the
//!   subtraction and the product each rounded to nearest in f32 (no FMA) and
//!   the conversion truncating toward zero; see [`HistogramSpec::bin_of`] (f32).

use crate::device::Gpu;
use crate::error::{DriverContext, GpuError, GpuResult};
use crate::kernel_family::KernelFamily;
use crate::launch::{config, persistent_grid, BLOCK_THREADS};
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, DeviceRepr, PushKernelArg};
pub use primlab_types::HistogramSpec;
use std::marker::PhantomData;
use std::sync::Arc;

/// The most bins a histogram may have ([`primlab_types::MAX_BINS`] as a `usize`).
pub const MAX_BINS: usize = crate::policy::HISTOGRAM.max_bins as usize;
/// The largest input: counts are u32.
pub const MAX_ITEMS: usize = u32::MAX as usize;
/// Up to this many bins, [`HistogramVariant::SharedPrivatized`] gives every
/// thread its own counter per bin (`kThreadCounterMaxBins` in histogram.cu).
pub const THREAD_COUNTER_MAX_BINS: usize = crate::policy::HISTOGRAM.thread_counter_max_bins as usize;
/// Shared-memory budget of the warp-copies layout: copies * bins * 4 bytes.
const WARP_COPIES_SHARED_BYTES: usize = 32 * 1024;
/// An int32 range wider than this takes the 64-bit exact-bin correction.
const NARROW_RANGE_MAX: u64 = 1 << 30;

/// How samples are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HistogramVariant {
    /// One global `atomicAdd` per in-range sample.
    GlobalAtomic,
    /// Per-block shared-memory histograms, then one global `atomicAdd` per
    /// nonzero bin per block. Up to [`THREAD_COUNTER_MAX_BINS`] bins every
    /// thread owns one counter per bin (no atomics, no bank conflicts, also
    /// when every sample lands in one bin); beyond, up to 8 copies per block
    /// (one per warp where they fit in 32 KB) take warp-aggregated
    /// (`__match_any_sync`) shared atomics. [`HistogramPlan::layout`] says
    /// which.
    SharedPrivatized,
}

impl HistogramVariant {
    /// Every variant.
    pub const ALL: [HistogramVariant; 2] = [HistogramVariant::GlobalAtomic, HistogramVariant::SharedPrivatized];

    /// Snake-case name used in reports.
    pub fn name(&self) -> &'static str {
        match self {
            HistogramVariant::GlobalAtomic => "global_atomic",
            HistogramVariant::SharedPrivatized => "shared_privatized",
        }
    }
}

/// Kernel parameter for int32 samples (`EvenBinsI32` in histogram.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HistogramBinsI32 {
    /// The first value counted.
    pub lower: i32,
    /// The first value past the last bin.
    pub upper: i32,
    /// Number of bins.
    pub bins: u32,
    /// `upper - lower` (1..=2^32 - 1).
    pub range: u32,
    /// `bins / range` rounded to f32: the kernels' first guess only.
    pub scale: f32,
}
// SAFETY: plain old data with the layout of the CUDA struct (20 bytes, 4-aligned).
unsafe impl DeviceRepr for HistogramBinsI32 {}

/// Kernel parameter for f32 samples (`EvenBinsF32` in histogram.cu).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HistogramBinsF32 {
    /// The first value counted.
    pub lower: f32,
    /// The first value past the last bin.
    pub upper: f32,
    /// `(bins as f32) / (upper - lower)`.
    pub scale: f32,
    /// Number of bins.
    pub bins: u32,
}
// SAFETY: plain old data with the layout of the CUDA struct (16 bytes, 4-aligned).
unsafe impl DeviceRepr for HistogramBinsF32 {}

mod sealed {
    pub trait Sealed {}
}

/// A histogram sample type: int32 or f32.
pub trait HistogramSample: DeviceRepr + Copy + sealed::Sealed {
    /// The kernel parameter built from the spec.
    type Bins: DeviceRepr + Copy + std::fmt::Debug;
    /// Primitive name used in errors, e.g. `histogram_even_i32`.
    const PRIMITIVE: &'static str;
    /// Validates the range of `spec` (for a spec whose bin count is valid)
    /// and returns (kernel parameter, kernel-name suffix).
    fn range_bins(spec: &HistogramSpec<Self>) -> Result<(Self::Bins, &'static str), String>;
    /// Validates the spec (bin count, then range) and returns (kernel
    /// parameter, bins, kernel-name suffix).
    fn device_bins(spec: &HistogramSpec<Self>) -> Result<(Self::Bins, usize, &'static str), String> {
        check_bins(spec.bins as usize)?;
        let (params, suffix) = Self::range_bins(spec)?;
        Ok((params, spec.bins as usize, suffix))
    }
}

impl sealed::Sealed for i32 {}
impl sealed::Sealed for f32 {}

fn check_bins(bins: usize) -> Result<(), String> {
    if bins == 0 || bins > MAX_BINS {
        return Err(format!("bins must be in 1..={MAX_BINS}, got {bins}"));
    }
    Ok(())
}

impl HistogramSample for i32 {
    type Bins = HistogramBinsI32;
    const PRIMITIVE: &'static str = "histogram_even_i32";
    fn range_bins(spec: &HistogramSpec<i32>) -> Result<(HistogramBinsI32, &'static str), String> {
        if spec.upper <= spec.lower {
            return Err(format!("upper ({}) must exceed lower ({})", spec.upper, spec.lower));
        }
        let range = (spec.upper as i64 - spec.lower as i64) as u64;
        let bins = HistogramBinsI32 {
            lower: spec.lower,
            upper: spec.upper,
            bins: spec.bins,
            range: range as u32,
            scale: (spec.bins as f64 / range as f64) as f32,
        };
        Ok((bins, if range <= NARROW_RANGE_MAX { "i32" } else { "i32_wide" }))
    }
}

impl HistogramSample for f32 {
    type Bins = HistogramBinsF32;
    const PRIMITIVE: &'static str = "histogram_even_f32";
    fn range_bins(spec: &HistogramSpec<f32>) -> Result<(HistogramBinsF32, &'static str), String> {
        if !(spec.lower.is_finite() && spec.upper.is_finite() && spec.upper > spec.lower) {
            return Err(format!("need finite lower < upper, got [{}, {})", spec.lower, spec.upper));
        }
        let scale = spec.scale();
        if !(scale.is_finite() && scale > 0.0) {
            return Err(format!("bins / (upper - lower) = {scale} in f32 is not a positive finite scale"));
        }
        Ok((HistogramBinsF32 { lower: spec.lower, upper: spec.upper, scale, bins: spec.bins }, "f32"))
    }
}

/// Number of shared copies of the warp-copies layout for `bins` bins: the
/// largest power of two up to 8 (one per warp) with copies * bins * 4 <= 32 KB.
pub fn warp_copies_for(bins: usize) -> usize {
    let mut copies = BLOCK_THREADS as usize / 32;
    while copies > 1 && copies * bins * 4 > WARP_COPIES_SHARED_BYTES {
        copies /= 2;
    }
    copies
}

/// Which kernel a plan runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    GlobalAtomic,
    ThreadCounters,
    WarpCopies { copies: u32 },
}

/// A histogram of `n` samples of type `S` with every launch parameter
/// computed, for timing.
///
/// [`HistogramPlan::enqueue`] puts on the stream, and nothing else (no
/// allocation, no copy, no synchronisation): a memset of the `bins` output
/// counts to zero, then (when `n > 0`) one kernel,
/// `histogram_<layout>_<i32|i32_wide|f32>` with layout `global_atomic`,
/// `thread_counters` (shared privatised, bins <= 32) or `warp_copies`
/// (shared privatised, more bins), on a grid that fills the GPU once
/// (fewer blocks for small n: one 16-byte vector a thread, or
/// `HISTOGRAM.thread_counter_vectors_in_flight` of them for
/// `thread_counters`).
pub struct HistogramPlan<S: HistogramSample> {
    variant: HistogramVariant,
    n: usize,
    bins: usize,
    params: S::Bins,
    layout: Layout,
    kernel: CudaFunction,
    grid: u32,
    shared_bytes: u32,
    stream: Arc<CudaStream>,
    _sample: PhantomData<S>,
}

impl<S: HistogramSample> std::fmt::Debug for HistogramPlan<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HistogramPlan")
            .field("primitive", &S::PRIMITIVE)
            .field("variant", &self.variant)
            .field("n", &self.n)
            .field("params", &self.params)
            .field("layout", &self.layout)
            .field("grid", &self.grid)
            .finish_non_exhaustive()
    }
}

impl<S: HistogramSample> HistogramPlan<S> {
    /// Validates `spec` and `n` ([`GpuError::InvalidInput`] for 0 or more
    /// than 4096 bins, an empty range, or `n > u32::MAX`) and prepares the
    /// launch.
    pub fn new(gpu: &Gpu, variant: HistogramVariant, n: usize, spec: HistogramSpec<S>) -> GpuResult<HistogramPlan<S>> {
        let invalid =
            |reason: String| GpuError::InvalidInput { primitive: S::PRIMITIVE, variant: variant.name(), n, reason };
        if n > MAX_ITEMS {
            return Err(invalid(format!("n must be at most {MAX_ITEMS} (u32 counts)")));
        }
        let (params, bins, suffix) = S::device_bins(&spec).map_err(invalid)?;
        let layout = match variant {
            HistogramVariant::GlobalAtomic => Layout::GlobalAtomic,
            HistogramVariant::SharedPrivatized if bins <= THREAD_COUNTER_MAX_BINS => Layout::ThreadCounters,
            HistogramVariant::SharedPrivatized => Layout::WarpCopies { copies: warp_copies_for(bins) as u32 },
        };
        let (name, shared_bytes) = match layout {
            Layout::GlobalAtomic => ("global_atomic", 0),
            Layout::ThreadCounters => ("thread_counters", bins * BLOCK_THREADS as usize * 4),
            Layout::WarpCopies { copies } => ("warp_copies", copies as usize * bins * 4),
        };
        let kernel_name = format!("histogram_{name}_{suffix}");
        let kernel = gpu.function(KernelFamily::Histogram, &kernel_name)?;
        let filled = persistent_grid(gpu, KernelFamily::Histogram, &kernel_name, BLOCK_THREADS, shared_bytes)? as usize;
        // One 16-byte vector (4 samples) a thread. The thread-counter layout
        // gives a thread a whole round of loads instead, since each of its
        // blocks clears and merges its counters (bins global atomics on the
        // same addresses, which serialise) once, but keeps at least one
        // block per two SMs while the input has one vector a thread for
        // them. Measured with 19 bins (one vector a thread / this rule):
        // 2^18 12.5 / 9.4 us, 2^20 24.4 / 13.4, 2^22 27.1 / 25.5; at 2^16
        // four vectors a thread (16 blocks) took 10.2 us against 8.9.
        let one_vector = n.div_ceil(4).div_ceil(BLOCK_THREADS as usize).max(1);
        let needed = match layout {
            Layout::ThreadCounters => {
                let round = crate::policy::HISTOGRAM.thread_counter_vectors_in_flight as usize;
                let half_the_sms = (gpu.info().sm_count.max(2) / 2) as usize;
                one_vector.div_ceil(round).max(one_vector.min(half_the_sms))
            }
            _ => one_vector,
        };
        Ok(HistogramPlan {
            variant,
            n,
            bins,
            params,
            layout,
            kernel,
            grid: filled.min(needed) as u32,
            shared_bytes: shared_bytes as u32,
            stream: gpu.stream().clone(),
            _sample: PhantomData,
        })
    }

    /// The kernel layout: `global_atomic`, `thread_counters` or `warp_copies`.
    pub fn layout(&self) -> &'static str {
        match self.layout {
            Layout::GlobalAtomic => "global_atomic",
            Layout::ThreadCounters => "thread_counters",
            Layout::WarpCopies { .. } => "warp_copies",
        }
    }

    /// Number of bins.
    pub fn bins(&self) -> usize {
        self.bins
    }

    /// Logical bytes of one run: `n * size_of::<S>()` (every sample read once).
    pub fn logical_bytes(&self) -> u64 {
        (self.n * std::mem::size_of::<S>()) as u64
    }

    /// Enqueues the histogram of `input` (at least `n` samples; a placeholder
    /// when `n == 0`) into `output` (`bins` counts, zeroed here first). See
    /// the type's doc for what is put on the stream.
    pub fn enqueue(&mut self, input: &CudaSlice<S>, output: &mut CudaSlice<u32>) -> GpuResult<()> {
        let (n, bins, variant) = (self.n, self.bins, self.variant);
        if input.len() < n || output.len() != bins {
            return Err(GpuError::InvalidInput {
                primitive: S::PRIMITIVE,
                variant: variant.name(),
                n,
                reason: format!(
                    "plan built for {n} samples, {bins} bins; got input {}, output {}",
                    input.len(),
                    output.len()
                ),
            });
        }
        let what = |step: &str| format!("{}/{} n={n} bins={bins}: {step}", S::PRIMITIVE, variant.name());
        self.stream.memset_zeros(output).context(|| what("zeroing the counts"))?;
        if n == 0 {
            return Ok(());
        }
        let n_u64 = n as u64;
        let stream = self.stream.clone();
        let mut launch = stream.launch_builder(&self.kernel);
        launch.arg(input).arg(&n_u64).arg(&self.params);
        let copies;
        if let Layout::WarpCopies { copies: c } = self.layout {
            copies = c;
            launch.arg(&copies);
        }
        launch.arg(output);
        // SAFETY: matches histogram_<layout>_<type>(input, n, spec, [copies,]
        // hist); `params` is the repr(C) mirror of the kernel's struct; the
        // dynamic shared size is what the layout indexes.
        unsafe { launch.launch(config(self.grid, BLOCK_THREADS, self.shared_bytes)) }.context(|| what("launch"))?;
        Ok(())
    }
}

/// Stamps a typed `Gpu` method that forwards to `Gpu::histogram_even` with
/// one sample type.
macro_rules! histogram_wrapper {
    ($(#[$doc:meta])* $name:ident, $s:ty) => {
        $(#[$doc])*
        pub fn $name(&self, variant: HistogramVariant, input: &[$s], spec: HistogramSpec<$s>) -> GpuResult<Vec<u32>> {
            self.histogram_even::<$s>(variant, input, spec)
        }
    };
}

impl Gpu {
    fn histogram_even<S: HistogramSample>(
        &self,
        variant: HistogramVariant,
        input: &[S],
        spec: HistogramSpec<S>,
    ) -> GpuResult<Vec<u32>> {
        let n = input.len();
        let mut plan = HistogramPlan::<S>::new(self, variant, n, spec)?;
        // A poisoned 1-sample placeholder when n == 0 (never read).
        let device_input = if n == 0 { self.alloc_poisoned::<S>(1)? } else { self.upload(input)? };
        let mut output = self.alloc_poisoned::<u32>(plan.bins())?;
        plan.enqueue(&device_input, &mut output)?;
        self.download(&output)
    }

    histogram_wrapper! {
        /// Counts of `input` in `spec.bins` even bins over `[spec.lower,
        /// spec.upper)`; out-of-range samples are not counted (bin formula in the
        /// module doc). Errors ([`GpuError::InvalidInput`]): 0 or more than 4096
        /// bins, `upper <= lower`, `n > u32::MAX`.
        histogram_even_i32, i32
    }

    histogram_wrapper! {
        /// As [`Gpu::histogram_even_i32`] for f32 samples (bin formula in the
        /// module doc; NaN is never counted). Errors also for a nonfinite bound
        /// or an `upper - lower` that overflows f32.
        histogram_even_f32, f32
    }
}

#[cfg(test)]
#[path = "histogram_tests.rs"]
mod tests;

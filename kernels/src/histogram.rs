//! Histograms with even bins over `[lower, upper)` (`cuda/histogram.cu`).
//!
//! Contract:
//! * 1 to 4096 bins; samples outside `[lower, upper)` are not counted.
//! * Counts are `u32` for `n` up to `u32::MAX` ([`HistogramPlan::enqueue`],
//!   so no count can wrap), and `u64` for any `n` up to [`MAX_LEN`]
//!   ([`HistogramPlan::enqueue_wide`]: the same kernels count windows of at
//!   most [`WIDE_WINDOW`] samples, each window's counts added into the u64
//!   totals by `histogram_add_window`).
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
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, CudaView, DeviceRepr, PushKernelArg};
pub use primlab_types::HistogramSpec;
use std::marker::PhantomData;
use std::sync::Arc;

/// The most bins a histogram may have ([`primlab_types::MAX_BINS`] as a `usize`).
pub const MAX_BINS: usize = crate::policy::HISTOGRAM.max_bins as usize;
/// The largest input [`HistogramPlan::enqueue`] counts: its counts are u32.
pub const MAX_ITEMS: usize = u32::MAX as usize;
/// Samples of one window of [`HistogramPlan::enqueue_wide`] at most: 2^31,
/// below 2^32 so no window's u32 count can wrap, and a multiple of 4 so
/// every window starts 16-byte aligned (the kernels' vector loads).
pub const WIDE_WINDOW: usize = 1 << 31;
/// The largest input [`HistogramPlan::enqueue_wide`] counts: 2^40 (512
/// windows; 4 TB of samples, past any device's memory).
pub const MAX_LEN: usize = 1 << 40;
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
/// [`HistogramPlan::enqueue`] (u32 counts, `n <= u32::MAX`) puts on the
/// stream, and nothing else (no allocation, no copy, no synchronisation): a
/// memset of the `bins` output counts to zero, then (when `n > 0`) one
/// kernel, `histogram_<layout>_<i32|i32_wide|f32>` with layout
/// `global_atomic`, `thread_counters` (shared privatised, bins <= 32) or
/// `warp_copies` (shared privatised, more bins), on a grid that fills the
/// GPU once (fewer blocks for small n: one 16-byte vector a thread, or
/// `HISTOGRAM.thread_counter_vectors_in_flight` of them for
/// `thread_counters`).
///
/// [`HistogramPlan::enqueue_wide`] (u64 counts, any `n` up to [`MAX_LEN`])
/// puts on the stream a memset of the u64 totals, then for each window of
/// at most [`HistogramPlan::window`] samples: a memset of the plan's u32
/// window counts, the same counting kernel over the window, and
/// `histogram_add_window` (one thread a bin) adding the window's counts
/// into the totals.
pub struct HistogramPlan<S: HistogramSample> {
    variant: HistogramVariant,
    n: usize,
    bins: usize,
    counting: Counting<S>,
    /// Samples of a window of [`HistogramPlan::enqueue_wide`].
    window: usize,
    /// One window's u32 counts (`bins` of them) for [`HistogramPlan::enqueue_wide`].
    window_counts: CudaSlice<u32>,
    add_window: CudaFunction,
    stream: Arc<CudaStream>,
}

/// Blocks of the counting kernel of `layout` for `len` samples, at most
/// `filled` (a grid that fills the GPU once); see [`Counting::grid`].
fn counting_grid(layout: Layout, filled: usize, half_the_sms: usize, len: usize) -> u32 {
    let one_vector = len.div_ceil(4).div_ceil(BLOCK_THREADS as usize).max(1);
    let needed = match layout {
        Layout::ThreadCounters => {
            let round = crate::policy::HISTOGRAM.thread_counter_vectors_in_flight as usize;
            one_vector.div_ceil(round).max(one_vector.min(half_the_sms))
        }
        _ => one_vector,
    };
    filled.min(needed) as u32
}

/// `Ok` for a window [`HistogramPlan::with_window`] takes: a multiple of 4
/// samples (each window 16-byte aligned) in `4..=WIDE_WINDOW`.
fn check_window(window: usize) -> Result<(), String> {
    if window == 0 || window % 4 != 0 || window > WIDE_WINDOW {
        return Err(format!("a window must be a multiple of 4 in 4..={WIDE_WINDOW} samples, got {window}"));
    }
    Ok(())
}

/// The counting kernel of a plan and how to size its grid for a length.
struct Counting<S: HistogramSample> {
    params: S::Bins,
    layout: Layout,
    kernel: CudaFunction,
    /// Blocks of a grid that fills the GPU once.
    filled: usize,
    /// Half the SMs (at least 1): the fewest blocks `thread_counters` keeps
    /// while the input has one vector a thread for them.
    half_the_sms: usize,
    shared_bytes: u32,
    _sample: PhantomData<S>,
}

impl<S: HistogramSample> Counting<S> {
    /// Blocks of the counting kernel for `len` samples: one 16-byte vector
    /// (4 samples) a thread. The thread-counter layout gives a thread a
    /// whole round of loads instead, since each of its blocks clears and
    /// merges its counters (bins global atomics on the same addresses,
    /// which serialise) once, but keeps at least one block per two SMs
    /// while the input has one vector a thread for them. Measured with 19
    /// bins (one vector a thread / this rule): 2^18 12.5 / 9.4 us, 2^20
    /// 24.4 / 13.4, 2^22 27.1 / 25.5; at 2^16 four vectors a thread (16
    /// blocks) took 10.2 us against 8.9.
    fn grid(&self, len: usize) -> u32 {
        counting_grid(self.layout, self.filled, self.half_the_sms, len)
    }

    /// Enqueues the counting kernel over `input` (`len` samples, 16-byte
    /// aligned) adding into `counts` (`bins` u32, zeroed by the caller);
    /// `what` names the run in errors.
    fn launch(
        &self,
        stream: &Arc<CudaStream>,
        input: &CudaView<S>,
        counts: &mut CudaSlice<u32>,
        what: &dyn Fn(&str) -> String,
    ) -> GpuResult<()> {
        let len = input.len() as u64;
        let mut launch = stream.launch_builder(&self.kernel);
        launch.arg(input).arg(&len).arg(&self.params);
        let copies;
        if let Layout::WarpCopies { copies: c } = self.layout {
            copies = c;
            launch.arg(&copies);
        }
        launch.arg(counts);
        let grid = self.grid(input.len());
        // SAFETY: matches histogram_<layout>_<type>(input, n, spec, [copies,]
        // hist); `params` is the repr(C) mirror of the kernel's struct; the
        // dynamic shared size is what the layout indexes; `input` holds `len`
        // samples and `counts` the plan's bins.
        unsafe { launch.launch(config(grid, BLOCK_THREADS, self.shared_bytes)) }.context(|| what("launch"))?;
        Ok(())
    }
}

impl<S: HistogramSample> std::fmt::Debug for HistogramPlan<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HistogramPlan")
            .field("primitive", &S::PRIMITIVE)
            .field("variant", &self.variant)
            .field("n", &self.n)
            .field("params", &self.counting.params)
            .field("layout", &self.counting.layout)
            .field("grid", &self.counting.grid(self.n.min(MAX_ITEMS)))
            .field("window", &self.window)
            .finish_non_exhaustive()
    }
}

impl<S: HistogramSample> HistogramPlan<S> {
    /// Validates `spec` and `n` ([`GpuError::InvalidInput`] for 0 or more
    /// than 4096 bins, an empty range, or `n > MAX_LEN`) and prepares the
    /// launches (and the window counts of [`HistogramPlan::enqueue_wide`],
    /// `bins` u32 on the device).
    pub fn new(gpu: &Gpu, variant: HistogramVariant, n: usize, spec: HistogramSpec<S>) -> GpuResult<HistogramPlan<S>> {
        let invalid =
            |reason: String| GpuError::InvalidInput { primitive: S::PRIMITIVE, variant: variant.name(), n, reason };
        if n > MAX_LEN {
            return Err(invalid(format!("n must be at most {MAX_LEN} (2^40, u64 counts in windows)")));
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
        let counting = Counting {
            params,
            layout,
            kernel,
            filled,
            half_the_sms: (gpu.info().sm_count.max(2) / 2) as usize,
            shared_bytes: shared_bytes as u32,
            _sample: PhantomData,
        };
        Ok(HistogramPlan {
            variant,
            n,
            bins,
            counting,
            window: WIDE_WINDOW,
            window_counts: gpu.alloc_poisoned::<u32>(bins)?,
            add_window: gpu.function(KernelFamily::Histogram, "histogram_add_window")?,
            stream: gpu.stream().clone(),
        })
    }

    /// The plan with windows of `window` samples for
    /// [`HistogramPlan::enqueue_wide`] instead of [`WIDE_WINDOW`], so that
    /// small inputs run in several windows (how the sweep proves the
    /// windows' edges and their adding). [`GpuError::InvalidInput`] unless
    /// `window` is a multiple of 4 (each window 16-byte aligned) in
    /// `4..=WIDE_WINDOW`.
    pub fn with_window(mut self, window: usize) -> GpuResult<HistogramPlan<S>> {
        check_window(window).map_err(|reason| GpuError::InvalidInput {
            primitive: S::PRIMITIVE,
            variant: self.variant.name(),
            n: self.n,
            reason,
        })?;
        self.window = window;
        Ok(self)
    }

    /// Samples of a window of [`HistogramPlan::enqueue_wide`].
    pub fn window(&self) -> usize {
        self.window
    }

    /// The windows `(first sample, length)` [`HistogramPlan::enqueue_wide`] counts, in order.
    pub fn windows(&self) -> Vec<(usize, usize)> {
        crate::windows::windows(self.n, self.window, self.window)
    }

    /// The kernel layout: `global_atomic`, `thread_counters` or `warp_copies`.
    pub fn layout(&self) -> &'static str {
        match self.counting.layout {
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
    /// [`GpuError::InvalidInput`] unless `input` holds at least the plan's
    /// `n` samples and `output` its `bins` counts.
    fn check_buffers(&self, input: usize, output: usize) -> GpuResult<()> {
        let (n, bins) = (self.n, self.bins);
        if input < n || output != bins {
            return Err(GpuError::InvalidInput {
                primitive: S::PRIMITIVE,
                variant: self.variant.name(),
                n,
                reason: format!("plan built for {n} samples, {bins} bins; got input {input}, output {output}"),
            });
        }
        Ok(())
    }

    /// Enqueues the histogram of `input` (at least `n` samples; a placeholder
    /// when `n == 0`) into `output` (`bins` u32 counts, zeroed here first).
    /// [`GpuError::InvalidInput`] for `n > u32::MAX`, where a u32 count
    /// could wrap: [`HistogramPlan::enqueue_wide`] counts those. See the
    /// type's doc for what is put on the stream.
    pub fn enqueue(&mut self, input: &CudaSlice<S>, output: &mut CudaSlice<u32>) -> GpuResult<()> {
        let (n, bins, variant) = (self.n, self.bins, self.variant);
        self.check_buffers(input.len(), output.len())?;
        if n > MAX_ITEMS {
            return Err(GpuError::InvalidInput {
                primitive: S::PRIMITIVE,
                variant: variant.name(),
                n,
                reason: format!("u32 counts take n up to {MAX_ITEMS}; enqueue_wide counts into u64"),
            });
        }
        let what = |step: &str| format!("{}/{} n={n} bins={bins}: {step}", S::PRIMITIVE, variant.name());
        self.stream.memset_zeros(output).context(|| what("zeroing the counts"))?;
        if n == 0 {
            return Ok(());
        }
        self.counting.launch(&self.stream, &input.slice(0..n), output, &what)
    }

    /// Enqueues the histogram of `input` (at least `n` samples; a
    /// placeholder when `n == 0`) into `totals` (`bins` u64 counts, zeroed
    /// here first), window after window ([`HistogramPlan::windows`]): each
    /// window counted into the plan's u32 window counts (at most
    /// [`WIDE_WINDOW`] samples, so none wraps), then added into the totals.
    /// Any `n` the plan was built for. See the type's doc for what is put on
    /// the stream.
    pub fn enqueue_wide(&mut self, input: &CudaSlice<S>, totals: &mut CudaSlice<u64>) -> GpuResult<()> {
        let (n, bins, variant) = (self.n, self.bins, self.variant);
        self.check_buffers(input.len(), totals.len())?;
        let what = |step: &str| format!("{}/{} n={n} bins={bins} (u64 counts): {step}", S::PRIMITIVE, variant.name());
        self.stream.memset_zeros(totals).context(|| what("zeroing the totals"))?;
        if n == 0 {
            return Ok(());
        }
        let bins_u32 = bins as u32;
        let add_grid = bins.div_ceil(BLOCK_THREADS as usize) as u32;
        for (start, len) in self.windows() {
            let at = |step: &str| what(&format!("window [{start}, {}): {step}", start + len));
            self.stream.memset_zeros(&mut self.window_counts).context(|| at("zeroing the window counts"))?;
            self.counting.launch(&self.stream, &input.slice(start..start + len), &mut self.window_counts, &at)?;
            let mut add = self.stream.launch_builder(&self.add_window);
            add.arg(&self.window_counts).arg(&mut *totals).arg(&bins_u32);
            // SAFETY: matches histogram_add_window(window, totals, bins):
            // `window_counts` and `totals` each hold `bins` counts.
            unsafe { add.launch(config(add_grid, BLOCK_THREADS, 0)) }.context(|| at("adding the window"))?;
        }
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

    /// Counts of `input` as [`Gpu::histogram_even_i32`] and
    /// [`Gpu::histogram_even_f32`] give them, but u64, for any `n` up to
    /// [`MAX_LEN`] ([`HistogramPlan::enqueue_wide`]), counted in windows of
    /// `window` samples ([`HistogramPlan::with_window`]; [`WIDE_WINDOW`]
    /// when `None`).
    pub fn histogram_even_wide<S: HistogramSample>(
        &self,
        variant: HistogramVariant,
        input: &[S],
        spec: HistogramSpec<S>,
        window: Option<usize>,
    ) -> GpuResult<Vec<u64>> {
        let n = input.len();
        let mut plan = HistogramPlan::<S>::new(self, variant, n, spec)?;
        if let Some(window) = window {
            plan = plan.with_window(window)?;
        }
        let device_input = if n == 0 { self.alloc_poisoned::<S>(1)? } else { self.upload(input)? };
        let mut totals = self.alloc_poisoned::<u64>(plan.bins())?;
        plan.enqueue_wide(&device_input, &mut totals)?;
        self.download(&totals)
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

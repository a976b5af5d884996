//! Arg reductions (`arg_reduce.cu`): the `(value, index)` of the maximum or
//! minimum of `f32` or `i32` data, over a whole array or per row of a
//! row-major `[rows, cols]` matrix (what samplers need).
//!
//! Contract, for every variant:
//! * **Ties**: the lowest index wins (the first occurrence). `-0.0` and `0.0`
//!   compare equal, so they tie.
//! * **Empty input** is rejected with [`GpuError::InvalidInput`].
//! * **NaN or ±inf** anywhere in an `f32` input is rejected with
//!   [`GpuError::NonFinite`] naming the *first* offending index (for rows:
//!   the flat index `row * cols + col`), never answered. Detection is in the
//!   kernel: a thread that meets a nonfinite value `atomicMin`s its index into
//!   a control word (`!0` = none). Per row, the plan sets it with a `0xFF`
//!   memset before every launch; whole array, it is set once and every launch
//!   leaves it reset, handing its value over with the answer ([`ArgResult`]).
//! * **Limits**: indices are `int32` on the device, so a row must hold fewer
//!   than 2^31 elements. A whole array of more runs in windows of
//!   [`ARG_WINDOW`] elements, one after the other on the stream, each with its
//!   own answer; the host folds the windows' answers in index order
//!   ([`ArgReducePlan::finish`]), so any length that fits in memory is taken.
//!
//! The answer's index is a `usize` on the host: the position in the array,
//! or the column within the row.

use crate::device::Gpu;
use crate::error::{DriverContext, GpuError, GpuResult};
use crate::kernel_family::KernelFamily;
use crate::launch::{config, persistent_grid, BLOCK_THREADS};
use crate::plan_description::PlanDescription;
use cudarc::driver::{CudaFunction, CudaSlice, DeviceRepr, PushKernelArg, ValidAsZeroBits};

/// Elements each block of a whole-array kernel covers per grid-stride step at
/// least once: 256 threads x `kArgVectorsPerStep` (4) x 4-element vectors.
/// Below `n / ELEMENTS_PER_BLOCK_STEP` blocks the grid is not widened.
const ELEMENTS_PER_BLOCK_STEP: usize = BLOCK_THREADS as usize * ARG_VECTORS_PER_STEP * 4;
/// `kArgVectorsPerStep` in `cuda/common/config.cuh`.
pub const ARG_VECTORS_PER_STEP: usize = crate::policy::ARG_REDUCE.vectors_per_step as usize;
/// `kArgTwoPassMaxBlocks` in `cuda/common/config.cuh`: the most first-pass
/// blocks (= partials) of [`ArgReduceVariant::TwoPass`].
pub const ARG_TWO_PASS_MAX_BLOCKS: u32 = crate::policy::ARG_REDUCE.two_pass_max_blocks;
/// `kRowsPerWarpBlock` in `cuda/common/config.cuh`: rows per block of
/// [`ArgRowsVariant::WarpPerRow`] (one warp per row).
pub const ROWS_PER_WARP_BLOCK: u32 = BLOCK_THREADS / 32;
/// The largest element count (whole array) or row length the `int32` device
/// index can address: 2^31 - 1.
pub const MAX_ARG_ELEMENTS: usize = i32::MAX as usize;
/// Elements of one window of a whole-array run longer than
/// [`MAX_ARG_ELEMENTS`]: 2^30. Below 2^31, so the int32 device index
/// addresses every element of a window; a multiple of 4, so every window
/// starts 16-byte aligned when the array does (the vector loads stay).
pub const ARG_WINDOW: usize = 1 << 30;
/// The largest whole-array n a plan takes: 2^40 (1024 windows; 4 TB of
/// f32, past any device's memory), so the answers' buffer stays small.
pub const MAX_LEN: usize = 1 << 40;
/// The device's "no element yet" index (`kNoIndex`).
const NO_INDEX: i32 = i32::MAX;

/// Which extremum an arg reduction looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Extremum {
    /// The largest value (argmax).
    Max,
    /// The smallest value (argmin).
    Min,
}

impl Extremum {
    /// Both extrema.
    pub const ALL: [Extremum; 2] = [Extremum::Max, Extremum::Min];

    /// `"max"` or `"min"` (the kernel-name infix).
    pub fn name(&self) -> &'static str {
        match self {
            Extremum::Max => "max",
            Extremum::Min => "min",
        }
    }

    fn primitive(&self) -> &'static str {
        match self {
            Extremum::Max => "argmax",
            Extremum::Min => "argmin",
        }
    }

    fn rows_primitive(&self) -> &'static str {
        match self {
            Extremum::Max => "argmax_rows",
            Extremum::Min => "argmin_rows",
        }
    }
}

/// Whole-array schedules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArgReduceVariant {
    /// `min(ceil(n / 4096), 1024)` blocks grid-stride over the array (four
    /// 16-byte loads in flight per thread) and write one `(value, index)`
    /// partial each; a second one-block kernel folds the partials.
    TwoPass,
    /// One kernel on a persistent grid (SMs x resident blocks, at most
    /// `ceil(n / 4096)`), same loads; each block publishes its partial
    /// (store, `__threadfence`, ticket `atomicAdd`) and the block that draws
    /// the last ticket folds them all ("last block done").
    SinglePass,
}

impl ArgReduceVariant {
    /// Every whole-array variant.
    pub const ALL: [ArgReduceVariant; 2] = [ArgReduceVariant::TwoPass, ArgReduceVariant::SinglePass];

    /// Snake-case name used in reports.
    pub fn name(&self) -> &'static str {
        match self {
            ArgReduceVariant::TwoPass => "two_pass",
            ArgReduceVariant::SinglePass => "single_pass",
        }
    }
}

/// Per-row schedules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArgRowsVariant {
    /// One warp per row, 8 rows per 256-thread block (short rows).
    WarpPerRow,
    /// One 256-thread block per row (long rows).
    BlockPerRow,
}

impl ArgRowsVariant {
    /// Every per-row variant.
    pub const ALL: [ArgRowsVariant; 2] = [ArgRowsVariant::WarpPerRow, ArgRowsVariant::BlockPerRow];

    /// Snake-case name used in reports.
    pub fn name(&self) -> &'static str {
        match self {
            ArgRowsVariant::WarpPerRow => "warp_per_row",
            ArgRowsVariant::BlockPerRow => "block_per_row",
        }
    }
}

/// `(value, index)` as the device stores it: the mirror of `ArgF32` /
/// `ArgI32` in `cuda/common/operators.cuh` (8 bytes, 4-byte aligned).
/// `index == i32::MAX` means "no element" (the operator's identity).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ArgPair<T> {
    /// The extreme value.
    pub value: T,
    /// Its index (whole array) or column (per row).
    pub index: i32,
}

// SAFETY: #[repr(C)] of two 4-byte plain-old-data fields (T is f32 or i32:
// ArgElement is sealed), as the CUDA struct.
unsafe impl<T: ArgElement> DeviceRepr for ArgPair<T> {}
// SAFETY: all-zero bits are a valid (0, 0) pair.
unsafe impl<T: ArgElement> ValidAsZeroBits for ArgPair<T> {}

/// The mirror of `ArgControl` in `arg_reduce.cu`: 16 bytes.
/// `first_nonfinite` is the smallest flat index of a nonfinite element
/// (`u64::MAX` = none); `blocks_done` is the single-pass ticket counter.
/// Per row, all 16 bytes are set to `0xFF` before every launch. Whole array,
/// they are set to [`ArgControl::RESET`] once, when the plan is made, and
/// every launch leaves them so (the ticket wraps to 0; the kernel that writes
/// the answer swaps `first_nonfinite` back to `u64::MAX`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ArgControl {
    /// Smallest flat index of a nonfinite element, `u64::MAX` if none.
    pub first_nonfinite: u64,
    /// Single-pass ticket counter (0 between launches).
    pub blocks_done: u32,
    /// Padding to 16 bytes.
    pub reserved: u32,
}

impl ArgControl {
    /// The whole-array state between launches: no nonfinite seen, no ticket drawn.
    pub const RESET: ArgControl = ArgControl { first_nonfinite: u64::MAX, blocks_done: 0, reserved: 0 };
}

/// The mirror of `ArgResult<Pair>` in `arg_reduce.cu`: a whole-array answer
/// and the first nonfinite flat index of the same launch (`u64::MAX` = none;
/// then `best` is meaningless). 16 bytes, 8-byte aligned.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ArgResult<T> {
    /// The `(value, index)` answer.
    pub best: ArgPair<T>,
    /// Smallest flat index of a nonfinite element, `u64::MAX` if none.
    pub first_nonfinite: u64,
}

// SAFETY: #[repr(C)] of an 8-byte ArgPair (4-byte fields) and a u64, no
// padding, as the CUDA struct.
unsafe impl<T: ArgElement> DeviceRepr for ArgResult<T> {}

// SAFETY: #[repr(C)] plain old data matching the CUDA struct; all-zero bits are valid.
device_pod!(ArgControl);

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for i32 {}
}

/// Element types the arg kernels are instantiated for: `f32` and `i32`.
pub trait ArgElement: DeviceRepr + Copy + PartialOrd + std::fmt::Debug + sealed::Sealed + 'static {
    /// The kernel-name suffix: `"f32"` or `"i32"`.
    const TYPE_NAME: &'static str;
}

impl ArgElement for f32 {
    const TYPE_NAME: &'static str = "f32";
}

impl ArgElement for i32 {
    const TYPE_NAME: &'static str = "i32";
}

/// `GpuError::NonFinite` when `first` names an element (`u64::MAX` = none).
fn nonfinite_error(first: u64, primitive: &'static str, variant: &'static str, n: usize) -> GpuResult<()> {
    if first != u64::MAX {
        return Err(GpuError::NonFinite { primitive, variant, n, index: first as usize });
    }
    Ok(())
}

fn checked_pair<T: ArgElement>(
    pair: ArgPair<T>,
    bound: usize,
    primitive: &'static str,
    variant: &'static str,
    n: usize,
) -> GpuResult<(T, usize)> {
    if pair.index == NO_INDEX || pair.index < 0 || pair.index as usize >= bound {
        return Err(GpuError::KernelFault {
            primitive,
            variant,
            n,
            reason: format!("answer index {} outside [0, {bound})", pair.index),
        });
    }
    Ok((pair.value, pair.index as usize))
}

/// A whole-array arg reduction of `n` elements, ready to enqueue: every
/// buffer is allocated by [`ArgReducePlan::new`].
///
/// [`ArgReducePlan::enqueue`] puts on the stream exactly:
/// `TwoPass`: `arg_reduce_two_pass_partials_<max|min>_<t>` on `grid` blocks,
/// then `arg_reduce_two_pass_final_<..>` on one block; `SinglePass`:
/// `arg_reduce_single_pass_<..>` on `grid` blocks. No memset: the control
/// words are set once, here, and every launch leaves them reset.
///
/// No allocation, host copy or synchronisation. [`ArgReducePlan::finish`]
/// synchronises and downloads the answer with its nonfinite word.
pub struct ArgReducePlan<'g, T: ArgElement> {
    gpu: &'g Gpu,
    variant: ArgReduceVariant,
    extremum: Extremum,
    n: usize,
    /// `(first element, length)` of each window, in order ([`arg_windows`]).
    windows: Vec<(usize, usize)>,
    grid: u32,
    main: CudaFunction,
    fold: Option<CudaFunction>,
    partials: CudaSlice<ArgPair<T>>,
    control: CudaSlice<ArgControl>,
    /// One answer per window ([`arg_windows`]).
    result: CudaSlice<ArgResult<T>>,
}

/// The windows `(first element, length)` of a whole-array run of `n`
/// elements: one window of `n` up to [`MAX_ARG_ELEMENTS`] (the 32-bit path),
/// else windows of [`ARG_WINDOW`], the last one shorter.
pub fn arg_windows(n: usize) -> Vec<(usize, usize)> {
    crate::windows::windows(n, MAX_ARG_ELEMENTS, ARG_WINDOW)
}

/// Who asks for a fold of window answers (for the errors it names).
#[derive(Clone, Copy)]
struct FoldFor {
    primitive: &'static str,
    variant: &'static str,
    n: usize,
    extremum: Extremum,
}

/// The whole array's answer from its windows' answers (`results[w]` of
/// `windows[w]`, in index order):
/// * the first window that saw a nonfinite element holds the array's first
///   one, at its start plus the index within it ([`GpuError::NonFinite`]);
/// * an index outside its window is a [`GpuError::KernelFault`];
/// * a later window replaces the best only with a strictly better value, so
///   among equal values the lowest index wins (the rule inside a window,
///   extended across windows), and the index is the window's start plus the
///   index within it.
fn fold_windows<T: ArgElement>(
    results: &[ArgResult<T>],
    windows: &[(usize, usize)],
    of: FoldFor,
) -> GpuResult<(T, usize)> {
    let FoldFor { primitive, variant, n, extremum } = of;
    let fault = |reason: String| GpuError::KernelFault { primitive, variant, n, reason };
    if results.len() != windows.len() || windows.is_empty() {
        return Err(fault(format!("{} answers for {} windows", results.len(), windows.len())));
    }
    if let Some((result, &(start, _))) = results.iter().zip(windows).find(|(r, _)| r.first_nonfinite != u64::MAX) {
        nonfinite_error(start as u64 + result.first_nonfinite, primitive, variant, n)?;
    }
    let better = |a: T, b: T| match extremum {
        Extremum::Max => a > b,
        Extremum::Min => a < b,
    };
    let mut best: Option<(T, usize)> = None;
    for (result, &(start, len)) in results.iter().zip(windows) {
        let (value, index) = checked_pair(result.best, len, primitive, variant, n)?;
        if best.is_none_or(|(b, _)| better(value, b)) {
            best = Some((value, start + index));
        }
    }
    best.ok_or_else(|| fault("no window answered".into()))
}

impl<'g, T: ArgElement> ArgReducePlan<'g, T> {
    /// Plans an arg reduction of `1 <= n <= MAX_LEN` elements (else
    /// [`GpuError::InvalidInput`]), in windows past [`MAX_ARG_ELEMENTS`]
    /// ([`arg_windows`]). The result buffer starts poisoned.
    pub fn new(gpu: &'g Gpu, variant: ArgReduceVariant, extremum: Extremum, n: usize) -> GpuResult<Self> {
        let primitive = extremum.primitive();
        if n == 0 {
            return Err(GpuError::InvalidInput {
                primitive,
                variant: variant.name(),
                n,
                reason: "empty input has no extremum".into(),
            });
        }
        if n > MAX_LEN {
            return Err(GpuError::InvalidInput {
                primitive,
                variant: variant.name(),
                n,
                reason: format!("at most {MAX_LEN} elements (2^40) a whole-array plan"),
            });
        }
        let suffix = format!("{}_{}", extremum.name(), T::TYPE_NAME);
        let windows = arg_windows(n);
        // Every window runs on the grid of the longest, the first.
        let wanted = windows[0].1.div_ceil(ELEMENTS_PER_BLOCK_STEP).max(1);
        let (main, fold, grid) = match variant {
            ArgReduceVariant::TwoPass => {
                let main = gpu.function(KernelFamily::ArgReduce, &format!("arg_reduce_two_pass_partials_{suffix}"))?;
                let fold = gpu.function(KernelFamily::ArgReduce, &format!("arg_reduce_two_pass_final_{suffix}"))?;
                let grid = wanted.min(ARG_TWO_PASS_MAX_BLOCKS as usize) as u32;
                (main, Some(fold), grid)
            }
            ArgReduceVariant::SinglePass => {
                let name = format!("arg_reduce_single_pass_{suffix}");
                let main = gpu.function(KernelFamily::ArgReduce, &name)?;
                let resident = persistent_grid(gpu, KernelFamily::ArgReduce, &name, BLOCK_THREADS, 0)?;
                let grid = wanted.min(resident as usize) as u32;
                (main, None, grid)
            }
        };
        // Every partial is written by its block before any read: no init needed.
        let partials = gpu.alloc_uninit::<ArgPair<T>>(grid as usize)?;
        let control = gpu.upload(&[ArgControl::RESET])?;
        let result = gpu.alloc_poisoned::<ArgResult<T>>(windows.len())?;
        Ok(ArgReducePlan { gpu, variant, extremum, n, windows, grid, main, fold, partials, control, result })
    }

    /// Blocks of the (first) kernel.
    pub fn grid(&self) -> u32 {
        self.grid
    }

    /// What one enqueue puts on the stream (the launches below once per
    /// window); DRAM estimate: the input once, the partials written and read
    /// (16 B per block and window).
    pub fn describe(&self) -> PlanDescription {
        let suffix = format!("{}_{}", self.extremum.name(), T::TYPE_NAME);
        let mut d = PlanDescription::new("ArgReducePlan");
        for _ in &self.windows {
            d = match self.variant {
                ArgReduceVariant::TwoPass => d
                    .launch(format!("arg_reduce_two_pass_partials_{suffix}"), self.grid, BLOCK_THREADS, 0)
                    .launch(format!("arg_reduce_two_pass_final_{suffix}"), 1, BLOCK_THREADS, 0),
                ArgReduceVariant::SinglePass => {
                    d.launch(format!("arg_reduce_single_pass_{suffix}"), self.grid, BLOCK_THREADS, 0)
                }
            };
        }
        let windows = self.windows.len() as u64;
        d.moves((std::mem::size_of::<T>() * self.n) as u64 + 16 * self.grid as u64 * windows)
    }

    /// Enqueues the kernel(s) over `input` (`n` elements), window after
    /// window; each window's answer goes to its own result slot. The control
    /// words are reset by each window's last kernel, so the next one starts
    /// clean (stream order).
    pub fn enqueue(&mut self, input: &CudaSlice<T>) -> GpuResult<()> {
        let primitive = self.extremum.primitive();
        let variant = self.variant.name();
        let n = self.n;
        GpuError::check_planned_len(primitive, variant, n, input.len())?;
        for (w, &(start, len)) in self.windows.iter().enumerate() {
            let window = input.slice(start..start + len);
            let mut result = self.result.slice_mut(w..w + 1);
            // len <= MAX_ARG_ELEMENTS (arg_windows): it fits the kernels' u32.
            let len32 = len as u32;
            let stream = self.gpu.stream();
            let at = || format!("{primitive}/{variant} n={n} window [{start}, {})", start + len);
            let cfg = config(self.grid, BLOCK_THREADS, 0);
            match &self.fold {
                Some(fold) => {
                    let mut launch = stream.launch_builder(&self.main);
                    launch.arg(&window).arg(&len32).arg(&mut self.partials).arg(&mut self.control);
                    // SAFETY: matches arg_reduce_two_pass_partials_*(const T*, u32, Pair*, ArgControl*);
                    // `partials` holds `grid` pairs, `window` len elements.
                    unsafe { launch.launch(cfg) }.context(|| format!("{}: partials launch", at()))?;
                    let count = self.grid;
                    let mut launch = stream.launch_builder(fold);
                    launch.arg(&self.partials).arg(&count).arg(&mut self.control).arg(&mut result);
                    // SAFETY: matches arg_reduce_two_pass_final_*(const Pair*, u32, ArgControl*, ArgResult<Pair>*);
                    // `result` is one slot.
                    unsafe { launch.launch(config(1, BLOCK_THREADS, 0)) }
                        .context(|| format!("{}: final launch", at()))?;
                }
                None => {
                    let mut launch = stream.launch_builder(&self.main);
                    launch.arg(&window).arg(&len32).arg(&mut self.partials).arg(&mut self.control).arg(&mut result);
                    // SAFETY: matches arg_reduce_single_pass_*(const T*, u32, Pair*, ArgControl*, ArgResult<Pair>*);
                    // `partials` holds `grid` pairs, `window` len elements, `result` one slot.
                    unsafe { launch.launch(cfg) }.context(|| format!("{}: launch", at()))?;
                }
            }
        }
        Ok(())
    }

    /// Synchronises and returns `(value, index)` of the last enqueued run, or
    /// [`GpuError::NonFinite`] with the first nonfinite index: the windows'
    /// answers folded in index order (a later window replaces the best only
    /// with a strictly better value, so the lowest index wins among equals;
    /// the first window that saw a nonfinite element names it).
    pub fn finish(&self) -> GpuResult<(T, usize)> {
        let results = self.gpu.download(&self.result)?;
        let of = FoldFor {
            primitive: self.extremum.primitive(),
            variant: self.variant.name(),
            n: self.n,
            extremum: self.extremum,
        };
        fold_windows(&results, &self.windows, of)
    }
}

/// The per-row kernel of `variant` for rows of `cols` elements:
/// `arg_reduce_rows_<warp|warp_scalar|block>_<max|min>_<t>`. Rows that cannot
/// be read as 16-byte vectors (`cols % 4 != 0`) take the warp kernel's
/// instance without the vector path, which needs fewer registers.
fn rows_kernel_name<T: ArgElement>(variant: ArgRowsVariant, extremum: Extremum, cols: usize) -> String {
    let part = match variant {
        ArgRowsVariant::WarpPerRow if cols % 4 != 0 => "warp_scalar",
        ArgRowsVariant::WarpPerRow => "warp",
        ArgRowsVariant::BlockPerRow => "block",
    };
    format!("arg_reduce_rows_{part}_{}_{}", extremum.name(), T::TYPE_NAME)
}

/// A per-row arg reduction of a `[rows, cols]` row-major matrix, ready to
/// enqueue. One `(value, column)` per row; the output buffer is allocated
/// (poisoned) by [`ArgRowsPlan::new`].
///
/// [`ArgRowsPlan::enqueue`] puts on the stream exactly: one 16-byte `0xFF`
/// memset of the control words, then `arg_reduce_rows_<warp|block>_<max|min>_<t>`
/// (`WarpPerRow`: `ceil(rows / 8)` blocks, `BlockPerRow`: `rows` blocks, both
/// capped at one resident wave, SMs x resident blocks, with a grid-stride loop
/// over rows). No allocation, host copy or synchronisation.
pub struct ArgRowsPlan<'g, T: ArgElement> {
    gpu: &'g Gpu,
    variant: ArgRowsVariant,
    extremum: Extremum,
    rows: usize,
    cols: usize,
    grid: u32,
    kernel: CudaFunction,
    control: CudaSlice<ArgControl>,
    output: CudaSlice<ArgPair<T>>,
}

impl<'g, T: ArgElement> ArgRowsPlan<'g, T> {
    /// Plans `rows` rows of `cols` elements: `rows >= 1`, `1 <= cols < 2^31`
    /// (else [`GpuError::InvalidInput`]).
    pub fn new(gpu: &'g Gpu, variant: ArgRowsVariant, extremum: Extremum, rows: usize, cols: usize) -> GpuResult<Self> {
        let primitive = extremum.rows_primitive();
        let n = rows.saturating_mul(cols);
        let invalid = |reason: String| GpuError::InvalidInput { primitive, variant: variant.name(), n, reason };
        if rows == 0 || cols == 0 {
            return Err(invalid(format!("{rows} rows x {cols} cols: a row needs at least one element")));
        }
        if cols > MAX_ARG_ELEMENTS {
            return Err(invalid(format!("the device index is int32: at most {MAX_ARG_ELEMENTS} columns")));
        }
        if rows.checked_mul(cols).is_none() {
            return Err(invalid(format!("{rows} x {cols} overflows usize")));
        }
        let wanted = match variant {
            ArgRowsVariant::WarpPerRow => (rows as u64).div_ceil(ROWS_PER_WARP_BLOCK as u64),
            ArgRowsVariant::BlockPerRow => rows as u64,
        };
        let name = rows_kernel_name::<T>(variant, extremum, cols);
        let kernel = gpu.function(KernelFamily::ArgReduce, &name)?;
        // At most one resident wave of blocks; the kernels loop over rows.
        let resident = persistent_grid(gpu, KernelFamily::ArgReduce, &name, BLOCK_THREADS, 0)? as u64;
        let grid = wanted.min(resident) as u32;
        let control = gpu.alloc_uninit::<ArgControl>(1)?;
        let output = gpu.alloc_poisoned::<ArgPair<T>>(rows)?;
        Ok(ArgRowsPlan { gpu, variant, extremum, rows, cols, grid, kernel, control, output })
    }

    /// What one enqueue puts on the stream; DRAM estimate: the input once and
    /// one 8-byte answer per row.
    pub fn describe(&self) -> PlanDescription {
        PlanDescription::new("ArgRowsPlan")
            .memset("control words", std::mem::size_of::<ArgControl>() as u64)
            .launch(rows_kernel_name::<T>(self.variant, self.extremum, self.cols), self.grid, BLOCK_THREADS, 0)
            .moves((std::mem::size_of::<T>() * self.rows * self.cols + 8 * self.rows) as u64)
    }

    /// The per-row answers of the last run, as the device stores them.
    pub fn output(&self) -> &CudaSlice<ArgPair<T>> {
        &self.output
    }

    /// Enqueues the memset and the kernel over `input` (`rows * cols` elements).
    pub fn enqueue(&mut self, input: &CudaSlice<T>) -> GpuResult<()> {
        let primitive = self.extremum.rows_primitive();
        let variant = self.variant.name();
        let n = self.rows * self.cols;
        if input.len() != n {
            return Err(GpuError::InvalidInput {
                primitive,
                variant,
                n,
                reason: format!("planned for {} x {}, input holds {}", self.rows, self.cols, input.len()),
            });
        }
        self.gpu.memset_bytes(&mut self.control, 0xFF)?;
        let rows = self.rows as u64;
        let cols = self.cols as u32;
        let mut launch = self.gpu.stream().launch_builder(&self.kernel);
        launch.arg(input).arg(&rows).arg(&cols).arg(&mut self.output).arg(&mut self.control);
        // SAFETY: matches arg_reduce_rows_*(const T*, u64, u32, Pair*, ArgControl*);
        // `output` holds `rows` pairs, `input` rows * cols elements.
        unsafe { launch.launch(config(self.grid, BLOCK_THREADS, 0)) }
            .context(|| format!("{primitive}/{variant} rows={} cols={}: launch", self.rows, self.cols))?;
        Ok(())
    }

    /// Synchronises and returns one `(value, column)` per row, or
    /// [`GpuError::NonFinite`] with the first nonfinite flat index.
    pub fn finish(&self) -> GpuResult<Vec<(T, usize)>> {
        let primitive = self.extremum.rows_primitive();
        let variant = self.variant.name();
        let n = self.rows * self.cols;
        let first = self.gpu.download(&self.control)?.first().map_or(u64::MAX, |c| c.first_nonfinite);
        nonfinite_error(first, primitive, variant, n)?;
        self.gpu
            .download(&self.output)?
            .into_iter()
            .map(|pair| checked_pair(pair, self.cols, primitive, variant, n))
            .collect()
    }
}

/// Stamps a typed `Gpu` method that forwards to [`Gpu::arg_reduce_rows`]
/// with one element type and one extremum.
macro_rules! rows_wrapper {
    ($(#[$doc:meta])* $name:ident, $t:ty, $extremum:ident) => {
        $(#[$doc])*
        pub fn $name(&self, variant: ArgRowsVariant, data: &[$t], rows: usize, cols: usize) -> GpuResult<Vec<($t, usize)>> {
            self.arg_reduce_rows(variant, Extremum::$extremum, data, rows, cols)
        }
    };
}

impl Gpu {
    /// `(value, index)` of the maximum of `data`; ties go to the lowest index.
    /// Any length that fits in device memory ([`ArgReducePlan`]'s windows).
    /// Errors: empty → [`GpuError::InvalidInput`]; NaN/±inf →
    /// [`GpuError::NonFinite`] naming the first one.
    pub fn argmax_f32(&self, variant: ArgReduceVariant, data: &[f32]) -> GpuResult<(f32, usize)> {
        self.arg_reduce(variant, Extremum::Max, data)
    }

    /// `(value, index)` of the minimum of `data`; contract as [`Gpu::argmax_f32`].
    pub fn argmin_f32(&self, variant: ArgReduceVariant, data: &[f32]) -> GpuResult<(f32, usize)> {
        self.arg_reduce(variant, Extremum::Min, data)
    }

    /// `(value, index)` of the maximum of `data`; ties go to the lowest index.
    /// Errors: empty → [`GpuError::InvalidInput`].
    pub fn argmax_i32(&self, variant: ArgReduceVariant, data: &[i32]) -> GpuResult<(i32, usize)> {
        self.arg_reduce(variant, Extremum::Max, data)
    }

    /// `(value, index)` of the minimum of `data`; contract as [`Gpu::argmax_i32`].
    pub fn argmin_i32(&self, variant: ArgReduceVariant, data: &[i32]) -> GpuResult<(i32, usize)> {
        self.arg_reduce(variant, Extremum::Min, data)
    }

    /// The whole-array arg reduction behind `argmax_*` / `argmin_*`: plan
    /// (fresh, poisoned result), upload, enqueue, finish.
    pub fn arg_reduce<T: ArgElement>(
        &self,
        variant: ArgReduceVariant,
        extremum: Extremum,
        data: &[T],
    ) -> GpuResult<(T, usize)> {
        let mut plan = ArgReducePlan::<T>::new(self, variant, extremum, data.len())?;
        let input = self.upload(data)?;
        plan.enqueue(&input)?;
        plan.finish()
    }

    rows_wrapper! {
        /// Per-row `(value, column)` of the maximum of each row of the row-major
        /// `[rows, cols]` matrix `data`; ties go to the lowest column.
        /// `rows == 0` gives an empty vector. Errors: `data.len() != rows * cols`,
        /// `cols == 0 < rows`, or `cols >= 2^31` → [`GpuError::InvalidInput`];
        /// NaN/±inf → [`GpuError::NonFinite`] with the first flat index.
        argmax_rows_f32, f32, Max
    }
    rows_wrapper! {
        /// Per-row minimum; contract as [`Gpu::argmax_rows_f32`].
        argmin_rows_f32, f32, Min
    }
    rows_wrapper! {
        /// Per-row maximum of `i32` rows; contract as [`Gpu::argmax_rows_f32`]
        /// (no nonfinite case).
        argmax_rows_i32, i32, Max
    }
    rows_wrapper! {
        /// Per-row minimum of `i32` rows; contract as [`Gpu::argmax_rows_i32`].
        argmin_rows_i32, i32, Min
    }

    /// The per-row arg reduction behind `arg*_rows_*`: shape checks, plan
    /// (fresh, poisoned output), upload, enqueue, finish.
    pub fn arg_reduce_rows<T: ArgElement>(
        &self,
        variant: ArgRowsVariant,
        extremum: Extremum,
        data: &[T],
        rows: usize,
        cols: usize,
    ) -> GpuResult<Vec<(T, usize)>> {
        if rows.checked_mul(cols) != Some(data.len()) {
            return Err(GpuError::InvalidInput {
                primitive: extremum.rows_primitive(),
                variant: variant.name(),
                n: data.len(),
                reason: format!("{} elements for {rows} rows x {cols} cols", data.len()),
            });
        }
        if rows == 0 {
            return Ok(Vec::new());
        }
        let mut plan = ArgRowsPlan::<T>::new(self, variant, extremum, rows, cols)?;
        let input = self.upload(data)?;
        plan.enqueue(&input)?;
        plan.finish()
    }
}

#[cfg(test)]
#[path = "arg_reduce_tests.rs"]
mod tests;

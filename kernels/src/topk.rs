//! Top-k of rows (`cuda/topk.cu`).
//!
//! Contract (the CPU model, `model::topk`, is the reference):
//! * For each row of a row-major `[rows, cols]` tensor of f32, bf16 or f16 (a whole array is
//!   one row): the `k` largest values (`largest`) or the `k` smallest, and their int64 column
//!   indices, ordered by value (descending for the largest, ascending for the smallest) and,
//!   among equal values, by index ascending. The values are the input elements at those
//!   indices, bit for bit.
//! * `-0.0` and `+0.0` are equal. NaN is refused ([`GpuError::NonFinite`], the first flat
//!   index) unless [`TopkNan::AboveAll`] orders it above every number, NaNs equal.
//! * `k = 0` gives empty outputs; `k > cols`, `cols >= 2^32 - 1` or `k` above the variant's
//!   [`TopkVariant::max_k`] is [`GpuError::InvalidInput`].
//!
//! The sampler ([`TopkSamplePlan`], [`Gpu::topk_sample`]; the model is `model::topk_sample`)
//! runs either schedule with another last step: per row, a softmax over the top k (largest,
//! NaN refused) with a temperature, and one draw by the inverse CDF from a caller-supplied
//! uniform in `[0, 1)`; outputs the drawn column (int64) and its probability (f32). Refused:
//! a NaN or a `+inf` largest value ([`GpuError::NonFinite`]), a row whose largest is `-inf`
//! or a uniform outside `[0, 1)` ([`GpuError::InvalidInput`], naming the first such row).

use crate::device::Gpu;
use crate::error::{DriverContext, GpuError, GpuResult};
use crate::kernel_family::KernelFamily;
use crate::launch::config;
use crate::plan_description::PlanDescription;
use crate::policy::TOPK;
use cudarc::driver::{CudaFunction, CudaSlice, DeviceRepr, LaunchConfig, PushKernelArg};
use half::{bf16, f16};

/// How rows are selected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TopkVariant {
    /// One block per row: a radix select of the k-th key (8 bits a pass), a gather of the
    /// keys above it and of its lowest-index ties, a bitonic sort of the k survivors in
    /// shared memory. `k <= TOPK.max_k`.
    BlockRadixSelect,
    /// Several blocks per row (wide rows, few of them): the bin of the k-th key narrowed
    /// `TOPK.grid_bin_bits` bits a level (a histogram of every row over the grid, then a warp
    /// per row) until the keys from that bin up are at most `TOPK.grid_candidates` or the key
    /// is whole (rows under `TOPK.grid_narrow_min_cols` columns: one level); those keys collected as candidates, then a block per row selects the top k
    /// among them (radix passes over the unique ranks) and sorts them. At most 65,535 rows;
    /// `k <= TOPK.max_k`; scratch of 8 bytes per input element for the candidates.
    GridThresholdSelect,
}

impl TopkVariant {
    /// Every variant.
    pub const ALL: [TopkVariant; 2] = [TopkVariant::BlockRadixSelect, TopkVariant::GridThresholdSelect];

    /// Snake-case name used in reports and case ids.
    pub fn name(self) -> &'static str {
        match self {
            TopkVariant::BlockRadixSelect => "block_radix_select",
            TopkVariant::GridThresholdSelect => "grid_threshold_select",
        }
    }

    /// The largest `k` it selects.
    pub fn max_k(self) -> usize {
        match self {
            TopkVariant::BlockRadixSelect | TopkVariant::GridThresholdSelect => TOPK.max_k as usize,
        }
    }

    /// The most rows it selects in one launch.
    pub fn max_rows(self) -> usize {
        match self {
            TopkVariant::BlockRadixSelect => i32::MAX as usize,
            // The rows are the grid's y dimension.
            TopkVariant::GridThresholdSelect => u16::MAX as usize,
        }
    }
}

pub use primlab_types::{SampleSpec, TopkNan, TopkSpec};

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for half::bf16 {}
    impl Sealed for half::f16 {}
}

/// An element type of top-k: f32, bf16 or f16.
pub trait TopkElement: DeviceRepr + Copy + sealed::Sealed + 'static {
    /// The kernel-name suffix and dtype name.
    const DTYPE: &'static str;
}
impl TopkElement for f32 {
    const DTYPE: &'static str = "f32";
}
impl TopkElement for bf16 {
    const DTYPE: &'static str = "bf16";
}
impl TopkElement for f16 {
    const DTYPE: &'static str = "f16";
}

/// Launch option bits (`kLargest`, `kNanAboveAll` in topk.cu).
const LARGEST: u32 = 1;
const NAN_ABOVE_ALL: u32 = 2;

/// A top-k of `rows x cols` elements of type `T`, every launch parameter computed.
///
/// [`TopkPlan::enqueue`] puts on the stream a memset of the NaN index word and, when
/// `rows * k > 0`: for [`TopkVariant::BlockRadixSelect`] one launch of
/// `topk_block_radix_select_<dtype>` (`rows` blocks); for [`TopkVariant::GridThresholdSelect`]
/// a memset of the row histograms, a `topk_grid_histogram_<dtype>` and a
/// `topk_grid_threshold` launch a level ([`grid_levels`]), then `topk_grid_collect_<dtype>`
/// and `topk_grid_select_<dtype>`. No
/// allocation, copy or synchronisation. [`TopkPlan::finish`] synchronises and reports a
/// refused NaN.
pub struct TopkPlan<'g, T: TopkElement> {
    gpu: &'g Gpu,
    variant: TopkVariant,
    rows: usize,
    cols: usize,
    spec: TopkSpec,
    epilogue: Epilogue,
    schedule: Schedule,
    /// The refusal words (`flags` in topk.cu): a NaN's flat index, a `+inf` largest's flat
    /// index, a row with nothing to draw, a row with a bad uniform; u64 max until set.
    flags: CudaSlice<u64>,
    _element: std::marker::PhantomData<T>,
}

/// The refusal words of a launch (`flags` in topk.cu).
const FLAG_WORDS: usize = 4;

/// What a plan's last launch does: write the top k, or draw from them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Epilogue {
    Select,
    Sample,
}

impl Epilogue {
    /// The primitive its errors name.
    fn primitive(self) -> &'static str {
        match self {
            Epilogue::Select => "topk",
            Epilogue::Sample => "topk_sample",
        }
    }
}

/// The launches of a plan and their scratch.
enum Schedule {
    Block { kernel: CudaFunction },
    Grid(Box<GridSchedule>),
}

/// The grid schedule's kernels and its scratch.
struct GridSchedule {
    histogram: CudaFunction,
    threshold: CudaFunction,
    collect: CudaFunction,
    /// The last launch: `topk_grid_select_<dtype>` or `topk_grid_sample_<dtype>`.
    select: CudaFunction,
    /// Columns per block of the histogram and collect launches, and blocks per row.
    chunk: u64,
    chunks: u32,
    /// The levels of the k-th key's narrowing, `(shift, bits)` each.
    levels: Vec<(u32, u32)>,
    /// Row histograms (`levels x rows x 2^grid_bin_bits`), the rows' narrowing state
    /// (`GridRowState`, four words a row), candidate counts (`rows`), candidate ranks
    /// (`rows x cols`).
    hist: CudaSlice<u32>,
    state: CudaSlice<u32>,
    counts: CudaSlice<u32>,
    candidates: CudaSlice<u64>,
    /// Rows narrowed over several levels read lists after the first level (topk.cu):
    /// these launches and list B (list A is `candidates`), `None` for one level.
    lists: Option<GridLists>,
}

/// The launches and scratch of a grid schedule of several levels: the second level's
/// pass over the rows (collecting list A, in one segment a block, while it counts), a
/// later level's count over list A, the pass that keeps list A's final candidates in list
/// B (`rows x cols` ranks, counted in `counts`; the thresholds zero them).
struct GridLists {
    collect_histogram: CudaFunction,
    list_histogram: CudaFunction,
    list_collect: CudaFunction,
    /// The ranks each block of a row kept in its segment of list A (`rows x chunks`).
    segment_counts: CudaSlice<u32>,
    counts: CudaSlice<u32>,
    candidates: CudaSlice<u64>,
}

/// The bins of a row's histogram at one level (`kGridBins`).
const GRID_BINS: usize = 1 << TOPK.grid_bin_bits;
/// Words of a row's `GridRowState` (topk.cu).
const GRID_STATE_WORDS: usize = 4;

/// The levels by which the grid schedule narrows a `width`-bit key, from the top:
/// `(shift, bits)`, the digit `(key >> shift) & (2^bits - 1)`; `TOPK.grid_bin_bits` bits a
/// level and the rest at the last (32 bits: 11, 11, 10; 16 bits: 11, 5).
pub fn grid_levels(width: u32) -> Vec<(u32, u32)> {
    let mut levels = Vec::new();
    let mut top = width;
    while top > 0 {
        let shift = top.saturating_sub(TOPK.grid_bin_bits);
        levels.push((shift, top - shift));
        top = shift;
    }
    levels
}

/// Columns per block and blocks per row of the grid schedule: about
/// `TOPK.grid_blocks_per_sm` blocks per SM over all rows, each at least
/// `TOPK.grid_min_chunk` columns.
fn grid_chunks(rows: usize, cols: usize, sm_count: usize) -> (u64, u32) {
    let wanted = (sm_count.max(1) * TOPK.grid_blocks_per_sm as usize).div_ceil(rows.max(1));
    let most = (cols / TOPK.grid_min_chunk as usize).max(1);
    let chunks = wanted.clamp(1, most);
    let chunk = cols.div_ceil(chunks).max(1);
    (chunk as u64, cols.div_ceil(chunk).max(1) as u32)
}

/// The last launch's outputs: a top-k's values and indices, or a sampler's draws.
enum LastLaunch<'a, T> {
    Select {
        values: &'a mut CudaSlice<T>,
        indices: &'a mut CudaSlice<i64>,
    },
    Sample {
        temperature: f32,
        uniforms: &'a CudaSlice<f32>,
        samples: &'a mut CudaSlice<i64>,
        probabilities: &'a mut CudaSlice<f32>,
    },
}

impl<'g, T: TopkElement> TopkPlan<'g, T> {
    /// Plans a top-k of `rows x cols` (else [`GpuError::InvalidInput`]: `k > cols`, `k` above
    /// [`TopkVariant::max_k`], `cols >= 2^32 - 1`, more rows than [`TopkVariant::max_rows`],
    /// or a size that overflows).
    pub fn new(gpu: &'g Gpu, variant: TopkVariant, rows: usize, cols: usize, spec: TopkSpec) -> GpuResult<Self> {
        Self::planned(gpu, variant, (rows, cols), spec, Epilogue::Select)
    }

    fn planned(
        gpu: &'g Gpu,
        variant: TopkVariant,
        (rows, cols): (usize, usize),
        spec: TopkSpec,
        epilogue: Epilogue,
    ) -> GpuResult<Self> {
        let n = rows.saturating_mul(cols);
        let primitive = epilogue.primitive();
        let invalid = |reason: String| GpuError::InvalidInput { primitive, variant: variant.name(), n, reason };
        let (k, what) = (spec.k, format!("{}, {rows} x {cols}", T::DTYPE));
        if rows.checked_mul(cols).is_none() || rows.checked_mul(k).is_none() {
            return Err(invalid(format!("{what}: the size overflows")));
        }
        if k > cols {
            return Err(invalid(format!("{what}: k = {k} exceeds the {cols} columns of a row")));
        }
        if k > variant.max_k() {
            return Err(invalid(format!("{what}: k = {k} exceeds {}'s max_k() = {}", variant.name(), variant.max_k())));
        }
        if cols >= u32::MAX as usize {
            return Err(invalid(format!("{what}: a row holds at most {} columns", u32::MAX - 1)));
        }
        if rows > variant.max_rows() {
            return Err(invalid(format!("{what}: {} selects at most {} rows", variant.name(), variant.max_rows())));
        }
        let schedule = Self::schedule(gpu, variant, (rows, cols), epilogue)?;
        let flags = gpu.alloc_poisoned::<u64>(FLAG_WORDS)?;
        Ok(TopkPlan { gpu, variant, rows, cols, spec, epilogue, schedule, flags, _element: std::marker::PhantomData })
    }

    /// The launches of `variant` and their scratch.
    fn schedule(
        gpu: &Gpu,
        variant: TopkVariant,
        (rows, cols): (usize, usize),
        epilogue: Epilogue,
    ) -> GpuResult<Schedule> {
        let function = |name: &str| gpu.function(KernelFamily::Topk, name);
        let dtype = T::DTYPE;
        let last = match epilogue {
            Epilogue::Select => "select",
            Epilogue::Sample => "sample",
        };
        Ok(match variant {
            TopkVariant::BlockRadixSelect => {
                Schedule::Block { kernel: function(&format!("topk_block_radix_{last}_{dtype}"))? }
            }
            TopkVariant::GridThresholdSelect => {
                let (chunk, chunks) = grid_chunks(rows, cols, gpu.info().sm_count.max(1) as usize);
                let mut levels = grid_levels(8 * std::mem::size_of::<T>() as u32);
                if cols < TOPK.grid_narrow_min_cols as usize {
                    levels.truncate(1);
                }
                let lists = if levels.len() > 1 {
                    Some(GridLists {
                        collect_histogram: function(&format!("topk_grid_collect_histogram_{dtype}"))?,
                        list_histogram: function(&format!("topk_grid_list_histogram_{dtype}"))?,
                        list_collect: function("topk_grid_list_collect")?,
                        segment_counts: gpu.alloc_poisoned::<u32>((rows * chunks as usize).max(1))?,
                        counts: gpu.alloc_poisoned::<u32>(rows.max(1))?,
                        candidates: gpu.alloc_poisoned::<u64>((rows * cols).max(1))?,
                    })
                } else {
                    None
                };
                Schedule::Grid(Box::new(GridSchedule {
                    lists,
                    histogram: function(&format!("topk_grid_histogram_{dtype}"))?,
                    threshold: function("topk_grid_threshold")?,
                    collect: function(&format!("topk_grid_collect_{dtype}"))?,
                    select: function(&format!("topk_grid_{last}_{dtype}"))?,
                    chunk,
                    chunks,
                    hist: gpu.alloc_poisoned::<u32>((levels.len() * rows * GRID_BINS).max(1))?,
                    levels,
                    state: gpu.alloc_poisoned::<u32>((rows * GRID_STATE_WORDS).max(1))?,
                    counts: gpu.alloc_poisoned::<u32>(rows.max(1))?,
                    candidates: gpu.alloc_poisoned::<u64>((rows * cols).max(1))?,
                }))
            }
        })
    }

    /// The kernel this plan launches (for the grid schedule, the one that reads the rows first).
    pub fn kernel_name(&self) -> String {
        let last = if self.epilogue == Epilogue::Sample { "sample" } else { "select" };
        match self.schedule {
            Schedule::Block { .. } => format!("topk_block_radix_{last}_{}", T::DTYPE),
            Schedule::Grid(_) => format!("topk_grid_histogram_{}", T::DTYPE),
        }
    }

    /// What one enqueue puts on the stream. DRAM estimate: the block schedule reads each row
    /// once per radix pass (a 32-bit key has four, a 16-bit one two) and once more for the
    /// gather; the grid schedule reads it at least twice (the first level's histogram, the
    /// collect; a later level reads it again unless the row is narrowed enough, counted as
    /// their least) and writes and reads back its candidates (at most every element, 8 bytes
    /// each: counted as k per row, their least); both write the outputs (a top-k: value and int64 index per survivor; a
    /// sampler: reads a uniform, writes a column and a probability per row).
    pub fn describe(&self) -> PlanDescription {
        let element = std::mem::size_of::<T>() as u64;
        let (rows, cols, k) = (self.rows as u64, self.cols as u64, self.spec.k as u64);
        let outputs = match self.epilogue {
            Epilogue::Select => rows * k * (element + 8),
            Epilogue::Sample => rows * (4 + 8 + 4),
        };
        let d = PlanDescription::new(if self.epilogue == Epilogue::Sample { "TopkSamplePlan" } else { "TopkPlan" })
            .memset("refusal words", FLAG_WORDS as u64 * 8);
        let block = TOPK.block_threads;
        match &self.schedule {
            Schedule::Block { .. } => d
                .launch(self.kernel_name(), self.rows as u32, block, 0)
                .moves((element + 1) * rows * cols * element + outputs),
            Schedule::Grid(grid) => {
                let dtype = T::DTYPE;
                let blocks = grid.chunks * self.rows as u32;
                let last = if self.epilogue == Epilogue::Sample { "sample" } else { "select" };
                let levels = grid.levels.len() as u64;
                let mut d = d.memset("row histograms", levels * rows * GRID_BINS as u64 * 4);
                for level in 0..grid.levels.len() {
                    let count = match (level, grid.lists.is_some()) {
                        (0, _) | (_, false) => format!("topk_grid_histogram_{dtype}"),
                        (1, true) => format!("topk_grid_collect_histogram_{dtype}"),
                        _ => format!("topk_grid_list_histogram_{dtype}"),
                    };
                    d = d.launch(count, blocks, block, 0).launch("topk_grid_threshold", self.rows as u32, 32, 0);
                }
                let collect = if grid.lists.is_some() {
                    "topk_grid_list_collect".to_string()
                } else {
                    format!("topk_grid_collect_{dtype}")
                };
                d.launch(collect, blocks, block, 0)
                    .launch(format!("topk_grid_{last}_{dtype}"), self.rows as u32, block, 0)
                    .moves(2 * rows * cols * element + 2 * rows * k * 8 + outputs)
            }
        }
    }

    /// Enqueues the selection: `input` holds `rows * cols` elements, `values` and `indices`
    /// `rows * k` each (any placeholder where that count is 0). With `k = 0` the kernel still
    /// runs when NaN is refused: it only looks for one.
    pub fn enqueue(
        &mut self,
        input: &CudaSlice<T>,
        values: &mut CudaSlice<T>,
        indices: &mut CudaSlice<i64>,
    ) -> GpuResult<()> {
        let (rows, k) = (self.rows, self.spec.k);
        let lengths = [(values.len(), rows * k), (indices.len(), rows * k)];
        self.check_lengths(input, &lengths, || format!("values {}, indices {}", values.len(), indices.len()))?;
        self.launch(input, LastLaunch::Select { values, indices })
    }

    /// [`GpuError::InvalidInput`] unless `input` holds `rows * cols` and each `(len, want)`
    /// has `len == want` (or `want == 0`: any placeholder).
    fn check_lengths(
        &self,
        input: &CudaSlice<T>,
        lengths: &[(usize, usize)],
        outputs: impl Fn() -> String,
    ) -> GpuResult<()> {
        let (rows, cols, k) = (self.rows, self.cols, self.spec.k);
        let n = rows * cols;
        let fits = |len: usize, want: usize| len == want || want == 0;
        if fits(input.len(), n) && lengths.iter().all(|&(len, want)| fits(len, want)) {
            return Ok(());
        }
        Err(GpuError::InvalidInput {
            primitive: self.epilogue.primitive(),
            variant: self.variant.name(),
            n,
            reason: format!("planned for {rows} x {cols}, k = {k}: input holds {}, {}", input.len(), outputs()),
        })
    }

    /// Puts the plan's launches on the stream (lengths checked by the caller).
    fn launch(&mut self, input: &CudaSlice<T>, last: LastLaunch<'_, T>) -> GpuResult<()> {
        let (rows, cols, k) = (self.rows, self.cols, self.spec.k);
        self.gpu.memset_bytes(&mut self.flags, 0xFF)?;
        if rows * cols == 0 || (k == 0 && self.spec.nan == TopkNan::AboveAll) {
            return Ok(());
        }
        let options = if self.spec.largest { LARGEST } else { 0 }
            | if self.spec.nan == TopkNan::AboveAll { NAN_ABOVE_ALL } else { 0 };
        let what = format!("{}/{} {rows} x {cols} k={k}", self.epilogue.primitive(), self.variant.name());
        let args = LaunchArgs { rows, cols: cols as u64, k: k as u32, options, what };
        let stream = self.gpu.stream().clone();
        match &mut self.schedule {
            Schedule::Block { kernel } => launch_block(&stream, kernel, input, &args, last, &mut self.flags),
            Schedule::Grid(grid) => launch_grid(&stream, grid, input, &args, last, &mut self.flags),
        }
    }

    /// Synchronises and checks the last run: [`GpuError::NonFinite`] with the first refused
    /// flat index (a NaN when NaN is refused; for a sampler also a `+inf` largest value), then,
    /// for a sampler, [`GpuError::InvalidInput`] for the first row with nothing to draw or a
    /// uniform outside `[0, 1)`.
    pub fn finish(&self) -> GpuResult<()> {
        let words = self.gpu.download(&self.flags)?;
        let word = |i: usize| words.get(i).copied().unwrap_or(u64::MAX);
        let (primitive, variant, n) = (self.epilogue.primitive(), self.variant.name(), self.rows * self.cols);
        let first = word(0).min(word(1));
        if first != u64::MAX {
            return Err(GpuError::NonFinite { primitive, variant, n, index: first as usize });
        }
        let invalid = |reason: String| Err(GpuError::InvalidInput { primitive, variant, n, reason });
        if word(2) != u64::MAX {
            return invalid(format!("row {} has no finite logit (its largest is -inf): nothing to draw", word(2)));
        }
        if word(3) != u64::MAX {
            return invalid(format!("the uniform of row {} is not in [0, 1)", word(3)));
        }
        Ok(())
    }
}

/// The scalars every top-k launch passes, the rows (blocks) and what the launches are for
/// (error context).
struct LaunchArgs {
    rows: usize,
    cols: u64,
    k: u32,
    options: u32,
    what: String,
}

/// The block schedule's one launch.
fn launch_block<T: TopkElement>(
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    kernel: &CudaFunction,
    input: &CudaSlice<T>,
    args: &LaunchArgs,
    last: LastLaunch<'_, T>,
    flags: &mut CudaSlice<u64>,
) -> GpuResult<()> {
    let rows = args.rows;
    let mut launch = stream.launch_builder(kernel);
    launch.arg(input).arg(&args.cols).arg(&args.k);
    match last {
        LastLaunch::Select { values, indices } => {
            launch.arg(&args.options).arg(values).arg(indices).arg(flags);
            // SAFETY: matches topk_block_radix_select_<dtype>(const Bits* in, u64 cols, u32 k,
            // u32 options, Bits* values, i64* indices, u64* nan_index) with Bits the element's
            // own width; one block per row reads its `cols` elements and writes its `k`
            // outputs; checked in new: k <= min(cols, max_k) (k = 0: the NaN scan alone),
            // cols < 2^32 - 1, rows <= i32::MAX; flags holds FLAG_WORDS words.
            unsafe { launch.launch(config(rows as u32, TOPK.block_threads, 0)) }
        }
        LastLaunch::Sample { temperature, uniforms, samples, probabilities } => {
            launch.arg(&temperature).arg(uniforms).arg(samples).arg(probabilities).arg(flags);
            // SAFETY: matches topk_block_radix_sample_<dtype>(const Bits* in, u64 cols, u32 k,
            // float temperature, const float* uniforms, i64* samples, float* probabilities,
            // u64* flags): one block per row reads its `cols` elements and its uniform and
            // writes its sample and probability (rows each, checked by the caller); 1 <= k <=
            // min(cols, max_k); flags holds FLAG_WORDS words.
            unsafe { launch.launch(config(rows as u32, TOPK.block_threads, 0)) }
        }
    }
    .context(|| format!("{}: launch", args.what))?;
    Ok(())
}

/// The grid schedule's memsets and launches: a count and a threshold a level (the first
/// level's count alone when k = 0), then the collect and the select. With one level the
/// collect reads the rows; with several, the second level's count collects list A, later
/// levels count over it, and the collect keeps list B from it (topk.cu).
fn launch_grid<T: TopkElement>(
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    grid: &mut GridSchedule,
    input: &CudaSlice<T>,
    args: &LaunchArgs,
    last: LastLaunch<'_, T>,
    flags: &mut CudaSlice<u64>,
) -> GpuResult<()> {
    let step = |name: &str| format!("{}: {name}", args.what);
    stream.memset_zeros(&mut grid.hist).context(|| step("zeroing the row histograms"))?;
    for level in 0..grid.levels.len() {
        launch_level_count(stream, grid, input, args, level, flags)?;
        if args.k == 0 {
            return Ok(());
        }
        launch_threshold(stream, grid, args, level)?;
    }
    let spread = grid.spread(args.rows);
    let GridSchedule { collect, select, chunk, state, counts, candidates, lists, .. } = grid;
    let (counts, candidates) = match lists.as_mut() {
        None => {
            let mut launch = stream.launch_builder(collect);
            launch.arg(input).arg(&args.cols).arg(&*chunk).arg(&args.options).arg(&*state).arg(&mut *counts);
            launch.arg(&mut *candidates);
            // SAFETY: topk_grid_collect_<dtype>(const Bits* in, u64 cols, u64 chunk, u32
            // options, const GridRowState* state, u32* count, u64* candidates): the same
            // blocks as the histogram; a row's candidates are at most its cols, and
            // candidates holds rows x cols.
            unsafe { launch.launch(spread) }.context(|| step("collect launch"))?;
            (&*counts, &*candidates)
        }
        Some(lists) => {
            let mut launch = stream.launch_builder(&lists.list_collect);
            launch.arg(&*candidates).arg(&lists.segment_counts).arg(&args.cols).arg(&*chunk).arg(&*state);
            launch.arg(&mut lists.counts).arg(&mut lists.candidates);
            // SAFETY: topk_grid_list_collect(const u64* list_a, const u32* segment_counts, u64
            // cols, u64 chunk, const GridRowState* state, u32* count_b, u64* list_b): block
            // (x, y) reads the segment_counts[y * chunks + x] <= chunk ranks of its segment
            // (row y's columns from x * chunk) of list A and appends to row y's list B (at
            // most cols); both lists hold rows x cols, count_b zeroed by the thresholds.
            unsafe { launch.launch(spread) }.context(|| step("list collect launch"))?;
            (&lists.counts, &lists.candidates)
        }
    };
    launch_select(stream, select, input, args, counts, candidates, last, flags).context(|| step("select launch"))
}

impl GridSchedule {
    /// The grid of the launches that read the rows or the lists: (chunks, rows).
    fn spread(&self, rows: usize) -> LaunchConfig {
        LaunchConfig {
            grid_dim: (self.chunks, rows as u32, 1),
            block_dim: (TOPK.block_threads, 1, 1),
            shared_mem_bytes: 0,
        }
    }
}

/// A level's count into its histogram: the rows at the first level, the rows while list A
/// is collected at the second (several levels), list A after that.
fn launch_level_count<T: TopkElement>(
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    grid: &mut GridSchedule,
    input: &CudaSlice<T>,
    args: &LaunchArgs,
    level: usize,
    flags: &mut CudaSlice<u64>,
) -> GpuResult<()> {
    let spread = grid.spread(args.rows);
    let (shift, bits) = grid.levels[level];
    let words = args.rows * GRID_BINS;
    let GridSchedule { histogram, chunk, hist, state, candidates, lists, .. } = grid;
    let mut level_hist = hist.slice_mut(level * words..(level + 1) * words);
    let what = format!("{}: count launch, level {level}", args.what);
    match (level, lists.as_mut()) {
        (0, _) | (_, None) => {
            let mut launch = stream.launch_builder(histogram);
            launch.arg(input).arg(&args.cols).arg(&*chunk).arg(&args.options).arg(&shift).arg(&bits);
            launch.arg(&mut level_hist).arg(&*state).arg(flags);
            // SAFETY: topk_grid_histogram_<dtype>(const Bits* in, u64 cols, u64 chunk, u32
            // options, u32 shift, u32 bits, u32* hist, const GridRowState* state, u64*
            // nan_index): block (x, y) reads row y's columns [x * chunk, (x + 1) * chunk) of
            // cols, chunks * chunk >= cols; the level's hist holds rows x GRID_BINS, zeroed by
            // the caller; state (rows x 4 words) is read only after the first level (shift +
            // bits = the key's width), whose threshold launch wrote it.
            unsafe { launch.launch(spread) }
        }
        (1, Some(lists)) => {
            let mut launch = stream.launch_builder(&lists.collect_histogram);
            launch.arg(input).arg(&args.cols).arg(&*chunk).arg(&args.options).arg(&shift).arg(&bits);
            launch.arg(&mut level_hist).arg(&*state).arg(&mut lists.segment_counts).arg(&mut *candidates);
            // SAFETY: topk_grid_collect_histogram_<dtype>(const Bits* in, u64 cols, u64 chunk,
            // u32 options, u32 shift, u32 bits, u32* hist, const GridRowState* state, u32*
            // segment_counts, u64* list_a): the blocks of the histogram above; the first
            // level's threshold wrote state; block (x, y) keeps at most its chunk columns in
            // row y's list A from column x * chunk (list A holds rows x cols) and writes
            // segment_counts[y * chunks + x] (rows x chunks).
            unsafe { launch.launch(spread) }
        }
        (_, Some(lists)) => {
            let mut launch = stream.launch_builder(&lists.list_histogram);
            launch.arg(&*candidates).arg(&lists.segment_counts).arg(&args.cols).arg(&*chunk);
            launch.arg(&shift).arg(&bits).arg(&mut level_hist).arg(&*state);
            // SAFETY: topk_grid_list_histogram_<dtype>(const u64* list_a, const u32*
            // segment_counts, u64 cols, u64 chunk, u32 shift, u32 bits, u32* hist, const
            // GridRowState* state): block (x, y) reads the segment_counts[y * chunks + x] <=
            // chunk ranks of its segment of list A (filled at the second level) and counts
            // into the level's rows x GRID_BINS.
            unsafe { launch.launch(spread) }
        }
    }
    .context(|| what)?;
    Ok(())
}

/// A level's threshold launch: a warp per row; it zeroes the count of the list the last
/// collect appends to (the candidates with one level, list B with several).
fn launch_threshold(
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    grid: &mut GridSchedule,
    args: &LaunchArgs,
    level: usize,
) -> GpuResult<()> {
    let (shift, _) = grid.levels[level];
    let words = args.rows * GRID_BINS;
    let (first, last) = (u32::from(level == 0), u32::from(level + 1 == grid.levels.len()));
    let GridSchedule { threshold, hist, state, counts, lists, .. } = grid;
    let level_hist = hist.slice(level * words..(level + 1) * words);
    let count = match lists.as_mut() {
        Some(lists) => &mut lists.counts,
        None => counts,
    };
    let mut launch = stream.launch_builder(threshold);
    launch.arg(&level_hist).arg(&args.k).arg(&shift).arg(&first).arg(&last);
    launch.arg(&mut *state).arg(count);
    // SAFETY: topk_grid_threshold(const u32* hist, u32 k, u32 shift, u32 first, u32 last,
    // GridRowState* state, u32* count): a warp per row reads its GRID_BINS bins of the
    // level and its state (written by the level before; the first level reads none) and
    // writes its state and count (rows each).
    unsafe { launch.launch(config(args.rows as u32, 32, 0)) }
        .context(|| format!("{}: threshold launch, level {level}", args.what))?;
    Ok(())
}

/// The last launch: the select (or the sampler) of each row over its `counts` candidate
/// ranks in `candidates`.
#[allow(clippy::too_many_arguments)]
fn launch_select<T: TopkElement>(
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    select: &CudaFunction,
    input: &CudaSlice<T>,
    args: &LaunchArgs,
    counts: &CudaSlice<u32>,
    candidates: &CudaSlice<u64>,
    last: LastLaunch<'_, T>,
    flags: &mut CudaSlice<u64>,
) -> Result<(), cudarc::driver::DriverError> {
    let rows = args.rows;
    let mut launch = stream.launch_builder(select);
    launch.arg(input).arg(&args.cols).arg(&args.k).arg(counts).arg(candidates);
    match last {
        LastLaunch::Select { values, indices } => {
            launch.arg(values).arg(indices);
            // SAFETY: topk_grid_select_<dtype>(const Bits* in, u64 cols, u32 k, const u32*
            // count, const u64* candidates, Bits* values, i64* indices): a block per row reads
            // its count and candidates (at least k of them: the prefix's bin holds the k-th
            // key) and writes its k outputs; 1 <= k <= min(cols, max_k).
            unsafe { launch.launch(config(rows as u32, TOPK.block_threads, 0)) }
        }
        LastLaunch::Sample { temperature, uniforms, samples, probabilities } => {
            launch.arg(&temperature).arg(uniforms).arg(samples).arg(probabilities).arg(flags);
            // SAFETY: topk_grid_sample_<dtype>(..., const u64* candidates, float temperature,
            // const float* uniforms, i64* samples, float* probabilities, u64* flags): as the
            // select above, then the row's uniform read and its sample and probability
            // written (rows each, checked by the caller); flags holds FLAG_WORDS words.
            unsafe { launch.launch(config(rows as u32, TOPK.block_threads, 0)) }
        }
    }
    .map(|_| ())
}

/// A top-k sampler of `rows x cols` logits of type `T` (module doc), every launch parameter
/// computed: a [`TopkPlan`] whose last launch draws instead of writing the top k.
pub struct TopkSamplePlan<'g, T: TopkElement> {
    plan: TopkPlan<'g, T>,
    temperature: f32,
}

impl<'g, T: TopkElement> TopkSamplePlan<'g, T> {
    /// Plans a sampler (else [`GpuError::InvalidInput`]: `k = 0`, a temperature that is not
    /// finite and above 0, or what [`TopkPlan::new`] refuses).
    pub fn new(gpu: &'g Gpu, variant: TopkVariant, rows: usize, cols: usize, spec: SampleSpec) -> GpuResult<Self> {
        let invalid = |reason: String| GpuError::InvalidInput {
            primitive: "topk_sample",
            variant: variant.name(),
            n: rows.saturating_mul(cols),
            reason: format!("{}, {rows} x {cols}: {reason}", T::DTYPE),
        };
        if spec.k == 0 {
            return Err(invalid("k = 0: there is nothing to draw from".into()));
        }
        if !(spec.temperature.is_finite() && spec.temperature > 0.0) {
            return Err(invalid(format!("temperature {} is not finite and above 0", spec.temperature)));
        }
        let select = TopkSpec { k: spec.k, largest: true, nan: TopkNan::Reject };
        let plan = TopkPlan::planned(gpu, variant, (rows, cols), select, Epilogue::Sample)?;
        Ok(TopkSamplePlan { plan, temperature: spec.temperature })
    }

    /// What one enqueue puts on the stream ([`TopkPlan::describe`]).
    pub fn describe(&self) -> PlanDescription {
        self.plan.describe()
    }

    /// Enqueues the draws: `input` holds `rows * cols` logits; `uniforms`, `samples` and
    /// `probabilities` hold `rows` each.
    pub fn enqueue(
        &mut self,
        input: &CudaSlice<T>,
        uniforms: &CudaSlice<f32>,
        samples: &mut CudaSlice<i64>,
        probabilities: &mut CudaSlice<f32>,
    ) -> GpuResult<()> {
        let rows = self.plan.rows;
        let lengths = [(uniforms.len(), rows), (samples.len(), rows), (probabilities.len(), rows)];
        self.plan.check_lengths(input, &lengths, || {
            format!("uniforms {}, samples {}, probabilities {}", uniforms.len(), samples.len(), probabilities.len())
        })?;
        let temperature = self.temperature;
        self.plan.launch(input, LastLaunch::Sample { temperature, uniforms, samples, probabilities })
    }

    /// Synchronises and checks the last run ([`TopkPlan::finish`]).
    pub fn finish(&self) -> GpuResult<()> {
        self.plan.finish()
    }
}

impl Gpu {
    /// The top-k of each row of the row-major `[rows, cols]` `input` (module contract):
    /// `(values, indices)`, `rows * k` each. Errors: a buffer that is not `rows * cols`
    /// long, or what [`TopkPlan::new`] refuses, is [`GpuError::InvalidInput`]; a NaN under
    /// [`TopkNan::Reject`] is [`GpuError::NonFinite`].
    pub fn topk<T: TopkElement>(
        &self,
        variant: TopkVariant,
        input: &[T],
        (rows, cols): (usize, usize),
        spec: TopkSpec,
    ) -> GpuResult<(Vec<T>, Vec<i64>)> {
        check_input_length("topk", variant, input.len(), (rows, cols))?;
        let mut plan = TopkPlan::<T>::new(self, variant, rows, cols, spec)?;
        let outputs = rows * spec.k;
        // Poisoned 1-element placeholders where a buffer would be empty (never read or written).
        let device_input = if input.is_empty() { self.alloc_poisoned::<T>(1)? } else { self.upload(input)? };
        let mut values = self.alloc_poisoned::<T>(outputs.max(1))?;
        let mut indices = self.alloc_poisoned::<i64>(outputs.max(1))?;
        plan.enqueue(&device_input, &mut values, &mut indices)?;
        plan.finish()?;
        if outputs == 0 {
            return Ok((Vec::new(), Vec::new()));
        }
        Ok((self.download(&values)?, self.download(&indices)?))
    }

    /// One draw per row of the row-major `[rows, cols]` logits `input` from its top k (module
    /// doc): `(columns, probabilities)`, `rows` each. `uniforms` holds one number in `[0, 1)`
    /// per row (the kernel checks each). Errors: a buffer of the wrong length, or what
    /// [`TopkSamplePlan::new`] refuses, is [`GpuError::InvalidInput`], as is a row with no
    /// finite logit or a bad uniform; a NaN or `+inf` is [`GpuError::NonFinite`].
    pub fn topk_sample<T: TopkElement>(
        &self,
        variant: TopkVariant,
        input: &[T],
        (rows, cols): (usize, usize),
        spec: SampleSpec,
        uniforms: &[f32],
    ) -> GpuResult<(Vec<i64>, Vec<f32>)> {
        check_input_length("topk_sample", variant, input.len(), (rows, cols))?;
        if uniforms.len() != rows {
            return Err(GpuError::InvalidInput {
                primitive: "topk_sample",
                variant: variant.name(),
                n: input.len(),
                reason: format!("{} uniforms for {rows} rows", uniforms.len()),
            });
        }
        let mut plan = TopkSamplePlan::<T>::new(self, variant, rows, cols, spec)?;
        if rows * cols == 0 {
            return Ok((Vec::new(), Vec::new()));
        }
        let device_input = self.upload(input)?;
        let device_uniforms = self.upload(uniforms)?;
        let mut samples = self.alloc_poisoned::<i64>(rows)?;
        let mut probabilities = self.alloc_poisoned::<f32>(rows)?;
        plan.enqueue(&device_input, &device_uniforms, &mut samples, &mut probabilities)?;
        plan.finish()?;
        Ok((self.download(&samples)?, self.download(&probabilities)?))
    }
}

/// [`GpuError::InvalidInput`] unless `len` is `rows * cols`.
fn check_input_length(
    primitive: &'static str,
    variant: TopkVariant,
    len: usize,
    (rows, cols): (usize, usize),
) -> GpuResult<()> {
    if rows.checked_mul(cols) == Some(len) {
        return Ok(());
    }
    Err(GpuError::InvalidInput {
        primitive,
        variant: variant.name(),
        n: len,
        reason: format!("{len} elements for {rows} x {cols}"),
    })
}

#[cfg(test)]
#[path = "topk_tests.rs"]
mod tests;

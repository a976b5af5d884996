//! Row softmax (`softmax.cu`): `[rows, cols]` row-major logits, `f32` or bf16
//! in, the same dtype out, all math in `f32`; `1 <= cols <= 131,072`.
//!
//! Contract, for every variant:
//! * `p_i = exp(x_i - m) / sum_j exp(x_j - m)` with `m` the row maximum.
//! * A **masked** logit is `-inf` and gets probability exactly 0.
//! * **NaN or +inf** input → [`GpuError::NonFinite`] naming the first
//!   offending flat index `row * cols + col` (detected in the kernel). It
//!   takes precedence over all-masked rows.
//! * A row whose logits are **all** `-inf` → [`GpuError::AllMasked`] listing
//!   every such row (ascending). The kernel writes such a row as `0.0` and
//!   writes no NaN anywhere (NaN can only appear in rows holding NaN/+inf
//!   input, which are an error anyway).
//! * bf16 is [`half::bf16`] on the host and in device buffers (a 16-bit
//!   pattern either way). Outputs are rounded to nearest even.
//! * 16-byte loads/stores when `cols % 4 == 0` (f32) or `cols % 8 == 0`
//!   (bf16) and the buffers are 16-byte aligned (every allocation is);
//!   scalar accesses otherwise.
//! * Accuracy: see [`softmax_tolerance`] for the declared per-element bound
//!   and its derivation, and [`SoftmaxTolerance::row_sum`] for `|sum - 1|`.

use crate::arg_reduce::ROWS_PER_WARP_BLOCK;
use crate::device::Gpu;
use crate::error::{DriverContext, GpuError, GpuResult};
use crate::kernel_family::KernelFamily;
use crate::launch::{config, persistent_grid};
use crate::plan_description::PlanDescription;
use crate::policy::SOFTMAX;
use cudarc::driver::sys::CUfunction_attribute;
use cudarc::driver::{CudaFunction, CudaSlice, DeviceRepr, PushKernelArg};

/// The longest row any variant accepts.
pub const MAX_SOFTMAX_COLS: usize = 131_072;
/// The most logits (`rows * cols`) a plan takes: 2^40 (4 TB of f32, past
/// any device's memory). The kernels index rows and logits in u64, so the
/// limit is a sanity bound, not a width.
pub const MAX_LEN: usize = 1 << 40;
/// `kSoftmaxBlockThreads` on the device ([`SOFTMAX`]): threads per block of
/// [`SoftmaxVariant::ThreePass`] and [`SoftmaxVariant::OnlineBlock`].
pub const SOFTMAX_BLOCK_THREADS: u32 = SOFTMAX.block_threads;
/// Threads per block of [`SoftmaxVariant::OnlineWarp`] (`kBlockThreads`).
const WARP_VARIANT_BLOCK_THREADS: u32 = crate::launch::BLOCK_THREADS;
/// The block shapes of [`SoftmaxVariant::RowInRegisters`], `(name, threads,
/// floats per thread)` ([`SOFTMAX`]`.register_shapes`), smallest first. A row
/// of `cols` uses the first shape with `threads * items >= cols`.
pub const ROW_IN_REGISTERS_SHAPES: [(&str, u32, u32); 3] = {
    let [s, m, l] = SOFTMAX.register_shapes;
    [(s.name, s.threads, s.items), (m.name, m.threads, m.items), (l.name, l.threads, l.items)]
};
/// The longest row [`SoftmaxVariant::RowInRegisters`] holds: the largest shape.
pub const MAX_ROW_IN_REGISTERS_COLS: usize =
    (SOFTMAX.register_shapes[2].threads * SOFTMAX.register_shapes[2].items) as usize;
/// Floats per lane of the [`SoftmaxVariant::RowInWarpRegisters`] kernels
/// (`softmax_row_in_warp_registers_<items>_<dtype>`), smallest first: a row
/// of `cols` uses the first with `32 * items >= cols`.
pub const ROW_IN_WARP_REGISTERS_ITEMS: [u32; 6] = [1, 2, 4, 8, 16, 32];
/// The longest row [`SoftmaxVariant::RowInWarpRegisters`] holds.
pub const MAX_ROW_IN_WARP_REGISTERS_COLS: usize = 32 * 32;
/// The longest row [`SoftmaxVariant::best_for`] gives to
/// [`SoftmaxVariant::RowInWarpRegisters`] rather than
/// [`SoftmaxVariant::OnlineWarp`]. H200, cold medians of one run (f32 / bf16,
/// µs, warp registers vs online warp): [65536, 33] 20.5 / 21.6 vs 39.9 /
/// 40.0; [65536, 64] 20.8 / 22.6 vs 43.9 / 61.8; [32768, 128] 19.0 / 19.9 vs
/// 25.7 / 34.1; [16384, 256] 18.2 / 16.3 vs 20.0 / 20.7; but [8192, 512]
/// 22.3 / 19.6 vs 19.2 / 18.6 and [4096, 1024] 26.7 / 31.4 vs 19.4 / 17.2
/// (one warp's scalar loads of a long row keep too little in flight).
pub const WARP_REGISTERS_MAX_COLS: usize = 256;

/// Softmax schedules. Pick one per shape with [`SoftmaxVariant::best_for`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SoftmaxVariant {
    /// Baseline, block (256 threads) per row: a max pass, a sum-of-exp pass
    /// and a write pass, three reads of the row.
    ThreePass,
    /// Block (256 threads) per row: one online pass builds each thread's
    /// `(m, d)` (Milakov & Gimelshein), merged with `SoftmaxMerge` through
    /// `block_all_reduce`, then a write pass: two reads.
    OnlineBlock,
    /// A warp per row (8 rows per block), online `(m, d)` merged by
    /// `warp_reduce`, then a write pass: for short rows.
    OnlineWarp,
    /// Block per row with the row held in registers (up to 1024 threads x 32
    /// floats = 32,768 columns): one global read, max / sum / write from
    /// registers. On the 16-byte path each thread also `cp.async`-stages its
    /// share of the block's next row in shared memory while it computes the
    /// current one (one 1024-thread block per SM keeps the memory busy through
    /// its reductions). Longer rows are rejected with [`GpuError::InvalidInput`].
    RowInRegisters,
    /// A warp per row (8 rows per block) with the row held in registers (32
    /// lanes x up to 32 floats = 1024 columns): one global read, max / sum /
    /// write from registers, no online rescaling: for short rows. Longer
    /// rows are rejected with [`GpuError::InvalidInput`].
    RowInWarpRegisters,
}

impl SoftmaxVariant {
    /// Every variant.
    pub const ALL: [SoftmaxVariant; 5] = [
        SoftmaxVariant::ThreePass,
        SoftmaxVariant::OnlineBlock,
        SoftmaxVariant::OnlineWarp,
        SoftmaxVariant::RowInRegisters,
        SoftmaxVariant::RowInWarpRegisters,
    ];

    /// Snake-case name used in reports.
    pub fn name(&self) -> &'static str {
        match self {
            SoftmaxVariant::ThreePass => "three_pass",
            SoftmaxVariant::OnlineBlock => "online_block",
            SoftmaxVariant::OnlineWarp => "online_warp",
            SoftmaxVariant::RowInRegisters => "row_in_registers",
            SoftmaxVariant::RowInWarpRegisters => "row_in_warp_registers",
        }
    }

    /// The longest row this variant accepts.
    pub fn max_cols(&self) -> usize {
        match self {
            SoftmaxVariant::RowInRegisters => MAX_ROW_IN_REGISTERS_COLS,
            SoftmaxVariant::RowInWarpRegisters => MAX_ROW_IN_WARP_REGISTERS_COLS,
            _ => MAX_SOFTMAX_COLS,
        }
    }

    /// The variant to use for rows of `cols` logits: a warp per row with
    /// the row in registers up to [`WARP_REGISTERS_MAX_COLS`] columns, the
    /// online warp per row up to 1024, the row in a block's registers up to
    /// 32,768, else the online block-per-row kernel. (`dtype` is part of the
    /// signature so the policy can depend on it; today both dtypes share it.)
    pub fn best_for(cols: usize, dtype: SoftmaxDtype) -> SoftmaxVariant {
        let _ = dtype;
        if cols <= WARP_REGISTERS_MAX_COLS {
            SoftmaxVariant::RowInWarpRegisters
        } else if cols <= 1024 {
            SoftmaxVariant::OnlineWarp
        } else if cols <= MAX_ROW_IN_REGISTERS_COLS {
            SoftmaxVariant::RowInRegisters
        } else {
            SoftmaxVariant::OnlineBlock
        }
    }
}

/// The element type of a softmax.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SoftmaxDtype {
    /// IEEE binary32.
    F32,
    /// bfloat16 ([`half::bf16`], raw 16-bit patterns on the device).
    Bf16,
}

impl SoftmaxDtype {
    /// `"f32"` or `"bf16"` (the kernel-name suffix).
    pub fn name(&self) -> &'static str {
        match self {
            SoftmaxDtype::F32 => "f32",
            SoftmaxDtype::Bf16 => "bf16",
        }
    }

    /// Elements per 16-byte access.
    pub fn vector_width(&self) -> usize {
        match self {
            SoftmaxDtype::F32 => 4,
            SoftmaxDtype::Bf16 => 8,
        }
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for half::bf16 {}
}

/// Device element types of a softmax: `f32` and [`half::bf16`] (16-bit
/// patterns on the device).
pub trait SoftmaxElement: DeviceRepr + Copy + sealed::Sealed + 'static {
    /// The dtype these elements encode.
    const DTYPE: SoftmaxDtype;
}

impl SoftmaxElement for f32 {
    const DTYPE: SoftmaxDtype = SoftmaxDtype::F32;
}

impl SoftmaxElement for half::bf16 {
    const DTYPE: SoftmaxDtype = SoftmaxDtype::Bf16;
}

/// Floats per lane of the RowInWarpRegisters kernel that holds a row of
/// `cols`, or `None` when the row is too long.
pub fn row_in_warp_registers_items(cols: usize) -> Option<u32> {
    ROW_IN_WARP_REGISTERS_ITEMS.into_iter().find(|&items| 32 * items as usize >= cols)
}

/// Rows one RowInWarpRegisters warp holds at once with `items` floats per
/// lane (`warp_register_rows` in `softmax.cu`: 8 loads per lane in flight
/// for the shortest rows). Only the grid size depends on it: the kernel
/// loops over rows whatever the grid.
fn row_in_warp_registers_rows(items: u32) -> u64 {
    if items >= 8 {
        1
    } else {
        u64::from(8 / items)
    }
}

/// The RowInRegisters shape (name, threads, floats per thread) that holds a
/// row of `cols`, or `None` when the row is too long.
pub fn row_in_registers_shape(cols: usize) -> Option<(&'static str, u32, u32)> {
    ROW_IN_REGISTERS_SHAPES.into_iter().find(|&(_, threads, items)| (threads as usize) * (items as usize) >= cols)
}

/// A softmax of `rows` rows of `cols` logits, ready to enqueue: the control
/// word and the per-row masked flags are allocated by [`SoftmaxPlan::new`].
///
/// [`SoftmaxPlan::enqueue`] puts on the stream exactly: one 8-byte `0xFF`
/// memset of the nonfinite index word, then one kernel
/// `softmax_<variant>[_<shape>]_<f32|bf16>` (block-per-row variants: 256
/// threads, RowInRegisters 256/512/1024 by shape, on `min(rows, SMs x
/// resident blocks)` blocks looping over rows; OnlineWarp: `min(ceil(rows /
/// 8), SMs x resident blocks)` blocks of 8 warps, a warp looping over rows;
/// RowInWarpRegisters the same with up to 8 rows per warp at a time).
/// RowInRegisters on the 16-byte path
/// takes `threads x items x sizeof(elem)` bytes of dynamic shared memory (up
/// to 128 KiB) to stage the next row. The kernel writes every output element
/// and every masked flag. No allocation, host copy or synchronisation.
pub struct SoftmaxPlan<'g, T: SoftmaxElement> {
    gpu: &'g Gpu,
    variant: SoftmaxVariant,
    rows: usize,
    cols: usize,
    kernel_name: String,
    kernel: CudaFunction,
    block: u32,
    grid: u32,
    shared: u32,
    first_nonfinite: CudaSlice<u64>,
    masked_rows: CudaSlice<u8>,
    _element: std::marker::PhantomData<T>,
}

impl<'g, T: SoftmaxElement> SoftmaxPlan<'g, T> {
    /// Plans `rows >= 1` rows of `1 <= cols <= variant.max_cols()` logits
    /// (else [`GpuError::InvalidInput`]).
    pub fn new(gpu: &'g Gpu, variant: SoftmaxVariant, rows: usize, cols: usize) -> GpuResult<Self> {
        let n = rows.saturating_mul(cols);
        let invalid =
            |reason: String| GpuError::InvalidInput { primitive: "softmax", variant: variant.name(), n, reason };
        if rows == 0 || cols == 0 {
            return Err(invalid(format!("{rows} rows x {cols} cols: a row needs at least one logit")));
        }
        if cols > variant.max_cols() {
            return Err(invalid(format!("{cols} columns: this variant holds at most {}", variant.max_cols())));
        }
        if rows.checked_mul(cols).is_none_or(|n| n > MAX_LEN) {
            return Err(invalid(format!("{rows} x {cols} logits: at most {MAX_LEN} (2^40) a plan")));
        }
        let dtype = T::DTYPE.name();
        let (kernel_name, block) = match variant {
            SoftmaxVariant::ThreePass => (format!("softmax_three_pass_{dtype}"), SOFTMAX_BLOCK_THREADS),
            SoftmaxVariant::OnlineBlock => (format!("softmax_online_block_{dtype}"), SOFTMAX_BLOCK_THREADS),
            SoftmaxVariant::OnlineWarp => (format!("softmax_online_warp_{dtype}"), WARP_VARIANT_BLOCK_THREADS),
            SoftmaxVariant::RowInRegisters => {
                let (shape, threads, _) = row_in_registers_shape(cols).ok_or_else(|| {
                    invalid(format!(
                        "{cols} columns: the row must fit in registers, at most {MAX_ROW_IN_REGISTERS_COLS}"
                    ))
                })?;
                (format!("softmax_row_in_registers_{shape}_{dtype}"), threads)
            }
            SoftmaxVariant::RowInWarpRegisters => {
                let items = row_in_warp_registers_items(cols).ok_or_else(|| {
                    invalid(format!(
                        "{cols} columns: the row must fit in a warp's registers, at most {MAX_ROW_IN_WARP_REGISTERS_COLS}"
                    ))
                })?;
                (format!("softmax_row_in_warp_registers_{items}_{dtype}"), WARP_VARIANT_BLOCK_THREADS)
            }
        };
        let kernel = gpu.function(KernelFamily::Softmax, &kernel_name)?;
        // RowInRegisters stages the next row in dynamic shared memory on the
        // 16-byte path: threads x items elements.
        let shared = match variant {
            SoftmaxVariant::RowInRegisters if cols % T::DTYPE.vector_width() == 0 => {
                let (_, threads, items) = row_in_registers_shape(cols).unwrap_or(ROW_IN_REGISTERS_SHAPES[2]);
                let bytes = threads as usize * items as usize * std::mem::size_of::<T>();
                kernel
                    .set_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes as i32)
                    .context(|| format!("{kernel_name}: allowing {bytes} bytes of dynamic shared memory"))?;
                bytes as u32
            }
            _ => 0,
        };
        // Every schedule loops over rows: at most one resident wave of blocks.
        let resident = persistent_grid(gpu, KernelFamily::Softmax, &kernel_name, block, shared as usize)? as u64;
        let grid = match variant {
            SoftmaxVariant::OnlineWarp => (rows as u64).div_ceil(ROWS_PER_WARP_BLOCK as u64).min(resident) as u32,
            SoftmaxVariant::RowInWarpRegisters => {
                let per_warp = row_in_warp_registers_rows(row_in_warp_registers_items(cols).unwrap_or(32));
                (rows as u64).div_ceil(ROWS_PER_WARP_BLOCK as u64 * per_warp).min(resident) as u32
            }
            _ => (rows as u64).min(resident) as u32,
        };
        let first_nonfinite = gpu.alloc_uninit::<u64>(1)?;
        // Written for every row by every launch (initcheck proves it).
        let masked_rows = gpu.alloc_uninit::<u8>(rows)?;
        Ok(SoftmaxPlan {
            gpu,
            variant,
            rows,
            cols,
            kernel_name,
            kernel,
            block,
            grid,
            shared,
            first_nonfinite,
            masked_rows,
            _element: std::marker::PhantomData,
        })
    }

    /// The kernel this plan launches (for receipts).
    pub fn kernel_name(&self) -> &str {
        &self.kernel_name
    }

    /// `(grid, block)` of the launch.
    pub fn geometry(&self) -> (u32, u32) {
        (self.grid, self.block)
    }

    /// What one enqueue puts on the stream. DRAM estimate: the rows read
    /// once per pass of the variant (three-pass 3, online 2, in registers
    /// 1), the output written, one masked flag per row.
    pub fn describe(&self) -> PlanDescription {
        let reads = match self.variant {
            SoftmaxVariant::ThreePass => 3,
            SoftmaxVariant::OnlineBlock | SoftmaxVariant::OnlineWarp => 2,
            SoftmaxVariant::RowInRegisters | SoftmaxVariant::RowInWarpRegisters => 1,
        };
        let bytes = (self.rows * self.cols * std::mem::size_of::<T>()) as u64;
        PlanDescription::new("SoftmaxPlan")
            .memset("nonfinite index word", 8)
            .launch(self.kernel_name.clone(), self.grid, self.block, self.shared)
            .moves((reads + 1) * bytes + self.rows as u64)
    }

    /// Enqueues the memset and the kernel: `input` and `output` hold
    /// `rows * cols` elements each.
    pub fn enqueue(&mut self, input: &CudaSlice<T>, output: &mut CudaSlice<T>) -> GpuResult<()> {
        let n = self.rows * self.cols;
        let variant = self.variant.name();
        if input.len() != n || output.len() != n {
            return Err(GpuError::InvalidInput {
                primitive: "softmax",
                variant,
                n,
                reason: format!(
                    "planned for {} x {}: input holds {}, output {}",
                    self.rows,
                    self.cols,
                    input.len(),
                    output.len()
                ),
            });
        }
        self.gpu.memset_bytes(&mut self.first_nonfinite, 0xFF)?;
        let rows = self.rows as u64;
        let cols = self.cols as u32;
        let mut launch = self.gpu.stream().launch_builder(&self.kernel);
        launch.arg(input).arg(output).arg(&rows).arg(&cols).arg(&mut self.first_nonfinite).arg(&mut self.masked_rows);
        // SAFETY: matches softmax_*(const Elem*, Elem*, u64, u32, u64*, u8*);
        // input/output hold rows * cols elements, masked_rows `rows` bytes.
        unsafe { launch.launch(config(self.grid, self.block, self.shared)) }
            .context(|| format!("softmax/{variant} rows={} cols={}: launch", self.rows, self.cols))?;
        Ok(())
    }

    /// Synchronises and checks the last run: [`GpuError::NonFinite`] (first
    /// flat index) takes precedence over [`GpuError::AllMasked`] (every
    /// all-masked row, ascending).
    pub fn finish(&self) -> GpuResult<()> {
        let variant = self.variant.name();
        let first = self.gpu.download(&self.first_nonfinite)?.first().copied().unwrap_or(u64::MAX);
        if first != u64::MAX {
            return Err(GpuError::NonFinite {
                primitive: "softmax",
                variant,
                n: self.rows * self.cols,
                index: first as usize,
            });
        }
        let flags = self.gpu.download(&self.masked_rows)?;
        let masked_rows: Vec<usize> = flags.iter().enumerate().filter(|(_, &f)| f != 0).map(|(r, _)| r).collect();
        if !masked_rows.is_empty() {
            return Err(GpuError::AllMasked { variant, rows: self.rows, cols: self.cols, masked_rows });
        }
        Ok(())
    }
}

impl Gpu {
    /// Row softmax of the row-major `[rows, cols]` f32 matrix `data` (see the
    /// module contract). `rows == 0` gives an empty vector. Errors:
    /// `data.len() != rows * cols`, `cols == 0 < rows`, `cols` above the
    /// variant's limit → [`GpuError::InvalidInput`]; NaN/+inf →
    /// [`GpuError::NonFinite`]; all-masked rows → [`GpuError::AllMasked`].
    pub fn softmax_f32(&self, variant: SoftmaxVariant, data: &[f32], rows: usize, cols: usize) -> GpuResult<Vec<f32>> {
        self.softmax(variant, data, rows, cols)
    }

    /// Row softmax of bf16 logits, bf16 probabilities (f32 math, outputs
    /// rounded to nearest even); contract as [`Gpu::softmax_f32`].
    pub fn softmax_bf16(
        &self,
        variant: SoftmaxVariant,
        data: &[half::bf16],
        rows: usize,
        cols: usize,
    ) -> GpuResult<Vec<half::bf16>> {
        self.softmax(variant, data, rows, cols)
    }

    /// The softmax behind `softmax_f32` / `softmax_bf16`, generic over the
    /// element: shape checks, plan, upload, poisoned output, enqueue, finish,
    /// download.
    pub fn softmax<T: SoftmaxElement>(
        &self,
        variant: SoftmaxVariant,
        data: &[T],
        rows: usize,
        cols: usize,
    ) -> GpuResult<Vec<T>> {
        if rows.checked_mul(cols) != Some(data.len()) {
            return Err(GpuError::InvalidInput {
                primitive: "softmax",
                variant: variant.name(),
                n: data.len(),
                reason: format!("{} logits for {rows} rows x {cols} cols", data.len()),
            });
        }
        if rows == 0 {
            return Ok(Vec::new());
        }
        let mut plan = SoftmaxPlan::<T>::new(self, variant, rows, cols)?;
        let input = self.upload(data)?;
        let mut output = self.alloc_poisoned::<T>(data.len())?;
        plan.enqueue(&input, &mut output)?;
        plan.finish()?;
        self.download(&output)
    }
}

#[path = "softmax_tolerance.rs"]
mod tolerance;
pub use tolerance::{softmax_error_bound_ulps, softmax_tolerance, SoftmaxTolerance};
#[cfg(test)]
use tolerance::{U_BF16, U_F32};

#[cfg(test)]
#[path = "softmax_tests.rs"]
mod tests;

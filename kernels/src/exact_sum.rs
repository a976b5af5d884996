//! Correctly rounded float sums (`exact_sum.cu`): the exact sum of `f32` or
//! bf16 inputs, rounded once to nearest-even `f32`.
//!
//! # Contract
//!
//! * The result is the exact real sum of the inputs rounded to nearest,
//!   ties to even, in `f32` (subnormals included). It is a function of the
//!   input multiset only: bitwise identical for every grid, block count,
//!   run and GPU, because every addition is an integer addition.
//! * An empty input sums to `+0.0` without a launch; an exact zero sum is
//!   `+0.0` (also when every input is `-0.0`).
//! * An exact sum whose rounding overflows (`|S| >= f32::MAX + ulp/2`) is
//!   `±inf`; partial sums never overflow (up to 2^40 inputs of any value).
//! * Non-finite inputs follow IEEE addition: any NaN, or `+inf` and `-inf`
//!   together, give NaN (always the canonical quiet NaN `0x7fc0_0000`);
//!   otherwise an infinity present is the result.
//! * Errors: more than [`EXACT_MAX_INPUTS`] inputs or a forced grid of 0 or
//!   more than [`EXACT_MAX_BLOCKS`] blocks are [`GpuError::InvalidInput`];
//!   driver failures are [`GpuError::Driver`].
//!
//! # The algorithm
//!
//! A finite `f32` is the integer `±m << e` in units of 2^-150 (`m < 2^24`,
//! `1 <= e <= 254`). Each warp keeps a register window of 32 exponents
//! `base ..= base + 31`: an input inside it adds `m << (e - base)` to two
//! `u64` register sums (all, and the negative ones). Every other input
//! (outside the window, subnormal, inf, NaN) adds `±m << (e & 31)` into bin
//! `e >> 5` of the thread's own column of eight shared-memory `i64` bins.
//! The window moves to the largest exponent seen when inputs fall outside
//! it, and a warp whose inputs keep falling outside adds straight to the
//! bins for a while. The window is flushed into the bins, and the bins
//! normalised (carry propagation, words in `[0, 2^32)`, one signed carry
//! word on top), every 256 inputs; a block adds its threads' nine words into
//! one record; the last block to finish its record adds all the records,
//! normalises and rounds once. Integer addition is associative, so none of
//! these choices changes the value, only how it is spelled on the way. The
//! bounds that keep every word inside `i64` are proved in the header of
//! `kernels/cuda/exact_sum.cu`; `model::exact::binned` replays the same
//! schedule on the CPU and is tested against the rug reference.
//!
//! [`ExactSumPlan::enqueue`] puts on the stream exactly one launch of
//! `exact_sum_<t>` on `G` blocks of 256 threads (`G` from [`ExactSumGrid`],
//! at most the number of 4096-input tiles unless forced). No memset; one
//! atomic arrival count per block, which the last block resets to zero.

use crate::device::Gpu;
use crate::error::{DriverContext, GpuError, GpuResult};
use crate::float_reduce::FloatElement;
use crate::kernel_family::KernelFamily;
use crate::launch::{config, resident_blocks_per_sm, BLOCK_THREADS};
use crate::plan_description::PlanDescription;
use cudarc::driver::{CudaFunction, CudaSlice, PushKernelArg};

/// `kExactTileItems` on the device: inputs per block per step.
pub const EXACT_TILE_ITEMS: usize = (BLOCK_THREADS * crate::policy::EXACT_SUM.items_per_thread) as usize;
/// `kExactMaxBlocks` on the device: the most blocks of one launch.
pub const EXACT_MAX_BLOCKS: u32 = crate::policy::EXACT_SUM.max_blocks;
/// The most inputs the superaccumulator is sized for (2^40).
pub const EXACT_MAX_INPUTS: u64 = 1 << 40;
/// `kExactRecordWords` in `exact_sum.cu`: i64 words per block record.
pub const EXACT_RECORD_WORDS: usize = 10;

/// Correctly rounded sum schedules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ExactSumVariant {
    /// Exponent-binned integer limbs, one record per block, one rounding.
    CorrectlyRounded,
}

impl ExactSumVariant {
    /// Every variant.
    pub const ALL: [ExactSumVariant; 1] = [ExactSumVariant::CorrectlyRounded];

    /// Snake-case name used in reports.
    pub fn name(&self) -> &'static str {
        match self {
            ExactSumVariant::CorrectlyRounded => "correctly_rounded",
        }
    }
}

/// The grid of a correctly rounded sum. The result does not
/// depend on it; forcing it is how the harness checks that.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ExactSumGrid {
    /// SMs x resident blocks per SM of the kernel, at most one
    /// block per 4096-input tile.
    #[default]
    Auto,
    /// SMs x this many blocks (not capped by the tile count).
    BlocksPerSm(u32),
    /// Exactly this many blocks (blocks past the last tile add nothing).
    Blocks(u32),
}

/// A correctly rounded sum of `n` inputs, ready to enqueue;
/// [`ExactSumPlan::new`] allocates the block records (written in full by the
/// first kernel) and the poisoned one-float result.
pub struct ExactSumPlan<'g, T: FloatElement> {
    gpu: &'g Gpu,
    variant: ExactSumVariant,
    n: usize,
    grid: u32,
    kernel: CudaFunction,
    records: CudaSlice<i64>,
    arrivals: CudaSlice<u32>,
    result: CudaSlice<f32>,
    _element: std::marker::PhantomData<T>,
}

fn tiles_of(n: usize) -> usize {
    n.div_ceil(EXACT_TILE_ITEMS).max(1)
}

impl<'g, T: FloatElement> ExactSumPlan<'g, T> {
    /// Plans a sum of `1 <= n <= 2^40` inputs on the grid `grid` (else
    /// [`GpuError::InvalidInput`]).
    pub fn new(gpu: &'g Gpu, variant: ExactSumVariant, n: usize, grid: ExactSumGrid) -> GpuResult<Self> {
        let invalid =
            |reason: String| GpuError::InvalidInput { primitive: "exact_sum", variant: variant.name(), n, reason };
        if n == 0 {
            return Err(invalid("nothing to plan for an empty input (its sum is +0)".into()));
        }
        if n as u64 > EXACT_MAX_INPUTS {
            return Err(invalid(format!(
                "more than 2^40 inputs: the superaccumulator is sized for {EXACT_MAX_INPUTS}"
            )));
        }
        let kernel = gpu.function(KernelFamily::ExactSum, &format!("exact_sum_{}", T::TYPE_NAME))?;
        let sms = gpu.info().sm_count.max(1) as u64;
        let blocks: u64 = match grid {
            ExactSumGrid::Auto => {
                let per_sm = resident_blocks_per_sm(&kernel, BLOCK_THREADS, 0)? as u64;
                (sms * per_sm).min(tiles_of(n) as u64).min(EXACT_MAX_BLOCKS as u64)
            }
            ExactSumGrid::BlocksPerSm(per_sm) => sms * per_sm as u64,
            ExactSumGrid::Blocks(blocks) => blocks as u64,
        };
        if blocks == 0 || blocks > EXACT_MAX_BLOCKS as u64 {
            return Err(invalid(format!("grid {grid:?} gives {blocks} blocks; 1..={EXACT_MAX_BLOCKS} are allowed")));
        }
        let grid = blocks as u32;
        let records = gpu.alloc_uninit::<i64>(grid as usize * EXACT_RECORD_WORDS)?;
        // Zero once here; every launch leaves it zero again.
        let arrivals = gpu.alloc_zeroed::<u32>(1)?;
        let result = gpu.alloc_poisoned::<f32>(1)?;
        Ok(ExactSumPlan {
            gpu,
            variant,
            n,
            grid,
            kernel,
            records,
            arrivals,
            result,
            _element: std::marker::PhantomData,
        })
    }

    /// Blocks of the launch.
    pub fn grid(&self) -> u32 {
        self.grid
    }

    /// What one [`ExactSumPlan::enqueue`] puts on the stream: one launch, no
    /// memset, one atomic arrival per block. DRAM estimate: the input once,
    /// the block records written and read back.
    pub fn describe(&self) -> PlanDescription {
        let records = 8 * EXACT_RECORD_WORDS as u64 * self.grid as u64;
        PlanDescription::new("ExactSumPlan")
            .launch(format!("exact_sum_{}", T::TYPE_NAME), self.grid, BLOCK_THREADS, 0)
            .moves((std::mem::size_of::<T>() * self.n) as u64 + 2 * records)
    }

    /// The device result (one f32), valid after the enqueued work completes.
    pub fn result(&self) -> &CudaSlice<f32> {
        &self.result
    }

    /// Refills the result with the poison byte ([`Gpu::poison_byte`], stream-ordered), so
    /// that a later read proves the next run wrote it.
    pub fn poison_result(&mut self) -> GpuResult<()> {
        self.gpu.poison(&mut self.result)
    }

    /// Enqueues the kernel over `input` (`n` elements).
    pub fn enqueue(&mut self, input: &CudaSlice<T>) -> GpuResult<()> {
        let (n, variant, grid) = (self.n, self.variant.name(), self.grid);
        if input.len() != n {
            return Err(GpuError::InvalidInput {
                primitive: "exact_sum",
                variant,
                n,
                reason: format!("planned for {n} elements, input holds {}", input.len()),
            });
        }
        let stream = self.gpu.stream();
        let n64 = n as u64;
        let mut launch = stream.launch_builder(&self.kernel);
        launch.arg(input).arg(&n64).arg(&mut self.records).arg(&mut self.arrivals).arg(&mut self.result);
        // SAFETY: matches exact_sum_<t>(const T*, u64, i64*, u32*, float*);
        // records holds grid * EXACT_RECORD_WORDS i64, arrivals one u32 that
        // is zero (allocated so, and every launch leaves it so).
        unsafe { launch.launch(config(grid, BLOCK_THREADS, 0)) }
            .context(|| format!("exact_sum/{variant} n={n}: launch on {grid} blocks"))?;
        Ok(())
    }

    /// Synchronises and returns the sum of the last enqueued run.
    pub fn finish(&self) -> GpuResult<f32> {
        self.gpu.download(&self.result)?.first().copied().ok_or_else(|| GpuError::KernelFault {
            primitive: "exact_sum",
            variant: self.variant.name(),
            n: self.n,
            reason: "result buffer is empty".into(),
        })
    }
}

impl Gpu {
    /// The correctly rounded sum of `data` (module documentation: contract).
    pub fn exact_sum_f32(&self, data: &[f32]) -> GpuResult<f32> {
        self.exact_sum(ExactSumVariant::CorrectlyRounded, ExactSumGrid::Auto, data)
    }

    /// The correctly rounded f32 sum of bf16 `data`; contract as [`Gpu::exact_sum_f32`].
    pub fn exact_sum_bf16(&self, data: &[half::bf16]) -> GpuResult<f32> {
        self.exact_sum(ExactSumVariant::CorrectlyRounded, ExactSumGrid::Auto, data)
    }

    /// The sum behind `exact_sum_f32` / `exact_sum_bf16` on a chosen grid: plan, upload, enqueue, finish. An empty input
    /// is `+0.0` without a launch.
    pub fn exact_sum<T: FloatElement>(
        &self,
        variant: ExactSumVariant,
        grid: ExactSumGrid,
        data: &[T],
    ) -> GpuResult<f32> {
        if data.is_empty() {
            return Ok(0.0);
        }
        let mut plan = ExactSumPlan::<T>::new(self, variant, data.len(), grid)?;
        let input = self.upload(data)?;
        plan.enqueue(&input)?;
        plan.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel counts tiles in 32 bits (`u32((n + tile - 1) / tile)` in
    /// `exact_sum.cu`) and items in 64: up to the superaccumulator's 2^40
    /// inputs the tile count fits, past 2^32 items included.
    #[test]
    fn tile_count_fits_32_bits_up_to_the_largest_input() {
        for n in [(1u64 << 32) + 333, (1 << 33) + 555, EXACT_MAX_INPUTS] {
            let tiles = n.div_ceil(EXACT_TILE_ITEMS as u64);
            assert!(tiles <= u32::MAX as u64, "n={n}: {tiles} tiles");
            assert_eq!(tiles_of(n as usize) as u64, tiles);
        }
    }

    #[test]
    fn variant_name_is_snake_case() {
        assert_eq!(ExactSumVariant::CorrectlyRounded.name(), "correctly_rounded");
    }
}

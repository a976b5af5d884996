//! Float sums (`float_reduce.cu`): `f32` or bf16 input, `f32` accumulation
//! and result, five schedules from the bitwise-reproducible fixed tree to one
//! atomic per element (the two ends of the atomic crossover study: one atomic
//! per element against one per block or none).
//!
//! # The tree, exactly
//!
//! A **tile** is 4096 consecutive inputs, reduced by one 256-thread block:
//! 1. Thread `t` of the block that reduces tile `b` (base `4096 b`) holds 16
//!    items: f32 input: item `4j + k` is element `base + 4(256 j + t) + k`
//!    (`j, k < 4`; four 16-byte loads); bf16 input: item `8j + k` is element
//!    `base + 8(256 j + t) + k` (`j < 2, k < 8`; two 16-byte loads);
//!    Compensated later passes: item `j` is partial `base + 256 j + t`.
//!    Items past `n` are the identity `+0`.
//! 2. The 16 items are summed as a fixed pairwise tree
//!    `((i0+i1)+(i2+i3))+((i4+i5)+(i6+i7))+...`: **4** levels.
//! 3. `warp_reduce` over the 32 lanes (shuffle offsets 1, 2, 4, 8, 16, lower
//!    lane on the left): **5** levels.
//! 4. Warp 0 folds the 8 warp partials with a second `warp_reduce`: levels 1,
//!    2, 4 combine partials (**3** = log2 8 levels); levels 8 and 16 add the
//!    identity `+0`, which is exact and costs no rounding.
//!
//! So one tile pass puts every input through at most **12** rounded additions.
//!
//! | variant | schedule | depth `D(n)` ([`FloatReduceVariant::tree_depth`]) |
//! | --- | --- | --- |
//! | `FixedTree` | tile passes over the input, then over the f32 partials, until one block remains (`ceil(n / 4096)`, then `/ 4096` again, ...) | `12 P`, `P` = number of passes (`P = 3` at `n = 2^28`) |
//! | `Compensated` | the same tree with the Neumaier pair `(s, c)` (`CompensatedSumF32`); later passes read pairs; the answer is `fl(s + c)` | `12 P` (of the `s` tree) |
//! | `TwoPass` | `G = min(tiles, 1024)` blocks, block `b` adds its tiles `b, b+G, ...` sequentially per thread (`acc = ((0 + tile) + tile) + ...`), then one tile pass over the `G` partials | `T + 24`, `T = ceil(tiles / G)` |
//! | `AtomicPerBlock` | one tile pass per tile, each block `atomicAdd`s its total into the zeroed result | `12 + tiles` (order free at the top) |
//! | `AtomicPerElement` | every element is one `atomicAdd` into the zeroed result | `n` (order free) |
//!
//! `FixedTree`, `Compensated` and `TwoPass` use no atomics and grids that
//! depend on `n` only, so their results are bitwise identical over repeated
//! runs on the same GPU and build. The atomic variants are not
//! ([`FloatReduceVariant::is_order_free`]): they are bounded by the
//! order-free bound `(n - 1) u / (1 + u) sum|x|` (Jeannerod & Rump 2018).
//!
//! Accuracy: `|computed - exact| <= gamma_D sum|x|`, `gamma_k = k u / (1 - k u)`,
//! `u = 2^-24` (bf16 inputs are exact in f32). Compensated:
//! `u |S| + 2 gamma_{2D} gamma_D sum|x|` (derivation at
//! [`FloatReduceVariant::error_bound`]). NaN and infinities propagate as IEEE
//! arithmetic says; the bounds assume finite inputs and no overflow.

use crate::device::Gpu;
use crate::error::{DriverContext, GpuError, GpuResult};
use crate::kernel_family::KernelFamily;
use crate::launch::{config, BLOCK_THREADS};
use crate::plan_description::PlanDescription;
use crate::policy::FLOAT_REDUCE;
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, DeviceRepr, PushKernelArg};

/// `kFloatTileItems` on the device: inputs per tile (block pass).
pub const FLOAT_TILE_ITEMS: usize = (BLOCK_THREADS * FLOAT_REDUCE.items_per_thread) as usize;
/// The largest n every variant takes: one first-pass block per tile for the
/// fixed tree, the compensated tree and the atomic-per-block sum, and a grid
/// holds at most `i32::MAX` blocks. Items, tiles and offsets are 64-bit on the
/// device (`float_reduce.cu`), so this is the only size limit; device memory
/// is the real one.
pub const MAX_LEN: usize = i32::MAX as usize * FLOAT_TILE_ITEMS;
/// `kFloatTwoPassMaxBlocks` on the device: most first-pass blocks.
pub const FLOAT_TWO_PASS_MAX_BLOCKS: usize = FLOAT_REDUCE.two_pass_max_blocks as usize;
/// Rounded additions per tile pass (4 pairwise + 5 shuffle + 3 block levels).
pub const TILE_PASS_DEPTH: u32 = 12;
/// Grid of [`FloatReduceVariant::AtomicPerElement`]: at most this many blocks.
const ATOMIC_PER_ELEMENT_MAX_BLOCKS: usize = 1024;
/// Unit roundoff of f32.
const U_F32: f64 = 1.0 / 16_777_216.0;

/// Float sum schedules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FloatReduceVariant {
    /// Multi-pass fixed tree, no atomics, grid = f(n): bitwise reproducible.
    FixedTree,
    /// The fixed tree with Neumaier-compensated pairs (`CompensatedSumF32`).
    Compensated,
    /// One `atomicAdd` per input element into one float.
    AtomicPerElement,
    /// One tile pass per block, then one `atomicAdd` per block.
    AtomicPerBlock,
    /// At most 1024 blocks of partials, then a second one-block kernel.
    TwoPass,
}

fn gamma(k: f64) -> f64 {
    let ku = k * U_F32;
    if ku >= 1.0 {
        f64::INFINITY
    } else {
        ku / (1.0 - ku)
    }
}

fn tiles_of(n: usize) -> usize {
    n.div_ceil(FLOAT_TILE_ITEMS).max(1)
}

/// Grids of the successive tile passes of the fixed tree: `ceil(n / 4096)`,
/// then `ceil(previous / 4096)`, ..., ending with 1.
fn tree_grids(n: usize) -> Vec<usize> {
    let mut grids = vec![tiles_of(n)];
    while *grids.last().unwrap_or(&1) > 1 {
        let last = grids[grids.len() - 1];
        grids.push(tiles_of(last));
    }
    grids
}

fn two_pass_grid(n: usize) -> usize {
    tiles_of(n).min(FLOAT_TWO_PASS_MAX_BLOCKS)
}

impl FloatReduceVariant {
    /// Every variant.
    pub const ALL: [FloatReduceVariant; 5] = [
        FloatReduceVariant::FixedTree,
        FloatReduceVariant::Compensated,
        FloatReduceVariant::AtomicPerElement,
        FloatReduceVariant::AtomicPerBlock,
        FloatReduceVariant::TwoPass,
    ];

    /// Snake-case name used in reports.
    pub fn name(&self) -> &'static str {
        match self {
            FloatReduceVariant::FixedTree => "fixed_tree",
            FloatReduceVariant::Compensated => "compensated",
            FloatReduceVariant::AtomicPerElement => "atomic_per_element",
            FloatReduceVariant::AtomicPerBlock => "atomic_per_block",
            FloatReduceVariant::TwoPass => "two_pass",
        }
    }

    /// `D`: the most rounded additions any input passes through for `n`
    /// inputs (see the module table; the atomic chains count their initial
    /// `0.0`). Saturates at `u32::MAX`.
    pub fn tree_depth(&self, n: usize) -> u32 {
        let depth: u64 = match self {
            FloatReduceVariant::FixedTree | FloatReduceVariant::Compensated => {
                TILE_PASS_DEPTH as u64 * tree_grids(n).len() as u64
            }
            FloatReduceVariant::TwoPass => {
                let per_thread = tiles_of(n).div_ceil(two_pass_grid(n)) as u64;
                per_thread + 5 + 3 + 4 + TILE_PASS_DEPTH as u64
            }
            FloatReduceVariant::AtomicPerBlock => TILE_PASS_DEPTH as u64 + tiles_of(n) as u64,
            FloatReduceVariant::AtomicPerElement => n as u64,
        };
        depth.min(u32::MAX as u64) as u32
    }

    /// Whether the combining order depends on scheduling (atomics): such
    /// results vary between runs, and the order-free bound applies.
    pub fn is_order_free(&self) -> bool {
        matches!(self, FloatReduceVariant::AtomicPerElement | FloatReduceVariant::AtomicPerBlock)
    }

    /// Whether repeated runs on the same GPU and build give identical bits.
    pub fn is_deterministic(&self) -> bool {
        !self.is_order_free()
    }

    /// The declared bound on `|computed - exact|` for `n` inputs with
    /// `sum_abs = sum|x|` and `exact_abs = |sum x|`, in f64 (rounded up by a
    /// relative 1e-9; the harness may recompute it exactly from
    /// [`FloatReduceVariant::tree_depth`]):
    /// * fixed-order trees: `gamma_D sum|x|`;
    /// * atomic variants: `min(gamma_D, (n - 1) u / (1 + u)) sum|x|`;
    /// * Compensated: `u |S| + 2 gamma_{2D} gamma_D sum|x|`. Derivation: the
    ///   `s` values form the plain tree, and each node's Fast2Sum error `e`
    ///   (exact: `|a.s| >= |b.s|` is tested) satisfies `|e| <= u |t|`, so
    ///   `S = s_root + sum e` exactly and `sum|e| <= D u (1 + gamma_D) sum|x|
    ///   <= 2 gamma_D sum|x|`; the `c` values sum the `e`s through at most
    ///   `2D` rounded additions (two per level), so `|c - sum e| <= gamma_{2D}
    ///   sum|e|`; the final `fl(s + c)` adds `u |s + c|`, and
    ///   `|s + c| <= |S| + |c - sum e|`.
    pub fn error_bound(&self, n: usize, sum_abs: f64, exact_abs: f64) -> f64 {
        let d = self.tree_depth(n) as f64;
        let bound = match self {
            FloatReduceVariant::Compensated => {
                let tail = 2.0 * gamma(2.0 * d) * gamma(d) * sum_abs;
                U_F32 * (exact_abs + tail) + tail
            }
            FloatReduceVariant::AtomicPerElement | FloatReduceVariant::AtomicPerBlock => {
                let order_free = if n <= 1 { 0.0 } else { (n - 1) as f64 * U_F32 / (1.0 + U_F32) };
                gamma(d).min(order_free) * sum_abs
            }
            FloatReduceVariant::FixedTree | FloatReduceVariant::TwoPass => gamma(d) * sum_abs,
        };
        bound * (1.0 + 1e-9)
    }
}

/// The Neumaier pair `(s, c)` of `CompensatedSumF32` (`CompensatedF32Value`
/// in `cuda/common/operators.cuh`): value `s + c`. 8 bytes, 4-byte aligned.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CompensatedPair {
    /// The plain rounded sum.
    pub s: f32,
    /// The accumulated rounding errors.
    pub c: f32,
}

// SAFETY: #[repr(C)] of two f32, as the CUDA struct; (0, 0) is the identity.
device_pod!(CompensatedPair);

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for half::bf16 {}
}

/// Input element types: `f32` and [`half::bf16`].
pub trait FloatElement: DeviceRepr + Copy + sealed::Sealed + 'static {
    /// The kernel-name suffix: `"f32"` or `"bf16"`.
    const TYPE_NAME: &'static str;
}

impl FloatElement for f32 {
    const TYPE_NAME: &'static str = "f32";
}

impl FloatElement for half::bf16 {
    const TYPE_NAME: &'static str = "bf16";
}

/// Partial buffers of the schedule.
enum Scratch {
    /// FixedTree / TwoPass: f32 partials of each pass after the first kernel.
    Tree(Vec<CudaSlice<f32>>),
    /// Compensated: pair partials of each pass.
    Pairs(Vec<CudaSlice<CompensatedPair>>),
    /// Atomic variants: none.
    None,
}

/// A float sum of `n` inputs, ready to enqueue; [`FloatReducePlan::new`]
/// allocates every partial buffer and the (poisoned) one-float result.
///
/// [`FloatReducePlan::enqueue`] puts on the stream exactly:
/// * `FixedTree`: `float_reduce_tile_<t>` on `ceil(n / 4096)` blocks, then
///   `float_reduce_tile_f32` on each later grid of the tree down to 1 block;
/// * `Compensated`: the same with `float_reduce_compensated_tile_<t>` and
///   `float_reduce_compensated_tile_pairs`;
/// * `TwoPass`: `float_reduce_two_pass_partials_<t>` on `min(tiles, 1024)`
///   blocks, then `float_reduce_tile_f32` on one block;
/// * `AtomicPerBlock`: a 4-byte zero memset of the result, then
///   `float_reduce_atomic_per_block_<t>` on `tiles` blocks;
/// * `AtomicPerElement`: a 4-byte zero memset of the result, then
///   `float_reduce_atomic_per_element_<t>` on `min(tiles, 1024)` blocks.
///
/// All blocks have 256 threads. No allocation, host copy or synchronisation.
pub struct FloatReducePlan<'g, T: FloatElement> {
    gpu: &'g Gpu,
    variant: FloatReduceVariant,
    n: usize,
    grids: Vec<u32>,
    first: CudaFunction,
    later: Option<CudaFunction>,
    scratch: Scratch,
    result: CudaSlice<f32>,
    _element: std::marker::PhantomData<T>,
}

/// The kernel over the input and the one over later levels (none for the
/// atomic variants) of `variant` on elements named `t`.
fn kernel_names(variant: FloatReduceVariant, t: &str) -> (String, Option<&'static str>) {
    match variant {
        FloatReduceVariant::FixedTree => (format!("float_reduce_tile_{t}"), Some("float_reduce_tile_f32")),
        FloatReduceVariant::Compensated => {
            (format!("float_reduce_compensated_tile_{t}"), Some("float_reduce_compensated_tile_pairs"))
        }
        FloatReduceVariant::TwoPass => (format!("float_reduce_two_pass_partials_{t}"), Some("float_reduce_tile_f32")),
        FloatReduceVariant::AtomicPerBlock => (format!("float_reduce_atomic_per_block_{t}"), None),
        FloatReduceVariant::AtomicPerElement => (format!("float_reduce_atomic_per_element_{t}"), None),
    }
}

/// Passes 1.. of a tree schedule: pass p launches `later` on `grids[p]`
/// blocks over the `grids[p - 1]` partials of `levels[p - 1]` into
/// `levels[p]`; the one-block last pass also writes `result`. Both later
/// kernels take `(const P* in, u64 count, P* out, float* result)`:
/// `float_reduce_tile_f32` (P = float) and
/// `float_reduce_compensated_tile_pairs` (P = [`CompensatedPair`]).
fn later_passes<P: DeviceRepr>(
    stream: &CudaStream,
    later: Option<&CudaFunction>,
    levels: &mut [CudaSlice<P>],
    grids: &[u32],
    result: &mut CudaSlice<f32>,
    variant: &'static str,
    n: usize,
) -> GpuResult<()> {
    if grids.len() < 2 {
        return Ok(());
    }
    let Some(later) = later else {
        return Err(GpuError::InvalidInput {
            primitive: "float_reduce",
            variant,
            n,
            reason: "a tree schedule without its later-pass kernel".into(),
        });
    };
    for pass in 1..grids.len() {
        let (done, rest) = levels.split_at_mut(pass);
        let count = grids[pass - 1] as u64;
        let mut launch = stream.launch_builder(later);
        launch.arg(&done[pass - 1]).arg(&count).arg(&mut rest[0]).arg(&mut *result);
        // SAFETY: matches (const P*, u64, P*, float*) above; the input level
        // holds `count` partials, the output level grids[pass].
        unsafe { launch.launch(config(grids[pass], BLOCK_THREADS, 0)) }
            .context(|| format!("float_reduce/{variant} n={n}: pass {pass} launch"))?;
    }
    Ok(())
}

impl<'g, T: FloatElement> FloatReducePlan<'g, T> {
    /// Plans a sum of `n >= 1` inputs (else [`GpuError::InvalidInput`]).
    pub fn new(gpu: &'g Gpu, variant: FloatReduceVariant, n: usize) -> GpuResult<Self> {
        if n == 0 {
            return Err(GpuError::InvalidInput {
                primitive: "float_reduce",
                variant: variant.name(),
                n,
                reason: "nothing to plan for an empty input (its sum is 0)".into(),
            });
        }
        let function = |name: &str| gpu.function(KernelFamily::FloatReduce, name);
        let (first_name, later_name) = kernel_names(variant, T::TYPE_NAME);
        let first = function(&first_name)?;
        let later = later_name.map(function).transpose()?;
        let (grids, scratch) = match variant {
            FloatReduceVariant::FixedTree => {
                let grids = tree_grids(n);
                let levels = grids.iter().map(|&g| gpu.alloc_uninit::<f32>(g)).collect::<GpuResult<Vec<_>>>()?;
                (grids, Scratch::Tree(levels))
            }
            FloatReduceVariant::Compensated => {
                let grids = tree_grids(n);
                let levels =
                    grids.iter().map(|&g| gpu.alloc_uninit::<CompensatedPair>(g)).collect::<GpuResult<Vec<_>>>()?;
                (grids, Scratch::Pairs(levels))
            }
            FloatReduceVariant::TwoPass => {
                let grids = vec![two_pass_grid(n), 1];
                let levels = grids.iter().map(|&g| gpu.alloc_uninit::<f32>(g)).collect::<GpuResult<Vec<_>>>()?;
                (grids, Scratch::Tree(levels))
            }
            FloatReduceVariant::AtomicPerBlock => (vec![tiles_of(n)], Scratch::None),
            FloatReduceVariant::AtomicPerElement => {
                (vec![tiles_of(n).min(ATOMIC_PER_ELEMENT_MAX_BLOCKS)], Scratch::None)
            }
        };
        if grids.iter().any(|&g| g > i32::MAX as usize) {
            return Err(GpuError::InvalidInput {
                primitive: "float_reduce",
                variant: variant.name(),
                n,
                reason: "more tiles than a grid holds".into(),
            });
        }
        let grids = grids.into_iter().map(|g| g as u32).collect();
        let result = gpu.alloc_poisoned::<f32>(1)?;
        Ok(FloatReducePlan {
            gpu,
            variant,
            n,
            grids,
            first,
            later,
            scratch,
            result,
            _element: std::marker::PhantomData,
        })
    }

    /// Grids of the kernels `enqueue` launches, in order.
    pub fn grids(&self) -> &[u32] {
        &self.grids
    }

    /// The device result (one f32), valid after the enqueued work completes.
    pub fn result(&self) -> &CudaSlice<f32> {
        &self.result
    }

    /// Enqueues the schedule over `input` (`n` elements).
    pub fn enqueue(&mut self, input: &CudaSlice<T>) -> GpuResult<()> {
        let n = self.n;
        let variant = self.variant.name();
        GpuError::check_planned_len("float_reduce", variant, n, input.len())?;
        let stream = self.gpu.stream();
        let context = |pass: usize| move || format!("float_reduce/{variant} n={n}: pass {pass} launch");
        let n64 = n as u64;
        match &mut self.scratch {
            Scratch::Tree(levels) => {
                let mut launch = stream.launch_builder(&self.first);
                launch.arg(input).arg(&n64).arg(&mut levels[0]);
                if self.variant == FloatReduceVariant::FixedTree {
                    launch.arg(&mut self.result);
                }
                // SAFETY: matches float_reduce_tile_<t>(const T*, u64, float*, float*) or
                // float_reduce_two_pass_partials_<t>(const T*, u64, float*); levels[0]
                // holds grids[0] floats.
                unsafe { launch.launch(config(self.grids[0], BLOCK_THREADS, 0)) }.context(context(0))?;
                later_passes(stream, self.later.as_ref(), levels, &self.grids, &mut self.result, variant, n)?;
            }
            Scratch::Pairs(levels) => {
                let mut launch = stream.launch_builder(&self.first);
                launch.arg(input).arg(&n64).arg(&mut levels[0]).arg(&mut self.result);
                // SAFETY: matches float_reduce_compensated_tile_<t>(const T*, u64, Pair*, float*).
                unsafe { launch.launch(config(self.grids[0], BLOCK_THREADS, 0)) }.context(context(0))?;
                later_passes(stream, self.later.as_ref(), levels, &self.grids, &mut self.result, variant, n)?;
            }
            Scratch::None => {
                self.gpu.memset_bytes(&mut self.result, 0)?;
                let mut launch = stream.launch_builder(&self.first);
                launch.arg(input).arg(&n64).arg(&mut self.result);
                // SAFETY: matches float_reduce_atomic_per_{block,element}_<t>(const T*, u64, float*).
                unsafe { launch.launch(config(self.grids[0], BLOCK_THREADS, 0)) }.context(context(0))?;
            }
        }
        Ok(())
    }

    /// What one [`FloatReducePlan::enqueue`] puts on the stream: the first
    /// kernel over `grids[0]` blocks, the later one per further grid, or a
    /// memset of the result before an atomic kernel. DRAM estimate: the input
    /// once, each level's partials written and read (16 B per block), and
    /// 8 B per first-pass block.
    pub fn describe(&self) -> PlanDescription {
        let (first, later) = kernel_names(self.variant, T::TYPE_NAME);
        let element = std::mem::size_of::<T>() as u64;
        let partials: u64 = self.grids.iter().skip(1).map(|&g| 16 * g as u64).sum();
        let d = PlanDescription::new("FloatReducePlan")
            .moves(element * self.n as u64 + partials + 8 * self.grids[0] as u64);
        let d = if later.is_none() { d.memset("result", 4) } else { d };
        let d = d.launch(first, self.grids[0], BLOCK_THREADS, 0);
        match later {
            Some(later) => self.grids[1..].iter().fold(d, |d, &g| d.launch(later, g, BLOCK_THREADS, 0)),
            None => d,
        }
    }

    /// Synchronises and returns the sum of the last enqueued run.
    pub fn finish(&self) -> GpuResult<f32> {
        self.gpu.download(&self.result)?.first().copied().ok_or_else(|| GpuError::KernelFault {
            primitive: "float_reduce",
            variant: self.variant.name(),
            n: self.n,
            reason: "result buffer is empty".into(),
        })
    }
}

impl Gpu {
    /// Sum of `data` in f32 by `variant` (see the module documentation for
    /// the tree, its depth and the declared bound). An empty input sums to
    /// `0.0` without a launch.
    pub fn reduce_f32(&self, variant: FloatReduceVariant, data: &[f32]) -> GpuResult<f32> {
        self.reduce_float(variant, data)
    }

    /// Sum of bf16 `data` with f32 accumulation; contract as [`Gpu::reduce_f32`].
    pub fn reduce_bf16(&self, variant: FloatReduceVariant, data: &[half::bf16]) -> GpuResult<f32> {
        self.reduce_float(variant, data)
    }

    /// The sum behind `reduce_f32` / `reduce_bf16`, generic over the element:
    /// plan (poisoned result), upload, enqueue, finish.
    pub fn reduce_float<T: FloatElement>(&self, variant: FloatReduceVariant, data: &[T]) -> GpuResult<f32> {
        if data.is_empty() {
            return Ok(0.0);
        }
        let mut plan = FloatReducePlan::<T>::new(self, variant, data.len())?;
        let input = self.upload(data)?;
        plan.enqueue(&input)?;
        plan.finish()
    }
}

#[cfg(test)]
#[path = "float_reduce_tests.rs"]
mod tests;

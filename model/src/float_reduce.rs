//! The model of `float_reduce`: its deterministic sums (`kernels/cuda/float_reduce.cu`)
//! replayed pass by pass: `FixedTree`, `Compensated` and `TwoPass` over f32 or bf16 input (the atomic schedules have
//! no fixed order and are not modelled here). Every addition is one f32 round-to-nearest
//! operation in the GPU's order (the kernels use `__fadd_rn` / `__fsub_rn`, never contracted
//! into FMAs, and are compiled without `-ftz`, so subnormals are kept as Rust keeps them), so a
//! replay equals the GPU's result bit for bit; NaN payloads are the one thing not modelled.
//!
//! # Passes
//!
//! The launch geometry is a parameter ([`FloatLaunch`], one grid per kernel, in launch order;
//! [`FloatLaunch::of`] gives the grids the kernels' plan chooses, a function of `n` only):
//! * **FixedTree**: pass 0 is one [`tile_total`] per block over the input (f32:
//!   [`TileLayout::Vector4`], bf16: [`TileLayout::Vector8`], bf16 widened exactly to f32);
//!   pass `p > 0` reads the `grids[p-1]` f32 partials of the pass before with `Vector4`. The
//!   last grid is 1 and its block total is the answer.
//! * **Compensated**: the same passes with [`CompensatedSumF32`]; pass 0 lifts each input to
//!   `(x, +0)`, later passes read pairs with [`TileLayout::Strided`]; the answer is `fl(s + c)`.
//! * **TwoPass**: grid `G = grids[0]`; block `b`, thread `t`: `acc = +0`, then for each tile
//!   `b, b + G, b + 2G, ... < ceil(n / 4096)`: `acc = acc + thread_value(tile)`; the block
//!   total of the `acc`s is partial `b`. The second kernel (`grids[1] = 1`) is the FixedTree
//!   tile pass over the `G` f32 partials.

use crate::hardware::block_reduce::BLOCK_THREADS;
use crate::hardware::float_tile::{block_total, thread_value, tile_total, TileLayout, FLOAT_TILE_ITEMS};
use crate::operator::{CompensatedF32, CompensatedSumF32, Operator, SumF32};
use crate::ModelError;
use half::bf16;

/// Most first-pass blocks of `TwoPass` (`kFloatTwoPassMaxBlocks`).
pub const FLOAT_TWO_PASS_MAX_BLOCKS: usize = 1024;

/// A deterministic float-sum schedule (the kernels' `FloatReduceVariant`s without atomics).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FloatTreeSchedule {
    /// Tile passes until one block remains.
    FixedTree,
    /// The fixed tree with Neumaier pairs.
    Compensated,
    /// Grid-strided tiles per block, then one tile pass over the partials.
    TwoPass,
}

impl FloatTreeSchedule {
    /// Every modelled schedule.
    pub const ALL: [FloatTreeSchedule; 3] =
        [FloatTreeSchedule::FixedTree, FloatTreeSchedule::Compensated, FloatTreeSchedule::TwoPass];

    /// The kernels' variant name: `"fixed_tree"`, `"compensated"` or `"two_pass"`.
    pub fn name(self) -> &'static str {
        match self {
            FloatTreeSchedule::FixedTree => "fixed_tree",
            FloatTreeSchedule::Compensated => "compensated",
            FloatTreeSchedule::TwoPass => "two_pass",
        }
    }
}

/// A float input: f32, or bf16 (widened exactly to f32 by the kernels).
#[derive(Clone, Copy, Debug)]
pub enum FloatInput<'a> {
    /// f32 elements.
    F32(&'a [f32]),
    /// bf16 elements.
    Bf16(&'a [bf16]),
}

impl FloatInput<'_> {
    /// The number of elements.
    pub fn len(&self) -> usize {
        match self {
            FloatInput::F32(x) => x.len(),
            FloatInput::Bf16(x) => x.len(),
        }
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The first-pass layout of this element type.
    fn layout(&self) -> TileLayout {
        match self {
            FloatInput::F32(_) => TileLayout::Vector4,
            FloatInput::Bf16(_) => TileLayout::Vector8,
        }
    }

    /// The elements as f32 (bf16 -> f32 is exact: the 16 bits become the high half).
    fn widened(&self) -> Vec<f32> {
        match self {
            FloatInput::F32(x) => x.to_vec(),
            FloatInput::Bf16(x) => x.iter().map(|v| v.to_f32()).collect(),
        }
    }
}

/// The grids of the kernels of one run, in launch order (all blocks have 256 threads).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FloatLaunch {
    /// One grid (number of blocks) per kernel.
    pub grids: Vec<usize>,
}

fn tiles_of(n: usize) -> usize {
    n.div_ceil(FLOAT_TILE_ITEMS).max(1)
}

impl FloatLaunch {
    /// The geometry the kernels' plan chooses for `n >= 1` inputs: FixedTree and Compensated
    /// `[ceil(n / 4096), ceil(that / 4096), ..., 1]`; TwoPass `[min(ceil(n / 4096), 1024), 1]`.
    /// `n == 0` is `EmptyInput` (the plan refuses it too).
    pub fn of(schedule: FloatTreeSchedule, n: usize) -> Result<FloatLaunch, ModelError> {
        if n == 0 {
            return Err(ModelError::EmptyInput { primitive: "float_reduce" });
        }
        let grids = match schedule {
            FloatTreeSchedule::FixedTree | FloatTreeSchedule::Compensated => {
                let mut grids = vec![tiles_of(n)];
                while let Some(&last) = grids.last().filter(|&&g| g > 1) {
                    grids.push(tiles_of(last));
                }
                grids
            }
            FloatTreeSchedule::TwoPass => vec![tiles_of(n).min(FLOAT_TWO_PASS_MAX_BLOCKS), 1],
        };
        Ok(FloatLaunch { grids })
    }

    /// `InvalidWidth` unless every input element and partial is read by some block and the
    /// last kernel is one block (what the replay and the kernels both need).
    fn check(&self, schedule: FloatTreeSchedule, n: usize) -> Result<(), ModelError> {
        let bad = |width: usize, detail: String| {
            Err(ModelError::InvalidWidth {
                primitive: "float_reduce",
                width,
                detail: format!("{}: {detail}", schedule.name()),
            })
        };
        if self.grids.last() != Some(&1) {
            return bad(self.grids.len(), format!("grids {:?} must end with one block", self.grids));
        }
        let mut count = n;
        for (pass, &grid) in self.grids.iter().enumerate() {
            let strided = schedule == FloatTreeSchedule::TwoPass && pass == 0;
            if grid == 0 || (!strided && grid * FLOAT_TILE_ITEMS < count) {
                return bad(grid, format!("pass {pass} of {count} inputs cannot run on {grid} blocks"));
            }
            count = grid;
        }
        if schedule == FloatTreeSchedule::TwoPass && self.grids.len() != 2 {
            return bad(self.grids.len(), format!("grids {:?}: two kernels", self.grids));
        }
        Ok(())
    }
}

/// The block totals of one tile pass: block `b` reduces tile `b` of `count` inputs.
fn tile_pass<Op: Operator>(
    op: &Op,
    grid: usize,
    count: usize,
    layout: TileLayout,
    element: &impl Fn(usize) -> Op::Value,
) -> Result<Vec<Op::Value>, ModelError> {
    (0..grid).map(|b| tile_total(op, count, b, layout, element)).collect()
}

/// Later passes of the tree schedules over `partials` until the last grid; returns the
/// single remaining total.
fn later_passes<Op: Operator>(
    op: &Op,
    grids: &[usize],
    mut partials: Vec<Op::Value>,
    layout: TileLayout,
) -> Result<Op::Value, ModelError> {
    for &grid in grids {
        let previous = partials;
        partials = tile_pass(op, grid, previous.len(), layout, &|e| previous[e].clone())?;
    }
    partials.into_iter().next().ok_or(ModelError::EmptyInput { primitive: "float_reduce" })
}

/// TwoPass's first kernel: the `grid` partials (see the module docs).
fn two_pass_partials(x: &[f32], layout: TileLayout, grid: usize) -> Result<Vec<f32>, ModelError> {
    let op = SumF32;
    let n = x.len();
    let tiles = tiles_of(n);
    let element = |e: usize| x[e];
    (0..grid)
        .map(|b| {
            let threads = (0..BLOCK_THREADS)
                .map(|t| {
                    (b..tiles).step_by(grid).try_fold(op.identity(), |acc, tile| {
                        op.combine(&acc, &thread_value(&op, n, tile, t, layout, &element)?)
                    })
                })
                .collect::<Result<Vec<f32>, _>>()?;
            block_total(&op, &threads)
        })
        .collect()
}

/// The f32 sum `schedule` computes on the GPU for `input` under `launch`, bit for bit (see
/// the module docs). Errors: `EmptyInput` for no elements; `InvalidWidth` for a launch that
/// cannot cover the input (grids that do not end in one block, a pass whose blocks read fewer
/// inputs than it has, TwoPass with other than two kernels).
pub fn replay_float_sum(
    schedule: FloatTreeSchedule,
    input: FloatInput<'_>,
    launch: &FloatLaunch,
) -> Result<f32, ModelError> {
    let n = input.len();
    if n == 0 {
        return Err(ModelError::EmptyInput { primitive: "float_reduce" });
    }
    launch.check(schedule, n)?;
    let x = input.widened();
    let (first, later) = launch.grids.split_at(1);
    match schedule {
        FloatTreeSchedule::FixedTree => {
            let partials = tile_pass(&SumF32, first[0], n, input.layout(), &|e| x[e])?;
            later_passes(&SumF32, later, partials, TileLayout::Vector4)
        }
        FloatTreeSchedule::Compensated => {
            let op = CompensatedSumF32;
            let partials = tile_pass(&op, first[0], n, input.layout(), &|e| CompensatedF32::lift(x[e]))?;
            Ok(later_passes(&op, later, partials, TileLayout::Strided)?.finish())
        }
        FloatTreeSchedule::TwoPass => {
            let partials = two_pass_partials(&x, input.layout(), first[0])?;
            later_passes(&SumF32, later, partials, TileLayout::Vector4)
        }
    }
}

/// [`replay_float_sum`] with the kernels' own geometry [`FloatLaunch::of`].
pub fn replay_float_sum_planned(schedule: FloatTreeSchedule, input: FloatInput<'_>) -> Result<f32, ModelError> {
    replay_float_sum(schedule, input, &FloatLaunch::of(schedule, input.len())?)
}

#[cfg(test)]
#[path = "float_reduce_tests.rs"]
mod tests;

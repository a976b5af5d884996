//! Reduction schedules (warp, block, multi-pass) against `reduce`.

use super::compare::{ok, same};
use super::data::{wrong_data, Data};
use super::{Check, CheckOutcome, Mismatch};
use crate::hardware::block_reduce::{block_reduce, BlockLayout};
use crate::hardware::multipass_reduce::{multipass_reduce, passes_for};
use crate::hardware::warp::{lane_position, warp_reduce, Participation, WARP_SIZE};
use crate::operator::{Affine, ArgMax, MaxI64, MinI64, Operator, SumCount, SumI64};
use crate::reduce::reduce;

fn widen(x: &[i32]) -> Vec<i64> {
    x.iter().map(|&v| i64::from(v)).collect()
}

fn f32_pairs(x: &[i32]) -> Vec<(f32, u64)> {
    x.iter().enumerate().map(|(i, &v)| (v as f32, i as u64)).collect()
}

/// Compares `schedule(op, items)` with `reduce(op, items)`.
fn against_reduce<Op: Operator>(
    check: &Check,
    op: &Op,
    items: &[Op::Value],
    schedule: impl Fn(&Op, &[Op::Value]) -> Result<Op::Value, crate::ModelError>,
) -> Result<usize, Mismatch> {
    let expected = ok(check, &format!("reduce({})", op.name()), reduce(op, items))?;
    let got = ok(check, &format!("{} with {}", check.algorithm, op.name()), schedule(op, items))?;
    same(check, op.name(), &expected, &got)
}

fn warp_lanes<Op: Operator>(op: &Op, items: &[Op::Value], order_preserving: bool) -> Vec<Op::Value> {
    (0..WARP_SIZE)
        .map(|lane| {
            let slot = if order_preserving { lane_position(lane) } else { lane };
            items.get(slot).cloned().unwrap_or_else(|| op.identity())
        })
        .collect()
}

pub(super) fn warp(check: &Check, data: &Data) -> Result<CheckOutcome, Mismatch> {
    let n = match data {
        Data::Ints(x) => {
            let wide = widen(x);
            let mut n = 0;
            n += against_reduce(check, &SumI64, &wide, |op, v| {
                warp_reduce(op, &warp_lanes(op, v, false), Participation::ALL)
            })?;
            n += against_reduce(check, &MaxI64, &wide, |op, v| {
                warp_reduce(op, &warp_lanes(op, v, false), Participation::ALL)
            })?;
            n += against_reduce(check, &MinI64, &wide, |op, v| {
                warp_reduce(op, &warp_lanes(op, v, false), Participation::ALL)
            })?;
            let pairs = f32_pairs(x);
            let argmax = ArgMax::<f32>::new();
            n += against_reduce(check, &argmax, &pairs, |op, v| {
                warp_reduce(op, &warp_lanes(op, v, false), Participation::ALL)
            })?;
            n
        }
        Data::Affine(maps) => {
            against_reduce(check, &Affine, maps, |op, v| warp_reduce(op, &warp_lanes(op, v, true), Participation::ALL))?
        }
        _ => return Err(wrong_data(check)),
    };
    Ok(CheckOutcome { comparisons: n, note: "lane 0 of the shfl_down tree".into() })
}

pub(super) fn block(check: &Check, data: &Data, layout: BlockLayout) -> Result<CheckOutcome, Mismatch> {
    let n = match data {
        Data::Ints(x) => {
            let wide = widen(x);
            let counted: Vec<(i64, u64)> = wide.iter().map(|&v| (v, 1)).collect();
            let mut n = 0;
            n += against_reduce(check, &SumI64, &wide, |op, v| block_reduce(op, v, layout))?;
            n += against_reduce(check, &MaxI64, &wide, |op, v| block_reduce(op, v, layout))?;
            n += against_reduce(check, &MinI64, &wide, |op, v| block_reduce(op, v, layout))?;
            n += against_reduce(check, &SumCount, &counted, |op, v| block_reduce(op, v, layout))?;
            n += against_reduce(check, &ArgMax::<f32>::new(), &f32_pairs(x), |op, v| block_reduce(op, v, layout))?;
            n
        }
        Data::Affine(maps) => against_reduce(check, &Affine, maps, |op, v| block_reduce(op, v, layout))?,
        _ => return Err(wrong_data(check)),
    };
    Ok(CheckOutcome { comparisons: n, note: format!("{} layout", layout.name()) })
}

pub(super) fn multipass(check: &Check, data: &Data, layout: BlockLayout) -> Result<CheckOutcome, Mismatch> {
    let expected_passes = passes_for(check.size);
    let passes;
    let n = match data {
        Data::Ints(x) => {
            let wide = widen(x);
            let (sum, p) = ok(check, "multipass_reduce(SumI64)", multipass_reduce(&SumI64, &wide, layout))?;
            passes = p;
            let mut n = same(check, "sum", &ok(check, "reduce", reduce(&SumI64, &wide))?, &sum)?;
            let pairs = f32_pairs(x);
            let op = ArgMax::<f32>::new();
            let (arg, _) = ok(check, "multipass_reduce(ArgMax)", multipass_reduce(&op, &pairs, layout))?;
            n += same(check, "argmax", &ok(check, "reduce", reduce(&op, &pairs))?, &arg)?;
            n
        }
        Data::Affine(maps) => {
            let (value, p) = ok(check, "multipass_reduce(Affine)", multipass_reduce(&Affine, maps, layout))?;
            passes = p;
            same(check, "affine", &ok(check, "reduce", reduce(&Affine, maps))?, &value)?
        }
        _ => return Err(wrong_data(check)),
    };
    same(check, "passes", &expected_passes, &passes)?;
    Ok(CheckOutcome { comparisons: n + 1, note: format!("{} layout, {passes} passes", layout.name()) })
}

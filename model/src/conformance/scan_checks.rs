//! Scan schedules (Blelloch, Hillis–Steele, recursive device scan) against the direct scans.

use super::compare::{ok, same, same_slices};
use super::data::{wrong_data, Data};
use super::{Check, CheckOutcome, Mismatch};
use crate::hardware::blelloch::block_scan;
use crate::hardware::device_scan::{device_scan, levels, DeviceScanPlan, GPU_SCAN_WIDTH};
use crate::hardware::hillis_steele::{hillis_steele_additions, hillis_steele_scan};
use crate::operator::{Affine, Operator, SumI64};
use crate::reduce::reduce;
use crate::scan::{exclusive_scan, inclusive_scan};

fn widen(x: &[i32]) -> Vec<i64> {
    x.iter().map(|&v| i64::from(v)).collect()
}

fn blelloch_one<Op: Operator>(check: &Check, op: &Op, items: &[Op::Value]) -> Result<usize, Mismatch> {
    let (local, total) = ok(check, "block_scan", block_scan(op, items, GPU_SCAN_WIDTH, None))?;
    let expected = ok(check, "exclusive_scan", exclusive_scan(op, items))?;
    let n = same_slices(check, "exclusive", &expected, &local)?;
    Ok(n + same(check, "total", &ok(check, "reduce", reduce(op, items))?, &total)?)
}

pub(super) fn blelloch(check: &Check, data: &Data) -> Result<CheckOutcome, Mismatch> {
    let n = match data {
        Data::Ints(x) => blelloch_one(check, &SumI64, &widen(x))?,
        Data::Affine(m) => blelloch_one(check, &Affine, m)?,
        _ => return Err(wrong_data(check)),
    };
    Ok(CheckOutcome { comparisons: n, note: format!("width {GPU_SCAN_WIDTH}") })
}

fn hillis_one<Op: Operator>(check: &Check, op: &Op, items: &[Op::Value]) -> Result<usize, Mismatch> {
    let r = ok(check, "hillis_steele_scan", hillis_steele_scan(op, items))?;
    let expected = ok(check, "inclusive_scan", inclusive_scan(op, items))?;
    let n = same_slices(check, "inclusive", &expected, &r.inclusive)?;
    Ok(n + same(check, "additions", &hillis_steele_additions(items.len()), &r.additions)?)
}

pub(super) fn hillis_steele(check: &Check, data: &Data) -> Result<CheckOutcome, Mismatch> {
    let n = match data {
        Data::Ints(x) => hillis_one(check, &SumI64, &widen(x))?,
        Data::Affine(m) => hillis_one(check, &Affine, m)?,
        _ => return Err(wrong_data(check)),
    };
    Ok(CheckOutcome { comparisons: n, note: format!("{} additions", hillis_steele_additions(check.size)) })
}

fn device_one<Op: Operator>(check: &Check, op: &Op, items: &[Op::Value]) -> Result<usize, Mismatch> {
    let got = ok(check, "device_scan", device_scan(op, items, GPU_SCAN_WIDTH))?;
    let expected = ok(check, "exclusive_scan", exclusive_scan(op, items))?;
    same_slices(check, "exclusive", &expected, &got)
}

pub(super) fn device(check: &Check, data: &Data) -> Result<CheckOutcome, Mismatch> {
    let n = match data {
        Data::Ints(x) => device_one(check, &SumI64, &widen(x))?,
        Data::Affine(m) => device_one(check, &Affine, m)?,
        _ => return Err(wrong_data(check)),
    };
    let plan = ok(check, "DeviceScanPlan", DeviceScanPlan::new(check.size, GPU_SCAN_WIDTH))?;
    same(check, "levels", &levels(check.size), &plan.levels())?;
    Ok(CheckOutcome { comparisons: n + 1, note: format!("{} levels", plan.levels()) })
}

//! Float sums: the GPU fixed tree against the exact sum and its declared bound.

use rug::Float;

use super::compare::{holds, ok};
use super::data::{wrong_data, Data};
use super::{Check, CheckOutcome, Mismatch};
use crate::exact::{exact_sum_f32, tree_error_bound, Dyadic, U_F32};
use crate::hardware::block_reduce::BlockLayout;
use crate::hardware::multipass_reduce::{float_tree_depth, multipass_reduce};
use crate::operator::SumF32;

/// Enough bits to hold any difference of an f32 sum and an f32 exactly.
const WIDE: u32 = 2400;

fn exact_of(values: &[f32]) -> Dyadic {
    let mut d = Dyadic::zero();
    for &v in values {
        d.add(&Dyadic::from_f64(f64::from(v)).unwrap_or_default());
    }
    d
}

fn distance(exact: &Float, x: f32) -> Float {
    Float::with_val(WIDE, exact - f64::from(x)).abs()
}

fn next_toward(x: f32, up: bool) -> f32 {
    if x == 0.0 {
        return if up { f32::from_bits(1) } else { -f32::from_bits(1) };
    }
    let bits = x.to_bits();
    if (x > 0.0) == up {
        f32::from_bits(bits + 1)
    } else {
        f32::from_bits(bits - 1)
    }
}

pub(super) fn exact_vs_tree(check: &Check, data: &Data) -> Result<CheckOutcome, Mismatch> {
    let Data::Floats(x, target) = data else {
        return Err(wrong_data(check));
    };
    let summary = ok(check, "exact_sum_f32", exact_sum_f32(x))?;
    let exact = exact_of(x);
    let exact_float = exact.to_float();
    let mut n = 0;
    // Additivity of the exact sum over a split.
    let (a, b) = x.split_at(x.len() / 2);
    let mut parts = exact_of(a);
    parts.add(&exact_of(b));
    n += holds(check, "exact(a ++ b) = exact(a) + exact(b)", parts == exact, || parts.to_decimal())?;
    // Correct rounding: no neighbour of rounded_f32 is closer (ties go to the even one).
    let r = summary.rounded_f32;
    if r.is_finite() {
        let d = distance(&exact_float, r);
        for up in [true, false] {
            let other = next_toward(r, up);
            let od = distance(&exact_float, other);
            let nearest = d < od || (d == od && r.to_bits() % 2 == 0);
            n += holds(check, "rounded_f32 is the nearest f32 (ties to even)", nearest, || {
                format!("{r:e} vs neighbour {other:e}")
            })?;
        }
    }
    // Every tree layout stays within its declared bound.
    let depth = float_tree_depth(x.len());
    let bound = tree_error_bound(depth, U_F32, summary.sum_abs);
    for layout in BlockLayout::ALL {
        let (tree, _) = ok(check, "multipass_reduce(SumF32)", multipass_reduce(&SumF32, x, layout))?;
        let err = distance(&exact_float, tree);
        let within = err <= bound;
        n +=
            holds(check, &format!("{} tree within gamma_{depth} * sum|x| = {bound:e}", layout.name()), within, || {
                format!("tree {tree:e}, error {:e}", err.to_f64())
            })?;
    }
    if let Some(target) = target {
        if x.len() >= 64 {
            let reached = summary.condition >= target / 1e3;
            n += holds(check, &format!("achieved condition near the target {target:e}"), reached, || {
                format!("{:e}", summary.condition)
            })?;
        }
    }
    Ok(CheckOutcome { comparisons: n, note: format!("condition {:e}, depth {depth}", summary.condition) })
}

//! The comparison of a row contract's outputs with the model, the summary
//! printed under a failure line, and the closest approach of the passing
//! elements to their tolerance.
//!
//! Each element is held to `atol + rtol |exact| + rtol_acc scale`
//! ([`super::parts::Bound`], the scale from [`super::model`]); an exact
//! value of ±inf or NaN (a rule's: a target logit of -inf, a mean of no
//! rows) must be matched exactly, and an ignored row's loss must be 0.

use super::catalogue::expected_elems;
use super::model::Elem;
use super::parts::{torch_tolerance, Bound, RowParts};
use super::RowContract;
use crate::cases::typed::compare::{note_worst, Bad, Tally};
use crate::cases::typed::families::float_values;
use crate::sweep::case::Verdict;
use crate::sweep::raw::{Array, Dtype, RawCase};

/// The tolerance of output `k`: the contract's for its first output, float32's
/// (or the user's) for the float32 statistics.
fn bound_of(parts: &RowParts, k: usize) -> Bound {
    let bound = parts.bound();
    if k == 0 || parts.tolerance.is_some() {
        return bound;
    }
    let (rtol, atol) = torch_tolerance(Dtype::Float32);
    Bound { rtol, atol, ..bound }
}

/// Output `k`'s check name in failure lines.
fn what_of(row: &RowContract, k: usize) -> String {
    format!("{} within atol + rtol |exact| + rtol_acc scale", row.contract.what_of(k))
}

/// The outputs' count, types and lengths are the contract's, or the verdict saying how not.
fn shape_check(row: &RowContract, elems: &[Vec<Elem>], got: &[Array]) -> Result<(), Verdict> {
    let outputs = row.contract.outputs;
    if got.len() != outputs.len() {
        let (want, have) = (format!("{} outputs", outputs.len()), format!("{} outputs", got.len()));
        return Err(Verdict::fail(want, have, "output count"));
    }
    for (k, (buffer, got)) in outputs.iter().zip(got).enumerate() {
        if got.dtype() != buffer.dtype {
            let (want, have) = (buffer.dtype.name(), got.dtype().name());
            return Err(Verdict::fail(format!("{want} elements"), format!("{have} elements"), "output type"));
        }
        let len = elems.get(k).map_or(0, Vec::len);
        if got.count() != len {
            return Err(Verdict::fail(
                format!("{len} elements"),
                format!("{} elements", got.count()),
                &what_of(row, k),
            ));
        }
    }
    Ok(())
}

/// The expected elements of `case`, or the verdict that the case's data is not the contract's.
fn elems_of(row: &RowContract, case: &RawCase) -> Result<Vec<Vec<Elem>>, Verdict> {
    expected_elems(&row.parts, case).map_err(|e| Verdict::fail("the case's data", e, "case data"))
}

/// The verdict on `got` for `case` of `row`: the first failing element of the first failing output.
pub fn compare(row: &RowContract, case: &RawCase, got: &[Array]) -> Verdict {
    let elems = match elems_of(row, case) {
        Ok(e) => e,
        Err(verdict) => return verdict,
    };
    if let Err(verdict) = shape_check(row, &elems, got) {
        return verdict;
    }
    for (k, output) in got.iter().enumerate() {
        let tally = tally(&row.parts, k, &elems[k], output);
        let what = what_of(row, k);
        note_worst(&what, "tolerance", tally.worst);
        if let Some(bad) = tally.first.first() {
            return Verdict::fail_at(bad.index, &bad.expected, &bad.got, &what);
        }
    }
    Verdict::Pass
}

/// The summary lines under a failure line: per failing output, how many
/// elements fail, the first few, and the largest error against its tolerance.
pub fn summary_lines(row: &RowContract, case: &RawCase, got: &[Array]) -> Vec<String> {
    let Ok(elems) = elems_of(row, case) else { return Vec::new() };
    if shape_check(row, &elems, got).is_err() {
        return Vec::new();
    }
    let mut lines = Vec::new();
    for (k, output) in got.iter().enumerate() {
        let tally = tally(&row.parts, k, &elems[k], output);
        if tally.count == 0 {
            continue;
        }
        lines.extend(tally.lines(row.contract.outputs[k].role, output.count()));
        if let Some((ratio, index, error, allowed)) = tally.worst.filter(|w| w.0.is_finite()) {
            lines.push(format!(
                "largest |error| against its tolerance: {:e} at index {index} ({ratio:.3e} x {allowed:e})",
                error.abs()
            ));
        }
    }
    lines
}

/// Every failing element of one output.
fn tally(parts: &RowParts, k: usize, elems: &[Elem], got: &Array) -> Tally {
    let mut t = Tally::default();
    let Some(values) = float_values(got) else {
        t.add(Bad { index: 0, expected: "float elements".into(), got: got.dtype().name().into() });
        return t;
    };
    let bound = bound_of(parts, k);
    for (i, (e, &g)) in elems.iter().zip(&values).enumerate() {
        let (bad, ratio) = judge(&bound, e, g);
        if let Some(ratio) = ratio {
            t.note((ratio, i, g - e.exact, bound.allowed(e.exact, e.scale)));
        }
        if let Some(expected) = bad {
            t.add(Bad { index: i, expected, got: format!("{g:e}") });
        }
    }
    t
}

/// One element: what was expected when `got` fails, and its error's ratio
/// to the tolerance where it has one (finite expected values).
fn judge(bound: &Bound, e: &Elem, got: f64) -> (Option<String>, Option<f64>) {
    if e.zero {
        return ((got != 0.0).then(|| "0 (an ignored row's loss)".to_string()), None);
    }
    if e.exact.is_nan() {
        return ((!got.is_nan()).then(|| "NaN (the mean of no rows)".to_string()), None);
    }
    if e.exact.is_infinite() {
        return ((got != e.exact).then(|| format!("{:e} (a target logit of -inf)", e.exact)), None);
    }
    let allowed = bound.allowed(e.exact, e.scale);
    let error = (got - e.exact).abs();
    let ratio = if error == 0.0 { 0.0 } else { error / allowed };
    // A NaN result fails: its error is NaN.
    let fails = error.is_nan() || error > allowed;
    let expected = format!("{:e} +- {allowed:e} (scale {:e})", e.exact, e.scale);
    (fails.then_some(expected), Some(if ratio.is_nan() { f64::INFINITY } else { ratio }))
}

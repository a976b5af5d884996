//! The comparison of a typed contract's outputs with the model, and the
//! summary printed under a failure line.
//!
//! Exact contracts compare every element: moved items (compaction) bit for
//! bit; computed floats (min, max) by value: -0.0 equals +0.0, an expected
//! NaN is matched by any quiet NaN (sign and payload free) and by no number,
//! and under nan_ignored, where a fold of NaN only gives NaN, also by the
//! identity. Rule: the families' NaNs are quiet and IEEE arithmetic on a
//! quiet NaN gives a quiet one, so a signalling NaN where NaN is expected is
//! the float outputs' poison left unwritten, and fails. A failure of a case
//! whose input holds NaN names what the contract's rule says NaN gives. A float sum compares each output with the exact sum
//! of its k terms: the error `exact - out` is computed exactly and rounded
//! once ([`ExactSum::minus_to_f64`]), then held to the contract's tolerance:
//! the order-free bound `(k-1) u/(1+u) sum|x|` of the accumulator (Jeannerod
//! and Rump: any order, any tree, atomics included; it assumes gradual
//! underflow, so a float32 or bfloat16 accumulator adds 2k 2^-126 for the
//! flushes to zero of float32 `atomicAdd` and `-ftz=true` code), plus the output's own
//! rounding where the output is narrower than the accumulator; or the user's
//! `atol + rtol |exact|` or ulp count. `sum|x|` is summed in f64 and enlarged
//! by 2^-16 relative, more than f64's rounding of up to 2^36 terms, so the
//! bound used is never below the true one.

use super::catalogue::chunk_carries;
use super::exact::ExactSum;
use super::families::float_values;
use super::parts::{flush_loss, is_float, unit_roundoff, NanRule, Parts, Shape, Tolerance};
use super::Typed;
use crate::sweep::case::Verdict;
use crate::sweep::raw::{Array, Dtype, RawCase};
use kernels::{softmax_tolerance, ScanKind, SoftmaxDtype, SoftmaxTolerance, SoftmaxVariant};
use rayon::prelude::*;
use std::ops::Range;

/// Elements listed in a failure's summary.
const FIRST_SHOWN: usize = 5;

/// Elements per chunk of a comparison (as the model's chunks, for the carries).
const CHUNK: usize = 1 << 16;

/// One failing element: its index, the expected value (with its bound or
/// tolerance where it has one), and what came.
#[derive(Debug, Clone, PartialEq)]
pub(in crate::cases) struct Bad {
    pub(in crate::cases) index: usize,
    pub(in crate::cases) expected: String,
    pub(in crate::cases) got: String,
}

/// The failing elements of an output: how many, and the first few; and, for
/// outputs held to a bound or tolerance, the element closest to (or furthest
/// past) it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(in crate::cases) struct Tally {
    pub(in crate::cases) count: usize,
    pub(in crate::cases) first: Vec<Bad>,
    /// |error| / allowed, index, error, allowed.
    pub(in crate::cases) worst: Option<(f64, usize, f64, f64)>,
}

impl Tally {
    pub(in crate::cases) fn add(&mut self, bad: Bad) {
        self.count += 1;
        if self.first.len() < FIRST_SHOWN {
            self.first.push(bad);
        }
    }

    /// The two summary lines of an output with failing elements: how many of
    /// the `compared` elements of `output` (its role, with what it was held to
    /// when that is said) fail, and the first few.
    pub(in crate::cases) fn lines(&self, output: &str, compared: usize) -> [String; 2] {
        let share = 100.0 * self.count as f64 / compared.max(1) as f64;
        let listed: Vec<String> =
            self.first.iter().map(|b| format!("[{}] expected {} got {}", b.index, b.expected, b.got)).collect();
        [
            format!("failing elements of {output}: {} / {compared} ({share:.1}%)", self.count),
            format!("first failures: {}", listed.join("; ")),
        ]
    }

    /// `self` then `later` (every index of `later` after `self`'s).
    fn then(mut self, later: Tally) -> Tally {
        self.count += later.count;
        self.first.extend(later.first.into_iter().take(FIRST_SHOWN - self.first.len().min(FIRST_SHOWN)));
        if let Some(w) = later.worst {
            self.note(w);
        }
        self
    }

    /// Keeps `w` if its ratio to the bound is the largest yet.
    pub(in crate::cases) fn note(&mut self, w: (f64, usize, f64, f64)) {
        if self.worst.is_none_or(|(ratio, ..)| w.0 > ratio) {
            self.worst = Some(w);
        }
    }

    /// A float sum element's verdict: failing when `bad`; its error against the bound noted.
    fn judge(&mut self, judged: (Option<Bad>, (f64, usize, f64, f64))) {
        self.note(judged.1);
        if let Some(bad) = judged.0 {
            self.add(bad);
        }
    }
}

thread_local! {
    /// The largest |error| / allowed of the float outputs judged by a bound or
    /// tolerance for the case in flight (float sums, row contracts), in words
    /// (a case runs several times: the largest over its runs).
    static WORST: std::cell::RefCell<Option<(f64, String)>> = const { std::cell::RefCell::new(None) };
}

/// Notes an output's worst element (ratio, index, error, allowed) for the case
/// in flight; `limit` names what it is held to ("bound", "tolerance").
pub(in crate::cases) fn note_worst(what: &str, limit: &str, worst: Option<(f64, usize, f64, f64)>) {
    let Some((ratio, index, error, allowed)) = worst else { return };
    let line = format!(
        "{what}: largest |error| {:e} at index {index}, {:.3}% of its {limit} {allowed:e}",
        error.abs(),
        100.0 * ratio
    );
    WORST.with(|w| {
        let mut w = w.borrow_mut();
        if w.as_ref().is_none_or(|(r, _)| ratio > *r) {
            *w = Some((ratio, line));
        }
    });
}

/// Takes the worst error reached by the outputs of the case in flight that
/// were noted: its ratio to their bound or tolerance and a line saying where
/// (and clears it).
pub fn take_worst() -> Option<(f64, String)> {
    WORST.with(|w| w.borrow_mut().take())
}

/// The outputs' count, types and lengths are the contract's, or the verdict saying how not.
fn shape_check(typed: &Typed, case: &RawCase, got: &[Array]) -> Result<(), Verdict> {
    let outputs = typed.contract.outputs;
    if got.len() != outputs.len() {
        return Err(Verdict::fail(
            format!("{} outputs", outputs.len()),
            format!("{} outputs", got.len()),
            "output count",
        ));
    }
    for (k, (buffer, got)) in outputs.iter().zip(got).enumerate() {
        if got.dtype() != buffer.dtype {
            let (want, have) = (buffer.dtype.name(), got.dtype().name());
            return Err(Verdict::fail(format!("{want} elements"), format!("{have} elements"), "output type"));
        }
        let len = case.model_len(k);
        if got.count() != len {
            let what = with_nan_rule(&typed.parts, case, typed.contract.what_of(k).to_string());
            return Err(Verdict::fail(format!("{len} elements"), format!("{} elements", got.count()), &what));
        }
    }
    Ok(())
}

/// The verdict on `got` for `case` of `typed`: the first failing element of the first failing output.
pub fn compare(typed: &Typed, case: &RawCase, got: &[Array]) -> Verdict {
    if let Err(verdict) = shape_check(typed, case, got) {
        return verdict;
    }
    for k in 0..got.len() {
        let (tally, what) = tally(typed, case, got, k);
        note_worst(&what, "bound", tally.worst);
        if let Some(bad) = tally.first.first() {
            return Verdict::fail_at(bad.index, &bad.expected, &bad.got, &what);
        }
    }
    Verdict::Pass
}

/// The summary lines under a failure line: per failing output, how many elements fail and the first few.
pub fn summary_lines(typed: &Typed, case: &RawCase, got: &[Array]) -> Vec<String> {
    if shape_check(typed, case, got).is_err() {
        return Vec::new();
    }
    let mut lines = Vec::new();
    for (k, output) in got.iter().enumerate() {
        let (tally, what) = tally(typed, case, got, k);
        if tally.count == 0 {
            continue;
        }
        let role = typed.contract.outputs[k].role;
        lines.extend(tally.lines(&format!("{role} ({what})"), output.count()));
    }
    lines
}

/// Every failing element of output `k` and the check's name.
fn tally(typed: &Typed, case: &RawCase, got: &[Array], k: usize) -> (Tally, String) {
    let parts = &typed.parts;
    let what = typed.contract.what_of(k).to_string();
    if let Shape::Softmax { masked_nan, .. } = parts.shape {
        return (softmax_tally(parts, masked_nan, case, &got[k]), what);
    }
    if !parts.float_sum() {
        return (exact_tally(&case.expected[k], &got[k], equality(parts)), with_nan_rule(parts, case, what));
    }
    let what = format!("{what} within {}", tolerance_name(parts));
    let (Some(values), Some(outs)) = (case.inputs.first().and_then(float_values), float_values(&got[k])) else {
        let mut t = Tally::default();
        t.add(Bad { index: 0, expected: "float input and output".into(), got: "other types".into() });
        return (t, "case data".into());
    };
    if parts.shape == Shape::Segmented {
        let Some(Array::Int64(offsets)) = case.inputs.get(1) else {
            let mut t = Tally::default();
            t.add(Bad { index: 0, expected: "int64 offsets".into(), got: "none".into() });
            return (t, "case data".into());
        };
        return (segment_sums_tally(parts, &values, offsets, &outs), what);
    }
    (float_sum_tally(parts, &values, &outs), what)
}

/// The tolerance a softmax writing `out` is held to at `cols` columns: the
/// loosest, field by field, of the tolerances our variants that take rows
/// this wide declare for that output type. Our kernels write no float16:
/// a float16 output is their float32 tolerance, rounded once more.
fn softmax_tolerance_for(out: Dtype, cols: usize) -> SoftmaxTolerance {
    if out == Dtype::Float16 {
        return rounded_to_float16(softmax_tolerance_for(Dtype::Float32, cols), cols);
    }
    let dtype = if out == Dtype::Bfloat16 { SoftmaxDtype::Bf16 } else { SoftmaxDtype::F32 };
    let loosest = |a: SoftmaxTolerance, b: SoftmaxTolerance| SoftmaxTolerance {
        relative: a.relative.max(b.relative),
        per_shift: a.per_shift.max(b.per_shift),
        absolute: a.absolute.max(b.absolute),
        row_sum: a.row_sum.max(b.row_sum),
    };
    SoftmaxVariant::ALL
        .into_iter()
        .filter(|v| cols <= v.max_cols())
        .map(|v| softmax_tolerance(cols, v, dtype))
        .reduce(loosest)
        .unwrap_or_else(|| softmax_tolerance(cols, SoftmaxVariant::ThreePass, dtype))
}

/// A float32 softmax tolerance with each probability rounded to float16
/// (to nearest: relative `2^-11`, or half a subnormal ulp, `2^-25`, absolute
/// below float16's normal range), as the bfloat16 output rounds in the
/// kernels' own derivation: `relative' = 2^-11 + (1 + 2^-11) relative`,
/// `per_shift' = (1 + 2^-11) per_shift`.
fn rounded_to_float16(f32: SoftmaxTolerance, cols: usize) -> SoftmaxTolerance {
    let u = 2f64.powi(-11);
    let relative = u + (1.0 + u) * f32.relative;
    let per_shift = (1.0 + u) * f32.per_shift;
    let absolute = 2f64.powi(-25) + f32.absolute;
    let row_sum = relative + per_shift * ((cols.max(1) as f64).ln() + 0.5) + cols as f64 * absolute;
    SoftmaxTolerance { relative, per_shift, absolute, row_sum }
}

/// Each row's probabilities: masked logits exactly 0, an all-masked row all 0
/// (all NaN under `masked_nan`), the rest within the tolerance, each unmasked
/// row summing to 1 within the row bound (a failing sum is listed at the row's first element).
fn softmax_tally(parts: &Parts, masked_nan: bool, case: &RawCase, got: &Array) -> Tally {
    let mut t = Tally::default();
    let param = |k: usize| case.params.get(k).and_then(|v| v.as_int()).map(|v| v.max(0) as usize);
    let (Some(input), Some(Array::Float64(exact)), Some(out), Some(rows), Some(cols)) =
        (case.inputs.first().and_then(float_values), case.expected.first(), float_values(got), param(0), param(1))
    else {
        t.add(Bad { index: 0, expected: "float logits, exact values, rows and cols".into(), got: "other data".into() });
        return t;
    };
    // A strided input's rows are `stride` apart; the output and the exact values are contiguous.
    let stride = param(2).unwrap_or(cols);
    if rows * stride != input.len() || exact.len() != rows * cols || out.len() != rows * cols {
        t.add(Bad { index: 0, expected: format!("{rows}x{cols} elements"), got: format!("{}", out.len()) });
        return t;
    }
    let tol = softmax_tolerance_for(parts.dtype_out, cols);
    for r in 0..rows {
        let row = r * cols..(r + 1) * cols;
        let logits = &input[r * stride..r * stride + cols];
        let m = logits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let all_masked = m == f64::NEG_INFINITY;
        let mut sum = 0.0;
        for (i, &x) in row.clone().zip(logits) {
            let g = out[i];
            let bad = match (all_masked, x == f64::NEG_INFINITY) {
                (true, _) if masked_nan => (!g.is_nan()).then(|| "NaN (all-masked row, all_masked_nan)".to_string()),
                (_, true) => (g != 0.0).then(|| "0 (masked logit)".to_string()),
                _ => (!tol.allows(exact[i], x - m, g))
                    .then(|| format!("{:e} +- {:e}", exact[i], tol.element_bound(exact[i], x - m))),
            };
            if let Some(expected) = bad {
                t.add(Bad { index: i, expected, got: format!("{g:e}") });
            }
            sum += if g.is_nan() { 0.0 } else { g };
        }
        if !all_masked && (sum - 1.0).abs() > tol.row_sum {
            t.add(Bad {
                index: row.start,
                expected: format!("row {r} summing to 1 +- {:e}", tol.row_sum),
                got: format!("{sum:.12}"),
            });
        }
    }
    t
}

/// Each segment's float sum against the exact sum of its terms.
fn segment_sums_tally(parts: &Parts, values: &[f64], offsets: &[i64], outs: &[f64]) -> Tally {
    let mut t = Tally::default();
    for (s, w) in offsets.windows(2).enumerate() {
        let terms = &values[w[0] as usize..w[1] as usize];
        let mut sum = ExactSum::new();
        terms.iter().for_each(|&x| sum.add(x));
        let sum_abs: f64 = terms.iter().map(|x| x.abs()).sum();
        t.judge(check_sum(parts, s, (&sum, sum_abs, terms.len() as u64), outs[s]));
    }
    t
}

fn tolerance_name(parts: &Parts) -> String {
    match parts.tolerance {
        Tolerance::OrderFree => format!("the order-free bound ({} accumulator)", parts.accumulator.name()),
        Tolerance::User { rtol, atol, ulp } => {
            format!("atol {atol:e} + rtol {rtol:e} |exact|{}", ulp.map(|k| format!(" or {k} ulp")).unwrap_or_default())
        }
    }
}

/// Tallies `range` of each chunk by `check`, chunks on every core, in index order.
fn chunked(len: usize, check: impl Fn(Range<usize>) -> Tally + Sync) -> Tally {
    let chunks: Vec<Tally> =
        (0..len.div_ceil(CHUNK)).into_par_iter().map(|c| check(c * CHUNK..((c + 1) * CHUNK).min(len))).collect();
    chunks.into_iter().fold(Tally::default(), Tally::then)
}

/// How an exact contract's float elements are compared.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Equality {
    /// Bit for bit (moved items).
    Bitwise,
    /// By value (-0.0 == +0.0); an expected NaN is matched by any quiet NaN
    /// and, when given, by this value too (the identity, under nan_ignored).
    Value(Option<f64>),
}

/// The comparison of `parts`' exact outputs: moved items keep their bits,
/// computed ones are compared by value.
fn equality(parts: &Parts) -> Equality {
    match (parts.shape, parts.nan) {
        (Shape::Compact { .. }, _) => Equality::Bitwise,
        (_, NanRule::NanIgnored) if parts.shape.folds() => {
            Equality::Value(Some(super::catalogue::float_identity(parts.op)))
        }
        _ => Equality::Value(None),
    }
}

/// `what`, naming what the rule says NaN gives when the case's input holds NaN.
fn with_nan_rule(parts: &Parts, case: &RawCase, what: String) -> String {
    let holds_nan = case.inputs.first().and_then(float_values).is_some_and(|v| v.iter().any(|x| x.is_nan()));
    match super::edges::nan_words(parts) {
        Some(words) if holds_nan => format!("{what} (NaN rule: {words})"),
        _ => what,
    }
}

/// Whether the float `g` passes for the expected `e` by `equality`
/// (`same_bits`: their bits are equal; `g_quiet`: `g` is a quiet NaN).
fn float_equal(e: f64, g: f64, (same_bits, g_quiet): (bool, bool), equality: Equality) -> bool {
    match equality {
        Equality::Bitwise => same_bits,
        Equality::Value(also) if e.is_nan() => g_quiet || also == Some(g),
        Equality::Value(_) => e == g,
    }
}

/// The elements of an exact comparison that differ (by `equality` for floats).
fn exact_tally(expected: &Array, got: &Array, equality: Equality) -> Tally {
    let len = expected.count();
    chunked(len, |range| {
        let mut t = Tally::default();
        for i in range {
            if let Some((e, g)) = differs(expected, got, i, equality) {
                t.add(Bad { index: i, expected: e, got: g });
            }
        }
        t
    })
}

/// Element `i` shown from each array, when they differ (floats by `equality`).
fn differs(expected: &Array, got: &Array, i: usize, equality: Equality) -> Option<(String, String)> {
    // (value, bits) of each and the type's quiet bit; a NaN (and bit for
    // bit a zero) is shown with its bits: sign, quiet bit, payload.
    let float = |(e, eb): (f64, u64), (g, gb): (f64, u64), quiet: u64| {
        let shown = |v: f64, bits: u64| match equality {
            _ if v.is_nan() => format!("{v:e} (bits {bits:#x})"),
            Equality::Bitwise if v == 0.0 => format!("{v:e} (bits {bits:#x})"),
            _ => format!("{v:e}"),
        };
        let g_quiet = g.is_nan() && gb & quiet != 0;
        (!float_equal(e, g, (eb == gb, g_quiet), equality)).then(|| (shown(e, eb), shown(g, gb)))
    };
    let bf16 = |b: u16| (half::bf16::from_bits(b).to_f64(), u64::from(b));
    let f16 = |b: u16| (half::f16::from_bits(b).to_f64(), u64::from(b));
    match (expected, got) {
        (Array::Int32(e), Array::Int32(g)) => (e[i] != g[i]).then(|| (e[i].to_string(), g[i].to_string())),
        (Array::Int64(e), Array::Int64(g)) => (e[i] != g[i]).then(|| (e[i].to_string(), g[i].to_string())),
        (Array::Uint32(e), Array::Uint32(g)) => (e[i] != g[i]).then(|| (e[i].to_string(), g[i].to_string())),
        (Array::Float32(e), Array::Float32(g)) => {
            float((e[i] as f64, e[i].to_bits().into()), (g[i] as f64, g[i].to_bits().into()), 1 << 22)
        }
        (Array::Float64(e), Array::Float64(g)) => float((e[i], e[i].to_bits()), (g[i], g[i].to_bits()), 1 << 51),
        (Array::Bfloat16(e), Array::Bfloat16(g)) => float(bf16(e[i]), bf16(g[i]), 1 << 6),
        (Array::Float16(e), Array::Float16(g)) => float(f16(e[i]), f16(g[i]), 1 << 9),
        _ => Some((format!("{} elements", expected.dtype().name()), format!("{} elements", got.dtype().name()))),
    }
}

/// The float sums' failing elements: each output against the exact sum of its terms.
fn float_sum_tally(parts: &Parts, values: &[f64], outs: &[f64]) -> Tally {
    let Shape::Scan(kind) = parts.shape else {
        let mut s = ExactSum::new();
        values.iter().for_each(|&x| s.add(x));
        let sum_abs: f64 = values.iter().map(|x| x.abs()).sum();
        let mut t = Tally::default();
        t.judge(check_sum(parts, 0, (&s, sum_abs, values.len() as u64), outs[0]));
        return t;
    };
    let carries = chunk_carries(values);
    let abs_carries: Vec<f64> = {
        let totals: Vec<f64> = values.par_chunks(CHUNK).map(|c| c.iter().map(|x| x.abs()).sum()).collect();
        let mut carry = 0.0;
        totals
            .iter()
            .map(|t| {
                let before = carry;
                carry += t;
                before
            })
            .collect()
    };
    chunked(values.len(), |range| {
        let c = range.start / CHUNK;
        let (mut s, mut sum_abs) = (carries[c].clone(), abs_carries[c]);
        let mut t = Tally::default();
        for i in range {
            // An inclusive output sums in[0..=i], an exclusive one in[0..i).
            let inclusive = kind == ScanKind::Inclusive;
            if inclusive {
                s.add(values[i]);
                sum_abs += values[i].abs();
            }
            t.judge(check_sum(parts, i, (&s, sum_abs, i as u64 + u64::from(inclusive)), outs[i]));
            if !inclusive {
                s.add(values[i]);
                sum_abs += values[i].abs();
            }
        }
        t
    })
}

/// Output `i`, the sum of `terms` inputs whose exact sum is `sum` and whose
/// absolute values sum to `sum_abs` (in f64), judged by the tolerance.
fn check_sum(
    parts: &Parts,
    i: usize,
    (sum, sum_abs, terms): (&ExactSum, f64, u64),
    got: f64,
) -> (Option<Bad>, (f64, usize, f64, f64)) {
    if !got.is_finite() {
        let bad = Bad {
            index: i,
            expected: format!("{:e} (a finite sum: the input is finite)", sum.to_f64()),
            got: format!("{got:e}"),
        };
        return (Some(bad), (f64::INFINITY, i, got, 0.0));
    }
    let error = -sum.minus_to_f64(got);
    // The exact value is rounded only where the bound needs it, or to report a failure.
    let needs_exact = matches!(parts.tolerance, Tolerance::User { .. }) || narrower_output(parts);
    let exact = if needs_exact { sum.to_f64() } else { got + error };
    let (bound, ulp_ok) = bound(parts, exact, sum_abs * (1.0 + 2f64.powi(-16)), terms, got);
    let ratio = match (error == 0.0, bound > 0.0) {
        (true, _) => 0.0,
        (false, true) => error.abs() / bound,
        (false, false) => f64::INFINITY,
    };
    let noted = (if ulp_ok { ratio.min(1.0) } else { ratio }, i, error, bound);
    if error.abs() <= bound || ulp_ok {
        return (None, noted);
    }
    let bad = Bad {
        index: i,
        expected: format!("{:e} +- {bound:e}", sum.to_f64()),
        got: format!("{got:e} (error {error:e})"),
    };
    (Some(bad), noted)
}

/// Whether the output type rounds the accumulated sum once more.
fn narrower_output(parts: &Parts) -> bool {
    is_float(parts.dtype_out) && unit_roundoff(parts.dtype_out) > unit_roundoff(parts.accumulator)
}

/// The bound on |out - exact| for an output of `terms` terms, and whether
/// the user's ulp tolerance accepts `got` on its own.
fn bound(parts: &Parts, exact: f64, sum_abs: f64, terms: u64, got: f64) -> (f64, bool) {
    match parts.tolerance {
        Tolerance::User { rtol, atol, ulp } => {
            let ulp_ok =
                ulp.is_some_and(|k| ulps_apart(parts.dtype_out, exact, got).is_some_and(|d| d <= u64::from(k)));
            (atol + rtol * exact.abs(), ulp_ok)
        }
        Tolerance::OrderFree => {
            let u = unit_roundoff(parts.accumulator);
            // Each of the k inputs and k - 1 partial sums may be flushed to zero.
            let flushed = 2.0 * terms as f64 * flush_loss(parts.accumulator);
            let accumulated =
                terms.saturating_sub(1) as f64 * (u / (1.0 + u)) * sum_abs * (1.0 + 2f64.powi(-50)) + flushed;
            let rounding = if narrower_output(parts) {
                unit_roundoff(parts.dtype_out) * (exact.abs() + accumulated) + smallest_subnormal(parts.dtype_out)
            } else {
                0.0
            };
            (accumulated + rounding, false)
        }
    }
}

fn smallest_subnormal(dtype: Dtype) -> f64 {
    match dtype {
        Dtype::Bfloat16 => 2f64.powi(-133),
        Dtype::Float16 => 2f64.powi(-24),
        Dtype::Float32 => 2f64.powi(-149),
        _ => f64::from_bits(1),
    }
}

/// Values of `dtype` between `exact` rounded to it and `got` (None for NaN).
fn ulps_apart(dtype: Dtype, exact: f64, got: f64) -> Option<u64> {
    let line = |bits: u64, sign: u64| -> i128 {
        let magnitude = (bits & (sign - 1)) as i128;
        if bits & sign != 0 {
            -magnitude
        } else {
            magnitude
        }
    };
    if exact.is_nan() || got.is_nan() {
        return None;
    }
    let (a, b) = match dtype {
        Dtype::Float64 => (line(exact.to_bits(), 1 << 63), line(got.to_bits(), 1 << 63)),
        Dtype::Bfloat16 => (
            line(half::bf16::from_f64(exact).to_bits().into(), 1 << 15),
            line(half::bf16::from_f64(got).to_bits().into(), 1 << 15),
        ),
        Dtype::Float16 => (
            line(half::f16::from_f64(exact).to_bits().into(), 1 << 15),
            line(half::f16::from_f64(got).to_bits().into(), 1 << 15),
        ),
        _ => (line((exact as f32).to_bits().into(), 1 << 31), line((got as f32).to_bits().into(), 1 << 31)),
    };
    Some(a.abs_diff(b) as u64)
}

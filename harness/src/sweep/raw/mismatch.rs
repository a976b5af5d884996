//! The summary printed under a failure line, after the style of
//! `torch.testing.assert_close`: how many elements of each output differ
//! out of how many, the first few with expected and got, and for float
//! outputs the largest absolute, relative and ulp error.
//!
//! The verdict itself is the contract's rule (`sweep::raw::rule`); this
//! module only describes a failed comparison, from the model's expected
//! arrays and the outputs read back. An element counts as mismatched by the
//! same per-element test the rule applies: bit for bit under the exact rule
//! (NaN payloads included), within the declared softmax tolerance for
//! softmax rows (a masked logit's probability exactly 0), and, for a float
//! sum, the one result outside the order-free bound (the failing verdict
//! says it is). Errors are measured against the exact value: abs = |got -
//! expected|, rel = abs / |expected|, ulp = the distance between got and the
//! expected value rounded to got's type, counted in representable values.

use crate::sweep::raw::rule::softmax_user_tolerance;
use crate::sweep::raw::topk_sample_rule;
use crate::sweep::raw::{Array, Contract, RawCase, Rule, Value};
use std::cell::RefCell;

/// Mismatching elements listed by index.
pub const FIRST_SHOWN: usize = 5;

/// One listed mismatch.
#[derive(Debug, Clone, PartialEq)]
pub struct Diff {
    /// Element index in the output.
    pub index: usize,
    /// The model's value.
    pub expected: String,
    /// The value read back.
    pub got: String,
}

/// The summary of one output.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Summary {
    /// The output's role (`out`, `count`, ...).
    pub role: String,
    /// Elements compared: the longer of expected and got.
    pub compared: usize,
    /// Elements that fail the rule's per-element test (a missing or extra element included).
    pub mismatched: usize,
    /// The first [`FIRST_SHOWN`] of them.
    pub first: Vec<Diff>,
    /// Largest |got - expected| over finite pairs, with its index.
    pub max_abs: Option<(f64, usize)>,
    /// Largest |got - expected| / |expected| over finite pairs with expected != 0.
    pub max_rel: Option<(f64, usize)>,
    /// Largest distance in units in the last place (float outputs).
    pub max_ulp: Option<(u64, usize)>,
    /// Elements where got is NaN or infinite and expected is not.
    pub not_finite: usize,
    /// Whether the output holds floats.
    pub float: bool,
}

/// One element as compared.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Elem {
    Int(i64),
    /// A float, its value and its place among its type's values (see [`ordered`]).
    Float {
        value: f64,
        width: Width,
    },
}

/// The float types of outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Width {
    F32,
    F64,
    Bf16,
    F16,
}

fn element(array: &Array, i: usize) -> Option<Elem> {
    Some(match array {
        Array::Int32(v) => Elem::Int(*v.get(i)? as i64),
        Array::Int64(v) => Elem::Int(*v.get(i)?),
        Array::Uint8(v) => Elem::Int(*v.get(i)? as i64),
        Array::Uint32(v) => Elem::Int(*v.get(i)? as i64),
        Array::Float32(v) => Elem::Float { value: *v.get(i)? as f64, width: Width::F32 },
        Array::Float64(v) => Elem::Float { value: *v.get(i)?, width: Width::F64 },
        Array::Bfloat16(v) => {
            Elem::Float { value: f32::from_bits((*v.get(i)? as u32) << 16) as f64, width: Width::Bf16 }
        }
        Array::Float16(v) => Elem::Float { value: half::f16::from_bits(*v.get(i)?).to_f64(), width: Width::F16 },
    })
}

/// The raw bits of element `i` (the exact rule compares these).
fn bits(array: &Array, i: usize) -> Option<u64> {
    Some(match array {
        Array::Int32(v) => *v.get(i)? as u32 as u64,
        Array::Int64(v) => *v.get(i)? as u64,
        Array::Uint8(v) => *v.get(i)? as u64,
        Array::Uint32(v) => *v.get(i)? as u64,
        Array::Float32(v) => v.get(i)?.to_bits() as u64,
        Array::Float64(v) => v.get(i)?.to_bits(),
        Array::Bfloat16(v) | Array::Float16(v) => *v.get(i)? as u64,
    })
}

fn shown(e: Option<Elem>) -> String {
    match e {
        None => "(none)".into(),
        Some(Elem::Int(v)) => v.to_string(),
        Some(Elem::Float { value, .. }) => format!("{value:e}"),
    }
}

/// A float's place in its type's order of values: consecutive values are
/// consecutive integers, and +0 and -0 share 0 (IEEE sign-magnitude bits).
fn ordered(value: f64, width: Width) -> i64 {
    let (bits, sign_bit) = match width {
        Width::F64 => (value.to_bits(), 1u64 << 63),
        Width::F32 => ((value as f32).to_bits() as u64, 1 << 31),
        Width::Bf16 => (bf16_bits(value as f32) as u64, 1 << 15),
        // A float16 value is exact in f64, so this conversion does not round.
        Width::F16 => (half::f16::from_f64(value).to_bits() as u64, 1 << 15),
    };
    let magnitude = (bits & !sign_bit) as i64;
    if bits & sign_bit != 0 {
        -magnitude
    } else {
        magnitude
    }
}

/// `x` rounded to bfloat16 (to nearest, ties to even), as its bits.
fn bf16_bits(x: f32) -> u16 {
    let b = x.to_bits();
    ((b + 0x7fff + ((b >> 16) & 1)) >> 16) as u16
}

/// Which elements of output `k` fail the rule's per-element test.
fn failing(contract: &Contract, case: &RawCase, k: usize, got: &Array) -> Vec<bool> {
    let Some(expected) = case.expected.get(k) else { return vec![true; got.count()] };
    let len = expected.count().max(got.count());
    match contract.rule {
        Rule::Exact => (0..len).map(|i| bits(expected, i) != bits(got, i)).collect(),
        Rule::FloatSumBound => vec![true; len],
        Rule::SoftmaxRows => softmax_failing(contract, case, got).unwrap_or_else(|| vec![true; len]),
        Rule::TopkSample => vec![true; len],
    }
}

/// The softmax rule per element: a masked logit's probability exactly 0,
/// any other within the tolerance at the row width (None: not softmax data).
fn softmax_failing(contract: &Contract, case: &RawCase, got: &Array) -> Option<Vec<bool>> {
    let (Some(Array::Float32(input)), Some(Array::Float64(exact)), Array::Float32(out)) =
        (case.inputs.first(), case.expected.first(), got)
    else {
        return None;
    };
    let cols = contract.params.iter().position(|p| p.name == "cols").and_then(|at| case.params.get(at))?;
    let cols = match cols {
        Value::Int32(v) => usize::try_from(*v).ok()?,
        Value::Int64(v) => usize::try_from(*v).ok()?,
        Value::Float32(_) | Value::Float64(_) => return None,
    };
    if cols == 0 || input.len() != exact.len() {
        return None;
    }
    let tol = softmax_user_tolerance(cols);
    let mut flags = vec![true; exact.len().max(out.len())];
    for (row, logits) in input.chunks(cols).enumerate() {
        let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
        for (j, &x) in logits.iter().enumerate() {
            let i = row * cols + j;
            let Some(&g) = out.get(i) else { continue };
            flags[i] = if x == f32::NEG_INFINITY { g != 0.0 } else { !tol.allows(exact[i], x as f64 - max, g as f64) };
        }
    }
    Some(flags)
}

/// The summary of output `k` (role `role`) whose model output is in `case`.
pub fn summarize_output(contract: &Contract, case: &RawCase, k: usize, got: &Array) -> Summary {
    summarize_flagged(contract, case, k, got, failing(contract, case, k, got))
}

/// The summary of output `k` whose failing elements are `flags`.
fn summarize_flagged(contract: &Contract, case: &RawCase, k: usize, got: &Array, flags: Vec<bool>) -> Summary {
    let role = contract.outputs.get(k).map(|b| b.role).unwrap_or("out").to_string();
    let mut s = Summary { role, compared: flags.len(), ..Summary::default() };
    let expected = case.expected.get(k);
    for (i, &bad) in flags.iter().enumerate() {
        let e = expected.and_then(|a| element(a, i));
        let g = element(got, i);
        s.float |= matches!(g, Some(Elem::Float { .. }));
        measure(&mut s, i, e, g);
        if bad {
            s.mismatched += 1;
            if s.first.len() < FIRST_SHOWN {
                s.first.push(Diff { index: i, expected: shown(e), got: shown(g) });
            }
        }
    }
    s
}

/// Folds element `i`'s errors into the summary's largest ones.
fn measure(s: &mut Summary, i: usize, e: Option<Elem>, g: Option<Elem>) {
    let larger = |slot: &mut Option<(f64, usize)>, v: f64| {
        if v > 0.0 && slot.is_none_or(|(m, _)| v > m) {
            *slot = Some((v, i));
        }
    };
    match (e, g) {
        (Some(Elem::Int(e)), Some(Elem::Int(g))) => {
            let abs = (g as i128 - e as i128).unsigned_abs() as f64;
            larger(&mut s.max_abs, abs);
            if e != 0 {
                larger(&mut s.max_rel, abs / (e as f64).abs());
            }
        }
        (Some(Elem::Float { value: e, .. }), Some(Elem::Float { value: g, width })) => {
            if e.is_finite() && !g.is_finite() {
                s.not_finite += 1;
                return;
            }
            if !(e.is_finite() && g.is_finite()) {
                return;
            }
            let abs = (g - e).abs();
            larger(&mut s.max_abs, abs);
            if e != 0.0 {
                larger(&mut s.max_rel, abs / e.abs());
            }
            let ulp = ordered(g, width).abs_diff(ordered(e, width));
            if ulp > 0 && s.max_ulp.is_none_or(|(m, _)| ulp > m) {
                s.max_ulp = Some((ulp, i));
            }
        }
        _ => {}
    }
}

/// The summaries of every output of a failed case.
pub fn summarize(contract: &Contract, case: &RawCase, got: &[Array]) -> Vec<Summary> {
    // A sampler's row is judged on all its outputs at once (a probability is judged for the
    // column drawn beside it): every output flags the failing rows.
    let rows = (contract.rule == Rule::TopkSample).then(|| topk_sample_rule::failing_rows(contract, case, got));
    got.iter()
        .enumerate()
        .map(|(k, g)| match &rows {
            Some(Some(flags)) => summarize_flagged(contract, case, k, g, flags.clone()),
            _ => summarize_output(contract, case, k, g),
        })
        .collect()
}

/// The summary as indented lines (printed under the failure line).
pub fn lines(summaries: &[Summary]) -> Vec<String> {
    let mut out = Vec::new();
    for s in summaries.iter().filter(|s| s.mismatched > 0 || s.max_abs.is_some()) {
        let share = 100.0 * s.mismatched as f64 / s.compared.max(1) as f64;
        out.push(format!("mismatched elements of {}: {} / {} ({share:.1}%)", s.role, s.mismatched, s.compared));
        if !s.first.is_empty() {
            let listed: Vec<String> =
                s.first.iter().map(|d| format!("[{}] expected {} got {}", d.index, d.expected, d.got)).collect();
            out.push(format!("first mismatches: {}", listed.join("; ")));
        }
        let number = |v: f64| if s.float { format!("{v:e}") } else { format!("{v}") };
        if let Some((v, i)) = s.max_abs {
            out.push(format!("greatest absolute difference: {} at index {i}", number(v)));
        }
        if let Some((v, i)) = s.max_rel {
            out.push(format!("greatest relative difference: {v:e} at index {i}"));
        }
        if let Some((v, i)) = s.max_ulp {
            out.push(format!("greatest ulp difference: {v} at index {i}"));
        }
        if s.not_finite > 0 {
            out.push(format!("{} element(s) NaN or infinite where the model's value is finite", s.not_finite));
        }
    }
    out
}

thread_local! {
    /// The summary of the first failed comparison of the case in flight (a
    /// case runs several times; the first failure is the verdict).
    static FIRST: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
}

/// Records the summary of a failed comparison, unless one is recorded already.
pub fn record(contract: &Contract, case: &RawCase, got: &[Array]) {
    FIRST.with(|first| {
        let mut first = first.borrow_mut();
        if first.is_none() {
            *first = Some(lines(&summarize(contract, case, got)));
        }
    });
}

/// Takes the recorded summary (and clears it for the next case).
pub fn take() -> Vec<String> {
    FIRST.with(|first| first.borrow_mut().take()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::raw::{Buffer, Dtype, Len};

    const OUT: [Buffer; 1] = [Buffer { role: "out", dtype: Dtype::Int64, len: Len::N }];
    const F_OUT: [Buffer; 1] = [Buffer { role: "out", dtype: Dtype::Float32, len: Len::N }];

    fn contract(outputs: &'static [Buffer]) -> Contract {
        Contract::exact("test", "a test contract", &[], outputs, "out")
    }

    #[test]
    fn integer_mismatches_are_counted_listed_and_measured() {
        let case = RawCase::new(vec![], vec![Array::Int64((0..100).collect())]);
        let mut got: Vec<i64> = (0..100).collect();
        for (i, v) in [(3, 4), (10, 13), (20, 21), (30, 30 - 7), (40, 41), (50, 51), (60, 61)] {
            got[i] = v;
        }
        let s = summarize_output(&contract(&OUT), &case, 0, &Array::Int64(got));
        assert_eq!((s.compared, s.mismatched), (100, 7));
        assert_eq!(s.first.len(), FIRST_SHOWN);
        assert_eq!(s.first[0], Diff { index: 3, expected: "3".into(), got: "4".into() });
        assert_eq!(s.first[3], Diff { index: 30, expected: "30".into(), got: "23".into() });
        assert_eq!(s.max_abs, Some((7.0, 30)));
        assert_eq!(s.max_rel, Some((1.0 / 3.0, 3)));
        assert_eq!(s.max_ulp, None);
        let text = lines(&[s]);
        assert_eq!(text[0], "mismatched elements of out: 7 / 100 (7.0%)");
        assert!(text[1].starts_with("first mismatches: [3] expected 3 got 4; [10] expected 10 got 13;"), "{text:?}");
        assert_eq!(text[2], "greatest absolute difference: 7 at index 30");
    }

    #[test]
    fn a_short_output_counts_its_missing_elements() {
        let case = RawCase::new(vec![], vec![Array::Int64(vec![1, 2, 3, 4])]);
        let s = summarize_output(&contract(&OUT), &case, 0, &Array::Int64(vec![1, 2]));
        assert_eq!((s.compared, s.mismatched), (4, 2));
        assert_eq!(s.first[0], Diff { index: 2, expected: "3".into(), got: "(none)".into() });
    }

    #[test]
    fn float_errors_are_absolute_relative_and_in_ulps() {
        let expected = vec![1.0f32, 2.0, -4.0, 8.0, 0.5];
        let mut got = expected.clone();
        got[1] = f32::from_bits(2.0f32.to_bits() + 3); // 3 ulps above 2
        got[2] = -4.5; // abs 0.5, rel 0.125
        got[4] = f32::NAN;
        let case = RawCase::new(vec![], vec![Array::Float32(expected)]);
        let s = summarize_output(&contract(&F_OUT), &case, 0, &Array::Float32(got));
        assert_eq!((s.compared, s.mismatched, s.not_finite), (5, 3, 1));
        assert_eq!(s.max_abs, Some((0.5, 2)));
        assert_eq!(s.max_rel, Some((0.125, 2)));
        // -4 to -4.5 in f32: 0.5 / 2^-21 (the spacing in [4, 8)) = 2^20 ulps.
        assert_eq!(s.max_ulp, Some((1 << 20, 2)));
        let text = lines(&[s]).join("\n");
        assert!(text.contains("greatest relative difference: 1.25e-1 at index 2"), "{text}");
        assert!(text.contains("1 element(s) NaN or infinite"), "{text}");
    }

    #[test]
    fn signed_zeros_are_no_ulp_apart_but_differ_bit_for_bit() {
        let case = RawCase::new(vec![], vec![Array::Float32(vec![0.0])]);
        let s = summarize_output(&contract(&F_OUT), &case, 0, &Array::Float32(vec![-0.0]));
        assert_eq!((s.mismatched, s.max_abs, s.max_ulp), (1, None, None));
    }

    #[test]
    fn bf16_rounds_to_nearest_even() {
        assert_eq!(bf16_bits(1.0), 0x3f80);
        // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to the even 1.
        assert_eq!(bf16_bits(1.0 + 1.0 / 256.0), 0x3f80);
        assert_eq!(bf16_bits(1.0 + 3.0 / 256.0), 0x3f82);
        assert_eq!(ordered(-1.0, Width::Bf16), -0x3f80);
    }

    #[test]
    fn float16_elements_are_read_exactly_and_measured_in_their_own_ulps() {
        // 1.0 is 0x3c00; 0x3c03 is 3 float16 ulps above it (spacing 2^-10).
        let case = RawCase::new(vec![], vec![Array::Float16(vec![0x3c00, 0x8000])]);
        let s = summarize_output(&contract(&F_OUT), &case, 0, &Array::Float16(vec![0x3c03, 0x0000]));
        assert_eq!((s.compared, s.mismatched), (2, 2));
        assert_eq!(s.max_ulp, Some((3, 0)));
        assert_eq!(s.max_abs, Some((3.0 / 1024.0, 0)));
        assert_eq!(ordered(-1.0, Width::F16), -0x3c00);
    }

    #[test]
    fn the_first_recorded_failure_is_kept_until_taken() {
        let case = RawCase::new(vec![], vec![Array::Int64(vec![1])]);
        record(&contract(&OUT), &case, &[Array::Int64(vec![2])]);
        record(&contract(&OUT), &case, &[Array::Int64(vec![9])]);
        let taken = take();
        assert!(taken.iter().any(|l| l.contains("[0] expected 1 got 2")), "{taken:?}");
        assert!(take().is_empty());
    }
}

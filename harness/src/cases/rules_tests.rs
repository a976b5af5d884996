//! The named rules on the CPU: each rule's cases, an independent program
//! written to the rule (passes it, fails the base contract with a line that
//! names the rule), and one written to the base rule (fails the named rule).

use super::*;
use crate::sweep::case::Verdict;

const SIZES: [usize; 5] = [1, 2, 33, 1000, 4099];

fn cases_of(primitive: Primitive, name: &str) -> (&'static Contract, Vec<(String, RawCase)>) {
    let contract = contract(primitive, name).expect("a contract");
    let plan = SweepPlan::of_primitive(primitive, &SIZES, 0x5eed);
    let cases = with_catalogue(&plan, primitive, contract, "u")
        .into_iter()
        .map(|s| ((s.id.family.clone()), (s.make)().unwrap_or_else(|e| panic!("{}: {e}", s.id.key()))))
        .collect();
    (contract, cases)
}

fn failure(v: Verdict) -> String {
    match v {
        Verdict::Fail(m) => format!("{} expected={} got={}", m.what, m.expected, m.got),
        other => panic!("should fail, got {other:?}"),
    }
}

/// Runs `program` on every case of `name` (each must pass) and of its base.
/// `Base::Fails`: some base case fails, each failure naming the rule it would
/// pass; `Base::Agrees`: the base holds no input where the two rules differ,
/// so every base case passes too.
fn passes_the_rule(primitive: Primitive, name: &str, program: fn(&RawCase) -> Vec<Array>, base: Base) {
    let (rule_contract, cases) = cases_of(primitive, name);
    for (family, case) in &cases {
        let v = compare(rule_contract, case, &program(case));
        assert!(v.passed(), "{name} {family}: {v:?}");
    }
    let base_name = rule_of(rule_contract).expect("a rule").base;
    let (base_contract, base_cases) = cases_of(primitive, base_name);
    let failures: Vec<String> = base_cases
        .iter()
        .map(|(_, case)| compare(base_contract, case, &program(case)))
        .filter(|v| !v.passed())
        .map(failure)
        .collect();
    match base {
        Base::Agrees => assert!(failures.is_empty(), "{base_name}: {failures:?}"),
        Base::Fails => {
            assert!(!failures.is_empty(), "{base_name}: the rule's program passed every base case");
            for f in &failures {
                assert!(f.contains(&format!("would pass under {name}")), "{f}");
            }
        }
    }
}

/// What the base contract makes of a program written to the rule.
enum Base {
    Fails,
    Agrees,
}

// ---- independent programs ------------------------------------------------------------------

fn int(case: &RawCase, k: usize) -> i64 {
    case.params[k].as_int().expect("an int parameter")
}

fn float(case: &RawCase, k: usize) -> f32 {
    match case.params[k] {
        Value::Float32(v) => v,
        other => panic!("float parameter, found {other:?}"),
    }
}

/// A histogram with the last bin closed, by the contract's formulas written out.
fn histogram_closed(case: &RawCase) -> Vec<Array> {
    let bins = int(case, 0) as usize;
    let mut counts = vec![0i32; bins];
    match &case.inputs[0] {
        Array::Int32(x) => {
            let (lower, upper) = (int(case, 1), int(case, 2));
            for &v in x {
                let v = v as i64;
                if lower <= v && v <= upper {
                    counts[(((v - lower) * bins as i64) / (upper - lower)).min(bins as i64 - 1) as usize] += 1;
                }
            }
        }
        Array::Float32(x) => {
            let (lower, upper, scale) = (float(case, 1), float(case, 2), float(case, 3));
            for &v in x {
                if lower <= v && v <= upper {
                    counts[(((v - lower) * scale) as i64).min(bins as i64 - 1) as usize] += 1;
                }
            }
        }
        other => panic!("histogram input {:?}", other.dtype()),
    }
    vec![Array::Int32(counts)]
}

/// A softmax in f64 whose all-masked rows are NaN.
fn softmax_nan_rows(case: &RawCase) -> Vec<Array> {
    let Array::Float32(x) = &case.inputs[0] else { panic!("f32 logits") };
    let (rows, cols) = (int(case, 0) as usize, int(case, 1) as usize);
    let mut out = vec![0f32; x.len()];
    for r in 0..rows {
        let row = &x[r * cols..(r + 1) * cols];
        let m = row.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v as f64));
        let d: f64 = row.iter().map(|&v| (v as f64 - m).exp()).sum();
        for c in 0..cols {
            out[r * cols + c] = ((row[c] as f64 - m).exp() / d) as f32;
        }
    }
    vec![Array::Float32(out)]
}

/// The same softmax with all-masked rows written as 0 (our base rule).
fn softmax_zero_rows(case: &RawCase) -> Vec<Array> {
    let mut out = softmax_nan_rows(case);
    if let Array::Float32(v) = &mut out[0] {
        v.iter_mut().filter(|p| p.is_nan()).for_each(|p| *p = 0.0);
    }
    out
}

/// numpy's argmax: a NaN is greater than everything, the first one wins.
fn numpy_argmax(case: &RawCase) -> Vec<Array> {
    let Array::Float32(x) = &case.inputs[0] else { panic!("f32 input") };
    let mut best = 0usize;
    for i in 1..x.len() {
        if x[best].is_nan() {
            break;
        }
        if x[i].is_nan() || x[i] > x[best] {
            best = i;
        }
    }
    vec![Array::Int64(vec![best as i64])]
}

/// An argmax that skips NaN (numpy's nanargmax).
fn nan_skipping_argmax(case: &RawCase) -> Vec<Array> {
    let Array::Float32(x) = &case.inputs[0] else { panic!("f32 input") };
    let mut best: Option<usize> = None;
    for (i, &v) in x.iter().enumerate() {
        if !v.is_nan() && best.is_none_or(|b| v > x[b]) {
            best = Some(i);
        }
    }
    vec![Array::Int64(vec![best.unwrap_or(0) as i64])]
}

// ---- tests ---------------------------------------------------------------------------------

#[test]
fn every_named_rule_resolves_by_name_and_states_its_rule() {
    for rule in &RULES {
        let c = contract(rule.primitive, rule.contract.name).expect("resolves");
        assert!(std::ptr::eq(c, &rule.contract));
        let base = raw::contract(rule.primitive, rule.base).expect("its base is a registry contract");
        assert_eq!((c.inputs, c.params, c.outputs, c.rule), (base.inputs, base.params, base.outputs, base.rule));
        assert!(c.name.starts_with(&format!("{}.", rule.base)), "{} names its base", c.name);
        assert!(c.summary.contains("torch.") || c.summary.contains("numpy."), "{}: who follows the rule", c.name);
        assert!(rule_of(base).is_none(), "a registry contract is no rule");
    }
    let e = contract(Primitive::Histogram, "even.f32.closed").unwrap_err();
    assert!(e.contains("even.f32.last_bin_closed") && e.contains("even.i32"), "{e}");
}

#[test]
fn the_histogram_with_its_last_bin_closed() {
    passes_the_rule(Primitive::Histogram, "even.i32.last_bin_closed", histogram_closed, Base::Fails);
    passes_the_rule(Primitive::Histogram, "even.f32.last_bin_closed", histogram_closed, Base::Fails);
    // The rule's own family puts samples at upper, and the answer counts them.
    let (_, cases) = cases_of(Primitive::Histogram, "even.i32.last_bin_closed");
    let (_, case) = cases
        .iter()
        .find(|(f, c)| f == "upper_edges" && matches!(&c.inputs[0], Array::Int32(x) if x.len() == 1000))
        .expect("family");
    let Array::Int32(x) = &case.inputs[0] else { panic!() };
    let at_upper = x.iter().filter(|&&v| v == EDGE_UPPER).count() as i32;
    let Array::Int32(counts) = &case.expected[0] else { panic!() };
    assert!(at_upper > 100 && counts[EDGE_BINS as usize - 1] >= at_upper, "{at_upper} {counts:?}");
}

#[test]
fn the_softmax_whose_all_masked_rows_are_nan() {
    passes_the_rule(Primitive::Softmax, "rows.f32.all_masked_nan", softmax_nan_rows, Base::Fails);
    let (c, cases) = cases_of(Primitive::Softmax, "rows.f32.all_masked_nan");
    let failures: Vec<String> = cases
        .iter()
        .map(|(_, case)| compare(c, case, &softmax_zero_rows(case)))
        .filter(|v| !v.passed())
        .map(failure)
        .collect();
    assert!(!failures.is_empty(), "a row of zeros must fail the NaN rule");
    assert!(failures.iter().all(|f| f.contains("rule all_masked_nan") && f.contains("expected=NaN")), "{failures:?}");
}

#[test]
fn argmax_and_argmin_with_nan_first() {
    passes_the_rule(Primitive::ArgReduce, "argmax.f32.nan_first", numpy_argmax, Base::Agrees);
    let (c, cases) = cases_of(Primitive::ArgReduce, "argmax.f32.nan_first");
    let families: Vec<&str> = cases.iter().map(|(f, _)| f.as_str()).collect();
    for family in ["nan_late", "nan_first_element", "infinities"] {
        assert!(families.contains(&family), "{family} in {families:?}");
    }
    let failures: Vec<String> = cases
        .iter()
        .map(|(_, case)| compare(c, case, &nan_skipping_argmax(case)))
        .filter(|v| !v.passed())
        .map(failure)
        .collect();
    assert!(!failures.is_empty(), "skipping NaN must fail the NaN-first rule");
    // The rule's answers, on hand-made inputs.
    let (nan, inf) = (f32::NAN, f32::INFINITY);
    let first = |x: &[f32], max| nan_rule_index(x, max, true);
    assert_eq!(first(&[1.0, nan, 3.0, nan], true), Some(1));
    assert_eq!(first(&[-0.0, 0.0, -1.0], true), Some(0), "-0.0 ties 0.0, the lower index wins");
    assert_eq!(first(&[1.0, inf, inf, -inf], true), Some(1));
    assert_eq!(first(&[1.0, inf, -inf, -inf], false), Some(2));
    assert_eq!(first(&[-inf, nan], false), Some(1));
    assert_eq!(first(&[], true), None);
}

#[test]
fn argmax_and_argmin_with_nan_ignored() {
    passes_the_rule(Primitive::ArgReduce, "argmax.f32.nan_ignored", nan_skipping_argmax, Base::Agrees);
    let (c, cases) = cases_of(Primitive::ArgReduce, "argmax.f32.nan_ignored");
    assert!(cases
        .iter()
        .all(|(_, case)| matches!(&case.inputs[0], Array::Float32(x) if x.iter().any(|v| !v.is_nan()))));
    let fails = cases.iter().filter(|(_, case)| !compare(c, case, &numpy_argmax(case)).passed()).count();
    assert!(fails > 0, "NaN first must fail the NaN-ignored rule");
    let ignored = |x: &[f32], max| nan_rule_index(x, max, false);
    let (nan, inf) = (f32::NAN, f32::INFINITY);
    assert_eq!(ignored(&[nan, 1.0, 3.0, nan, 3.0], true), Some(2));
    assert_eq!(ignored(&[nan, -inf, 2.0], false), Some(1));
    assert_eq!(ignored(&[nan, -0.0, 0.0], true), Some(1));
    assert_eq!(ignored(&[nan, inf], true), Some(1));
    assert_eq!(ignored(&[nan], true), None);
}

#[test]
fn a_registry_contract_failing_where_no_rule_passes_names_no_rule() {
    let (c, cases) = cases_of(Primitive::Histogram, "even.i32");
    let (_, case) = &cases[0];
    let mut wrong = histogram_closed(case);
    if let Array::Int32(v) = &mut wrong[0] {
        v[0] += 1;
    }
    let f = failure(compare(c, case, &wrong));
    assert!(!f.contains("would pass under"), "{f}");
}

#[test]
fn a_framework_names_its_rule_over_a_contract_or_the_contract_itself() {
    let named = |p, name, fw| contract_for(p, name, Some(fw)).map(|(c, note)| (c.name, note.unwrap_or_default()));
    let (c, note) = named(Primitive::Histogram, "even.f32", "torch").unwrap();
    assert_eq!(
        (c, note.as_str()),
        ("even.f32.last_bin_closed", "torch's rule over even.f32: even.f32.last_bin_closed")
    );
    assert_eq!(named(Primitive::ArgReduce, "argmin.f32", "numpy").unwrap().0, "argmin.f32.nan_first");
    assert_eq!(named(Primitive::Softmax, "rows.f32", "torch").unwrap().0, "rows.f32.all_masked_nan");
    let (c, note) = named(Primitive::Softmax, "rows.f32", "numpy").unwrap();
    assert_eq!(c, "rows.f32");
    assert!(note.contains("no named rule over rows.f32 differs"), "{note}");
    assert_eq!(named(Primitive::Scan, "exclusive.i32", "torch").unwrap().0, "exclusive.i32");
    assert!(named(Primitive::Scan, "exclusive.i32", "jax").unwrap_err().contains("unknown framework 'jax'"));
    assert!(named(Primitive::Histogram, "even.f32.last_bin_closed", "torch")
        .unwrap_err()
        .contains("a named rule already"));
    assert!(contract_for(Primitive::Histogram, "even.f32", None).unwrap().1.is_none());
    for rule in &RULES {
        assert!(rule.frameworks.iter().all(|f| FRAMEWORKS.contains(f)), "{}", rule.contract.name);
    }
}

#[test]
fn a_failure_past_the_hint_size_is_reported_without_trying_the_rules() {
    let n = HINT_MAX_ELEMENTS + 1;
    let upper = 11;
    let case = RawCase {
        inputs: vec![Array::Int32(vec![upper; n])],
        params: vec![Value::Int32(7), Value::Int32(-3), Value::Int32(upper)],
        expected: vec![Array::Int32(vec![0; 7])],
    };
    let c = contract(Primitive::Histogram, "even.i32").expect("contract");
    let mut closed = vec![0; 7];
    closed[6] = n as i32;
    let f = failure(compare(c, &case, &[Array::Int32(closed)]));
    assert!(!f.contains("would pass under"), "{f}");
}

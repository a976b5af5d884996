//! The NaN rules of float min and max, compaction and histograms: their
//! names, model and comparison, and host "kernels" written apart from the
//! model (a max that drops NaN, one that propagates it, a compaction that
//! keeps NaN, a histogram that bins it) judged over whole catalogues: the
//! right ones pass, the wrong ones fail with a line naming the rule.

use super::catalogue::model;
use super::families::{self, float_values, NANS};
use super::parts::Op;
use super::{of, Typed};
use crate::cases::rules;
use crate::registry::Primitive;
use crate::sweep::case::{Mismatch, Verdict};
use crate::sweep::raw::{Array, Dtype, RawCase, Value};
use crate::sweep::SweepPlan;

const SIZES: [usize; 3] = [1, 33, 4099];
const LARGEST: usize = 5000;
const SEED: u64 = 0x4a4e_5eed;
const FLOATS: [&str; 4] = ["bf16", "f16", "f32", "f64"];

fn typed(primitive: Primitive, name: &str) -> &'static Typed {
    let contract = rules::contract(primitive, name).unwrap_or_else(|e| panic!("{name}: {e}"));
    of(contract).unwrap_or_else(|| panic!("{name} is typed"))
}

/// A host kernel: the outputs it writes for a case's inputs and parameters.
type Host = dyn Fn(&Typed, &RawCase) -> Vec<Array>;

/// The first failure of `host` over the catalogue of `name` at [`SIZES`] (cases up to [`LARGEST`]).
fn first_failure(primitive: Primitive, name: &str, host: &Host) -> Option<(String, Mismatch)> {
    let t = typed(primitive, name);
    let plan = SweepPlan::of_primitive(primitive, &SIZES, SEED);
    for spec in rules::with_catalogue(&plan, primitive, &t.contract, "host") {
        if spec.id.n > LARGEST {
            continue;
        }
        let case = (spec.make)().unwrap_or_else(|e| panic!("{name} n={} {}: {e}", spec.id.n, spec.id.family));
        if let Verdict::Fail(m) = rules::compare(&t.contract, &case, &host(t, &case)) {
            return Some((format!("{name} n={} {} seed {SEED:#x}", spec.id.n, spec.id.family), m));
        }
    }
    None
}

fn passes(primitive: Primitive, name: &str, host: &Host) {
    if let Some((case, m)) = first_failure(primitive, name, host) {
        panic!("{case}: a right host kernel failed: {m:?}");
    }
}

fn fails_naming(primitive: Primitive, name: &str, host: &Host, rule: &str) {
    let Some((case, m)) = first_failure(primitive, name, host) else { panic!("{name}: a wrong host kernel passed") };
    assert!(m.what.contains(rule), "{case}: the failure does not name {rule}: {m:?}");
}

/// How a host min or max treats NaN.
#[derive(Clone, Copy)]
enum HostNan {
    /// NaN if any input is NaN (numpy.max, torch.amax).
    Propagate,
    /// `fmax` from the identity: NaN is skipped, a fold of NaN only is the identity.
    FromIdentity,
    /// `numpy.fmax.reduce`: NaN is skipped, a fold of NaN only is NaN.
    FirstElement,
}

/// The min or max of `values` as `how` computes it.
fn host_fold(values: &[f64], max: bool, how: HostNan) -> f64 {
    let pick = |a: f64, b: f64| if max { a.max(b) } else { a.min(b) };
    let identity = if max { f64::NEG_INFINITY } else { f64::INFINITY };
    match how {
        HostNan::Propagate if values.iter().any(|v| v.is_nan()) => f64::NAN,
        HostNan::Propagate | HostNan::FromIdentity => values.iter().fold(identity, |a, &b| pick(a, b)),
        HostNan::FirstElement => values.iter().copied().reduce(pick).unwrap_or(identity),
    }
}

/// A host min or max kernel for reduce, scan and segmented contracts: each output folded on its own.
fn host_extremum(how: HostNan) -> impl Fn(&Typed, &RawCase) -> Vec<Array> {
    move |t, case| {
        let values = float_values(&case.inputs[0]).expect("float input");
        let max = t.parts.op == Op::Max;
        let out: Vec<f64> = match (t.parts.primitive(), t.contract.name.split('.').next()) {
            (Primitive::Scan, Some(kind)) => (0..values.len())
                .map(|i| host_fold(&values[..i + usize::from(kind == "inclusive")], max, how))
                .collect(),
            (Primitive::SegmentedReduce, _) => {
                let Array::Int64(offsets) = &case.inputs[1] else { panic!("offsets") };
                offsets.windows(2).map(|w| host_fold(&values[w[0] as usize..w[1] as usize], max, how)).collect()
            }
            _ => vec![host_fold(&values, max, how)],
        };
        vec![families::float_array(t.parts.dtype_out, out)]
    }
}

/// Every float min and max contract over `rule` (empty: the default).
fn extremum_contracts(rule: &str) -> Vec<(Primitive, String)> {
    let mut out = Vec::new();
    for t in FLOATS {
        for op in ["max", "min"] {
            out.push((Primitive::Reduce, format!("{op}.{t}.{t}{rule}")));
            out.push((Primitive::Scan, format!("inclusive.{op}.{t}.{t}{rule}")));
            out.push((Primitive::Scan, format!("exclusive.{op}.{t}.{t}{rule}")));
            out.push((Primitive::SegmentedReduce, format!("{op}.{t}.{t}{rule}")));
        }
    }
    out
}

#[test]
fn min_and_max_nan_rules_are_named_parsed_and_refused_where_they_do_not_apply() {
    for (primitive, name) in extremum_contracts(".nan_propagate").into_iter().chain(extremum_contracts(".nan_ignored"))
    {
        let t = typed(primitive, &name);
        assert_eq!(t.parts.name(), name);
        assert!(t.contract.summary.contains(if name.ends_with("propagate") { "nan_propagate" } else { "nan_ignored" }));
    }
    let refused = [
        (Primitive::Reduce, "sum.f32.f32.nan_propagate", "a NaN rule applies to"),
        (Primitive::Reduce, "max.i32.i32.nan_ignored", "a NaN rule applies to"),
        (Primitive::Reduce, "max.f32.f32.nan_first", "a min or max takes nan_propagate or nan_ignored"),
        (Primitive::ArgReduce, "argmax.bf16.nan_propagate", "an arg reduction takes nan_first or nan_ignored"),
        (Primitive::Compact, "positive.f32.nan_ignored", "a NaN rule applies to"),
    ];
    for (primitive, name, why) in refused {
        let e = rules::contract(primitive, name).expect_err(name);
        assert!(e.contains(why), "{name}: {e}");
    }
    // The manifest's and primlab.check's nan_rule composes the same name.
    let request = super::Request {
        kind: Some("exclusive".into()),
        op: Some("min".into()),
        dtype_in: Some("bfloat16".into()),
        nan: Some("nan_propagate".into()),
        ..super::Request::default()
    };
    let (c, _) = rules::contract_requested(Primitive::Scan, None, Some(&request), None).expect("composed");
    assert_eq!(c.name, "exclusive.min.bf16.bf16.nan_propagate");
}

#[test]
fn torch_and_numpy_min_and_max_propagate_nan() {
    let cases = [
        (Primitive::Reduce, "max.f32.f32", "torch", "max.f32.f32.nan_propagate"),
        (Primitive::Scan, "inclusive.min.bf16.bf16", "numpy", "inclusive.min.bf16.bf16.nan_propagate"),
        (Primitive::SegmentedReduce, "max.f64.f64", "torch", "max.f64.f64.nan_propagate"),
        (Primitive::Reduce, "max.f32.f32.nan_ignored", "numpy", "max.f32.f32.nan_ignored"),
        (Primitive::Reduce, "sum.f32.f32", "torch", "sum.f32.f32"),
    ];
    for (primitive, base, framework, theirs) in cases {
        let (c, _) = rules::contract_for(primitive, base, Some(framework)).expect(base);
        assert_eq!(c.name, theirs, "{framework} over {base}");
    }
}

#[test]
fn the_model_propagates_or_ignores_nan_per_fold_and_empty_folds_give_the_identity() {
    let nan = f64::NAN;
    let x = Array::Float64(vec![1.0, nan, 3.0]);
    let fold = |primitive, name: &str, inputs: &[Array]| match model(&typed(primitive, name).parts, inputs) {
        Ok(out) => float_values(&out[0]).expect("floats"),
        Err(e) => panic!("{name}: {e}"),
    };
    let same = |a: Vec<f64>, b: &[f64]| a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits());
    let cases: [(Primitive, &str, &[f64]); 6] = [
        (Primitive::Reduce, "max.f64.f64.nan_propagate", &[nan]),
        (Primitive::Reduce, "max.f64.f64.nan_ignored", &[3.0]),
        (Primitive::Scan, "inclusive.max.f64.f64.nan_propagate", &[1.0, nan, nan]),
        (Primitive::Scan, "inclusive.min.f64.f64.nan_ignored", &[1.0, 1.0, 1.0]),
        (Primitive::Scan, "exclusive.max.f64.f64.nan_propagate", &[f64::NEG_INFINITY, 1.0, nan]),
        (Primitive::Scan, "exclusive.min.f64.f64.nan_ignored", &[f64::INFINITY, 1.0, 1.0]),
    ];
    for (primitive, name, want) in cases {
        let got = fold(primitive, name, std::slice::from_ref(&x));
        assert!(got.len() == want.len() && got.iter().zip(want).all(|(g, w)| g == w || (g.is_nan() && w.is_nan())));
    }
    let nan_first = Array::Float64(vec![nan, 2.0]);
    let got = fold(Primitive::Scan, "exclusive.max.f64.f64.nan_ignored", &[nan_first]);
    assert!(got[0] == f64::NEG_INFINITY && got[1].is_nan(), "a prefix of NaN only is NaN: {got:?}");
    let values = Array::Float64(vec![nan, 1.0, 2.0, 3.0]);
    let segments = [values, Array::Int64(vec![0, 2, 2, 4])];
    let got = fold(Primitive::SegmentedReduce, "min.f64.f64.nan_propagate", &segments);
    assert!(got[0].is_nan() && got[1] == f64::INFINITY && got[2] == 2.0, "{got:?}");
    assert!(same(fold(Primitive::Reduce, "max.f64.f64.nan_ignored", &[Array::Float64(vec![])]), &[f64::NEG_INFINITY]));
}

/// A case of `name` whose expected output is `expected` (the comparison reads no input but for the rule's note).
fn case_expecting(expected: Array) -> RawCase {
    RawCase::new(vec![Array::Float32(vec![f32::NAN])], vec![expected])
}

#[test]
fn an_expected_nan_is_matched_by_any_quiet_nan_never_by_a_number_or_the_poison() {
    let t = typed(Primitive::Reduce, "max.f32.f32.nan_propagate");
    let case = case_expecting(Array::Float32(vec![f32::NAN]));
    let judge = |bits: u32| rules::compare(&t.contract, &case, &[Array::Float32(vec![f32::from_bits(bits)])]);
    // Quiet NaNs of either sign, with or without a payload.
    for bits in [0x7fc0_0000, 0xffc0_0000, 0x7fff_ffff, 0xffe0_1234] {
        assert!(judge(bits).passed(), "{bits:#x}");
    }
    // A number, the identity, and the float outputs' poisons (signalling NaNs, left unwritten).
    for bits in [0x3f80_0000, f32::NEG_INFINITY.to_bits(), 0x7fa5_a5a5, 0xffb5_5a5a] {
        let Verdict::Fail(m) = judge(bits) else { panic!("{bits:#x} passed for NaN") };
        assert!(m.what.contains("nan_propagate") && m.expected.contains("NaN"), "{m:?}");
    }
    // Under nan_ignored a fold of NaN only may also give the identity.
    let ignored = typed(Primitive::Reduce, "max.bf16.bf16.nan_ignored");
    let nan_only = case_expecting(Array::Bfloat16(vec![0x7fc0]));
    let bf16 = |b: u16| rules::compare(&ignored.contract, &nan_only, &[Array::Bfloat16(vec![b])]);
    assert!(bf16(0xffc1).passed() && bf16(0xff80).passed(), "a quiet NaN or -inf");
    assert!(!bf16(0x7f80).passed() && !bf16(0x7fa5).passed() && !bf16(0x3f80).passed(), "+inf, the poison, 1.0");
}

#[test]
fn a_max_that_drops_nan_fails_nan_propagate_and_one_that_propagates_fails_nan_ignored() {
    let propagate = host_extremum(HostNan::Propagate);
    let from_identity = host_extremum(HostNan::FromIdentity);
    let first_element = host_extremum(HostNan::FirstElement);
    for (primitive, name) in extremum_contracts(".nan_propagate") {
        passes(primitive, &name, &propagate);
        fails_naming(primitive, &name, &from_identity, "nan_propagate");
        fails_naming(primitive, &name, &first_element, "nan_propagate");
    }
    for (primitive, name) in extremum_contracts(".nan_ignored") {
        passes(primitive, &name, &from_identity);
        passes(primitive, &name, &first_element);
        fails_naming(primitive, &name, &propagate, "nan_ignored");
    }
    // Without a rule no case holds NaN: every one of them passes.
    for (primitive, name) in extremum_contracts("") {
        for host in [&propagate as &Host, &from_identity, &first_element] {
            passes(primitive, &name, host);
        }
    }
}

/// The items of `input` where `keep` holds, bit for bit.
fn pick(input: &Array, keep: &[bool]) -> Array {
    fn sel<T: Copy>(v: &[T], keep: &[bool]) -> Vec<T> {
        v.iter().zip(keep).filter(|(_, &k)| k).map(|(&x, _)| x).collect()
    }
    match input {
        Array::Float32(v) => Array::Float32(sel(v, keep)),
        Array::Float64(v) => Array::Float64(sel(v, keep)),
        Array::Bfloat16(v) => Array::Bfloat16(sel(v, keep)),
        Array::Float16(v) => Array::Float16(sel(v, keep)),
        other => panic!("a float input, not {:?}", other.dtype()),
    }
}

/// A host compaction keeping the items where `keep(x, flag)` holds.
fn host_compaction(keep: fn(f64, u8) -> bool) -> impl Fn(&Typed, &RawCase) -> Vec<Array> {
    move |_, case| {
        let values = float_values(&case.inputs[0]).expect("floats");
        let flags = match case.inputs.get(1) {
            Some(Array::Uint8(f)) => f.clone(),
            _ => vec![0; values.len()],
        };
        let kept: Vec<bool> = values.iter().zip(&flags).map(|(&x, &f)| keep(x, f)).collect();
        let count = kept.iter().filter(|&&k| k).count() as i64;
        vec![pick(&case.inputs[0], &kept), Array::Int64(vec![count])]
    }
}

/// `array` with every NaN replaced by its type's canonical quiet NaN (a move through float arithmetic).
fn canonical_nans(array: Array) -> Array {
    match array {
        Array::Float32(v) => Array::Float32(v.into_iter().map(|x| if x.is_nan() { f32::NAN } else { x }).collect()),
        Array::Float64(v) => Array::Float64(v.into_iter().map(|x| if x.is_nan() { f64::NAN } else { x }).collect()),
        Array::Bfloat16(v) => {
            Array::Bfloat16(v.into_iter().map(|b| if b & 0x7fff > 0x7f80 { 0x7fc0 } else { b }).collect())
        }
        Array::Float16(v) => {
            Array::Float16(v.into_iter().map(|b| if b & 0x7fff > 0x7c00 { 0x7e00 } else { b }).collect())
        }
        other => other,
    }
}

#[test]
fn a_compaction_that_keeps_nan_fails_positive_and_one_that_loses_payloads_fails_flagged() {
    for t in FLOATS {
        let positive = format!("positive.{t}");
        passes(Primitive::Compact, &positive, &host_compaction(|x, _| x > 0.0));
        // A test written as "not <= 0" keeps NaN.
        let keeps_nan = host_compaction(|x, _| x > 0.0 || x.is_nan());
        fails_naming(Primitive::Compact, &positive, &keeps_nan, "NaN rule: not > 0: dropped");
        let flagged = format!("flagged.{t}");
        let moved = host_compaction(|_, f| f != 0);
        passes(Primitive::Compact, &flagged, &moved);
        let canonical = move |t: &Typed, case: &RawCase| {
            let mut out = moved(t, case);
            out[0] = canonical_nans(out[0].clone());
            out
        };
        fails_naming(Primitive::Compact, &flagged, &canonical, "NaN rule: moved bit for bit");
    }
    // The families' NaNs reach every type with their sign and payload.
    let bits = |dtype| match families::float_array(dtype, NANS.iter().map(|&b| f64::from_bits(b)).collect()) {
        Array::Float16(v) | Array::Bfloat16(v) => v.into_iter().map(u64::from).collect::<Vec<_>>(),
        Array::Float32(v) => v.into_iter().map(|x| u64::from(x.to_bits())).collect(),
        other => panic!("{other:?}"),
    };
    assert_eq!(bits(Dtype::Float16), [0x7e00, 0xfe00, 0x7f08, 0xfe80]);
    assert_eq!(bits(Dtype::Bfloat16), [0x7fc0, 0xffc0, 0x7fe1, 0xffd0]);
    assert_eq!(bits(Dtype::Float32), [0x7fc0_0000, 0xffc0_0000, 0x7fe1_0000, 0xffd0_0000]);
}

fn param(case: &RawCase, k: usize) -> f64 {
    match case.params[k] {
        Value::Int32(v) => f64::from(v),
        Value::Float32(v) => f64::from(v),
        Value::Float64(v) => v,
        Value::Int64(v) => v as f64,
    }
}

/// A host float histogram by the contract's formula (float32 for half
/// samples, float64 for double ones), counting where `inside(x, lower, upper)`.
fn host_histogram(inside: fn(f64, f64, f64) -> bool) -> impl Fn(&Typed, &RawCase) -> Vec<Array> {
    move |t, case| {
        let (bins, lower, upper, scale) = (param(case, 0) as usize, param(case, 1), param(case, 2), param(case, 3));
        let mut counts = vec![0i32; bins];
        for x in float_values(&case.inputs[0]).expect("floats") {
            if !inside(x, lower, upper) {
                continue;
            }
            let at = if t.parts.dtype_in == Dtype::Float64 {
                ((x - lower) * scale) as usize
            } else {
                ((x as f32 - lower as f32) * scale as f32) as usize
            };
            counts[at.min(bins - 1)] += 1;
        }
        vec![Array::Int32(counts)]
    }
}

#[test]
fn a_histogram_that_bins_nan_or_infinity_fails_naming_the_rule() {
    for t in ["bf16", "f16", "f64"] {
        let open = format!("even.{t}");
        let closed = format!("even.{t}.last_bin_closed");
        passes(Primitive::Histogram, &open, &host_histogram(|x, lo, up| lo <= x && x < up));
        passes(Primitive::Histogram, &closed, &host_histogram(|x, lo, up| lo <= x && x <= up));
        // NaN fails every comparison: a test written as "not out of range" lets it in (bin 0).
        let lets_nan_in = host_histogram(|x, lo, up| (lo <= x && x < up) || x.is_nan());
        fails_naming(Primitive::Histogram, &open, &lets_nan_in, "NaN rule: counted nowhere");
        // A closed last bin that takes +inf too (it is above upper, not equal to it).
        let takes_infinity = host_histogram(|x, lo, up| lo <= x && (x <= up || x == f64::INFINITY));
        fails_naming(Primitive::Histogram, &closed, &takes_infinity, "bin counts");
    }
}

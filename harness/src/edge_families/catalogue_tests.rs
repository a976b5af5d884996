//! The edge families per contract: which contracts get which families (a hand-written
//! table), that none breaks its contract, that the model's expected outputs agree with
//! computations written here from the contracts' words, that the list is deterministic for
//! a seed and a size's cases do not depend on the other sizes, and that each family fails
//! the kind of kernel bug it targets (simulated on the CPU) while the model's answers pass.

use super::bins::{f32_bin_edge, next_down, next_up};
use super::values::MIN_SUBNORMAL;
use super::*;
use crate::sweep::raw::{Array, RawCase, Value};
use std::collections::BTreeSet;

const SEED: u64 = 0x5eed;

/// The families each contract gets, by hand.
const TABLE: [(Primitive, &str, &[&str]); 20] = [
    (Primitive::Reduce, "sum.i32", &["alternating_min_max", "long_runs"]),
    (Primitive::Scan, "exclusive.i32", &["alternating_min_max", "long_runs"]),
    (Primitive::Scan, "inclusive.i32", &["alternating_min_max", "long_runs"]),
    (Primitive::ArgReduce, "argmax.f32", &["float_edges", "signed_zero_ties", "alternating_extremes"]),
    (Primitive::ArgReduce, "argmin.f32", &["float_edges", "signed_zero_ties", "alternating_extremes"]),
    (Primitive::Softmax, "rows.f32", &["softmax_edges"]),
    (Primitive::Compact, "positive.i32", &["alternating_min_max", "long_runs"]),
    (Primitive::Compact, "flagged.i32", &["alternating_min_max", "long_runs"]),
    (
        Primitive::SegmentedReduce,
        "sum.i32",
        &["alternating_min_max.random", "alternating_min_max.lengths", "long_runs.random", "long_runs.lengths"],
    ),
    (
        Primitive::SegmentedReduce,
        "max.i32",
        &["alternating_min_max.random", "alternating_min_max.lengths", "long_runs.random", "long_runs.lengths"],
    ),
    (Primitive::Histogram, "even.i32", &["alternating_min_max.bins4096_full_range", "long_runs.bins4096_full_range"]),
    (Primitive::Histogram, "even.f32", &["bin_edges.bins100"]),
    (Primitive::FloatReduce, "sum.f32", &["sum_edges"]),
    (Primitive::ExactSum, "sum.f32", &["float_edges", "sum_edges", "alternating_extremes", "signed_zero_ties"]),
    // Top-k's own catalogue families are its edges (ties at the k-th value, signed zeros, runs).
    (Primitive::Topk, "largest.f32", &[]),
    (Primitive::Topk, "smallest.f32", &[]),
    (Primitive::Topk, "largest.bf16", &[]),
    (Primitive::Topk, "largest.f16", &[]),
    (Primitive::Topk, "sample.f32", &[]),
    (Primitive::Topk, "sample_with_probability.f32", &[]),
];

fn contract(primitive: Primitive, name: &str) -> &'static Contract {
    raw::contract(primitive, name).expect("a registry contract")
}

fn edge_cases(primitive: Primitive, name: &str, sizes: &[usize]) -> Vec<RawSpec> {
    cases(&SweepPlan::of_primitive(primitive, sizes, SEED), primitive, contract(primitive, name), "user")
}

fn made(spec: &RawSpec) -> RawCase {
    (spec.make)().unwrap_or_else(|e| panic!("{}: {e}", spec.id.key()))
}

fn f32s(a: &Array) -> &[f32] {
    match a {
        Array::Float32(v) => v,
        other => panic!("float32, found {}", other.dtype().name()),
    }
}

fn i32s(a: &Array) -> &[i32] {
    match a {
        Array::Int32(v) => v,
        other => panic!("int32, found {}", other.dtype().name()),
    }
}

fn i64s(a: &Array) -> &[i64] {
    match a {
        Array::Int64(v) => v,
        other => panic!("int64, found {}", other.dtype().name()),
    }
}

/// The cases of one family of one contract at `sizes`, made.
fn family_cases(primitive: Primitive, name: &str, family: &str, sizes: &[usize]) -> Vec<(RawSpec, RawCase)> {
    let all = edge_cases(primitive, name, sizes);
    let picked: Vec<(RawSpec, RawCase)> = all
        .into_iter()
        .filter(|s| s.id.family == family)
        .map(|s| {
            let case = made(&s);
            (s, case)
        })
        .collect();
    assert!(!picked.is_empty(), "{primitive} {name} has {family}");
    picked
}

#[test]
fn every_contract_gets_the_families_that_apply_and_only_those() {
    let mut listed = Vec::new();
    for (primitive, name, families) in TABLE {
        let got: BTreeSet<String> =
            edge_cases(primitive, name, &[1, 33, 4099]).into_iter().map(|s| s.id.family).collect();
        let want: BTreeSet<String> = families.iter().map(|f| f.to_string()).collect();
        assert_eq!(got, want, "{primitive} {name}");
        listed.push((primitive, name));
    }
    let mut all = Vec::new();
    for p in Primitive::ALL {
        all.extend(raw::contracts(p).iter().map(|c| (p, c.name)));
    }
    assert_eq!(listed, all, "the table lists every contract of the registry");
}

#[test]
fn each_family_runs_once_per_size_up_to_two_to_the_twenty_and_never_under_a_sanitizer() {
    let big = EDGE_FAMILIES_MAX + 1;
    for (primitive, name, families) in TABLE {
        let specs = edge_cases(primitive, name, &[1, 33, EDGE_FAMILIES_MAX, big, 1 << 24]);
        assert!(specs.iter().all(|s| s.id.n <= EDGE_FAMILIES_MAX), "{primitive} {name}");
        if primitive != Primitive::Softmax {
            // Softmax visits its own row widths, whatever the sizes.
            assert_eq!(specs.len(), 3 * families.len(), "{primitive} {name}: every family at 1, 33 and 2^20");
        }
        let sanitizer = SweepPlan::sanitizer(primitive, &[1, 33], SEED, &[]);
        assert!(cases(&sanitizer, primitive, contract(primitive, name), "user").is_empty(), "{primitive} {name}");
    }
    // Softmax: one block of edge rows at each of the catalogue's 14 widths (each block holds at
    // most 300,000 logits).
    let softmax = edge_cases(Primitive::Softmax, "rows.f32", &[1]);
    assert_eq!(softmax.len(), 14);
    assert!(softmax.iter().any(|s| s.id.size == "61x1") && softmax.iter().any(|s| s.id.size == "2x131072"));
}

#[test]
fn the_list_is_deterministic_and_a_size_does_not_depend_on_the_others() {
    for (primitive, name, _) in TABLE {
        let alone = edge_cases(primitive, name, &[33]);
        let among = edge_cases(primitive, name, &[1, 33, 257]);
        // Softmax visits its own widths whatever the sizes: its three narrowest suffice here.
        for spec in alone.iter().take(3) {
            let twin = among.iter().find(|s| s.id == spec.id).unwrap_or_else(|| panic!("{}", spec.id.key()));
            assert_eq!(made(spec), made(twin), "{}", spec.id.key());
        }
        let again = edge_cases(primitive, name, &[1, 33, 257]);
        assert_eq!(among.iter().map(|s| &s.id).collect::<Vec<_>>(), again.iter().map(|s| &s.id).collect::<Vec<_>>());
        let other =
            cases(&SweepPlan::of_primitive(primitive, &[33], SEED + 1), primitive, contract(primitive, name), "u");
        assert!(
            other.iter().zip(&alone).all(|(a, b)| a.id.seed != b.id.seed),
            "{primitive} {name}: seeds follow the plan"
        );
    }
}

#[test]
fn no_edge_case_shares_a_seed_with_a_catalogue_case_of_its_size() {
    for (primitive, name, _) in TABLE {
        let plan = SweepPlan::of_primitive(primitive, &[1, 33, 4099], SEED);
        let c = contract(primitive, name);
        let catalogue: BTreeSet<(String, u64)> =
            raw::catalogue(&plan, primitive, c, "u").into_iter().map(|s| (s.id.size, s.id.seed)).collect();
        let edges = cases(&plan, primitive, c, "u");
        let seeds: BTreeSet<(String, u64)> = edges.iter().map(|s| (s.id.size.clone(), s.id.seed)).collect();
        assert_eq!(seeds.len(), edges.len(), "{primitive} {name}: one seed per edge case");
        assert!(seeds.is_disjoint(&catalogue), "{primitive} {name}");
    }
}

#[test]
fn check_and_cases_see_the_catalogue_then_the_edge_families() {
    let plan = SweepPlan::of_primitive(Primitive::Scan, &[1, 33], SEED);
    let c = contract(Primitive::Scan, "exclusive.i32");
    let all = with_catalogue(&plan, Primitive::Scan, c, "u");
    let catalogue = raw::catalogue(&plan, Primitive::Scan, c, "u");
    let families: Vec<&str> = all[catalogue.len()..].iter().map(|s| s.id.family.as_str()).collect();
    assert_eq!(families, ["alternating_min_max", "long_runs", "alternating_min_max", "long_runs"]);
    assert!(all.iter().zip(&catalogue).all(|(a, b)| a.id == b.id), "the catalogue first, unchanged");
    let exported = crate::cases::export::specs(Primitive::Scan, &[c], &plan);
    let ids: Vec<_> = exported.iter().map(|(_, s)| s.id.key()).collect();
    let want: Vec<_> =
        with_catalogue(&plan, Primitive::Scan, c, crate::cases::export::LABEL).iter().map(|s| s.id.key()).collect();
    assert_eq!(ids, want);
}

// ---- The values are within each contract.

#[test]
fn arg_reduce_and_softmax_inputs_are_finite() {
    for name in ["argmax.f32", "argmin.f32"] {
        for spec in edge_cases(Primitive::ArgReduce, name, &[1, 2, 31, 257, 4099]) {
            assert!(f32s(&made(&spec).inputs[0]).iter().all(|x| x.is_finite()), "{}", spec.id.key());
        }
    }
    for spec in edge_cases(Primitive::Softmax, "rows.f32", &[1]).iter().take(3) {
        assert!(f32s(&made(spec).inputs[0]).iter().all(|x| x.is_finite()), "{}", spec.id.key());
    }
}

/// `a + b` in f32 with subnormal inputs and result flushed to zero of the same sign (float
/// atomics, code compiled with flush-to-zero).
fn add_ftz(a: f32, b: f32) -> f32 {
    let flush = |x: f32| if x.is_subnormal() { 0.0f32.copysign(x) } else { x };
    flush(flush(a) + flush(b))
}

#[test]
fn no_order_of_a_bounded_sum_overflows_and_flushing_subnormals_stays_within_the_bound() {
    let c = contract(Primitive::FloatReduce, "sum.f32");
    let sizes: Vec<usize> = (1..=40).chain([255, 257, 4099, 65_537]).collect();
    for spec in edge_cases(Primitive::FloatReduce, "sum.f32", &sizes) {
        let case = made(&spec);
        let x = f32s(&case.inputs[0]);
        let sum_abs: f64 = x.iter().map(|&v| (v as f64).abs()).sum();
        assert!(sum_abs < 2f64.powi(126), "{}: sum|x| {sum_abs:e} bounds every partial sum", spec.id.key());
        let left_to_right: f32 = x.iter().sum();
        let flushed = x.iter().fold(0.0f32, |acc, &v| add_ftz(acc, v));
        let reversed = x.iter().rev().fold(0.0f32, |acc, &v| add_ftz(acc, v));
        for got in [left_to_right, flushed, reversed] {
            let verdict = c.compare(&case, &[Array::Float32(vec![got])]);
            assert!(verdict.passed(), "{}: {got:e}: {verdict:?}", spec.id.key());
        }
    }
}

// ---- The model's answers, against computations written from the contracts.

#[test]
fn integer_answers_match_direct_loops() {
    for name in ["exclusive.i32", "inclusive.i32"] {
        for (spec, case) in family_cases(Primitive::Scan, name, "alternating_min_max", &[1, 4, 257]) {
            let x = i32s(&case.inputs[0]);
            let mut acc = 0i64;
            let mut want = Vec::new();
            for &v in x {
                if name == "inclusive.i32" {
                    acc += v as i64;
                }
                want.push(acc);
                if name == "exclusive.i32" {
                    acc += v as i64;
                }
            }
            assert_eq!(i64s(&case.expected[0]), want.as_slice(), "{}", spec.id.key());
        }
    }
    // alternating_min_max sums to -1 per pair, plus i32::MIN or i32::MAX for an odd n.
    for (spec, case) in family_cases(Primitive::Reduce, "sum.i32", "alternating_min_max", &[4, 5]) {
        let first = i32s(&case.inputs[0])[0] as i64;
        let want = if spec.id.n == 4 { -2 } else { -2 + first };
        assert_eq!(i64s(&case.expected[0]), [want], "{}", spec.id.key());
    }
    for (spec, case) in family_cases(Primitive::Reduce, "sum.i32", "long_runs", &[4099]) {
        let sum: i64 = i32s(&case.inputs[0]).iter().map(|&v| v as i64).sum();
        assert_eq!(i64s(&case.expected[0]), [sum], "{}", spec.id.key());
    }
    for (spec, case) in family_cases(Primitive::Compact, "positive.i32", "long_runs", &[4099]) {
        let kept: Vec<i32> = i32s(&case.inputs[0]).iter().copied().filter(|&v| v > 0).collect();
        assert_eq!(i32s(&case.expected[0]), kept.as_slice(), "{}", spec.id.key());
        assert_eq!(i64s(&case.expected[1]), [kept.len() as i64]);
    }
    for (spec, case) in family_cases(Primitive::Compact, "flagged.i32", "alternating_min_max", &[257]) {
        let Array::Uint8(flags) = &case.inputs[1] else { panic!("uint8 flags") };
        let x = i32s(&case.inputs[0]);
        let kept: Vec<i32> = x.iter().zip(flags).filter(|(_, &f)| f != 0).map(|(&v, _)| v).collect();
        assert!(!kept.is_empty() && kept.len() < x.len(), "{}: some flags set, some not", spec.id.key());
        assert_eq!(i32s(&case.expected[0]), kept.as_slice(), "{}", spec.id.key());
    }
}

#[test]
fn segmented_answers_match_a_loop_over_the_offsets() {
    for name in ["sum.i32", "max.i32"] {
        for family in ["alternating_min_max.lengths", "long_runs.random"] {
            for (spec, case) in family_cases(Primitive::SegmentedReduce, name, family, &[33, 4099]) {
                let x = i32s(&case.inputs[0]);
                let offsets = i64s(&case.inputs[1]);
                let want: Vec<i64> = offsets
                    .windows(2)
                    .map(|w| {
                        let segment = x[w[0] as usize..w[1] as usize].iter().map(|&v| v as i64);
                        if name == "max.i32" {
                            segment.max().unwrap_or(i64::MIN)
                        } else {
                            segment.sum()
                        }
                    })
                    .collect();
                assert_eq!(i64s(&case.expected[0]), want.as_slice(), "{}", spec.id.key());
                assert_eq!(case.params, vec![Value::Int64(want.len() as i64)]);
            }
        }
    }
}

#[test]
fn histogram_answers_match_the_contracts_bin_formulas() {
    for family in ["alternating_min_max.bins4096_full_range", "long_runs.bins4096_full_range"] {
        for (spec, case) in family_cases(Primitive::Histogram, "even.i32", family, &[257, 4099]) {
            assert_eq!(case.params, vec![Value::Int32(4096), Value::Int32(i32::MIN), Value::Int32(i32::MAX)]);
            let mut want = vec![0i32; 4096];
            for &x in i32s(&case.inputs[0]).iter().filter(|&&x| x < i32::MAX) {
                // ((x - lower) * bins) / (upper - lower) in 64-bit integers.
                want[((x as i64 - i32::MIN as i64) * 4096 / (u32::MAX as i64)) as usize] += 1;
            }
            assert_eq!(i32s(&case.expected[0]), want.as_slice(), "{}", spec.id.key());
            if family.starts_with("alternating") {
                // By hand: every i32::MIN in bin 0, i32::MAX out of range.
                let mins = i32s(&case.inputs[0]).iter().filter(|&&x| x == i32::MIN).count() as i32;
                assert_eq!((want[0], want[1..].iter().sum::<i32>()), (mins, 0), "{}", spec.id.key());
            }
        }
    }
    for (spec, case) in family_cases(Primitive::Histogram, "even.f32", "bin_edges.bins100", &[31, 4099]) {
        let [Value::Int32(bins), Value::Float32(lower), Value::Float32(upper), Value::Float32(scale)] = case.params[..]
        else {
            panic!("bins, lower, upper, scale")
        };
        assert_eq!((bins, lower, upper, scale), (100, -0.5, 0.5, 100.0));
        let mut want = vec![0i32; 100];
        for &x in f32s(&case.inputs[0]) {
            // lower <= x < upper, bin = min((int)((x - lower) * scale), bins - 1) in f32.
            if lower <= x && x < upper {
                want[(((x - lower) * scale) as usize).min(99)] += 1;
            }
        }
        assert_eq!(i32s(&case.expected[0]), want.as_slice(), "{}", spec.id.key());
    }
}

#[test]
fn bin_edges_put_every_edge_and_its_neighbours_in_the_case() {
    let spec = crate::sweep::gpu::histogram::F32_SPEC;
    let (_, case) = family_cases(Primitive::Histogram, "even.f32", "bin_edges.bins100", &[4099]).remove(0);
    let seen: BTreeSet<u32> = f32s(&case.inputs[0]).iter().map(|x| x.to_bits()).collect();
    for b in 0..100 {
        let edge = f32_bin_edge(&spec, b);
        for x in [next_down(edge), edge, next_up(edge)] {
            assert!(seen.contains(&x.to_bits()), "{x:e} beside bin {b}");
        }
    }
    // By hand: the range's ends, both zeros, NaN and both infinities.
    for x in [-0.5f32, 0.5, 0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY] {
        assert!(seen.contains(&x.to_bits()), "{x:e}");
    }
    assert!(f32s(&case.inputs[0]).iter().any(|x| x.is_nan()));
}

/// The lowest index of the extremum, comparing values (`-0.0 == 0.0`).
fn first_extremum(x: &[f32], max: bool) -> i64 {
    let mut best = 0;
    for (i, &v) in x.iter().enumerate() {
        if (max && v > x[best]) || (!max && v < x[best]) {
            best = i;
        }
    }
    best as i64
}

#[test]
fn arg_reduce_answers_are_the_lowest_index_of_the_extremum() {
    for (name, max) in [("argmax.f32", true), ("argmin.f32", false)] {
        for family in ["float_edges", "signed_zero_ties", "alternating_extremes"] {
            for (spec, case) in family_cases(Primitive::ArgReduce, name, family, &[1, 2, 33, 4099]) {
                let x = f32s(&case.inputs[0]);
                let want = first_extremum(x, max);
                assert_eq!(i64s(&case.expected[0]), [want], "{}", spec.id.key());
                match family {
                    // Every element ties: index 0.
                    "signed_zero_ties" => assert_eq!(want, 0),
                    // ±largest finite alternate: index 0 or 1 by the first element's sign.
                    "alternating_extremes" if x.len() >= 2 => {
                        assert_eq!(want, i64::from((x[0] == f32::MAX) != max))
                    }
                    // From 12 items on every edge value is present.
                    "float_edges" if x.len() >= 12 => {
                        let extreme = if max { f32::MAX } else { f32::MIN };
                        assert_eq!(want, x.iter().position(|&v| v == extreme).expect("present") as i64)
                    }
                    _ => {}
                }
            }
        }
    }
}

#[test]
fn exact_sums_are_the_rug_models_and_zero_signs_follow_the_contract() {
    let c = contract(Primitive::ExactSum, "sum.f32");
    let sizes: Vec<usize> = (1..=12).chain([31, 257, 4099]).collect();
    for spec in edge_cases(Primitive::ExactSum, "sum.f32", &sizes) {
        let case = made(&spec);
        let x = f32s(&case.inputs[0]);
        let rug = model::exact::correctly_rounded_sum_f32(x);
        assert_eq!(f32s(&case.expected[0])[0].to_bits(), rug.to_bits(), "{}", spec.id.key());
        assert!(c.compare(&case, &[Array::Float32(vec![rug])]).passed());
    }
    // By hand: signed_zero_ties sums to +0.0, and never holds -0.0 terms only (IEEE addition
    // gives -0.0 there, the model +0.0: a contested sign no correct kernel may fail on), though
    // at n = 1 some seeds draw a lone -0.0 that the builder turns into +0.0.
    let mut positive_zero_at_one = false;
    for seed in 0..8 {
        let plan = SweepPlan::of_primitive(Primitive::ExactSum, &[1, 2, 33], seed);
        for spec in cases(&plan, Primitive::ExactSum, c, "u").iter().filter(|s| s.id.family == "signed_zero_ties") {
            let case = made(spec);
            let x = f32s(&case.inputs[0]);
            assert!(!x.iter().all(|v| *v == 0.0 && v.is_sign_negative()), "{}: -0.0 terms only", spec.id.key());
            positive_zero_at_one |= spec.id.n == 1 && x[0].to_bits() == 0;
            assert_eq!(f32s(&case.expected[0])[0].to_bits(), 0.0f32.to_bits(), "{}", spec.id.key());
        }
    }
    assert!(positive_zero_at_one, "n = 1 is covered");
    for (spec, case) in family_cases(Primitive::ExactSum, "sum.f32", "alternating_extremes", &[4, 5]) {
        let x = f32s(&case.inputs[0]);
        let want = if spec.id.n == 4 { 0.0 } else { x[0] };
        assert_eq!(f32s(&case.expected[0])[0].to_bits(), want.to_bits(), "{}", spec.id.key());
    }
}

#[test]
fn float_sum_answers_are_the_exact_sum() {
    for (spec, case) in family_cases(Primitive::FloatReduce, "sum.f32", "sum_edges", &[1, 2, 31, 4099]) {
        let x = f32s(&case.inputs[0]);
        let Array::Float64(expected) = &case.expected[0] else { panic!("float64 expected") };
        // The correctly rounded f32 sum (rug) is within an f32 ulp of the exact sum.
        let rug = model::exact::correctly_rounded_sum_f32(x) as f64;
        let ulp = (rug.abs() * f32::EPSILON as f64).max(MIN_SUBNORMAL as f64);
        assert!((expected[0] - rug).abs() <= ulp, "{}: {:e} vs {rug:e}", spec.id.key(), expected[0]);
    }
    // By hand: n = 1 holds ±1 or ±2^105 (never a lone subnormal).
    for (spec, case) in family_cases(Primitive::FloatReduce, "sum.f32", "sum_edges", &[1]) {
        let x = f32s(&case.inputs[0])[0];
        assert!(x.abs() == 1.0 || x.abs() == values::SUM_EDGE_MAX, "{}: {x:e}", spec.id.key());
    }
}

#[test]
fn softmax_answers_match_a_float64_softmax() {
    for spec in edge_cases(Primitive::Softmax, "rows.f32", &[1]).iter().take(5) {
        let case = made(spec);
        let x = f32s(&case.inputs[0]);
        let [Value::Int32(rows), Value::Int32(cols)] = case.params[..] else { panic!("rows, cols") };
        let (rows, cols) = (rows as usize, cols as usize);
        assert_eq!(rows * cols, x.len());
        let Array::Float64(exact) = &case.expected[0] else { panic!("float64 expected") };
        for r in 0..rows {
            let row = &x[r * cols..(r + 1) * cols];
            let m = row.iter().map(|&v| v as f64).fold(f64::NEG_INFINITY, f64::max);
            let d: f64 = row.iter().map(|&v| (v as f64 - m).exp()).sum();
            for (k, &v) in row.iter().enumerate() {
                let p = (v as f64 - m).exp() / d;
                let e = exact[r * cols + k];
                assert!((p - e).abs() <= 1e-12 * e.max(1e-300), "{} row {r} col {k}: {p:e} vs {e:e}", spec.id.key());
            }
        }
    }
}

// ---- Each family fails the bug it targets; the model's answer passes.

/// Whether `got(case)` fails some case of `family`.
fn caught(primitive: Primitive, name: &str, family: &str, sizes: &[usize], got: impl Fn(&RawCase) -> Array) -> bool {
    let c = contract(primitive, name);
    family_cases(primitive, name, family, sizes).iter().any(|(_, case)| !c.compare(case, &[got(case)]).passed())
}

/// The boundary sizes the families are caught at.
const SMALL: [usize; 8] = [1, 2, 31, 32, 33, 255, 257, 4099];

#[test]
fn signed_zeros_catch_an_argmax_on_bit_patterns_and_a_zero_start() {
    // An order-preserving key of the bits (as packed-key atomicMax kernels use) ranks -0.0
    // strictly below +0.0.
    let key = |x: f32| {
        let b = x.to_bits();
        if b & 0x8000_0000 != 0 {
            !b
        } else {
            b | 0x8000_0000
        }
    };
    let by_bits = |case: &RawCase| {
        let x = f32s(&case.inputs[0]);
        let best = (0..x.len()).fold(0, |best, i| if key(x[i]) > key(x[best]) { i } else { best });
        Array::Int64(vec![best as i64])
    };
    assert!(caught(Primitive::ArgReduce, "argmax.f32", "signed_zero_ties", &SMALL, by_bits));
    // The running best starts at (0.0, -1) and moves on a strictly greater value.
    let zero_start = |case: &RawCase| {
        let x = f32s(&case.inputs[0]);
        let mut best = (0.0f32, -1i64);
        for (i, &v) in x.iter().enumerate() {
            if v > best.0 {
                best = (v, i as i64);
            }
        }
        Array::Int64(vec![best.1])
    };
    assert!(caught(Primitive::ArgReduce, "argmax.f32", "signed_zero_ties", &SMALL, zero_start));
    let model = |case: &RawCase| Array::Int64(vec![first_extremum(f32s(&case.inputs[0]), true)]);
    assert!(!caught(Primitive::ArgReduce, "argmax.f32", "signed_zero_ties", &SMALL, model));
}

/// `lower <= x < upper` of the catalogue's f32 shape, [-0.5, 0.5).
fn in_range(x: f32) -> bool {
    (-0.5..0.5).contains(&x)
}

#[test]
fn bin_edges_catch_a_bin_width_division_and_right_closed_bins() {
    let histogram = |bin: fn(f32) -> Option<usize>| {
        move |case: &RawCase| {
            let mut counts = vec![0i32; 100];
            for &x in f32s(&case.inputs[0]) {
                if let Some(b) = bin(x) {
                    counts[b] += 1;
                }
            }
            Array::Int32(counts)
        }
    };
    // (x - lower) / ((upper - lower) / bins) instead of (x - lower) * scale.
    let divided = histogram(|x| in_range(x).then(|| (((x + 0.5) / (1.0f32 / 100.0)) as usize).min(99)));
    assert!(caught(Primitive::Histogram, "even.f32", "bin_edges.bins100", &SMALL, divided));
    // ceil((x - lower) * scale) - 1: an edge goes one bin lower (x == lower to bin 0 here).
    let right_closed = histogram(|x| in_range(x).then(|| ((((x + 0.5) * 100.0).ceil() as usize).max(1) - 1).min(99)));
    assert!(caught(Primitive::Histogram, "even.f32", "bin_edges.bins100", &SMALL, right_closed));
    let contract_formula = histogram(|x| in_range(x).then(|| (((x + 0.5) * 100.0) as usize).min(99)));
    assert!(!caught(Primitive::Histogram, "even.f32", "bin_edges.bins100", &SMALL, contract_formula));
}

#[test]
fn int_edges_catch_a_negated_min_and_a_32_bit_accumulator() {
    // max as -min(-x) in wrapping 32-bit arithmetic: -i32::MIN is i32::MIN.
    let negated_min = |case: &RawCase| {
        let x = i32s(&case.inputs[0]);
        let out = i64s(&case.inputs[1])
            .windows(2)
            .map(|w| {
                let min = x[w[0] as usize..w[1] as usize].iter().map(|v| v.wrapping_neg()).min();
                min.map_or(i64::MIN, |m| m.wrapping_neg() as i64)
            })
            .collect();
        Array::Int64(out)
    };
    assert!(caught(Primitive::SegmentedReduce, "max.i32", "alternating_min_max.lengths", &SMALL, negated_min));
    assert!(caught(Primitive::SegmentedReduce, "max.i32", "long_runs.random", &SMALL, negated_min));
    // An int32 running sum widened at the end.
    let wrapped = |case: &RawCase| {
        let sum = i32s(&case.inputs[0]).iter().fold(0i32, |a, &v| a.wrapping_add(v));
        Array::Int64(vec![sum as i64])
    };
    assert!(caught(Primitive::Reduce, "sum.i32", "alternating_min_max", &SMALL, wrapped));
    assert!(caught(Primitive::Reduce, "sum.i32", "long_runs", &SMALL, wrapped));
}

#[test]
fn float_edges_catch_a_correctly_rounded_sum_that_flushes_subnormals() {
    let flushing = |case: &RawCase| {
        let x: Vec<f32> =
            f32s(&case.inputs[0]).iter().map(|&v| if v.is_subnormal() { 0.0f32.copysign(v) } else { v }).collect();
        Array::Float32(vec![model::exact::correctly_rounded_sum_f32(&x)])
    };
    let sizes: Vec<usize> = (1..=16).collect();
    assert!(caught(Primitive::ExactSum, "sum.f32", "float_edges", &sizes, flushing));
    assert!(caught(Primitive::ExactSum, "sum.f32", "sum_edges", &sizes, flushing));
}

//! Typed contracts: names, validation, the model, the families, and the
//! comparison against kernels simulated on the host (right ones in several
//! summation orders, and planted bugs).

use super::catalogue::{make, model};
use super::families::{self, float_values, Family};
use super::parts::number_token_of;
use super::*;
use crate::cases::rules;
use crate::sweep::case::Verdict;
use crate::sweep::raw::{Array, RawCase, Value};
use crate::sweep::SweepPlan;

fn contract(primitive: Primitive, name: &str) -> &'static Contract {
    rules::contract(primitive, name).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn typed(primitive: Primitive, name: &str) -> &'static Typed {
    of(contract(primitive, name)).unwrap_or_else(|| panic!("{name} is typed"))
}

fn request(kind: Option<&str>, op: Option<&str>, dtype_in: &str, dtype_out: Option<&str>) -> Request {
    Request {
        kind: kind.map(str::to_string),
        op: op.map(str::to_string),
        dtype_in: Some(dtype_in.into()),
        dtype_out: dtype_out.map(str::to_string),
        ..Request::default()
    }
}

/// The contract `request` composes, as a manifest's parts resolve.
fn requested_contract(primitive: Primitive, request: &Request) -> Result<&'static Contract, String> {
    rules::contract_requested(primitive, None, Some(request), None).map(|(c, _)| c)
}

#[test]
fn names_state_every_part_and_round_trip() {
    let names = [
        (Primitive::Reduce, "sum.bf16.f32"),
        (Primitive::Reduce, "sum.bf16.bf16.acc_bf16"),
        (Primitive::Reduce, "max.i64.i64"),
        (Primitive::Reduce, "sum.i32.i32"),
        (Primitive::Scan, "inclusive.sum.f32.f32.rtol_1e-5.atol_0e0"),
        (Primitive::Scan, "exclusive.max.i32.i32"),
        (Primitive::Scan, "inclusive.min.bf16.f32"),
        (Primitive::Scan, "inclusive.sum.f32.f32.rtol_0e0.atol_0e0.ulp_4"),
        (Primitive::ArgReduce, "argmax.bf16"),
        (Primitive::ArgReduce, "argmin.f64.nan_ignored"),
        (Primitive::ArgReduce, "argmax.i32"),
    ];
    for (primitive, name) in names {
        let t = typed(primitive, name);
        assert_eq!(t.contract.name, name);
        assert_eq!(t.parts.name(), name);
        assert!(!t.contract.summary.is_empty() && !t.rule_words.is_empty());
    }
    for v in [1e-5, 1.5e-5, 0.0, 2.0, 123.456, 1e300] {
        assert_eq!(number_token_of(v).parse::<f64>(), Ok(v), "{v}");
        assert!(!number_token_of(v).contains('.'));
    }
}

#[test]
fn a_request_composes_the_canonical_name_and_registry_contracts_stay_the_registrys() {
    let scan = requested_contract(Primitive::Scan, &request(Some("inclusive"), Some("max"), "uint16", None));
    assert!(scan.unwrap_err().contains("unknown element type 'uint16'"));
    let scan =
        requested_contract(Primitive::Scan, &request(Some("inclusive"), Some("max"), "uint32", None)).expect("valid");
    assert_eq!(scan.name, "inclusive.max.u32.u32");
    let scan =
        requested_contract(Primitive::Scan, &request(Some("inclusive"), Some("sum"), "float32", None)).expect("valid");
    assert_eq!(scan.name, "inclusive.sum.f32.f32");
    let bf16 =
        requested_contract(Primitive::Reduce, &request(None, Some("sum"), "bfloat16", Some("float32"))).expect("valid");
    assert_eq!(bf16.name, "sum.bf16.f32");
    // int32 -> int64 sums are the registry's contracts; argmax over f32 and its rules too.
    let sum =
        requested_contract(Primitive::Reduce, &request(None, Some("sum"), "int32", Some("int64"))).expect("valid");
    assert!(std::ptr::eq(sum, crate::sweep::raw::contract(Primitive::Reduce, "sum.i32").expect("registry")));
    assert_eq!(contract(Primitive::Scan, "exclusive.sum.i32.i64").name, "exclusive.i32");
    let nan = Request { nan: Some("nan_first".into()), ..request(Some("argmax"), None, "float32", None) };
    assert_eq!(requested_contract(Primitive::ArgReduce, &nan).expect("named rule").name, "argmax.f32.nan_first");
    assert!(of(contract(Primitive::ArgReduce, "argmax.f32")).is_none());
}

#[test]
fn invalid_parts_are_refused_with_the_reason() {
    let refused = [
        (Primitive::Scan, request(Some("inclusive"), Some("sum"), "float32", Some("int32")), "keeps ints or floats"),
        (Primitive::Scan, request(Some("inclusive"), Some("max"), "float32", Some("bfloat16")), "narrows"),
        (Primitive::Reduce, request(None, Some("max"), "int64", Some("int32")), "narrows"),
        (Primitive::Reduce, request(None, Some("sum"), "int32", Some("uint32")), "narrows"),
        (Primitive::Reduce, request(None, Some("min"), "uint32", Some("int32")), "narrows"),
        (Primitive::Scan, request(Some("inclusive"), Some("max"), "bfloat16", Some("float16")), "narrows"),
        (
            Primitive::Reduce,
            Request { accumulator: Some("float16".into()), ..request(None, Some("sum"), "bfloat16", Some("float32")) },
            "holding every input exactly",
        ),
        (Primitive::Reduce, request(None, Some("prod"), "int32", None), "unknown operator 'prod'"),
        (Primitive::Reduce, request(None, None, "int32", None), "name the operator"),
        (Primitive::Scan, request(None, Some("sum"), "int32", None), "inclusive or exclusive"),
        (Primitive::ArgReduce, request(Some("argmax"), None, "int32", Some("int32")), "int64 index"),
        (Primitive::ExactSum, request(None, Some("sum"), "float32", None), "no typed contracts"),
        (Primitive::Histogram, request(None, None, "float64", None), "contract is even"),
        (Primitive::Histogram, request(Some("even"), None, "int8", None), "unknown"),
        (
            Primitive::Reduce,
            Request { rtol: Some(1e-3), ..request(None, Some("sum"), "int32", None) },
            "float sums only",
        ),
        (Primitive::Reduce, Request { rtol: Some(-1.0), ..request(None, Some("sum"), "float32", None) }, ">= 0"),
        (
            Primitive::Reduce,
            Request { accumulator: Some("bfloat16".into()), ..request(None, Some("sum"), "float32", None) },
            "holding every input exactly",
        ),
        (
            Primitive::Reduce,
            Request { accumulator: Some("float64".into()), ..request(None, Some("max"), "float32", None) },
            "float sums only",
        ),
        (
            Primitive::ArgReduce,
            Request { nan: Some("nan_first".into()), ..request(Some("argmax"), None, "int32", None) },
            "NaN rule",
        ),
    ];
    for (primitive, request, why) in refused {
        let e = requested_contract(primitive, &request).expect_err(why);
        assert!(e.contains(why), "{e} lacks {why}");
    }
    let both = rules::contract_requested(
        Primitive::Scan,
        Some("inclusive.sum.f32.f32"),
        Some(&request(None, Some("sum"), "float32", None)),
        None,
    );
    assert!(both.expect_err("a name and parts").contains("give only its kind"));
    let e = rules::contract(Primitive::Scan, "inclusive.sum.f32.f64.acc_f64").expect_err("not canonical");
    assert!(e.contains("write inclusive.sum.f32.f64"), "{e}");
    let e = rules::contract(Primitive::Scan, "inclusive.sum.f32.f32.bogus").expect_err("unknown part");
    assert!(e.contains("unknown part 'bogus'"), "{e}");
    let e = rules::contract(Primitive::Scan, "exclusive.f64").expect_err("not typed, not registry");
    assert!(e.contains("or a typed contract such as inclusive.sum.f32.f32"), "{e}");
}

#[test]
fn integer_sums_wrap_in_the_output_type_and_extrema_use_the_identity() {
    let x = Array::Int32(vec![i32::MAX, 1, -5]);
    let wrap = typed(Primitive::Scan, "inclusive.sum.i32.i32").parts;
    assert_eq!(
        model(&wrap, std::slice::from_ref(&x)),
        Ok(vec![Array::Int32(vec![i32::MAX, i32::MIN, i32::MIN.wrapping_sub(5)])])
    );
    let wide =
        Parts { dtype_out: crate::sweep::raw::Dtype::Int64, accumulator: crate::sweep::raw::Dtype::Int64, ..wrap };
    assert_eq!(
        model(&wide, std::slice::from_ref(&x)),
        Ok(vec![Array::Int64(vec![i32::MAX as i64, 1 << 31, (1 << 31) - 5])])
    );
    let max = typed(Primitive::Scan, "exclusive.max.i32.i32").parts;
    assert_eq!(model(&max, std::slice::from_ref(&x)), Ok(vec![Array::Int32(vec![i32::MIN, i32::MAX, i32::MAX])]));
    let min = typed(Primitive::Reduce, "min.i64.i64").parts;
    assert_eq!(model(&min, &[Array::Int64(vec![])]), Ok(vec![Array::Int64(vec![i64::MAX])]));
    let fmax = typed(Primitive::Reduce, "max.bf16.f32").parts;
    let bf = |v: f32| half::bf16::from_f32(v).to_bits();
    assert_eq!(
        model(&fmax, &[Array::Bfloat16(vec![bf(-1.0), bf(2.5), bf(f32::INFINITY)])]),
        Ok(vec![Array::Float32(vec![f32::INFINITY])])
    );
    assert_eq!(model(&fmax, &[Array::Bfloat16(vec![])]), Ok(vec![Array::Float32(vec![f32::NEG_INFINITY])]));
}

#[test]
fn uint32_sums_wrap_modulo_2_32_and_extrema_use_the_unsigned_identity() {
    let x = Array::Uint32(vec![u32::MAX, 2, 7]);
    let wrap = typed(Primitive::Scan, "inclusive.sum.u32.u32").parts;
    assert_eq!(model(&wrap, std::slice::from_ref(&x)), Ok(vec![Array::Uint32(vec![u32::MAX, 1, 8])]));
    let wide = typed(Primitive::Scan, "inclusive.sum.u32.i64").parts;
    assert_eq!(
        model(&wide, std::slice::from_ref(&x)),
        Ok(vec![Array::Int64(vec![u32::MAX as i64, (1 << 32) + 1, (1 << 32) + 8])])
    );
    let max = typed(Primitive::Scan, "exclusive.max.u32.u32").parts;
    assert_eq!(model(&max, std::slice::from_ref(&x)), Ok(vec![Array::Uint32(vec![0, u32::MAX, u32::MAX])]));
    let min = typed(Primitive::Reduce, "min.u32.u32").parts;
    assert_eq!(model(&min, &[Array::Uint32(vec![])]), Ok(vec![Array::Uint32(vec![u32::MAX])]));
    // Every integer family stays unsigned, and the extremes reach 0 and MAX.
    for family in families::all(&wrap) {
        let Array::Uint32(v) = families::make(family, Dtype::Uint32, 70_000, 3) else { panic!("uint32") };
        if family.name() == "full_range" || family.name() == "extreme_runs" {
            assert!(v.iter().any(|&x| x > i32::MAX as u32), "{}: no value past 2^31", family.name());
        }
        if family.name() == "descending" {
            assert!(v.windows(2).all(|w| w[0] >= w[1]), "descending is not");
        }
    }
}

#[test]
fn float16_sums_stay_finite_in_float16_and_its_extremes_are_its_own() {
    // A float16 output or accumulator: the input is scaled so no partial sum overflows.
    for name in ["inclusive.sum.f16.f16", "sum.f32.f16", "inclusive.sum.f16.f32.acc_f16"] {
        let primitive = if name.starts_with("inclusive") { Primitive::Scan } else { Primitive::Reduce };
        let t = typed(primitive, name);
        for family in families::all(&t.parts) {
            let case = make(t.parts, family, 1 << 20, 5).expect("made");
            let magnitude: f64 = float_values(&case.inputs[0]).expect("floats").iter().map(|v| v.abs()).sum();
            assert!(magnitude <= 2f64.powi(14) * 1.01, "{name} {}: sum |x| = {magnitude}", family.name());
            let written = answer_as_written(t, &case);
            assert!(rules::compare(&t.contract, &case, &written).passed(), "{name} {}", family.name());
        }
    }
    // A float32 output keeps the family's own magnitudes.
    let (_, case) = case_of("sum.f16.f32", Primitive::Reduce, "mixed_magnitudes", 1 << 16);
    let largest = float_values(&case.inputs[0]).expect("floats").into_iter().fold(0.0, |m: f64, v| m.max(v.abs()));
    assert!(largest > 8192.0 && largest <= 65504.0, "{largest}");
    let edges =
        families::make(families::all(&typed(Primitive::Reduce, "max.f16.f16").parts)[2], Dtype::Float16, 4096, 1);
    let values = float_values(&edges).expect("floats");
    assert!(values.contains(&2f64.powi(-24)) && values.contains(&2f64.powi(-14)), "float16's subnormals");
}

#[test]
fn arg_reductions_follow_their_nan_rule_and_the_lowest_index() {
    let x = Array::Float64(vec![1.0, f64::NAN, 3.0, f64::INFINITY, 3.0, f64::NAN]);
    let index = |name: &str| match model(&typed(Primitive::ArgReduce, name).parts, std::slice::from_ref(&x)) {
        Ok(out) => match &out[0] {
            Array::Int64(v) => v[0],
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    };
    assert_eq!(index("argmax.f64.nan_first"), 1);
    assert_eq!(index("argmax.f64.nan_ignored"), 3);
    assert_eq!(index("argmin.f64.nan_ignored"), 0);
    let ints = Array::Int32(vec![4, -7, 9, 9, -7]);
    let p = |name: &str| typed(Primitive::ArgReduce, name).parts;
    assert_eq!(model(&p("argmax.i32"), std::slice::from_ref(&ints)), Ok(vec![Array::Int64(vec![2])]));
    assert_eq!(model(&p("argmin.i32"), std::slice::from_ref(&ints)), Ok(vec![Array::Int64(vec![1])]));
    // -0.0 ties 0.0: the lower index wins.
    let zeros = Array::Float64(vec![-1.0, -0.0, 0.0]);
    assert_eq!(model(&p("argmax.f64"), &[zeros]), Ok(vec![Array::Int64(vec![1])]));
}

#[test]
fn families_are_reproducible_in_the_input_type_and_stay_within_their_rule() {
    for name in ["sum.bf16.f32", "max.f64.f64", "sum.i32.i32"] {
        let parts = typed(Primitive::Reduce, name).parts;
        for family in families::all(&parts) {
            let n = families::CHUNK + 77;
            let a = families::make(family, parts.dtype_in, n, 5);
            assert_eq!(a, families::make(family, parts.dtype_in, n, 5), "{name} {}", family.name());
            assert_eq!((a.dtype(), a.count()), (parts.dtype_in, n));
            if let Some(values) = float_values(&a) {
                assert!(values.iter().all(|v| !v.is_nan()), "{name} {}: no NaN", family.name());
                if parts.float_sum() {
                    assert!(values.iter().all(|v| v.is_finite()), "{name} {}: finite", family.name());
                }
            }
        }
    }
    let edges = |parts: &Parts| {
        let family = families::all(parts).into_iter().find(|f| f.name() == "float_edges").expect("float_edges");
        float_values(&families::make(family, parts.dtype_in, 4096, 1)).expect("floats")
    };
    let bf16 = edges(&typed(Primitive::Reduce, "sum.bf16.f32").parts);
    assert!(bf16.iter().any(|v| *v == 0.0 && v.is_sign_negative()) && bf16.contains(&2f64.powi(-133)));
    let extremes = typed(Primitive::Reduce, "max.f32.f32").parts;
    let family = families::all(&extremes).into_iter().find(|f| f.name() == "extremes").expect("extremes");
    let values = float_values(&families::make(family, extremes.dtype_in, 4096, 2)).expect("floats");
    assert!(values.contains(&f64::INFINITY) && values.contains(&(f32::MAX as f64)));
    let nan = typed(Primitive::ArgReduce, "argmax.bf16.nan_first").parts;
    let names: Vec<&str> = families::all(&nan).iter().map(|f| f.name()).collect();
    assert!(
        names.contains(&"nan_late")
            && !families::all(&typed(Primitive::ArgReduce, "argmax.bf16").parts)
                .iter()
                .any(|f| f.name().starts_with("nan"))
    );
}

/// A float scan or reduce "kernel" on the host: `values` summed in f32
/// (or f64 when `wide`) in tiles of `tile` (each tile from 0, then the tiles'
/// running total added), written as `out`.
fn host_sum(values: &[f64], shape: Shape, tile: usize, acc: Dtype, out: Dtype) -> Array {
    let round = |v: f64| match acc {
        Dtype::Float64 => v,
        Dtype::Bfloat16 => half::bf16::from_f64(v).to_f64(),
        Dtype::Float16 => half::f16::from_f64(v).to_f64(),
        _ => v as f32 as f64,
    };
    let mut result = Vec::with_capacity(values.len());
    let mut carry = 0.0;
    for chunk in values.chunks(tile.max(1)) {
        let mut local = 0.0;
        for &x in chunk {
            let before = round(carry + local);
            local = round(local + x);
            result.push(match shape {
                Shape::Scan(kernels::ScanKind::Exclusive) => before,
                _ => round(carry + local),
            });
        }
        carry = round(carry + local);
    }
    let result = if shape == Shape::Reduce { vec![carry] } else { result };
    families::float_array(out, result)
}

fn case_of(name: &str, primitive: Primitive, family: &str, n: usize) -> (&'static Typed, RawCase) {
    let t = typed(primitive, name);
    let family = families::all(&t.parts).into_iter().find(|f| f.name() == family).expect("family");
    (t, make(t.parts, family, n, 11).expect("made"))
}

fn verdict(t: &Typed, case: &RawCase, got: Array) -> Verdict {
    rules::compare(&t.contract, case, &[got])
}

#[test]
fn float_sums_in_any_order_pass_and_a_lost_term_fails() {
    let cases = [
        ("inclusive.sum.f32.f32", Primitive::Scan, Dtype::Float32, Dtype::Float32),
        ("exclusive.sum.f32.f32", Primitive::Scan, Dtype::Float32, Dtype::Float32),
        ("inclusive.sum.bf16.bf16", Primitive::Scan, Dtype::Float32, Dtype::Bfloat16),
        ("inclusive.sum.f64.f64", Primitive::Scan, Dtype::Float64, Dtype::Float64),
        ("sum.bf16.f32", Primitive::Reduce, Dtype::Float32, Dtype::Float32),
        ("sum.f32.f64", Primitive::Reduce, Dtype::Float64, Dtype::Float64),
        ("inclusive.sum.f16.f16", Primitive::Scan, Dtype::Float32, Dtype::Float16),
        ("sum.f16.f32", Primitive::Reduce, Dtype::Float32, Dtype::Float32),
    ];
    for (name, primitive, acc, out) in cases {
        for family in ["uniform", "mixed_magnitudes", "float_edges", "ascending"] {
            let (t, case) = case_of(name, primitive, family, 5000);
            let values = float_values(&case.inputs[0]).expect("floats");
            for tile in [1, 128, 5000] {
                let v = verdict(t, &case, host_sum(&values, t.parts.shape, tile, acc, out));
                assert!(v.passed(), "{name} {family} tile {tile}: {v:?}");
            }
            // A term lost: the largest of the first 100 never added.
            let mut lost = values.clone();
            let largest = (0..100).max_by(|&a, &b| values[a].abs().total_cmp(&values[b].abs())).expect("terms");
            lost[largest] = 0.0;
            if values[largest].abs() >= 0.5 {
                let v = verdict(t, &case, host_sum(&lost, t.parts.shape, 128, acc, out));
                assert!(!v.passed(), "{name} {family}: a lost term passed");
            }
        }
    }
}

/// `host_sum` in float32 arithmetic that flushes subnormal inputs and
/// results to zero, as CUDA's float `atomicAdd` and `-ftz=true` code do.
fn host_sum_flushing(values: &[f64], tile: usize) -> Array {
    let flush = |v: f32| if v.is_subnormal() { 0.0f32.copysign(v) } else { v };
    let mut carry = 0.0f32;
    for chunk in values.chunks(tile.max(1)) {
        let local = chunk.iter().fold(0.0f32, |acc, &x| flush(acc + flush(x as f32)));
        carry = flush(carry + local);
    }
    Array::Float32(vec![carry])
}

#[test]
fn float32_arithmetic_that_flushes_subnormals_passes_a_float32_accumulators_bound_only() {
    // float_edges holds runs of signed subnormals among ±0, the smallest normal and ±1: find a
    // case of 32 elements whose every term and sum are below 2^-126 (a flush loses it all), and
    // whose sum is not lost to cancellation (it exceeds 32 u sum|x|).
    let tiny_case = |name: &str| {
        let t = typed(Primitive::Reduce, name);
        let family = families::all(&t.parts).into_iter().find(|f| f.name() == "float_edges").expect("float_edges");
        let u = super::parts::unit_roundoff(t.parts.accumulator);
        (0..2000u64)
            .filter_map(|seed| make(t.parts, family, 32, seed).ok())
            .find(|case| {
                let values = float_values(&case.inputs[0]).expect("floats");
                let (exact, abs): (f64, f64) = (values.iter().sum(), values.iter().map(|x| x.abs()).sum());
                values.iter().all(|x| x.abs() < 2f64.powi(-126)) && exact.abs() > 32.0 * u * abs
            })
            .map(|case| (t, case))
            .unwrap_or_else(|| panic!("{name}: no float_edges case of 32 subnormal terms with an uncancelled sum"))
    };
    for name in ["sum.f32.f32", "sum.bf16.f32"] {
        let (t, case) = tiny_case(name);
        let values = float_values(&case.inputs[0]).expect("floats");
        let flushed = host_sum_flushing(&values, 8);
        assert_eq!(flushed, Array::Float32(vec![0.0]), "{name}: the flush lost the whole subnormal sum");
        let v = verdict(t, &case, flushed);
        assert!(v.passed(), "{name}: a flushing float32 sum is within the bound: {v:?}");
        // The allowance is absolute and tiny: 2^-100 off still fails.
        let exact: f64 = values.iter().sum();
        let off = Array::Float32(vec![(exact + 2f64.powi(-100)) as f32]);
        assert!(!verdict(t, &case, off).passed(), "{name}: an error of 2^-100 passed");
    }
    // float64 keeps subnormals on the GPU: no allowance, so a sum of subnormals flushed to 0 fails.
    let (t, case) = tiny_case("sum.f64.f64");
    assert!(!verdict(t, &case, Array::Float64(vec![0.0])).passed(), "a float64 sum flushed to zero passed");
}

#[test]
fn a_bf16_accumulator_fails_a_float32_accumulators_bound_and_passes_its_own() {
    let (t, case) = case_of("inclusive.sum.bf16.f32", Primitive::Scan, "uniform", 4096);
    let values = float_values(&case.inputs[0]).expect("floats");
    let narrow = host_sum(&values, t.parts.shape, 1, Dtype::Bfloat16, Dtype::Float32);
    let Verdict::Fail(m) = verdict(t, &case, narrow.clone()) else { panic!("bf16 accumulation passed an f32 bound") };
    assert!(m.what.contains("order-free bound (float32 accumulator)"), "{}", m.what);
    let lines = rules::mismatch_lines(&t.contract, &case, std::slice::from_ref(&narrow));
    assert!(lines[0].starts_with("failing elements of out (prefix within the order-free bound"), "{lines:?}");
    let (own, case) = case_of("inclusive.sum.bf16.f32.acc_bf16", Primitive::Scan, "uniform", 4096);
    assert!(verdict(own, &case, narrow).passed());
}

#[test]
fn a_user_tolerance_replaces_the_bound_and_non_finite_results_fail() {
    let (t, case) = case_of("sum.f32.f32.rtol_1e-3.atol_0e0", Primitive::Reduce, "uniform", 1000);
    let exact = match &case.expected[0] {
        Array::Float64(v) => v[0],
        other => panic!("{other:?}"),
    };
    let within = (exact * (1.0 + 5e-4)) as f32;
    assert!(verdict(t, &case, Array::Float32(vec![within])).passed());
    assert!(!verdict(t, &case, Array::Float32(vec![(exact * 1.01) as f32])).passed());
    assert!(!verdict(t, &case, Array::Float32(vec![f32::NAN])).passed());
    let (ulp, case) = case_of("sum.f32.f32.rtol_0e0.atol_0e0.ulp_2", Primitive::Reduce, "uniform", 1000);
    let next = |x: f32, k: u32| f32::from_bits(x.to_bits() + k);
    let rounded = exact as f32;
    assert!(verdict(ulp, &case, Array::Float32(vec![next(rounded, 2)])).passed());
    assert!(!verdict(ulp, &case, Array::Float32(vec![next(rounded, 3)])).passed());
}

#[test]
fn exact_contracts_compare_by_value_with_signed_zeros_equal() {
    let (t, case) = case_of("inclusive.max.f32.f32", Primitive::Scan, "float_edges", 3000);
    let Array::Float32(expected) = &case.expected[0] else { panic!("f32 out") };
    let flipped: Vec<f32> = expected.iter().map(|&v| if v == 0.0 { -v } else { v }).collect();
    assert!(verdict(t, &case, Array::Float32(flipped.clone())).passed());
    let mut wrong = flipped;
    wrong[2999] = f32::from_bits(wrong[2999].to_bits() ^ 1);
    assert!(!verdict(t, &case, Array::Float32(wrong)).passed());
    let (i, case) = case_of("exclusive.sum.i32.i32", Primitive::Scan, "full_range", 500);
    let Array::Int32(expected) = &case.expected[0] else { panic!("i32 out") };
    // A kernel that saturates instead of wrapping.
    let values = match &case.inputs[0] {
        Array::Int32(v) => v.clone(),
        _ => unreachable!(),
    };
    let mut acc = 0i32;
    let saturating: Vec<i32> = values
        .iter()
        .map(|&x| {
            let before = acc;
            acc = acc.saturating_add(x);
            before
        })
        .collect();
    assert_ne!(&saturating, expected);
    let Verdict::Fail(m) = verdict(i, &case, Array::Int32(saturating)) else { panic!("saturation passed") };
    assert_eq!(m.what, "prefix");
    assert!(!verdict(i, &case, Array::Int64(vec![0; 500])).passed(), "a wrong output type");
}

#[test]
fn the_catalogue_has_every_family_at_small_sizes_and_two_at_2_24() {
    let plan = SweepPlan::of_primitive(Primitive::Scan, &[0, 33, 1 << 24], 9);
    let t = typed(Primitive::Scan, "inclusive.min.f64.f64");
    let specs = rules::with_catalogue(&plan, Primitive::Scan, &t.contract, "mine");
    let at = |n: usize| specs.iter().filter(|s| s.id.n == n).map(|s| s.id.family.clone()).collect::<Vec<_>>();
    assert_eq!(at(33).len(), families::all(&t.parts).len());
    assert_eq!(at(1 << 24), ["uniform", "many_ties"]);
    assert_eq!(specs[0].id.variant, "mine.inclusive.min.f64.f64");
    let arg = typed(Primitive::ArgReduce, "argmax.bf16");
    let plan = SweepPlan::of_primitive(Primitive::ArgReduce, &[0, 5], 9);
    let sizes = rules::case_sizes(Primitive::ArgReduce, &arg.contract, &plan.sizes);
    assert_eq!(sizes, [5], "an arg reduction has no case at n = 0");
    // Each case is made from its id's seed, so export and verify see the same data.
    let first = (specs[1].make)().expect("made");
    assert_eq!(first, (specs[1].make)().expect("made"));
    let _: &Family = &families::all(&t.parts)[0];
}

#[test]
fn export_then_verify_judges_a_typed_float_scan_by_its_bound_and_names_a_wrong_element() {
    use crate::cases::{export, index::Index, npy, verify};
    let dir = std::env::temp_dir().join(format!("primlab-typed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let args = export::ExportOptions {
        primitive: Primitive::Scan,
        contract: Some("exclusive".into()),
        request: Some(request(None, Some("sum"), "float32", None)),
        framework: None,
        sizes: vec![1, 33, 1000],
        seed: Some(0x5eed),
        deep: false,
        dir: dir.clone(),
    };
    assert!(export::run(&args).expect("exports"));
    let index: Index =
        serde_json::from_str(&std::fs::read_to_string(dir.join("index.json")).expect("index")).expect("json");
    assert!(index.cases.iter().all(|c| c.contract == "exclusive.sum.f32.f32"));
    assert_eq!(index.cases[0].tolerance, "order_free_bound");
    assert!(index.cases[0].rule.contains("u = 2^-24 (float32 accumulator)"), "{}", index.cases[0].rule);
    // A kernel summing in tiles of 64, in f32.
    for case in &index.cases {
        let input = npy::read(&dir.join(&case.inputs[0].file), Dtype::Float32).expect("input");
        let values = float_values(&input).expect("floats");
        let out = host_sum(&values, Shape::Scan(kernels::ScanKind::Exclusive), 64, Dtype::Float32, Dtype::Float32);
        npy::write(&dir.join(&case.outputs[0].file), &out).expect("written");
    }
    assert!(verify::run(&dir, 5, &[], None, false).expect("verifies"), "a tiled f32 scan failed");
    let (report, _) = verify::verify_all(&dir, &[]).expect("verifies");
    let closest = report.closest.expect("the float sums' closest approach to their bound");
    assert!(closest.starts_with('c') && closest.contains("% of its bound"), "{closest}");
    assert!(report.cases.iter().all(|c| c.accuracy.is_some()), "every case of a float sum notes its worst element");
    let case = index.cases.iter().find(|c| c.n == 1000).expect("a case at 1000");
    let path = dir.join(&case.outputs[0].file);
    let Array::Float32(mut out) = npy::read(&path, Dtype::Float32).expect("read") else { panic!("f32") };
    out[500] += 1.0;
    npy::write(&path, &Array::Float32(out)).expect("written");
    let Verdict::Fail(m) = verify::verify_named(&dir, &case.case).expect("the catalogue") else {
        panic!("an element 1.0 off passed")
    };
    assert_eq!(m.index, Some(500));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn segmented_reductions_fold_each_segment_and_empty_segments_give_the_identity() {
    let x = Array::Float64(vec![1.0, 2.0, -7.0, 0.5]);
    let offsets = Array::Int64(vec![0, 2, 2, 4]);
    let max = typed(Primitive::SegmentedReduce, "max.f64.f64").parts;
    assert_eq!(model(&max, &[x.clone(), offsets.clone()]), Ok(vec![Array::Float64(vec![2.0, f64::NEG_INFINITY, 0.5])]));
    let sum = typed(Primitive::SegmentedReduce, "sum.f64.f64");
    let out = model(&sum.parts, &[x.clone(), offsets.clone()]).expect("model");
    assert_eq!(out, vec![Array::Float64(vec![3.0, 0.0, -6.5])]);
    assert_eq!(sum.contract.params[0].name, "segments");
    assert_eq!(contract(Primitive::SegmentedReduce, "sum.i32.i64").name, "sum.i32", "the registry's");
    let case = RawCase { inputs: vec![x, offsets], params: vec![crate::sweep::raw::Value::Int64(3)], expected: out };
    assert!(verdict(sum, &case, Array::Float64(vec![3.0, 0.0, -6.5])).passed());
    let Verdict::Fail(m) = verdict(sum, &case, Array::Float64(vec![3.0, -0.5, -6.5])) else { panic!("passed") };
    assert_eq!((m.index, m.what.as_str()), (Some(1), "segment sums within the order-free bound (float64 accumulator)"));
    // The catalogue: the registry's segment shapes, the long segment included, one value family each.
    let plan = SweepPlan::of_primitive(Primitive::SegmentedReduce, &[33], 3);
    let specs = rules::with_catalogue(&plan, Primitive::SegmentedReduce, &sum.contract, "u");
    assert!(specs.iter().any(|s| s.id.family == "uniform.random") && specs.iter().any(|s| s.id.n > 262_144));
    for spec in specs.iter().filter(|s| s.id.n == 33) {
        let case = (spec.make)().expect("made");
        let Array::Float64(exact) = &case.expected[0] else { panic!("exact sums") };
        let got = Array::Float64(exact.clone());
        assert!(rules::compare(&sum.contract, &case, &[got]).passed(), "{}", spec.id.family);
    }
}

#[test]
fn compaction_moves_items_bit_for_bit_and_positive_keeps_no_zero_or_nan() {
    let t = typed(Primitive::Compact, "positive.f32");
    let x = Array::Float32(vec![-0.0, 0.0, 1.5, f32::NAN, f32::INFINITY, -2.0]);
    let out = model(&t.parts, &[x]).expect("model");
    assert_eq!(out, vec![Array::Float32(vec![1.5, f32::INFINITY]), Array::Int64(vec![2])]);
    let flagged = typed(Primitive::Compact, "flagged.bf16");
    assert_eq!(flagged.contract.inputs.iter().map(|b| b.role).collect::<Vec<_>>(), ["in", "flags"]);
    let (t, case) = case_of("flagged.f64", Primitive::Compact, "float_edges", 3000);
    let Array::Float64(kept) = &case.expected[0] else { panic!("f64 items") };
    assert!(kept.iter().any(|v| *v == 0.0 && v.is_sign_negative()), "a -0.0 is kept");
    assert!(verdict2(t, &case, case.expected.clone()).passed());
    // A kernel that writes +0.0 for -0.0 has not moved the item.
    let flipped: Vec<f64> = kept.iter().map(|&v| if v == 0.0 { 0.0 } else { v }).collect();
    let got = vec![Array::Float64(flipped), case.expected[1].clone()];
    let Verdict::Fail(m) = verdict2(t, &case, got) else { panic!("a flipped zero passed") };
    assert_eq!(m.what, "kept items, in order");
    assert_eq!(contract(Primitive::Compact, "flagged.i32").name, "flagged.i32", "the registry's");
}

fn verdict2(t: &Typed, case: &RawCase, got: Vec<Array>) -> Verdict {
    rules::compare(&t.contract, case, &got)
}

/// A softmax "kernel" on the host: f32 arithmetic from the logits as held,
/// max subtracted, written in `out`'s type; all-masked rows `masked_value`.
fn host_softmax(input: &Array, rows: usize, cols: usize, out: Dtype, masked_value: f64) -> Array {
    let x = float_values(input).expect("float logits");
    let mut result = vec![0.0f64; x.len()];
    for r in 0..rows {
        let row = &x[r * cols..(r + 1) * cols];
        let m = row.iter().copied().fold(f64::NEG_INFINITY, f64::max) as f32;
        if m == f32::NEG_INFINITY {
            result[r * cols..(r + 1) * cols].fill(masked_value);
            continue;
        }
        let e: Vec<f32> = row.iter().map(|&v| (v as f32 - m).exp()).collect();
        let s: f32 = e.iter().sum();
        for (c, v) in e.iter().enumerate() {
            result[r * cols + c] = (v / s) as f64;
        }
    }
    families::float_array(out, result)
}

#[test]
fn a_float16_softmax_is_held_to_float32_arithmetic_rounded_once_to_float16() {
    let t = typed(Primitive::Softmax, "rows.f16.f16");
    let plan = SweepPlan::of_primitive(Primitive::Softmax, &[33], 9);
    let mut truncation_failed = false;
    for spec in rules::with_catalogue(&plan, Primitive::Softmax, &t.contract, "u").iter().filter(|s| s.id.n <= 1 << 16)
    {
        let case = (spec.make)().expect("made");
        let int = |k: usize| case.params[k].as_int().expect("int") as usize;
        let (rows, cols) = (int(0), int(1));
        let rounded = host_softmax(&case.inputs[0], rows, cols, Dtype::Float16, 0.0);
        assert!(verdict(t, &case, rounded.clone()).passed(), "{}", spec.id.family);
        // Each probability truncated toward zero (one float16 ulp down where rounding went up).
        let Array::Float16(bits) = rounded else { panic!("float16") };
        let exact = float_values(&host_softmax(&case.inputs[0], rows, cols, Dtype::Float32, 0.0)).expect("f32");
        let truncated = bits
            .iter()
            .zip(&exact)
            .map(|(&b, &e)| if half::f16::from_bits(b).to_f64() > e && b & 0x7fff != 0 { b - 1 } else { b })
            .collect();
        truncation_failed |= !verdict(t, &case, Array::Float16(truncated)).passed();
    }
    assert!(truncation_failed, "a truncating float16 softmax passed every case");
}

#[test]
fn a_bfloat16_softmax_passes_its_tolerance_and_all_masked_rows_follow_the_rule() {
    let t = typed(Primitive::Softmax, "rows.bf16.bf16");
    assert_eq!(contract(Primitive::Softmax, "rows.f32.f32").name, "rows.f32", "the registry's");
    let (torch, note) = rules::contract_for(Primitive::Softmax, "rows.bf16.bf16", Some("torch")).expect("torch");
    assert_eq!((torch.name, note.is_some()), ("rows.bf16.bf16.all_masked_nan", true));
    let nan_rule = of(torch).expect("typed");
    let plan = SweepPlan::of_primitive(Primitive::Softmax, &[1, 33, 1000], 4);
    let specs = rules::with_catalogue(&plan, Primitive::Softmax, &t.contract, "u");
    let small: Vec<_> = specs.iter().filter(|s| s.id.n <= 1 << 16).collect();
    assert!(small.len() >= 4, "{} small cases", small.len());
    let mut masked_rows_seen = false;
    for spec in small {
        let case = (spec.make)().expect("made");
        let (rows, cols) = match (&case.params[0], &case.params[1]) {
            (crate::sweep::raw::Value::Int32(r), crate::sweep::raw::Value::Int32(c)) => (*r as usize, *c as usize),
            other => panic!("{other:?}"),
        };
        let zeros = host_softmax(&case.inputs[0], rows, cols, Dtype::Bfloat16, 0.0);
        let v = verdict(t, &case, zeros.clone());
        assert!(v.passed(), "{} {}: {v:?}", spec.id.size, spec.id.family);
        let nans = host_softmax(&case.inputs[0], rows, cols, Dtype::Bfloat16, f64::NAN);
        if nans != zeros {
            masked_rows_seen = true;
            assert!(!verdict(t, &case, nans.clone()).passed(), "NaN rows passed the zeros rule");
            assert!(verdict(nan_rule, &case, nans).passed(), "NaN rows failed torch's rule");
            assert!(!verdict(nan_rule, &case, zeros).passed(), "zero rows passed torch's rule");
        }
    }
    assert!(masked_rows_seen, "no case with an all-masked row");
    // Probabilities 1 % off fail, and the failure names the tolerance.
    let spec = specs.iter().find(|s| s.id.n <= 1 << 16 && s.id.family.ends_with("unmasked")).expect("unmasked rows");
    let case = (spec.make)().expect("made");
    let Array::Float64(exact) = &case.expected[0] else { panic!("exact") };
    let off = families::float_array(Dtype::Bfloat16, exact.iter().map(|v| v * 1.02).collect());
    let Verdict::Fail(m) = verdict(t, &case, off) else { panic!("2 % off passed") };
    assert!(m.expected.contains("+-"), "{}", m.expected);
}

#[test]
fn typed_histograms_count_int64_and_bfloat16_samples_and_close_the_last_bin_on_request() {
    use super::catalogue::int_bin;
    let narrow = (64, -100, 100);
    assert_eq!([-100, 99, 100, -101].map(|x| int_bin(narrow, x, false)), [Some(0), Some(63), None, None]);
    assert_eq!(int_bin(narrow, 100, true), Some(63));
    assert_eq!(int_bin((4096, i64::MIN, i64::MAX), i64::MAX - 1, false), Some(4095));
    assert_eq!(int_bin((4096, i64::MIN, i64::MAX), i64::MIN, false), Some(0));
    let (t, case) = case_of("even.bf16", Primitive::Histogram, "float_edges", 5000);
    let (closed, closed_case) = case_of("even.bf16.last_bin_closed", Primitive::Histogram, "float_edges", 5000);
    let ones = float_values(&case.inputs[0]).expect("floats").iter().filter(|&&v| v == 1.0).count() as i32;
    assert!(ones > 0, "float_edges holds 1.0, the upper edge");
    let (Array::Int32(open_counts), Array::Int32(closed_counts)) = (&case.expected[0], &closed_case.expected[0]) else {
        panic!("int32 counts")
    };
    assert_eq!(closed_counts[99] - open_counts[99], ones);
    assert!(verdict(t, &case, case.expected[0].clone()).passed());
    let Verdict::Fail(m) = verdict(t, &case, closed_case.expected[0].clone()) else { panic!("closed counts passed") };
    assert_eq!((m.index, m.what.as_str()), (Some(99), "bin counts"));
    assert!(verdict(closed, &closed_case, closed_case.expected[0].clone()).passed());
    let (torch, _) = rules::contract_for(Primitive::Histogram, "even.bf16", Some("torch")).expect("torch");
    assert_eq!(torch.name, "even.bf16.last_bin_closed");
    assert_eq!(contract(Primitive::Histogram, "even.i32").name, "even.i32", "the registry's");
    let i64s = typed(Primitive::Histogram, "even.i64");
    assert_eq!(
        i64s.contract.params.iter().map(|p| p.dtype).collect::<Vec<_>>(),
        [Dtype::Int32, Dtype::Int64, Dtype::Int64]
    );
    let plan = SweepPlan::of_primitive(Primitive::Histogram, &[33, 4099], 2);
    for spec in rules::with_catalogue(&plan, Primitive::Histogram, &i64s.contract, "u") {
        let case = (spec.make)().expect("made");
        let Array::Int32(counts) = &case.expected[0] else { panic!("counts") };
        let inside = counts.iter().map(|&c| c as usize).sum::<usize>();
        assert!(inside <= spec.id.n, "{}", spec.id.family);
        assert!(verdict(i64s, &case, case.expected[0].clone()).passed());
    }
}

#[test]
fn typed_float64_histograms_take_double_bounds_and_bin_by_the_double_formula() {
    use super::catalogue::{f64_bin, f64_scale};
    let spec = (100, -1.0, 1.0);
    let scale = f64_scale(spec);
    assert_eq!(scale, 50.0);
    // The edges, the last bin's inside, NaN, and a sample one ulp below an edge that the
    // double formula rounds up into that edge's bin (the rule is the formula, not exact).
    let below = f64::from_bits(0.5f64.to_bits() - 1);
    let cases = [(-1.0, Some(0)), (1.0, None), (0.999_999, Some(99)), (f64::NAN, None), (-1.000_001, None)];
    for (x, bin) in cases {
        assert_eq!(f64_bin(spec, scale, x, false), bin, "{x}");
    }
    assert_eq!(f64_bin(spec, scale, 1.0, true), Some(99));
    assert_eq!(f64_bin(spec, scale, below, false), Some(75), "(0.5 - 2^-54 + 1) * 50 rounds to 75");
    let t = typed(Primitive::Histogram, "even.f64");
    let dtypes: Vec<Dtype> = t.contract.params.iter().map(|p| p.dtype).collect();
    assert_eq!(dtypes, [Dtype::Int32, Dtype::Float64, Dtype::Float64, Dtype::Float64]);
    assert!(t.contract.summary.contains("__dmul_rn"), "{}", t.contract.summary);
    let (t, case) = case_of("even.f64", Primitive::Histogram, "float_edges", 5000);
    assert_eq!(case.params[3], Value::Float64(50.0));
    assert!(verdict(t, &case, case.expected[0].clone()).passed());
    let (closed, closed_case) = case_of("even.f64.last_bin_closed", Primitive::Histogram, "float_edges", 5000);
    let (Array::Int32(open), Array::Int32(shut)) = (&case.expected[0], &closed_case.expected[0]) else {
        panic!("int32 counts")
    };
    let ones = float_values(&case.inputs[0]).expect("floats").iter().filter(|&&v| v == 1.0).count() as i32;
    assert!(ones > 0 && shut[99] - open[99] == ones);
    assert!(!verdict(closed, &closed_case, case.expected[0].clone()).passed());
}

/// The model's answer as a kernel would write it: float sums and softmax
/// probabilities rounded to the output type, everything else as it is.
fn answer_as_written(t: &Typed, case: &RawCase) -> Vec<Array> {
    t.contract
        .outputs
        .iter()
        .zip(&case.expected)
        .map(|(buffer, expected)| match expected {
            Array::Float64(v) if buffer.dtype != Dtype::Float64 => families::float_array(buffer.dtype, v.clone()),
            other => other.clone(),
        })
        .collect()
}

/// `outputs` with element `at` of the first output made wrong: an integer one
/// more, a finite float moved by a quarter of its magnitude plus one, ±inf or NaN made 0.5.
fn corrupt(outputs: &mut [Array], at: usize) {
    let bump = |v: f64| if v.is_finite() { v + v.abs() / 4.0 + 1.0 } else { 0.5 };
    match &mut outputs[0] {
        Array::Int32(v) => v[at] = v[at].wrapping_add(1),
        Array::Int64(v) => v[at] = v[at].wrapping_add(1),
        Array::Float32(v) => v[at] = bump(v[at] as f64) as f32,
        Array::Float64(v) => v[at] = bump(v[at]),
        Array::Bfloat16(v) => v[at] = half::bf16::from_f64(bump(half::bf16::from_bits(v[at]).to_f64())).to_bits(),
        Array::Uint8(v) => v[at] ^= 1,
        Array::Uint32(v) => v[at] = v[at].wrapping_add(1),
        Array::Float16(v) => v[at] = half::f16::from_f64(bump(half::f16::from_bits(v[at]).to_f64())).to_bits(),
    }
}

/// A host "kernel" for every typed shape, written apart from the model
/// (`catalogue.rs`): what a straightforward kernel computes from the case's
/// inputs and parameters, in the contract's output types. Exact contracts
/// must equal the model bit for bit; float sums are summed serially in the
/// accumulator's type and softmax rows in float32, as a kernel might.
mod reference {
    use super::super::parts::{NanRule, Op, Shape};
    use super::super::Typed;
    use crate::sweep::raw::{Array, Dtype, RawCase, Value};

    /// Float elements as f64 (exactly), or None for an integer array.
    fn floats(a: &Array) -> Option<Vec<f64>> {
        Some(match a {
            Array::Float64(v) => v.clone(),
            Array::Float32(v) => v.iter().map(|&x| f64::from(x)).collect(),
            Array::Bfloat16(v) => v.iter().map(|&b| half::bf16::from_bits(b).to_f64()).collect(),
            Array::Float16(v) => v.iter().map(|&b| half::f16::from_bits(b).to_f64()).collect(),
            _ => return None,
        })
    }

    /// Integer elements as i128, or None for a float array.
    fn ints(a: &Array) -> Option<Vec<i128>> {
        Some(match a {
            Array::Int32(v) => v.iter().map(|&x| i128::from(x)).collect(),
            Array::Int64(v) => v.iter().map(|&x| i128::from(x)).collect(),
            Array::Uint32(v) => v.iter().map(|&x| i128::from(x)).collect(),
            Array::Uint8(v) => v.iter().map(|&x| i128::from(x)).collect(),
            _ => return None,
        })
    }

    /// `values` written as `dtype` (rounded to nearest for a narrower float).
    fn written_floats(dtype: Dtype, values: &[f64]) -> Array {
        match dtype {
            Dtype::Float64 => Array::Float64(values.to_vec()),
            Dtype::Bfloat16 => Array::Bfloat16(values.iter().map(|&v| half::bf16::from_f64(v).to_bits()).collect()),
            Dtype::Float16 => Array::Float16(values.iter().map(|&v| half::f16::from_f64(v).to_bits()).collect()),
            _ => Array::Float32(values.iter().map(|&v| v as f32).collect()),
        }
    }

    /// `values` written as the integer `dtype`, wrapping (two's complement) as a kernel's store does.
    fn written_ints(dtype: Dtype, values: &[i128]) -> Array {
        match dtype {
            Dtype::Int32 => Array::Int32(values.iter().map(|&v| v as i32).collect()),
            Dtype::Uint32 => Array::Uint32(values.iter().map(|&v| v as u32).collect()),
            _ => Array::Int64(values.iter().map(|&v| v as i64).collect()),
        }
    }

    /// `v` rounded to the float type `dtype`.
    fn round(dtype: Dtype, v: f64) -> f64 {
        match dtype {
            Dtype::Float64 => v,
            Dtype::Bfloat16 => half::bf16::from_f64(v).to_f64(),
            Dtype::Float16 => half::f16::from_f64(v).to_f64(),
            _ => v as f32 as f64,
        }
    }

    /// The integer `op` of `a` and `b`, wrapped to `dtype` for a sum.
    fn int_op(op: Op, dtype: Dtype, a: i128, b: i128) -> i128 {
        let wrap = |v: i128| match dtype {
            Dtype::Int32 => i128::from(v as i32),
            Dtype::Uint32 => i128::from(v as u32),
            _ => i128::from(v as i64),
        };
        match op {
            Op::Sum => wrap(a + b),
            Op::Min => a.min(b),
            Op::Max => a.max(b),
        }
    }

    /// The identity of `op` over the integer `dtype`.
    fn int_identity(op: Op, dtype: Dtype) -> i128 {
        let (low, high) = match dtype {
            Dtype::Int32 => (i128::from(i32::MIN), i128::from(i32::MAX)),
            Dtype::Uint32 => (0, i128::from(u32::MAX)),
            _ => (i128::from(i64::MIN), i128::from(i64::MAX)),
        };
        match op {
            Op::Sum => 0,
            Op::Min => high,
            Op::Max => low,
        }
    }

    /// The float `op` of `a` and `b` in `acc` (min and max are exact).
    fn float_op(op: Op, acc: Dtype, a: f64, b: f64) -> f64 {
        match op {
            Op::Sum => round(acc, a + b),
            Op::Min => {
                if b < a {
                    b
                } else {
                    a
                }
            }
            Op::Max => {
                if b > a {
                    b
                } else {
                    a
                }
            }
        }
    }

    /// A serial fold of `xs` (every prefix when `scan`; before each element when `exclusive`).
    fn fold<T: Copy>(xs: &[T], identity: T, scan: Option<bool>, op: impl Fn(T, T) -> T) -> Vec<T> {
        let mut acc = identity;
        let mut out = Vec::with_capacity(xs.len());
        for &x in xs {
            let before = acc;
            acc = op(acc, x);
            if let Some(exclusive) = scan {
                out.push(if exclusive { before } else { acc });
            }
        }
        if scan.is_none() {
            out.push(acc);
        }
        out
    }

    /// The reduce (`scan` None) or scan of `input` as `t` asks, written in its output type.
    fn folded(t: &Typed, input: &Array, scan: Option<bool>) -> Array {
        let p = t.parts;
        if let Some(xs) = floats(input) {
            let (identity, acc) = match p.op {
                Op::Sum => (0.0, p.accumulator),
                Op::Min => (f64::INFINITY, p.dtype_out),
                Op::Max => (f64::NEG_INFINITY, p.dtype_out),
            };
            return written_floats(p.dtype_out, &fold(&xs, identity, scan, |a, b| float_op(p.op, acc, a, b)));
        }
        let xs = ints(input).expect("integer input");
        let identity = int_identity(p.op, p.dtype_out);
        written_ints(p.dtype_out, &fold(&xs, identity, scan, |a, b| int_op(p.op, p.dtype_out, a, b)))
    }

    /// The lowest index of the float maximum (or minimum), NaN left aside; under `nan_first` the first NaN.
    fn float_arg(xs: &[f64], max: bool, nan: NanRule) -> i64 {
        if nan == NanRule::NanFirst {
            if let Some(i) = xs.iter().position(|x| x.is_nan()) {
                return i as i64;
            }
        }
        let mut best: Option<usize> = None;
        for (i, &x) in xs.iter().enumerate() {
            let better = |b: f64| if max { x > b } else { x < b };
            if !x.is_nan() && best.is_none_or(|b| better(xs[b])) {
                best = Some(i);
            }
        }
        best.expect("an index") as i64
    }

    /// The lowest index of the maximum (or minimum): integers compared as integers.
    fn arg(input: &Array, max: bool, nan: NanRule) -> i64 {
        if let Some(xs) = floats(input) {
            return float_arg(&xs, max, nan);
        }
        let xs = ints(input).expect("numbers");
        let mut best = 0;
        for (i, &x) in xs.iter().enumerate() {
            if (max && x > xs[best]) || (!max && x < xs[best]) {
                best = i;
            }
        }
        best as i64
    }

    /// The items kept (by flag, or by `x > 0`), bit for bit, and their count.
    fn compacted(inputs: &[Array], flagged: bool) -> Vec<Array> {
        let keep: Vec<bool> = if flagged {
            ints(&inputs[1]).expect("flags").iter().map(|&f| f != 0).collect()
        } else if let Some(xs) = floats(&inputs[0]) {
            xs.iter().map(|&x| x > 0.0).collect()
        } else {
            ints(&inputs[0]).expect("numbers").iter().map(|&x| x > 0).collect()
        };
        let indices: Vec<usize> = (0..keep.len()).filter(|&i| keep[i]).collect();
        let kept = match &inputs[0] {
            Array::Int32(v) => Array::Int32(indices.iter().map(|&i| v[i]).collect()),
            Array::Int64(v) => Array::Int64(indices.iter().map(|&i| v[i]).collect()),
            Array::Uint32(v) => Array::Uint32(indices.iter().map(|&i| v[i]).collect()),
            Array::Float32(v) => Array::Float32(indices.iter().map(|&i| v[i]).collect()),
            Array::Float64(v) => Array::Float64(indices.iter().map(|&i| v[i]).collect()),
            Array::Bfloat16(v) => Array::Bfloat16(indices.iter().map(|&i| v[i]).collect()),
            Array::Float16(v) => Array::Float16(indices.iter().map(|&i| v[i]).collect()),
            Array::Uint8(v) => Array::Uint8(indices.iter().map(|&i| v[i]).collect()),
        };
        vec![kept, Array::Int64(vec![indices.len() as i64])]
    }

    /// A float parameter's value.
    fn float_param(v: &Value) -> f64 {
        match v {
            Value::Float32(x) => f64::from(*x),
            Value::Float64(x) => *x,
            other => panic!("a float parameter, got {other:?}"),
        }
    }

    /// Counts per bin: the kernels' formula `min(trunc((x - lower) * scale), bins - 1)` in the
    /// bounds' float type, or `(x - lower) * bins / (upper - lower)` in wide integers.
    fn histogram(input: &Array, params: &[Value], closed: bool) -> Array {
        let bins = params[0].as_int().expect("bins") as usize;
        let mut counts = vec![0i32; bins];
        let in_f32 = matches!(params[1], Value::Float32(_));
        if let Some(xs) = floats(input) {
            let (lower, upper, scale) = (float_param(&params[1]), float_param(&params[2]), float_param(&params[3]));
            for x in xs {
                let t = if in_f32 { f64::from((x as f32 - lower as f32) * scale as f32) } else { (x - lower) * scale };
                let bin = if closed && x == upper {
                    Some(bins - 1)
                } else {
                    (lower <= x && x < upper).then(|| (t as usize).min(bins - 1))
                };
                bin.into_iter().for_each(|b| counts[b] += 1);
            }
        } else {
            let (lower, upper) =
                (i128::from(params[1].as_int().expect("lower")), i128::from(params[2].as_int().expect("upper")));
            for x in ints(input).expect("samples") {
                if lower <= x && (x < upper || (closed && x == upper)) {
                    counts[(((x - lower) * bins as i128) / (upper - lower)).min(bins as i128 - 1) as usize] += 1;
                }
            }
        }
        Array::Int32(counts)
    }

    /// Each row's softmax in float32 arithmetic (max subtracted), rows `stride` apart in the
    /// input, written contiguously; an all-masked row is 0 (NaN under `masked_nan`).
    fn softmax(t: &Typed, input: &Array, params: &[Value], masked_nan: bool) -> Array {
        let int = |k: usize| params[k].as_int().expect("an integer parameter") as usize;
        let (rows, cols) = (int(0), int(1));
        let stride = if params.len() > 2 { int(2) } else { cols };
        let xs = floats(input).expect("logits");
        let mut out = Vec::with_capacity(rows * cols);
        for r in 0..rows {
            let row: Vec<f32> = xs[r * stride..r * stride + cols].iter().map(|&v| v as f32).collect();
            let m = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            if m == f32::NEG_INFINITY {
                out.extend(std::iter::repeat_n(if masked_nan { f64::NAN } else { 0.0 }, cols));
                continue;
            }
            let e: Vec<f32> = row.iter().map(|&v| (v - m).exp()).collect();
            let total: f32 = e.iter().sum();
            out.extend(e.iter().map(|&v| f64::from(v / total)));
        }
        written_floats(t.parts.dtype_out, &out)
    }

    /// What the host kernel writes for `case`.
    pub fn outputs(t: &Typed, case: &RawCase) -> Vec<Array> {
        let input = &case.inputs[0];
        match t.parts.shape {
            Shape::Reduce => vec![folded(t, input, None)],
            Shape::Scan(kind) => vec![folded(t, input, Some(kind == kernels::ScanKind::Exclusive))],
            Shape::Arg { max } => vec![Array::Int64(vec![arg(input, max, t.parts.nan)])],
            Shape::Compact { flagged } => compacted(&case.inputs, flagged),
            Shape::Histogram { closed } => vec![histogram(input, &case.params, closed)],
            Shape::Softmax { masked_nan, .. } => vec![softmax(t, input, &case.params, masked_nan)],
            Shape::Segmented => vec![segmented(t, case)],
        }
    }

    /// One reduction per segment of the case's offsets, joined.
    fn segmented(t: &Typed, case: &RawCase) -> Array {
        let offsets: Vec<usize> = ints(&case.inputs[1]).expect("offsets").iter().map(|&o| o as usize).collect();
        let input = &case.inputs[0];
        let one = |w: &[usize]| folded(t, &super::super::catalogue::slice(input, w[0]..w[1]), None);
        let parts: Vec<Array> = offsets.windows(2).map(one).collect();
        let dtype = t.parts.dtype_out;
        if matches!(dtype, Dtype::Float64 | Dtype::Float32 | Dtype::Bfloat16 | Dtype::Float16) {
            let values: Vec<f64> = parts.iter().flat_map(|a| floats(a).expect("floats")).collect();
            return written_floats(dtype, &values);
        }
        written_ints(dtype, &parts.iter().flat_map(|a| ints(a).expect("ints")).collect::<Vec<_>>())
    }
}

/// Every shape over every type it takes: what a host kernel written apart
/// from the model computes ([`reference`]) passes every case of the
/// catalogue at small sizes (every family, the edge values among them); one
/// wrong element fails at its index. Each contract is listed once.
#[test]
fn every_typed_contract_passes_a_host_kernels_answer_and_fails_one_wrong_element() {
    let contracts = [
        (
            Primitive::Reduce,
            [
                "sum.i32.i32",
                "max.i64.i64",
                "min.bf16.f32",
                "sum.bf16.bf16",
                "sum.f32.f64",
                "max.f64.f64",
                "sum.u32.u32",
                "sum.f16.f16",
            ],
        ),
        (
            Primitive::Scan,
            [
                "inclusive.sum.i64.i64",
                "exclusive.min.i32.i64",
                "inclusive.max.bf16.bf16",
                "exclusive.sum.bf16.f32",
                "inclusive.sum.f64.f64",
                "exclusive.max.f32.f64",
                "inclusive.max.u32.u32",
                "exclusive.sum.f16.f32",
            ],
        ),
        (
            Primitive::ArgReduce,
            [
                "argmax.i64",
                "argmin.i32",
                "argmax.bf16.nan_first",
                "argmin.bf16.nan_ignored",
                "argmax.f64",
                "argmin.f64.nan_first",
                "argmin.u32",
                "argmax.f16.nan_first",
            ],
        ),
        (
            Primitive::SegmentedReduce,
            [
                "sum.i64.i64",
                "max.i32.i32",
                "min.bf16.bf16",
                "sum.bf16.f32",
                "sum.f64.f64",
                "max.f32.f32",
                "min.u32.u32",
                "sum.f16.f16",
            ],
        ),
        (
            Primitive::Compact,
            [
                "flagged.i64",
                "positive.i64",
                "flagged.bf16",
                "positive.bf16",
                "flagged.f32",
                "positive.f64",
                "positive.u32",
                "flagged.f16",
            ],
        ),
        (
            Primitive::Histogram,
            [
                "even.i64",
                "even.i64.last_bin_closed",
                "even.bf16",
                "even.bf16.last_bin_closed",
                "even.f64",
                "even.f16.last_bin_closed",
                "even.f16",
                "even.u32.last_bin_closed",
            ],
        ),
        (
            Primitive::Softmax,
            [
                "rows.bf16.bf16",
                "rows.bf16.f32",
                "rows.f32.bf16",
                "rows.bf16.bf16.all_masked_nan",
                "rows.f32.bf16.all_masked_nan",
                "strided_rows.bf16.bf16",
                "rows.f16.f16",
                "strided_rows.f16.f32",
            ],
        ),
    ];
    for (primitive, names) in contracts {
        let unique: std::collections::BTreeSet<&str> = names.iter().copied().collect();
        assert_eq!(unique.len(), names.len(), "{primitive}: a contract listed twice in {names:?}");
        let plan = SweepPlan::of_primitive(primitive, &[1, 33, 257], 0x5eed);
        for name in names {
            let t = typed(primitive, name);
            let specs = rules::with_catalogue(&plan, primitive, &t.contract, "u");
            let small: Vec<_> = specs.iter().filter(|s| s.id.n <= 1 << 16).collect();
            assert!(!small.is_empty(), "{name}: no small case");
            for spec in small {
                let case = (spec.make)().unwrap_or_else(|e| panic!("{name} {}: {e}", spec.id.family));
                let mut got = reference::outputs(t, &case);
                let v = rules::compare(&t.contract, &case, &got);
                assert!(v.passed(), "{name} n={} {}: {v:?}", spec.id.n, spec.id.family);
                // The last element with a number for an answer (an all-masked row's NaN has a rule of its own).
                let Some(at) = (0..got[0].count()).rev().find(|&i| match &case.expected[0] {
                    Array::Float64(v) => !v[i].is_nan(),
                    _ => true,
                }) else {
                    continue;
                };
                corrupt(&mut got, at);
                let Verdict::Fail(m) = rules::compare(&t.contract, &case, &got) else {
                    panic!("{name} n={} {}: element {at} made wrong passed", spec.id.n, spec.id.family)
                };
                assert!(m.index.is_some(), "{name}: {m:?}");
            }
        }
    }
}

#[test]
fn a_strided_softmax_reads_rows_stride_apart_and_padding_read_as_logits_fails() {
    let t = typed(Primitive::Softmax, "strided_rows.bf16.f32");
    assert_eq!(t.contract.params.iter().map(|p| p.name).collect::<Vec<_>>(), ["rows", "cols", "stride"]);
    let plan = SweepPlan::of_primitive(Primitive::Softmax, &[33], 4);
    let spec = rules::with_catalogue(&plan, Primitive::Softmax, &t.contract, "u")
        .into_iter()
        .find(|s| s.id.n <= 1 << 16 && s.id.family.ends_with("unmasked"))
        .expect("an unmasked case");
    let case = (spec.make)().expect("made");
    let int = |k: usize| case.params[k].as_int().expect("int") as usize;
    let (rows, cols, stride) = (int(0), int(1), int(2));
    assert!(stride > cols && case.inputs[0].count() == rows * stride && spec.id.n == rows * stride);
    assert!(spec.id.size.ends_with(&format!("/{stride}")), "{}", spec.id.size);
    let x = float_values(&case.inputs[0]).expect("logits");
    assert!(x[cols].is_nan(), "padding is NaN");
    // Right: each row read from its stride; wrong: rows read as if contiguous.
    let rows_of = |step: usize| {
        families::float_array(Dtype::Bfloat16, (0..rows).flat_map(|r| x[r * step..r * step + cols].to_vec()).collect())
    };
    let right = host_softmax(&rows_of(stride), rows, cols, Dtype::Float32, 0.0);
    assert!(verdict(t, &case, right).passed());
    let wrong = host_softmax(&rows_of(cols), rows, cols, Dtype::Float32, 0.0);
    assert!(!verdict(t, &case, wrong).passed(), "rows read contiguously passed");
}

#[test]
fn the_worst_error_against_its_bound_is_noted_for_the_case_in_flight() {
    let _ = rules::take_accuracy();
    let (t, case) = case_of("inclusive.sum.f32.f32", Primitive::Scan, "uniform", 4096);
    let values = float_values(&case.inputs[0]).expect("floats");
    let serial = host_sum(&values, t.parts.shape, 4096, Dtype::Float32, Dtype::Float32);
    assert!(verdict(t, &case, serial).passed());
    let (ratio, line) = rules::take_accuracy().expect("noted");
    assert!(ratio > 0.0 && ratio <= 1.0, "{ratio}");
    assert!(line.starts_with("prefix within the order-free bound (float32 accumulator): largest |error| "), "{line}");
    assert!(line.contains("% of its bound"), "{line}");
    assert_eq!(rules::take_accuracy(), None, "taken once");
    // Exact contracts note nothing.
    let (i, case) = case_of("inclusive.max.i32.i32", Primitive::Scan, "full_range", 100);
    assert!(verdict(i, &case, case.expected[0].clone()).passed());
    assert_eq!(rules::take_accuracy(), None);
}

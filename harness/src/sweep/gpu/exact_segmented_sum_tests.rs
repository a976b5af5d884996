//! CPU tests of the segmented correctly rounded sum cases: shapes, data
//! families and references (no GPU).

use super::*;

fn lengths(offsets: &[usize]) -> Vec<usize> {
    offsets.windows(2).map(|w| w[1] - w[0]).collect()
}

#[test]
fn every_shape_covers_its_input_with_valid_offsets() {
    for shape in ["lengths", "random", "one_segment", "huge_with_empties"] {
        for n in [0, 1, 33, 4099] {
            let offsets = offsets_for(shape, n, 3);
            assert!(model::segmented_reduce::validate_offsets(&offsets, n).is_ok(), "{shape} {n}: {offsets:?}");
            assert_eq!((offsets[0], offsets[offsets.len() - 1]), (0, n), "{shape} {n}");
        }
    }
    let cycle = lengths(&offsets_for("lengths", 4099, 0));
    for len in [0, 1, 31, 32, 33, 1000] {
        assert!(cycle.contains(&len), "lengths has a segment of {len}: {cycle:?}");
    }
    assert_eq!(lengths(&offsets_for("huge_with_empties", 99, 0)), vec![0, 33, 0, 66]);
}

#[test]
fn the_overflow_family_cancels_overflows_and_stays_finite_by_segment() {
    let offsets = offsets_for("random", 16_384, 5);
    let x = family_values("overflow", &offsets, 16_384, 5).expect("generates");
    let sums = expected_sums(&x, &offsets).expect("references agree");
    let kinds = |keep: fn(f32) -> bool| sums.iter().filter(|&&v| keep(v)).count();
    assert!(kinds(|v| v.to_bits() == 0) > 10, "exact zeros: {sums:?}");
    assert!(kinds(f32::is_infinite) > 10, "infinities: {sums:?}");
    assert!(kinds(|v| v.is_finite() && v != 0.0) > 10, "finite nonzero sums: {sums:?}");
    // Their f32 partial sums overflow: the cancelling segments are not zero in f32.
    let naive_zero = offsets.windows(2).filter(|w| x[w[0]..w[1]].iter().sum::<f32>() == 0.0).count();
    assert!(naive_zero < kinds(|v| v.to_bits() == 0), "{naive_zero}");
}

#[test]
fn the_other_families_hold_what_they_are_named_after() {
    let offsets = offsets_for("random", 4099, 9);
    let subnormal = family_values("subnormal", &offsets, 4099, 9).expect("generates");
    assert!(subnormal.iter().all(|v| v.is_subnormal() || v.abs() == f32::MIN_POSITIVE));
    assert!(subnormal.iter().any(|v| v.is_sign_negative()) && subnormal.iter().any(|v| v.is_sign_positive()));
    let tiny = family_values("tiny_normal", &offsets, 4099, 9).expect("generates");
    assert!(tiny.iter().all(|v| v.is_normal() && v.abs() < 2f32.powi(-121)));
    let tiny_sums = expected_sums(&tiny, &offsets).expect("references agree");
    assert!(tiny_sums.iter().filter(|v| v.is_subnormal()).count() > 5, "subnormal sums: {tiny_sums:?}");
    let mixed = family_values("mixed_sign", &offsets, 4099, 9).expect("generates");
    let exponents: std::collections::BTreeSet<u32> = mixed.iter().map(|v| (v.to_bits() >> 23) & 0xff).collect();
    assert!(exponents.len() > 200 && mixed.iter().all(|v| v.is_finite()), "{} exponents", exponents.len());
    let special = family_values("nan_inf", &offsets, 4099, 9).expect("generates");
    let sums = expected_sums(&special, &offsets).expect("references agree");
    assert!(sums.iter().any(|v| v.to_bits() == 0x7fc0_0000), "a NaN segment");
    assert!(sums.iter().any(|v| v.is_infinite()), "an infinite segment");
    assert!(sums.iter().filter(|v| v.is_finite()).count() > sums.len() / 2, "mostly finite");
    let ill = family_values("ill_conditioned_1e30", &offsets, 4099, 9).expect("generates");
    let long = offsets.windows(2).find(|w| w[1] - w[0] >= 20).expect("a long segment");
    let segment: Vec<f64> = ill[long[0]..long[1]].iter().map(|&v| f64::from(v)).collect();
    assert!(model::exact::condition_number(&segment).expect("finite") > 1e20);
}

#[test]
fn the_sanitizer_plan_runs_both_schedules_and_bf16_at_every_sanitizer_size() {
    let plan = SweepPlan::sanitizer(
        crate::registry::primitive::Primitive::ExactSum,
        &crate::sweep::sizes::SANITIZE_SIZES,
        1,
        &[],
    );
    let mut out = Vec::new();
    cases(&plan, &mut out);
    for n in crate::sweep::sizes::SANITIZE_SIZES {
        let kinds =
            ExactSegmentedSchedule::ALL.iter().flat_map(|s| ["f32", "bf16"].map(|t| format!("{}.{t}", s.name())));
        for kind in kinds {
            assert!(
                out.iter().any(|c| c.id.n == n && c.id.variant.contains(&kind)),
                "no {kind} case at {n} for the sanitizer"
            );
        }
    }
}

#[test]
fn the_determinism_case_uses_at_least_three_distinct_launches() {
    let launches = determinism_launches();
    let distinct: std::collections::BTreeSet<String> = launches.iter().map(|l| format!("{l:?}")).collect();
    assert_eq!(distinct.len(), launches.len());
    for schedule in ExactSegmentedSchedule::ALL {
        assert!(launches.iter().any(|l| l.schedule == Some(schedule)), "{schedule:?}");
    }
}

#[test]
fn a_wrong_segment_is_reported_with_its_index() {
    let expected = Ok(vec![1.0f32, 0.0, f32::INFINITY]);
    assert!(matches!(compare(&expected, &[1.0, 0.0, f32::INFINITY]), Verdict::Pass));
    match compare(&expected, &[1.0, -0.0, f32::INFINITY]) {
        Verdict::Fail(m) => assert_eq!(m.index, Some(1)),
        _ => panic!("-0.0 is not +0.0 bit for bit"),
    }
    assert!(matches!(compare(&expected, &[1.0]), Verdict::Fail(_)));
}

/// Every case of a small plan has a reference (rug and the binned model
/// agree on every segment, the hand-checked sums included), and the ids
/// are unique.
#[test]
fn every_reference_of_a_small_plan_computes() {
    let plan = SweepPlan { sizes: vec![1, 33, 4099], quick: true, ..SweepPlan::full(0x5eed) };
    let mut out = Vec::new();
    cases(&plan, &mut out);
    crate::sweep::gpu::assert_unique_ids_and_references(&out, |_| true);
}

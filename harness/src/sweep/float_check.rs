//! Checks of float results: accuracy against the exact (rug) value, and
//! bitwise equality with the model's replay of a deterministic GPU tree.

use crate::sweep::case::Verdict;
use model::exact::{exact_sum_f64, order_free_error_bound, tree_error_bound, U_F32};
use model::float_reduce::{FloatLaunch, FloatTreeSchedule};

/// The exact error `got - sum(values)` (rounded to the nearest f64) and
/// `sum |values|` (rounded up).
pub fn error_of(values: impl Iterator<Item = f64>, got: f32) -> Result<(f64, f64), String> {
    let mut all: Vec<f64> = values.collect();
    let sum_abs = exact_sum_f64(&all).map_err(|e| e.to_string())?.sum_abs;
    all.push(-(got as f64));
    let error = exact_sum_f64(&all).map_err(|e| e.to_string())?.rounded_f64;
    Ok((-error, sum_abs))
}

/// The bound |err| <= gamma_depth * sum|x| of a fixed tree, f32 arithmetic.
pub fn tree_bound(depth: u32, sum_abs: f64) -> f64 {
    tree_error_bound(depth, U_F32, sum_abs)
}

/// The order-free bound (n-1) u/(1+u) sum|x| (any order, atomics included).
pub fn order_free_bound(n: usize, sum_abs: f64) -> f64 {
    order_free_error_bound(n as u64, U_F32, sum_abs)
}

/// Distance in units in the last place between two finite f32 (the count of
/// f32 values between them, +0 and -0 being one apart); `None` if either is NaN.
pub fn ulps_apart(a: f32, b: f32) -> Option<u64> {
    if a.is_nan() || b.is_nan() {
        return None;
    }
    // Map the sign-magnitude bits onto a line where adjacent floats differ by 1.
    let line = |x: f32| -> i64 {
        let bits = x.to_bits() as i64;
        if bits & 0x8000_0000 != 0 {
            -(bits & 0x7fff_ffff) - 1
        } else {
            bits
        }
    };
    Some(line(a).abs_diff(line(b)))
}

/// Whether a GPU result `got` is the replay's `expected` bit for bit. NaN
/// payloads are not modelled: a NaN replay accepts any NaN.
pub fn same_bits(expected: f32, got: f32) -> bool {
    expected.to_bits() == got.to_bits() || (expected.is_nan() && got.is_nan())
}

/// The verdict of a deterministic float case: the plan launched the grids
/// the replay assumed (`grids`, in launch order), the GPU result `got` equals
/// the replay bit for bit, and the declared bound held (`bound`, reported
/// beside a bit mismatch so a failure says whether the tree or the bound broke).
pub fn check_replay(
    schedule: FloatTreeSchedule,
    n: usize,
    replay: &Result<f32, String>,
    grids: &[usize],
    got: f32,
    bound: Verdict,
) -> Verdict {
    let planned = match FloatLaunch::of(schedule, n) {
        Ok(launch) => launch.grids,
        Err(e) => return Verdict::fail("a replay geometry", e.to_string(), "model"),
    };
    if planned != grids {
        return Verdict::fail(
            format!("grids {planned:?} (the replay's geometry)"),
            format!("grids {grids:?} launched"),
            "replay geometry",
        );
    }
    let expected = match replay {
        Ok(v) => *v,
        Err(e) => return Verdict::fail("a replay", format!("model error: {e}"), "model"),
    };
    if same_bits(expected, got) {
        return bound;
    }
    let apart = ulps_apart(expected, got).map(|u| format!("{u} ulp apart")).unwrap_or_else(|| "NaN".into());
    let bound_note = match &bound {
        Verdict::Fail(m) => format!("declared bound also failed: {}", m.expected),
        _ => "within the declared bound".to_string(),
    };
    Verdict::fail(
        format!("{expected:e} (bits {:#010x}, {} replay, grids {planned:?})", expected.to_bits(), schedule.name()),
        format!("{got:e} (bits {:#010x}; {apart}; {bound_note})", got.to_bits()),
        "bitwise replay",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ulps_count_the_floats_between() {
        assert_eq!(ulps_apart(1.0, 1.0), Some(0));
        assert_eq!(ulps_apart(1.0, f32::from_bits(1.0f32.to_bits() + 3)), Some(3));
        assert_eq!(ulps_apart(0.0, -0.0), Some(1));
        assert_eq!(ulps_apart(f32::from_bits(1), -f32::from_bits(1)), Some(3));
        assert_eq!(ulps_apart(f32::NAN, 1.0), None);
    }

    #[test]
    fn a_bit_mismatch_names_both_bit_patterns_and_the_bound() {
        let v = check_replay(FloatTreeSchedule::FixedTree, 5000, &Ok(1.0), &[2, 1], 1.0000001, Verdict::Pass);
        let Verdict::Fail(m) = v else { panic!("a mismatch must fail") };
        assert_eq!(m.what, "bitwise replay");
        assert!(m.expected.contains("bits 0x3f800000") && m.expected.contains("fixed_tree"), "{}", m.expected);
        assert!(m.got.contains("bits 0x3f800001") && m.got.contains("1 ulp apart"), "{}", m.got);
        assert!(m.got.contains("within the declared bound"), "{}", m.got);
    }

    #[test]
    fn equal_bits_leave_the_bound_verdict() {
        let v = check_replay(FloatTreeSchedule::TwoPass, 1, &Ok(-0.0), &[1, 1], -0.0, Verdict::Pass);
        assert!(v.passed());
        // +0 and -0 are different bits.
        let v = check_replay(FloatTreeSchedule::TwoPass, 1, &Ok(-0.0), &[1, 1], 0.0, Verdict::Pass);
        assert!(!v.passed());
        let failed_bound = Verdict::fail("bound", "far", "accuracy bound");
        let v = check_replay(FloatTreeSchedule::FixedTree, 3, &Ok(2.0), &[1], 2.0, failed_bound);
        assert!(!v.passed(), "the bound still decides when the bits agree");
    }

    #[test]
    fn a_different_geometry_is_reported_before_the_bits() {
        let v = check_replay(FloatTreeSchedule::FixedTree, 5000, &Ok(1.0), &[3, 1], 1.0, Verdict::Pass);
        let Verdict::Fail(m) = v else { panic!("a geometry mismatch must fail") };
        assert_eq!((m.what.as_str(), m.expected.as_str()), ("replay geometry", "grids [2, 1] (the replay's geometry)"));
    }

    #[test]
    fn the_error_of_the_seed_example_is_exact() {
        // (1e8 + 1) - 1e8 in f32 is 0; the exact sum is 1.
        let (error, sum_abs) = error_of([1e8, 1.0, -1e8].into_iter(), 0.0).unwrap();
        assert_eq!(error, -1.0);
        assert_eq!(sum_abs, 2e8 + 1.0);
        assert!(order_free_bound(3, sum_abs) >= 1.0);
    }
}

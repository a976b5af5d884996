//! Element-wise comparison of a GPU output with the model's.

use super::case::Verdict;
use rayon::prelude::*;
use std::fmt::Debug;

/// Pass if `got == expected` element-wise (and in length); otherwise the
/// first differing index. Parallel for large outputs.
pub fn exact<T: PartialEq + Debug + Sync>(expected: &[T], got: &[T], what: &str) -> Verdict {
    if expected.len() != got.len() {
        return Verdict::fail(format!("{} elements", expected.len()), format!("{} elements", got.len()), what);
    }
    let first = expected.par_iter().zip(got.par_iter()).position_first(|(e, g)| e != g);
    match first {
        None => Verdict::Pass,
        Some(i) => Verdict::fail_at(i, format!("{:?}", expected[i]), format!("{:?}", got[i]), what),
    }
}

/// Pass if `ok(i)` holds for every index; otherwise the first index where it
/// does not, rendered by `show(i) -> (expected, got)`.
pub fn each(
    n: usize,
    what: &str,
    ok: impl Fn(usize) -> bool + Sync,
    show: impl Fn(usize) -> (String, String),
) -> Verdict {
    match (0..n).into_par_iter().position_first(|i| !ok(i)) {
        None => Verdict::Pass,
        Some(i) => {
            let (expected, got) = show(i);
            Verdict::fail_at(i, expected, got, what)
        }
    }
}

/// The first verdict that is not a pass, or Pass.
pub fn all(verdicts: impl IntoIterator<Item = Verdict>) -> Verdict {
    verdicts.into_iter().find(|v| !v.passed()).unwrap_or(Verdict::Pass)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_reports_the_first_mismatch() {
        assert!(exact(&[1, 2, 3], &[1, 2, 3], "out").passed());
        let v = exact(&[1, 2, 3, 4], &[1, 9, 3, 9], "out");
        assert_eq!(v, Verdict::fail_at(1, "2", "9", "out"));
        assert!(!exact(&[1, 2], &[1], "out").passed());
    }

    #[test]
    fn all_keeps_the_first_failure() {
        let v = all([Verdict::Pass, Verdict::fail("a", "b", "x"), Verdict::fail("c", "d", "y")]);
        assert_eq!(v, Verdict::fail("a", "b", "x"));
    }
}

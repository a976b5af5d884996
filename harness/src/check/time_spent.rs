//! Where a check's time went: a line after the counts, for checks long enough to ask
//! (at least [`WORTH_SAYING`] case-seconds), naming the slowest cases and the share of
//! the time the slowest tenth took. A case's time is its whole wall time: the input,
//! the kernel's launches (every run the defences make), the model and the comparison,
//! so a slow kernel shows up here as its slowest cases.

use crate::sweep::case::CaseResult;

/// Case-seconds below which a check says nothing about its time.
pub const WORTH_SAYING: f64 = 20.0;
/// Slowest cases named.
const NAMED: usize = 3;

/// The line, or `None` for a check quicker than [`WORTH_SAYING`].
pub fn line(results: &[CaseResult]) -> Option<String> {
    let total_ms: u64 = results.iter().map(|r| r.millis).sum();
    let total = total_ms as f64 / 1000.0;
    if total < WORTH_SAYING {
        return None;
    }
    let mut slowest: Vec<&CaseResult> = results.iter().collect();
    slowest.sort_by_key(|r| std::cmp::Reverse(r.millis));
    let tenth = results.len().div_ceil(10);
    let tenth_ms: u64 = slowest[..tenth].iter().map(|r| r.millis).sum();
    let named: Vec<String> = slowest[..NAMED.min(slowest.len())]
        .iter()
        .map(|r| format!("{:.1} s {} at n={} ({})", r.millis as f64 / 1000.0, r.id.family, r.id.size, r.id.variant))
        .collect();
    Some(format!(
        "check: {total:.1} case-seconds in {} cases; the slowest {tenth} took {:.0} % of them; slowest: {} \
         (a case's time holds every launch of the kernel the defences make, the model and the comparison)",
        results.len(),
        100.0 * tenth_ms as f64 / total_ms as f64,
        named.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::case::{CaseId, Verdict};

    fn case(family: &str, n: usize, millis: u64) -> CaseResult {
        let id = CaseId {
            primitive: "topk".into(),
            variant: "user.largest.f32".into(),
            size: n.to_string(),
            n,
            family: family.into(),
            seed: 1,
        };
        CaseResult { id, verdict: Verdict::Pass, millis, input_digest: None, expected_digest: None }
    }

    #[test]
    fn a_quick_check_says_nothing() {
        let results: Vec<CaseResult> = (0..100).map(|i| case("spread", i, 150)).collect();
        assert_eq!(line(&results), None, "15 case-seconds");
    }

    #[test]
    fn a_long_check_names_its_slowest_cases_and_their_share() {
        // 90 cases of 0.1 s and 10 of 5 s: 59 s, the slowest tenth 50 s (85 %).
        let mut results: Vec<CaseResult> = (0..90).map(|i| case("spread.k1", 1000 + i, 100)).collect();
        results.extend((0..10).map(|i| case("ties.k2048", 460_051, 5000 - i)));
        let said = line(&results).expect("59 case-seconds is worth saying");
        assert!(said.contains("59.0 case-seconds in 100 cases"), "{said}");
        assert!(said.contains("the slowest 10 took 85 %"), "{said}");
        assert!(said.contains("slowest: 5.0 s ties.k2048 at n=460051 (user.largest.f32), 5.0 s"), "{said}");
        assert_eq!(said.matches(" at n=").count(), 3, "three named: {said}");
    }
}

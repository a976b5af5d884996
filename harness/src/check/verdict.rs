//! The verdict of a whole check, from what happened to its cases: a pure
//! function of the results, the cases planned and the other gates, so that
//! no check passes by accident.
//!
//! The rules, in order:
//! * any failure (a case's, the static pass's, a sanitizer's or the timing's)
//!   fails the check (exit 1), whatever else happened;
//! * else any case that could not run (refused for host or device memory,
//!   killed by the host, a case that could not be made) or that was planned
//!   and never reported (its worker ended without a result, and no
//!   `--maxfail` stop explains it) makes the check incomplete (exit 2): the
//!   kernel was not proven on it, and it is named;
//! * else a check in which no case passed checked nothing (exit 1);
//! * else it passes (exit 0).

use crate::sweep::case::{CaseId, CaseResult, Verdict};

/// A whole check's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Every planned case ran and passed, and every other gate held.
    Pass,
    /// Something failed.
    Fail,
    /// Nothing failed, but some planned case did not run.
    Incomplete,
    /// Nothing failed and nothing was left out, but no case passed.
    NothingChecked,
}

impl Outcome {
    /// The exit status ([`crate::exit`]): 0, 1, or 2 for a check that could not run every case.
    pub fn exit_status(self) -> u8 {
        match self {
            Outcome::Pass => crate::exit::PASSED,
            Outcome::Fail | Outcome::NothingChecked => crate::exit::FAILED,
            Outcome::Incomplete => crate::exit::CANNOT_RUN,
        }
    }

    /// The word the last line of a check, its summary and its receipt carry.
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail => "fail",
            Outcome::Incomplete => "incomplete",
            Outcome::NothingChecked => "nothing checked",
        }
    }
}

/// A planned case that did not run, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotRun {
    /// The case.
    pub id: CaseId,
    /// Why it did not run.
    pub reason: String,
}

impl NotRun {
    /// `NOT RUN <variant> n=<size> <family> seed=<seed>: <reason>`.
    pub fn line(&self) -> String {
        let id = &self.id;
        format!("NOT RUN {} n={} {} seed={:#x}: {}", id.variant, id.size, id.family, id.seed, self.reason)
    }
}

/// What happened in a check, as [`decide`] reads it.
#[derive(Debug, Clone, Copy)]
pub struct Happened<'a> {
    /// The cases' results, each case at most once.
    pub results: &'a [CaseResult],
    /// Every case the check planned, in order.
    pub planned: &'a [CaseId],
    /// `--maxfail` (None: `--all`).
    pub maxfail: Option<usize>,
    /// Collectives the static pass failed.
    pub static_failures: usize,
    /// Whether the sanitizer runs were clean (None: not asked, or left out).
    pub sanitizers_clean: Option<bool>,
    /// Whether the timing worked (None: not asked).
    pub timing_worked: Option<bool>,
}

/// The decision: the outcome, the counts, and every case that did not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// The outcome.
    pub outcome: Outcome,
    /// Cases that passed.
    pub passed: usize,
    /// Cases that failed.
    pub failed: usize,
    /// Cases that could not run, or were planned and never reported (in plan order).
    pub not_run: Vec<NotRun>,
    /// Whether `--maxfail` ended the check early (the cases after the stop are not listed).
    pub stopped_by_maxfail: bool,
}

/// Why a planned case that has no result has none: the worker that should
/// have run it ended without reporting it.
pub const NEVER_REPORTED: &str = "could not run: planned but never reported (its worker ended without a result for it)";

/// The check's decision (see the module's rules).
pub fn decide(h: &Happened) -> Decision {
    let failed = h.results.iter().filter(|r| matches!(r.verdict, Verdict::Fail(_))).count();
    let passed = h.results.iter().filter(|r| r.verdict.passed()).count();
    let stopped_by_maxfail = h.maxfail.is_some_and(|m| failed + h.static_failures >= m);
    let mut not_run: Vec<NotRun> = h
        .results
        .iter()
        .filter_map(|r| match &r.verdict {
            Verdict::Skipped { reason } => Some(NotRun { id: r.id.clone(), reason: reason.clone() }),
            _ => None,
        })
        .collect();
    if !stopped_by_maxfail {
        let reported = |id: &CaseId| h.results.iter().any(|r| &r.id == id);
        let missing = h.planned.iter().filter(|id| !reported(id));
        not_run.extend(missing.map(|id| NotRun { id: id.clone(), reason: NEVER_REPORTED.to_string() }));
    }
    let any_failure =
        failed > 0 || h.static_failures > 0 || h.sanitizers_clean == Some(false) || h.timing_worked == Some(false);
    let outcome = match (any_failure, not_run.is_empty(), passed) {
        (true, _, _) => Outcome::Fail,
        (false, false, _) => Outcome::Incomplete,
        (false, true, 0) => Outcome::NothingChecked,
        (false, true, _) => Outcome::Pass,
    };
    Decision { outcome, passed, failed, not_run, stopped_by_maxfail }
}

/// Not-run lines printed at the end of a check (the receipt lists them all).
pub const NOT_RUN_SHOWN: usize = 20;

/// The lines naming the cases that did not run: the first [`NOT_RUN_SHOWN`],
/// then how many more the receipt lists.
pub fn not_run_lines(not_run: &[NotRun]) -> Vec<String> {
    let mut lines: Vec<String> = not_run.iter().take(NOT_RUN_SHOWN).map(NotRun::line).collect();
    if not_run.len() > NOT_RUN_SHOWN {
        lines.push(format!(
            "... and {} more not run (the receipt's not_run lists every one)",
            not_run.len() - NOT_RUN_SHOWN
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: usize, family: &str) -> CaseId {
        crate::sweep::gpu::sized_id("scan", "user.exclusive.i32".into(), n, family, 7)
    }

    fn result(n: usize, verdict: Verdict) -> CaseResult {
        CaseResult::new(id(n, "small_ints"), verdict, 1)
    }

    fn happened<'a>(results: &'a [CaseResult], planned: &'a [CaseId]) -> Happened<'a> {
        Happened { results, planned, maxfail: Some(1), static_failures: 0, sanitizers_clean: None, timing_worked: None }
    }

    fn planned(sizes: &[usize]) -> Vec<CaseId> {
        sizes.iter().map(|&n| id(n, "small_ints")).collect()
    }

    fn skipped(why: &str) -> Verdict {
        Verdict::Skipped { reason: why.to_string() }
    }

    #[test]
    fn every_case_passed_is_a_pass_with_status_0() {
        let plan = planned(&[1, 33]);
        let results = [result(1, Verdict::Pass), result(33, Verdict::Pass)];
        let d = decide(&happened(&results, &plan));
        assert_eq!((d.outcome, d.passed, d.failed, d.not_run.len()), (Outcome::Pass, 2, 0, 0));
        assert_eq!(d.outcome.exit_status(), 0);
    }

    #[test]
    fn a_case_refused_for_memory_or_killed_by_the_host_makes_the_check_incomplete_with_status_2() {
        let plan = planned(&[1, 33, 4099]);
        let results = [
            result(1, Verdict::Pass),
            result(33, skipped("could not run: the case needs about 43.0 GB of host memory and 30.0 GB are free")),
            result(4099, skipped("could not run: the process was killed during the case (signal: 9 (SIGKILL))")),
        ];
        let d = decide(&happened(&results, &plan));
        assert_eq!(d.outcome, Outcome::Incomplete);
        assert_eq!(d.outcome.exit_status(), 2);
        let lines = not_run_lines(&d.not_run);
        assert_eq!(lines.len(), 2);
        assert!(lines[0].starts_with("NOT RUN user.exclusive.i32 n=33 small_ints seed=0x"), "{}", lines[0]);
        assert!(lines[0].ends_with("43.0 GB of host memory and 30.0 GB are free"), "{}", lines[0]);
        assert!(lines[1].contains("n=4099") && lines[1].contains("SIGKILL"), "{}", lines[1]);
    }

    #[test]
    fn a_planned_case_never_reported_without_a_maxfail_stop_is_not_run() {
        let plan = planned(&[1, 33, 4099]);
        let results = [result(1, Verdict::Pass), result(33, Verdict::Pass)];
        let d = decide(&Happened { maxfail: None, ..happened(&results, &plan) });
        assert_eq!(d.outcome, Outcome::Incomplete, "a case that vanished is never a pass");
        assert_eq!(d.not_run.len(), 1);
        assert_eq!((d.not_run[0].id.n, d.not_run[0].reason.as_str()), (4099, NEVER_REPORTED));
    }

    #[test]
    fn any_failure_fails_with_status_1_even_beside_cases_that_did_not_run() {
        let plan = planned(&[1, 33, 4099]);
        let watchdog = Verdict::fail("a result", "did not finish within 30 s", "watchdog");
        let results = [result(1, Verdict::Pass), result(33, watchdog)];
        let d = decide(&happened(&results, &plan));
        assert_eq!((d.outcome, d.outcome.exit_status(), d.failed), (Outcome::Fail, 1, 1));
        assert!(d.stopped_by_maxfail && d.not_run.is_empty(), "--maxfail 1 explains the case not reached");
        let results = [result(1, skipped("could not run: x")), result(33, Verdict::fail("a", "b", "crash"))];
        let d = decide(&Happened { maxfail: None, ..happened(&results, &plan) });
        assert_eq!(d.outcome, Outcome::Fail);
        assert_eq!(d.not_run.len(), 2, "the not-run cases are still named: {:?}", d.not_run);
    }

    #[test]
    fn the_other_gates_fail_a_check_whose_cases_passed() {
        let plan = planned(&[1]);
        let results = [result(1, Verdict::Pass)];
        let base = happened(&results, &plan);
        assert_eq!(decide(&Happened { static_failures: 1, maxfail: None, ..base }).outcome, Outcome::Fail);
        assert_eq!(decide(&Happened { sanitizers_clean: Some(false), ..base }).outcome, Outcome::Fail);
        assert_eq!(decide(&Happened { timing_worked: Some(false), ..base }).outcome, Outcome::Fail);
        assert_eq!(
            decide(&Happened { sanitizers_clean: Some(true), timing_worked: Some(true), ..base }).outcome,
            Outcome::Pass
        );
    }

    #[test]
    fn nothing_ran_is_never_a_pass() {
        let d = decide(&Happened { maxfail: None, ..happened(&[], &[]) });
        assert_eq!((d.outcome, d.outcome.exit_status()), (Outcome::NothingChecked, 1));
        let plan = planned(&[1, 33]);
        let results = [result(1, skipped("could not run: x")), result(33, skipped("could not run: y"))];
        let d = decide(&happened(&results, &plan));
        assert_eq!((d.outcome, d.passed), (Outcome::Incomplete, 0));
        let d = decide(&Happened { maxfail: None, ..happened(&[], &plan) });
        assert_eq!((d.outcome, d.not_run.len()), (Outcome::Incomplete, 2), "planned cases that never ran");
    }

    #[test]
    fn only_the_first_not_run_cases_are_listed_then_a_count() {
        let many: Vec<NotRun> =
            (0..25).map(|n| NotRun { id: id(n + 1, "f"), reason: "could not run: x".into() }).collect();
        let lines = not_run_lines(&many);
        assert_eq!(lines.len(), NOT_RUN_SHOWN + 1);
        assert_eq!(lines[NOT_RUN_SHOWN], "... and 5 more not run (the receipt's not_run lists every one)");
    }
}

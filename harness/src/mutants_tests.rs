//! Tests of `harness mutants`: outcome words, verdicts and coverage (no GPU).

use super::*;

#[test]
fn every_build_gets_its_own_log_names() {
    let mut labels: Vec<String> = GALLERY.iter().enumerate().map(|(i, m)| build_label(m, m.id, i)).collect();
    labels.extend(GALLERY.iter().enumerate().map(|(i, m)| build_label(m, 0, GALLERY.len() + i)));
    let unique: std::collections::BTreeSet<&String> = labels.iter().collect();
    assert_eq!(unique.len(), labels.len(), "{labels:?}");
}

fn build(id: u32, outcomes: &[(&str, CheckOutcome)]) -> BuildVerdict {
    BuildVerdict {
        id,
        name: if id == 0 { "real kernels".into() } else { format!("m{id}") },
        primitive: "reduce".into(),
        variant: "multipass".into(),
        sizes: vec![33],
        checks: outcomes
            .iter()
            .map(|(check, outcome)| CheckVerdict { check: check.to_string(), outcome: outcome.clone(), seconds: 1.0 })
            .collect(),
    }
}

fn caught() -> CheckOutcome {
    CheckOutcome::Caught("1 error".into())
}

fn clean() -> CheckOutcome {
    CheckOutcome::NotCaught("0 errors".into())
}

#[test]
fn only_a_catch_is_a_catch_and_undecided_checks_fail_the_run() {
    let compiled_not = build(3, &[("sweep", CheckOutcome::DidNotCompile("error: NVRTC failed to compile".into()))]);
    assert!(compiled_not.caught_by().is_empty());
    let (tally, failures) = judge(&[compiled_not], &[]);
    assert_eq!(tally.failed, 1);
    assert!(
        failures.iter().any(|f| f.contains("did not compile") && f.contains("not counted as a catch")),
        "{failures:?}"
    );
    assert!(failures.iter().any(|f| f.contains("survived")), "{failures:?}");

    // Caught by the sweep, but racecheck timed out: the mutant counts as caught
    // by the sweep only, and the run still fails on the timeout.
    let partly = build(1, &[("sweep", caught()), ("racecheck", CheckOutcome::TimedOut("killed after 120 s".into()))]);
    assert_eq!(partly.caught_by(), vec!["sweep"]);
    let (tally, failures) = judge(&[partly], &[]);
    assert_eq!((tally.passed, tally.failed), (0, 1));
    assert!(failures.iter().any(|f| f.contains("racecheck: timed out")), "{failures:?}");

    let good = build(2, &[("sweep", clean()), ("memcheck", caught())]);
    let (tally, failures) = judge(&[good], &[]);
    assert_eq!((tally.passed, tally.failed), (1, 0));
    assert!(failures.is_empty());
}

#[test]
fn a_control_that_did_not_finish_is_a_failed_control() {
    for bad in [
        CheckOutcome::TimedOut("killed".into()),
        CheckOutcome::Broken("no sanitizer summary".into()),
        CheckOutcome::DidNotCompile("x".into()),
    ] {
        let control = build(0, &[("sweep", clean()), ("memcheck", bad)]);
        assert!(control_summary(&control).starts_with("CONTROL FAILED"), "{}", control_summary(&control));
        let (tally, failures) = judge(&[], &[control]);
        assert_eq!(tally.failed, 1);
        assert!(!failures.is_empty());
    }
    let flagged = build(0, &[("sweep", clean()), ("memcheck", caught())]);
    assert_eq!(control_summary(&flagged), "FLAGGED by memcheck");
    let fine = build(0, &[("sweep", clean()), ("memcheck", clean())]);
    assert_eq!(control_summary(&fine), "not flagged (correct)");
    assert_eq!(judge(&[], &[fine]).0.passed, 1);
}

#[test]
fn the_table_shows_outcome_words() {
    let v = build(4, &[("sweep", caught()), ("memcheck", CheckOutcome::TimedOut("t".into()))]);
    let text = verdict_table(&[v], &[]).render();
    assert!(text.contains("CAUGHT") && text.contains("TIMED OUT") && text.contains("caught by sweep"), "{text}");
    assert!(text.contains("not run"), "{text}");
}

#[test]
fn sweep_outcomes_tell_compile_errors_timeouts_and_crashes_apart() {
    assert!(matches!(sweep_outcome(true, 120.0, None, "", None), CheckOutcome::TimedOut(_)));
    let log = "error: loading kernels: NVRTC failed to compile reduce.cu for sm_90:\nreduce.cu(3): error";
    assert!(matches!(sweep_outcome(false, 1.0, Some(2), log, None), CheckOutcome::DidNotCompile(_)));
    assert!(matches!(sweep_outcome(false, 1.0, Some(139), "Segmentation fault", None), CheckOutcome::Broken(_)));
}

fn seed() -> u64 {
    crate::verdict_hash::mutants_seed()
}

#[test]
fn a_run_at_another_seed_than_the_hash_derives_is_partial() {
    let other = coverage(&[], true, seed() ^ 1);
    assert!(matches!(&other, Coverage::Partial(why) if why.contains("--seed")), "{other:?}");
}

#[test]
fn a_subset_of_the_gallery_is_a_partial_run() {
    assert_eq!(coverage(&[], true, seed()), Coverage::Full);
    let all: Vec<u32> = GALLERY.iter().map(|m| m.id).collect();
    assert_eq!(coverage(&all, true, seed()), Coverage::Full);
    assert_eq!(coverage(&[3], true, seed()), Coverage::Partial("--id 3".into()));
    assert!(!coverage(&[], false, seed()).is_full());
}

/// The family a mutant is planted in is one its primitive's run loads, so the
/// sweep and the sanitizer child really execute the planted code.
#[test]
fn every_mutant_is_planted_in_a_family_its_run_loads() {
    for m in &GALLERY {
        let primitive =
            crate::registry::Primitive::from_name(m.primitive).expect("a mutant names a registry primitive");
        let loaded = primitive.families();
        assert!(
            m.families.iter().any(|f| loaded.contains(f)),
            "mutant {} ({}) claims {:?} but a {} run loads {:?}",
            m.id,
            m.name,
            m.families,
            m.primitive,
            loaded
        );
    }
}

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

fn verdict(check: &str, outcome: CheckOutcome, seconds: f64) -> CheckVerdict {
    CheckVerdict { check: check.into(), outcome, seconds }
}

#[test]
fn a_check_split_into_shards_is_caught_if_any_shard_caught_it() {
    let merged = merge_shards(vec![
        verdict("racecheck", clean(), 10.0),
        verdict("racecheck", caught(), 20.0),
        verdict("racecheck", clean(), 30.0),
    ])
    .unwrap();
    assert_eq!(merged.check, "racecheck");
    assert_eq!(merged.outcome, CheckOutcome::Caught("shard 2 of 3: 1 error".into()));
    assert_eq!(merged.seconds, 60.0);
    let none = merge_shards(vec![verdict("memcheck", clean(), 1.0), verdict("memcheck", clean(), 1.0)]).unwrap();
    assert!(matches!(none.outcome, CheckOutcome::NotCaught(ref d) if d.starts_with("nothing caught in 2 shards")));
    // One shard alone is the check itself, untouched.
    let one = merge_shards(vec![verdict("synccheck", caught(), 5.0)]).unwrap();
    assert_eq!(one.outcome, caught());
    assert!(merge_shards(vec![]).is_none());
}

/// A shard killed or broken leaves the check undecided even where another
/// caught the bug, as one job killed midway would: the run fails on it.
#[test]
fn a_shard_without_a_verdict_leaves_the_check_without_one() {
    let merged = merge_shards(vec![
        verdict("racecheck", caught(), 1.0),
        verdict("racecheck", CheckOutcome::Broken("no summary".into()), 1.0),
        verdict("racecheck", CheckOutcome::TimedOut("killed after 450 s".into()), 1.0),
    ])
    .unwrap();
    assert_eq!(merged.outcome, CheckOutcome::TimedOut("shard 3 of 3: killed after 450 s".into()));
    assert!(!merged.outcome.decided());
}

fn gallery_builds() -> Vec<Build> {
    GALLERY
        .iter()
        .enumerate()
        .map(|(i, m)| Build {
            label: build_label(m, m.id, i),
            mutant: *m,
            id: m.id,
            seed: 7,
            shards: shards_of(m, 7).unwrap(),
        })
        .collect()
}

/// The sweeps start first, in the builds' order; then every (build, tool,
/// shard) job runs once, heaviest first.
#[test]
fn every_sanitizer_job_of_every_shard_is_queued_once_after_the_sweeps() {
    let builds = gallery_builds();
    assert!(builds.iter().any(|b| b.shards.len() > 1), "some build's sanitizer cases are split");
    let tasks = tasks_of(&builds, true);
    let sweeps: Vec<usize> = tasks
        .iter()
        .take(builds.len())
        .map(|&(b, check, _)| {
            assert_eq!(check, None);
            b
        })
        .collect();
    assert_eq!(sweeps, (0..builds.len()).collect::<Vec<_>>());
    let jobs = &tasks[builds.len()..];
    let want: usize = builds.iter().map(|b| b.shards.len() * Tool::ALL.len()).sum();
    assert_eq!(jobs.len(), want);
    let unique: std::collections::BTreeSet<(usize, Option<Tool>, usize)> = jobs.iter().copied().collect();
    assert_eq!(unique.len(), want);
    let weight = |&(b, check, s): &(usize, Option<Tool>, usize)| {
        builds[b].shards[s].work * crate::sanitize::shard::tool_weight(check.unwrap())
    };
    assert!(jobs.windows(2).all(|w| weight(&w[0]) >= weight(&w[1])), "heaviest first");
    assert_eq!(tasks_of(&builds, false).len(), builds.len(), "without a sanitizer, the sweeps alone");
}

#[test]
fn a_split_builds_logs_are_named_by_build_and_shard() {
    let builds = gallery_builds();
    let split = builds.iter().find(|b| b.shards.len() > 1).unwrap();
    let names: std::collections::BTreeSet<String> = split.shards.iter().map(|s| shard_label(split, s)).collect();
    assert_eq!(names.len(), split.shards.len());
    assert!(names.iter().all(|n| n.starts_with(&split.label) && n.len() > split.label.len()), "{names:?}");
    let whole = builds.iter().find(|b| b.shards.len() == 1).unwrap();
    assert_eq!(shard_label(whole, &whole.shards[0]), whole.label);
}

/// A mutant whose filter selected no sanitizer case would be checked by nothing but the sweep.
#[test]
fn every_mutants_filter_selects_sanitizer_cases() {
    for m in &GALLERY {
        let cases: Vec<_> = shards_of(m, 7).unwrap().into_iter().flat_map(|s| s.expected).collect();
        assert!(!cases.is_empty(), "mutant {}", m.id);
        assert!(cases.iter().all(|c| c.variant.contains(m.variant)), "mutant {}", m.id);
    }
}

/// Every task of a run has its own progress name, so the count of names is the
/// progress total (a split check once counted as one task ran past it: 307/195).
#[test]
fn every_task_of_a_run_has_its_own_progress_name() {
    let builds = gallery_builds();
    let tasks = tasks_of(&builds, true);
    let names: std::collections::BTreeSet<String> =
        tasks.iter().map(|&(b, check, s)| task_label(&builds[b], check, s)).collect();
    assert_eq!(names.len(), tasks.len());
    let split = builds.iter().position(|b| b.shards.len() > 1).unwrap();
    let name = task_label(&builds[split], Some(Tool::ALL[0]), 1);
    assert!(name.ends_with(&builds[split].shards[1].label), "{name}");
    assert_eq!(task_label(&builds[split], None, 0), format!("mutant {} sweep", builds[split].id));
}

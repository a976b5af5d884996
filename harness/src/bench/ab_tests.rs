//! `bench ab` without a GPU: the pairing and its judgement on synthetic
//! rounds, the alternating order, the refusals, and whole runs with two
//! stand-in "builds" (scripts that write a prepared receipt).

use super::*;
use crate::bench::entries::ceilings::COPY_OP;
use crate::bench::record::IMPL_CEILING;
use crate::registry::Primitive;

use std::path::Path;

/// One build's records in one round: our two scans and the copy ceiling,
/// on a machine `machine` times slower than the first round's; the scan
/// `slowed` (if any) `factor` times slower on top.
fn records(machine: f64, slowed: Option<(&str, f64)>) -> Vec<BenchRecord> {
    let mut out = vec![BenchRecord::synthetic(IMPL_CEILING, "ceilings", COPY_OP, COPY_OP, 1 << 20, 10.0 * machine, 1)];
    for variant in ["decoupled_lookback", "reduce_then_scan"] {
        let factor = slowed.filter(|(v, _)| *v == variant).map_or(1.0, |(_, f)| f);
        let us = 20.0 * machine * factor;
        out.push(BenchRecord::synthetic("primlab", "scan", "exclusive_scan_i32_i64", variant, 1 << 20, us, 12));
    }
    out
}

/// Six rounds on a machine whose speed wanders by up to 30 % from round to
/// round (and a little between the two halves of a round).
fn rounds(slowed: Option<(&str, f64)>) -> Vec<(Vec<BenchRecord>, Vec<BenchRecord>)> {
    let machine = [1.0, 1.3, 0.9, 1.1, 1.25, 0.95];
    let within = [1.002, 0.998, 1.001, 0.999, 1.0, 1.003];
    machine.iter().zip(within).map(|(&m, w)| (records(m, None), records(m * w, slowed))).collect()
}

#[test]
fn a_machine_that_wanders_between_rounds_passes_unchanged_code() {
    let paired = pair(&rounds(None), 0.03);
    assert_eq!(paired.len(), 3);
    for p in &paired {
        assert_eq!(p.change, Change::WithinNoise, "{p:?}");
        assert_eq!(p.rounds, 6);
        let i = p.interval.expect("six rounds carry an interval");
        assert!(i.low < 1.0 && i.high > 1.0 && i.high < 1.01, "{p:?}");
    }
    assert!(render(&paired, &[], 0.03, 6, false).contains("gate: pass"));
}

#[test]
fn a_five_percent_slowdown_of_one_op_is_a_regression_of_that_op_only() {
    let paired = pair(&rounds(Some(("reduce_then_scan", 1.05))), 0.03);
    let regressed: Vec<&str> =
        paired.iter().filter(|p| p.change == Change::Regression).map(|p| p.record.variant.as_str()).collect();
    assert_eq!(regressed, ["reduce_then_scan"]);
    let text = render(&paired, &[], 0.03, 6, false);
    assert!(text.contains("gate: FAIL: 1 record(s)"), "{text}");
    assert!(text.contains("reduce_then_scan"), "{text}");
    assert!(!text.contains("decoupled_lookback"), "only changed records are listed: {text}");
}

#[test]
fn the_order_alternates_and_one_round_has_no_interval() {
    assert_eq!(order(0), [Build::Old, Build::New]);
    assert_eq!(order(1), [Build::New, Build::Old]);
    assert_eq!(order(4), order(0));
    let one = pair(&rounds(None)[..1], 0.03);
    assert!(one.iter().all(|p| p.interval.is_none() && p.rounds == 1));
    assert!(render(&one, &[], 0.03, 1, true).contains("(noise unknown)"));
    assert!(pair(&[], 0.03).is_empty());
}

fn receipt(records: Vec<BenchRecord>, path: &Path) {
    crate::bench::details::save_synthetic_receipt(records, path);
}

/// A stand-in build: a script that copies `template` to the path after
/// `--receipt` (and exits `status`), as `harness bench` writes its receipt.
fn build(dir: &Path, name: &str, template: &Path, status: i32) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    let script = format!(
        "#!/bin/sh\nwhile [ $# -gt 0 ]; do if [ \"$1\" = --receipt ]; then cp '{}' \"$2\"; fi; shift; done\n\
         echo timed; exit {status}\n",
        template.display()
    );
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn options(dir: &Path, old: PathBuf, new: PathBuf) -> AbOptions {
    AbOptions {
        old,
        new,
        rounds: 3,
        min_rounds: 3,
        threshold: 0.03,
        out: dir.join("ab"),
        all: false,
        bench_args: vec!["--primitive".into(), "scan".into()],
    }
}

#[test]
fn a_whole_run_of_two_builds_gates_on_the_slowed_op() {
    let dir = crate::test_dir::fresh_temp_dir("bench-ab-run");
    let (old_t, new_t, slow_t) = (dir.join("old.json"), dir.join("new.json"), dir.join("slow.json"));
    receipt(records(1.0, None), &old_t);
    receipt(records(1.0, None), &new_t);
    receipt(records(1.0, Some(("decoupled_lookback", 1.10))), &slow_t);
    let old = build(&dir, "old-harness", &old_t, 0);
    let same = options(&dir, old.clone(), build(&dir, "new-harness", &new_t, 0));
    assert!(run(&same).unwrap(), "exit 0: the same timings");
    for k in 1..=3 {
        for b in ["old", "new"] {
            assert!(same.out.join(format!("round{k}-{b}.json")).is_file());
            assert!(std::fs::read_to_string(same.out.join(format!("round{k}-{b}.log"))).unwrap().contains("timed"));
        }
    }
    // The folder now holds this run's files: a second run into it is refused.
    assert!(run(&same).unwrap_err().to_string().contains("holds files already"));
    let slow =
        AbOptions { out: dir.join("ab-slow"), ..options(&dir, old.clone(), build(&dir, "slow-harness", &slow_t, 0)) };
    assert!(!run(&slow).unwrap(), "exit 1: decoupled_lookback 10 % slower");
    // A build whose bench fails is an error naming the round, the build and its log.
    let failing =
        AbOptions { out: dir.join("ab-fail"), ..options(&dir, old, build(&dir, "failing-harness", &new_t, 1)) };
    let e = run(&failing).unwrap_err().to_string();
    assert!(e.contains("round 1 of 3: the new build") && e.contains("round1-new.log"), "{e}");
}

#[test]
fn what_the_run_cannot_do_is_refused_by_name() {
    let dir = crate::test_dir::fresh_temp_dir("bench-ab-refused");
    let t = dir.join("t.json");
    receipt(records(1.0, None), &t);
    let (a, b) = (build(&dir, "a", &t, 0), build(&dir, "b", &t, 0));
    let base = options(&dir, a.clone(), b.clone());
    let error = |o: AbOptions| run(&o).unwrap_err().to_string();
    assert!(error(AbOptions { rounds: 1, ..base.clone() }).contains("--rounds 1 is too few"));
    for min_rounds in [1, 4] {
        let e = error(AbOptions { min_rounds, ..base.clone() });
        assert!(e.contains(&format!("--min-rounds {min_rounds} must be at least 2 and at most --rounds 3")), "{e}");
    }
    assert!(error(AbOptions { old: dir.join("missing"), ..base.clone() }).contains("OLD binary"));
    assert!(error(AbOptions { threshold: f64::NAN, ..base.clone() }).contains("--threshold"));
    let own = AbOptions { bench_args: vec!["--receipt=x.json".into()], ..base.clone() };
    assert!(error(own).contains("--receipt is set by bench ab itself"));
    assert!(!base.out.exists(), "nothing was created by a refused run");
}

#[test]
fn a_record_is_decided_once_its_interval_clears_the_threshold_on_either_side() {
    // Unchanged code: after six wandering rounds every interval lies below 1.03.
    assert!(decided(&pair(&rounds(None), 0.03), 0.03));
    // One round has no interval: nothing is decided.
    assert!(!decided(&pair(&rounds(None)[..1], 0.03), 0.03));
    // A 5 % slowdown is decided as a regression; a 3 % one straddles the threshold.
    assert!(decided(&pair(&rounds(Some(("reduce_then_scan", 1.05))), 0.03), 0.03));
    assert!(!decided(&pair(&rounds(Some(("reduce_then_scan", 1.03))), 0.03), 0.03));
}

#[test]
fn with_min_rounds_a_run_stops_once_every_record_is_decided() {
    let dir = crate::test_dir::fresh_temp_dir("bench-ab-early");
    let (same_t, slow_t) = (dir.join("same.json"), dir.join("slow.json"));
    receipt(records(1.0, None), &same_t);
    receipt(records(1.0, Some(("decoupled_lookback", 1.10))), &slow_t);
    let old = build(&dir, "old-harness", &same_t, 0);
    let early = |name: &str, new: PathBuf| AbOptions {
        rounds: 6,
        min_rounds: 2,
        out: dir.join(name),
        ..options(&dir, old.clone(), new)
    };
    let same = early("ab-same", build(&dir, "same-harness", &same_t, 0));
    assert!(run(&same).unwrap(), "exit 0: the same timings");
    let slow = early("ab-slow", build(&dir, "slow-harness", &slow_t, 0));
    assert!(!run(&slow).unwrap(), "exit 1: decoupled_lookback 10 % slower");
    for o in [&same, &slow] {
        assert!(o.out.join("round2-new.json").is_file());
        assert!(!o.out.join("round3-old.json").exists(), "decided after 2 of 6 rounds: no third");
    }
}

#[test]
fn a_proven_regression_stops_the_run_though_other_records_are_undecided() {
    // reduce_then_scan 5 % slower every round; decoupled_lookback's NEW wanders
    // 0.97x-1.06x from round to round, so its interval straddles 1.03.
    let wander = [1.06, 0.97, 1.05, 0.99, 1.04, 0.98];
    let slowed: Vec<_> = rounds(Some(("reduce_then_scan", 1.05)))
        .into_iter()
        .zip(wander)
        .map(|((old, mut new), w)| {
            new.iter_mut().filter(|r| r.variant == "decoupled_lookback").for_each(|r| {
                r.samples_us.iter_mut().for_each(|t| *t *= w);
                r.median_us = r.median_us.map(|m| m * w);
            });
            (old, new)
        })
        .collect();
    let paired = pair(&slowed[..3], 0.03);
    assert!(!decided(&paired, 0.03), "decoupled_lookback is undecided: {paired:?}");
    let why = stop_reason(&paired, 0.03).expect("a proven regression decides the gate");
    assert!(why.contains("1 record(s) of ours a REGRESSION already") && why.contains("reduce_then_scan"), "{why}");
    assert!(!why.contains("decoupled_lookback"), "{why}");
    // Unchanged code whose records are all decided stops for that reason; one
    // undecided record and no regression keeps the run going.
    assert_eq!(stop_reason(&pair(&rounds(None)[..3], 0.03), 0.03).as_deref(), Some("every record of ours decided"));
    let wandering: Vec<_> = slowed.iter().map(|(old, new)| (old.clone(), without_slowdown(new))).collect();
    assert_eq!(stop_reason(&pair(&wandering[..3], 0.03), 0.03), None);
}

/// `new` with reduce_then_scan back at its OLD speed (the 5 % slowdown undone).
fn without_slowdown(new: &[BenchRecord]) -> Vec<BenchRecord> {
    let mut out = new.to_vec();
    out.iter_mut().filter(|r| r.variant == "reduce_then_scan").for_each(|r| {
        r.samples_us.iter_mut().for_each(|t| *t /= 1.05);
        r.median_us = r.median_us.map(|m| m / 1.05);
    });
    out
}

/// `rounds(None)` with the record `variant` left out of one build's halves.
fn rounds_without(variant: &str, lost_by: Build) -> Vec<(Vec<BenchRecord>, Vec<BenchRecord>)> {
    let drop = |records: Vec<BenchRecord>| records.into_iter().filter(|r| r.variant != variant).collect();
    rounds(None)
        .into_iter()
        .map(|(old, new)| match lost_by {
            Build::Old => (drop(old), new),
            Build::New => (old, drop(new)),
        })
        .collect()
}

#[test]
fn a_record_one_build_lacks_fails_the_gate_by_name() {
    for (lost_by, timed_by) in [(Build::New, "OLD"), (Build::Old, "NEW")] {
        let rounds = rounds_without("reduce_then_scan", lost_by);
        let lost = one_sided(&rounds);
        assert_eq!(lost.len(), 1, "{lost:?}");
        assert_eq!(lost[0].rounds, [1, 2, 3, 4, 5, 6]);
        assert!(lost[0].label.contains("reduce_then_scan"), "{lost:?}");
        // The record both builds timed is still judged, and passes.
        let paired = pair(&rounds, 0.03);
        assert!(paired.iter().filter(|p| p.ours).all(|p| p.change == Change::WithinNoise));
        let text = render(&paired, &lost, 0.03, 6, false);
        assert!(text.contains("gate: FAIL: 1 record(s) of ours timed by one build only"), "{text}");
        assert!(text.contains("reduce_then_scan") && text.contains(&format!("was timed by {timed_by}")), "{text}");
        assert!(!text.contains("gate: pass"), "{text}");
    }
    // Ceilings one build lacks are not records of ours: nothing is one-sided.
    let no_copy: Vec<_> = rounds(None)
        .into_iter()
        .map(|(old, new)| (old, new.into_iter().filter(|r| r.implementation != IMPL_CEILING).collect()))
        .collect();
    assert!(one_sided(&no_copy).is_empty());
    assert!(one_sided(&rounds(None)).is_empty());
}

#[test]
fn a_selection_without_records_of_ours_is_never_decided_and_is_refused() {
    let only_ceilings: Vec<_> = rounds(None)
        .into_iter()
        .map(|(old, new)| {
            let keep = |r: &BenchRecord| r.implementation == IMPL_CEILING;
            (old.into_iter().filter(keep).collect(), new.into_iter().filter(keep).collect())
        })
        .collect();
    let paired = pair(&only_ceilings, 0.03);
    assert_eq!(paired.len(), 1, "the copy ceiling is paired");
    assert!(!decided(&paired, 0.03), "nothing of ours: nothing decided");
    let dir = crate::test_dir::fresh_temp_dir("bench-ab-no-ours");
    let t = dir.join("ceilings.json");
    receipt(only_ceilings[0].0.clone(), &t);
    let o = options(&dir, build(&dir, "old-harness", &t, 0), build(&dir, "new-harness", &t, 0));
    let e = run(&o).unwrap_err().to_string();
    assert!(e.contains("times no record of ours") && e.contains("--primitive scan"), "{e}");
}

#[test]
fn a_whole_run_whose_new_build_lost_a_record_exits_one() {
    let dir = crate::test_dir::fresh_temp_dir("bench-ab-lost");
    let (old_t, new_t) = (dir.join("old.json"), dir.join("new.json"));
    receipt(records(1.0, None), &old_t);
    receipt(records(1.0, None).into_iter().filter(|r| r.variant != "decoupled_lookback").collect(), &new_t);
    let o = options(&dir, build(&dir, "old-harness", &old_t, 0), build(&dir, "new-harness", &new_t, 0));
    assert!(!run(&o).unwrap(), "exit 1: NEW no longer times decoupled_lookback");
}

/// Digests of every registry primitive, each `d-NAME`, shared `s`.
fn digests() -> Digests {
    Digests {
        schema: DIGESTS_SCHEMA,
        verdict_hash: "h".into(),
        shared: "s".into(),
        primitives: Primitive::ALL.iter().map(|p| (p.name().to_string(), format!("d-{p}"))).collect(),
    }
}

/// [`digests`] with `p`'s digest changed.
fn with_changed(p: Primitive) -> Digests {
    let mut d = digests();
    d.primitives.insert(p.name().into(), "edited".into());
    d
}

#[test]
fn one_changed_primitive_is_timed_with_a_control() {
    let none: Vec<String> = vec!["--quick".into()];
    let s = select(&none, &Ok(digests()), &Ok(with_changed(Primitive::Softmax)));
    assert_eq!(s, Selection::Changed { changed: vec![Primitive::Softmax], control: Some(Primitive::Reduce) });
    assert_eq!(s.args(), ["--primitive", "softmax", "--primitive", "reduce"]);
    assert!(s.describe().contains("softmax differ") && s.describe().contains("reduce as a control"), "{s:?}");
    // The control is the first unchanged primitive: reduce changed, so scan.
    let s = select(&none, &Ok(digests()), &Ok(with_changed(Primitive::Reduce)));
    assert_eq!(s, Selection::Changed { changed: vec![Primitive::Reduce], control: Some(Primitive::Scan) });
    // Nothing changed: the control alone, and the line says the bench code is not covered.
    let s = select(&none, &Ok(digests()), &Ok(digests()));
    assert_eq!(s.args(), ["--primitive", "reduce"]);
    assert!(s.describe().contains("not the bench code"), "{}", s.describe());
    // Every primitive changed: no control.
    let mut all = digests();
    all.primitives.values_mut().for_each(|v| v.push('!'));
    let s = select(&none, &Ok(digests()), &Ok(all));
    assert!(matches!(&s, Selection::Changed { changed, control: None } if changed.len() == Primitive::ALL.len()));
}

#[test]
fn shared_code_an_unknown_build_or_a_new_primitive_times_everything() {
    let none: Vec<String> = Vec::new();
    let mut shared = with_changed(Primitive::Scan);
    shared.shared = "other".into();
    let s = select(&none, &Ok(digests()), &Ok(shared));
    assert!(matches!(&s, Selection::Everything(why) if why.contains("shared")), "{s:?}");
    assert!(s.args().is_empty());
    let s = select(&none, &Err("`bench --digests` exited 2: unexpected argument".into()), &Ok(digests()));
    assert!(matches!(&s, Selection::Everything(why) if why.contains("OLD build cannot say")), "{s:?}");
    assert!(s.describe().contains("unexpected argument"), "{}", s.describe());
    let s = select(&none, &Ok(digests()), &Err("no sources".into()));
    assert!(matches!(&s, Selection::Everything(why) if why.contains("NEW build")), "{s:?}");
    let mut fewer = digests();
    fewer.primitives.remove("topk");
    assert!(matches!(select(&none, &Ok(fewer), &Ok(digests())), Selection::Everything(_)));
    let mut unknown = digests();
    unknown.primitives.insert("sort".into(), "x".into());
    assert!(matches!(select(&none, &Ok(digests()), &Ok(unknown)), Selection::Everything(_)));
}

#[test]
fn the_user_s_primitive_selection_wins() {
    for args in [vec!["--primitive".to_string(), "scan".into()], vec!["--primitive=scan".into()]] {
        let s = select(&args, &Ok(digests()), &Ok(with_changed(Primitive::Softmax)));
        assert_eq!(s, Selection::Chosen);
        assert!(s.args().is_empty());
    }
}

/// A stand-in build that reports `digests` to `bench --digests`, and
/// otherwise logs its options and copies `template` to its receipt.
fn build_with_digests(dir: &Path, name: &str, template: &Path, digests: &Digests) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let (path, file) = (dir.join(name), dir.join(format!("{name}.digests")));
    std::fs::write(&file, serde_json::to_string(digests).unwrap()).unwrap();
    let script = format!(
        "#!/bin/sh\nif [ \"$2\" = --digests ]; then cat '{}'; exit 0; fi\necho \"options: $*\"\n\
         while [ $# -gt 0 ]; do if [ \"$1\" = --receipt ]; then cp '{}' \"$2\"; fi; shift; done\nexit 0\n",
        file.display(),
        template.display()
    );
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn a_run_times_the_changed_primitive_and_its_control_and_stops_early_by_default() {
    let dir = crate::test_dir::fresh_temp_dir("bench-ab-digests");
    let t = dir.join("t.json");
    receipt(records(1.0, None), &t);
    let old = build_with_digests(&dir, "old-harness", &t, &digests());
    let new = build_with_digests(&dir, "new-harness", &t, &with_changed(Primitive::Scan));
    let o = AbOptions {
        rounds: 6,
        min_rounds: default_min_rounds(6),
        bench_args: vec!["--quick".into()],
        ..options(&dir, old, new)
    };
    assert_eq!(o.min_rounds, 3);
    assert!(run(&o).unwrap(), "exit 0: the same timings");
    let log = std::fs::read_to_string(o.out.join("round1-new.log")).unwrap();
    assert!(log.contains("--quick --primitive scan --primitive reduce"), "{log}");
    // Every record decided after the default three rounds: no fourth of six.
    assert!(o.out.join("round3-old.json").is_file());
    assert!(!o.out.join("round4-old.json").exists(), "stopped after 3 of 6 rounds");
    // A stand-in that cannot report digests (the older builds) is timed on everything.
    let plain = build(&dir, "plain-harness", &t, 0);
    let o = AbOptions { out: dir.join("ab-plain"), ..options(&dir, plain.clone(), plain) };
    assert!(matches!(select(&[], &digests_of(&o.old), &digests_of(&o.new)), Selection::Everything(_)));
    assert_eq!(default_min_rounds(2), 2, "never more than --rounds");
}

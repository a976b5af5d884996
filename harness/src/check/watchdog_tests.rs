use super::*;
use crate::sweep::case::failure_line;

/// Records what the supervisor reports.
#[derive(Default)]
struct Seen {
    planned: Vec<usize>,
    finished: Vec<CaseResult>,
    /// Stop at the first failure (as `check --maxfail 1`).
    stop_at_failure: bool,
}

impl Listener for Seen {
    fn planned(&mut self, cases: usize) {
        self.planned.push(cases);
    }
    fn finished(&mut self, result: &CaseResult) -> Flow {
        self.finished.push(result.clone());
        if self.stop_at_failure && !result.verdict.passed() {
            Flow::Stop
        } else {
            Flow::Go
        }
    }
}

/// A fake worker: a shell script that walks `cases` cases from its
/// `--worker-from` argument, reporting each as passed, and does `misbehave`
/// (a shell command) right after starting case `bad`.
fn fake_worker(cases: usize, bad: usize, misbehave: &str) -> Worker {
    let id = |i: &str| {
        format!(
            r#"{{"primitive":"scan","variant":"user.exclusive.i32","size":"{i}","n":{i},"family":"small_ints","seed":7}}"#
        )
    };
    let script = format!(
        r#"from=$2
echo '{{"event":"plan","cases":{cases}}}'
i=$from
while [ $i -lt {cases} ]; do
  echo "{{\"event\":\"start\",\"index\":$i,\"id\":{start_id},\"deadline_ms\":1000}}"
  if [ $i -eq {bad} ]; then {misbehave}; fi
  echo "{{\"event\":\"finish\",\"index\":$i,\"result\":{result}}}"
  i=$((i+1))
done
echo '{{"event":"done"}}'
"#,
        start_id = id("$i").replace('"', "\\\""),
        result =
            format!(r#"{{{},"verdict":"pass","millis":1}}"#, &id("$i")[1..id("$i").len() - 1]).replace('"', "\\\""),
    );
    Worker {
        program: "sh".into(),
        args: vec!["-c".into(), script, "sh".into()],
        startup: Duration::from_secs(20),
        expect: None,
    }
}

fn failures(results: &[CaseResult]) -> Vec<String> {
    results
        .iter()
        .filter_map(|r| match &r.verdict {
            Verdict::Fail(m) => Some(failure_line(&r.id, m)),
            _ => None,
        })
        .collect()
}

#[test]
fn a_case_past_its_deadline_fails_once_and_the_remaining_cases_still_run() {
    let worker = fake_worker(4, 1, "exec sleep 30");
    let mut seen = Seen::default();
    let started = Instant::now();
    let results = supervise(&worker, &mut seen).expect("supervised");
    assert!(started.elapsed() < Duration::from_secs(15), "the hang was not cut short");
    assert_eq!(results.iter().map(|r| r.id.n).collect::<Vec<_>>(), vec![0, 1, 2, 3], "each case once, in order");
    assert_eq!(
        failures(&results),
        vec![
            "scan/user.exclusive.i32 n=1 seed=0x7 family=small_ints check=watchdog index=- expected=a result \
             got=did not finish within 1 s"
        ]
    );
    assert_eq!(seen.planned, vec![4], "the plan is reported once, though two workers ran");
    assert_eq!(seen.finished.len(), 4);
}

#[test]
fn a_worker_that_dies_during_a_case_fails_that_case_and_a_new_worker_goes_on() {
    let worker = fake_worker(3, 0, "exit 7");
    let results = supervise(&worker, &mut Seen::default()).expect("supervised");
    assert_eq!(results.len(), 3);
    let failed = failures(&results);
    assert_eq!(failed.len(), 1);
    assert!(failed[0].contains("check=crash") && failed[0].contains("exit status: 7"), "{failed:?}");
    assert!(results[1].verdict.passed() && results[2].verdict.passed());
}

#[test]
fn a_listener_that_stops_at_the_first_failure_ends_the_run_there() {
    for misbehave in ["exit 7", "exec sleep 30"] {
        let mut seen = Seen { stop_at_failure: true, ..Seen::default() };
        let started = Instant::now();
        let results = supervise(&fake_worker(5, 1, misbehave), &mut seen).expect("supervised");
        assert_eq!(results.iter().map(|r| r.id.n).collect::<Vec<_>>(), vec![0, 1], "{misbehave}: stopped at case 1");
        assert!(!results[1].verdict.passed());
        assert!(started.elapsed() < Duration::from_secs(15));
    }
    // A failure the worker itself reports stops the run too (the worker is ended).
    let id = crate::sweep::gpu::sized_id("scan", "user.exclusive.i32".into(), 2, "small_ints", 7);
    let event = WorkerEvent::Finish { index: 2, result: CaseResult::new(id, Verdict::fail(1, 2, "prefix"), 1) };
    let line = serde_json::to_string(&event).expect("an event");
    let fail = format!("echo '{line}'; i=$((i+1)); continue");
    let mut seen = Seen { stop_at_failure: true, ..Seen::default() };
    let results = supervise(&fake_worker(5, 2, &fail), &mut seen).expect("supervised");
    assert_eq!(results.iter().map(|r| r.id.n).collect::<Vec<_>>(), vec![0, 1, 2]);
}

#[test]
fn a_worker_killed_by_sigkill_could_not_run_the_case_which_is_no_failure() {
    let results = supervise(&fake_worker(3, 1, "kill -KILL $$"), &mut Seen::default()).expect("supervised");
    assert_eq!(results.len(), 3);
    assert!(failures(&results).is_empty(), "a kill for memory is not the kernel's failure");
    let Verdict::Skipped { reason } = &results[1].verdict else { panic!("{:?}", results[1].verdict) };
    assert!(reason.starts_with("could not run") && reason.contains("out of memory"), "{reason}");
    assert!(results[0].verdict.passed() && results[2].verdict.passed());
    // With the case's needs reported at its start, the line says them.
    let result = died(results[1].id.clone(), "signal: 9 (SIGKILL)", Some((43_000_000_000, 20_000_000_000)), 1);
    let Verdict::Skipped { reason } = result.verdict else { panic!("not skipped") };
    assert!(reason.contains("about 43.0 GB of host memory, 20.0 GB were free"), "{reason}");
}

#[test]
fn a_hang_in_the_last_case_ends_the_run() {
    let worker = fake_worker(2, 1, "exec sleep 30");
    let results = supervise(&worker, &mut Seen::default()).expect("supervised");
    assert_eq!(results.len(), 2);
    assert_eq!(failures(&results).len(), 1);
}

#[test]
fn a_worker_that_cannot_start_is_an_error_not_a_pass() {
    let worker = Worker {
        program: "sh".into(),
        args: vec!["-c".into(), "echo 'no GPU' >&2; exit 2".into(), "sh".into()],
        startup: Duration::from_secs(5),
        expect: None,
    };
    let e = supervise(&worker, &mut Seen::default()).unwrap_err();
    assert!(e.to_string().contains("ended before its next case"), "{e}");
}

#[test]
fn deadlines_grow_with_the_size_and_the_runs() {
    assert_eq!(runs_deadline(1, 3).as_secs(), 30);
    assert!(runs_deadline(1 << 28, 1) > Duration::from_secs(35));
    assert!(runs_deadline(1 << 28, 3) > runs_deadline(1 << 28, 1));
    assert!(runs_deadline((1 << 31) + 1000, 2) < Duration::from_secs(150), "a hang at 2^31 costs minutes, not more");
    assert!(inputs_deadline(1 << 24) > Duration::from_secs(120), "the host's share is never cut short");
}

#[test]
fn a_phase_restarts_the_clock_with_its_own_deadline() {
    // Past the start's 1 s deadline by the time it hangs, but inside its
    // phase: the phase's 3 s deadline is the one that ends it. (The phase
    // comes 0.7 s before the start's deadline, a margin a loaded machine keeps.)
    let misbehave = r#"sleep 0.3; echo '{"event":"phase","deadline_ms":3000}'; sleep 0.9; exec sleep 30"#;
    let results = supervise(&fake_worker(2, 0, misbehave), &mut Seen::default()).expect("supervised");
    let failed = failures(&results);
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(failed[0].ends_with("got=did not finish within 3 s"), "{failed:?}");
    assert!(results[1].verdict.passed());
}

#[test]
fn other_lines_on_the_workers_stdout_are_passed_on_not_an_error() {
    // A user kernel's device printf reaches the worker's stdout between events.
    let printf = "echo 'thread 0: partial 42'; echo '{not json'";
    let results = supervise(&fake_worker(2, 0, printf), &mut Seen::default()).expect("supervised");
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|r| r.verdict.passed()));
}

#[test]
fn a_worker_that_leaves_between_cases_is_followed_by_one_at_the_next_case() {
    // The first worker leaves right after case 0 (as one whose context broke
    // does); the second starts at case 1. Every case is run once, none fails.
    let id = |i: usize| format!(r#"{{"primitive":"scan","variant":"v","size":"{i}","n":{i},"family":"f","seed":1}}"#);
    let case = |i: usize| {
        let inner = &id(i)[1..id(i).len() - 1];
        format!(
            r#"echo '{{"event":"start","index":{i},"id":{},"deadline_ms":5000}}'; echo '{{"event":"finish","index":{i},"result":{{{inner},"verdict":"pass","millis":1}}}}'"#,
            id(i)
        )
    };
    let script = format!(
        r#"echo '{{"event":"plan","cases":3}}'
if [ "$2" = 0 ]; then {}; exit 0; fi
{}; {}; echo '{{"event":"done"}}'"#,
        case(0),
        case(1),
        case(2)
    );
    let worker = Worker {
        program: "sh".into(),
        args: vec!["-c".into(), script, "sh".into()],
        startup: Duration::from_secs(20),
        expect: None,
    };
    let results = supervise(&worker, &mut Seen::default()).expect("supervised");
    assert_eq!(results.iter().map(|r| r.id.n).collect::<Vec<_>>(), vec![0, 1, 2]);
    assert!(results.iter().all(|r| r.verdict.passed()));
}

#[test]
fn the_start_up_deadline_counts_from_the_last_event_not_from_the_spawn() {
    // Startup 1 s; case 0 takes 1.5 s, then the worker pauses 0.3 s before
    // case 1: more than 1 s after the spawn, well within 1 s of its last event.
    let misbehave = "sleep 1.5";
    let mut worker = fake_worker(2, 0, misbehave);
    worker.startup = Duration::from_secs(1);
    worker.args[1] = worker.args[1]
        .replace("  i=$((i+1))", "  i=$((i+1)); sleep 0.3")
        .replace(r#"\"deadline_ms\":1000"#, r#"\"deadline_ms\":5000"#);
    let results = supervise(&worker, &mut Seen::default()).expect("supervised");
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|r| r.verdict.passed()), "{:?}", failures(&results));
}

/// A worker a library caller names must say it is this build, with the
/// parent's catalogue: one that says nothing (an older build), another
/// build or another number of cases is refused before any case is counted.
#[test]
fn a_worker_of_another_build_is_refused() {
    let plain = fake_worker(2, 9, "");
    let mut held = Worker { expect: Some((build_id(), 2)), ..plain.clone() };
    let e = supervise(&held, &mut Seen::default()).unwrap_err();
    assert!(e.to_string().contains("is another build: it says no build with 2 cases"), "{e}");
    held.expect = Some((build_id(), 3));
    let said = format!("{{\"event\":\"plan\",\"cases\":2,\"build\":\"{}\"}}", build_id());
    let script = format!("echo '{said}'; sleep 1");
    let worker = Worker { args: vec!["-c".into(), script, "sh".into()], ..held };
    let e = supervise(&worker, &mut Seen::default()).unwrap_err();
    assert!(e.to_string().contains("with 2 cases, this library is"), "{e}");
}

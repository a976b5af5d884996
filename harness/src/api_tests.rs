//! The public API without a GPU's verdict: the harness executable it looks
//! for, a manifest error, and the text of a failure (the lines `harness
//! check` prints). Runs the same on a machine with or without a GPU.

use super::*;
use crate::check::verdict::Outcome as Verdict;

fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("primlab-api-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    dir
}

#[test]
fn the_harness_named_must_exist_and_the_search_says_where_it_looked() {
    let dir = folder("exe");
    let missing = dir.join("harness");
    let e = harness_executable(Some(&missing)).unwrap_err();
    assert!(e.contains("is not a file"), "{e}");
    std::fs::write(&missing, "").expect("written");
    assert_eq!(harness_executable(Some(&missing)), Ok(missing.clone()));
    // This test binary is not the harness: it looks beside itself and one folder up
    // (cargo's target/<profile>/deps/ and target/<profile>/), or takes $PRIMLAB_HARNESS.
    match harness_executable(None) {
        Ok(found) => assert!(found.ends_with("harness"), "{}", found.display()),
        Err(e) => assert!(e.contains("looked at") || e.contains(HARNESS_VARIABLE), "{e}"),
    }
}

#[test]
fn a_bad_manifest_is_a_manifest_error_before_any_gpu_work() {
    let dir = folder("manifest");
    let path = dir.join("check.toml");
    std::fs::write(&path, "name = \"x\"\nprimitive = \"sort\"\ncontract = \"a\"\n[module]\nptx = \"k.ptx\"\n")
        .expect("written");
    match check_manifest(&path, &CheckConfig::new().sizes([33]).harness(&path)) {
        Err(CheckError::Manifest { message }) => assert!(message.starts_with("unknown primitive 'sort'"), "{message}"),
        other => panic!("expected a manifest error, got {other:?}"),
    }
    match check_manifest(dir.join("absent.toml"), &CheckConfig::new()) {
        Err(CheckError::Manifest { message }) => assert!(message.contains("cannot be read"), "{message}"),
        other => panic!("expected a manifest error, got {other:?}"),
    }
}

fn report(outcome: Verdict, failures: Vec<check::FailureLines>, incomplete: Option<String>) -> CheckReport {
    CheckReport::of(check::Checked {
        outcome,
        primitive: "scan".into(),
        contract: "exclusive.i32".into(),
        seed: 0x5eed,
        sizes: vec![33],
        planned: 4,
        passed: 3,
        failed: failures.len(),
        failures,
        not_run: Vec::new(),
        receipt: PathBuf::from("check-out/receipt.json"),
        incomplete,
    })
}

#[test]
fn a_failure_prints_the_lines_harness_check_prints() {
    let line = "FAIL scan/user.exclusive.i32 n=33 seed=0x7 family=small_ints check=prefix index=32 expected=7 got=0";
    let lines = check::FailureLines {
        line: line.into(),
        details: vec!["mismatched elements of out: 1 / 33 (3.0%)".into(), "rerun: harness check ...".into()],
    };
    let printed = lines.text();
    let failed = CheckError::Failed(Box::new(report(Verdict::Fail, vec![lines], None)));
    let text = failed.to_string();
    assert!(text.starts_with(&format!("{printed}\n")), "{text}");
    assert_eq!(
        printed,
        format!("{line}\n     mismatched elements of out: 1 / 33 (3.0%)\n     rerun: harness check ...")
    );
    assert!(
        text.ends_with("3 passed, 1 failed, 0 could not run of 4 planned cases (seed 0x5eed)\ncheck: FAIL"),
        "{text}"
    );
    // `unwrap` and a test's `Result` show the same text.
    assert_eq!(format!("{failed:?}"), text);
    let CheckError::Failed(r) = &failed else { unreachable!() };
    assert_eq!((r.outcome(), r.failures()[0].line(), r.failures()[0].details().len()), (Outcome::Fail, line, 2));
    let no_gpu = CheckError::NoGpu { reason: "the driver reports no CUDA device".into() };
    assert_eq!(no_gpu.to_string(), "check: cannot run: no GPU (the driver reports no CUDA device)");
}

#[test]
fn an_incomplete_check_ends_with_its_line_and_a_pass_says_pass() {
    let incomplete = report(Verdict::Incomplete, Vec::new(), Some("check: INCOMPLETE: 1 of 4 ...".into()));
    assert!(incomplete.to_string().ends_with("\ncheck: INCOMPLETE: 1 of 4 ..."), "{incomplete}");
    let passed = report(Verdict::Pass, Vec::new(), None);
    assert!(passed.to_string().ends_with("(seed 0x5eed)\ncheck: PASS"), "{passed}");
    let nothing = report(Verdict::NothingChecked, Vec::new(), None);
    assert!(nothing.to_string().ends_with("check: FAIL (nothing was checked)"), "{nothing}");
}

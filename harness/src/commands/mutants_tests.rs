use super::*;
use crate::test_dir::fresh_temp_dir;
use serde_json::json;
use std::time::Duration;

/// The committed receipt of the whole gallery, made on the H200.
fn committed() -> Receipt {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../receipts/mutants.json");
    Receipt::load(&path).expect("the committed mutants receipt")
}

fn check(name: &str, outcome: &str, detail: &str) -> Value {
    json!({"check": name, "outcome": outcome, "detail": detail, "seconds": 1.5})
}

fn build(id: u64, name: &str, checks: Vec<Value>) -> Value {
    json!({"id": id, "name": name, "primitive": "scan", "variant": "blelloch", "sizes": [1, 33], "checks": checks})
}

fn receipt_of(mutants: Vec<Value>, controls: Vec<Value>) -> Receipt {
    let mut r = committed();
    r.details = json!({"seed": "0x1234", "mutants": mutants, "controls": controls});
    r
}

fn failure(case: &TestCase) -> &str {
    match &case.outcome {
        Outcome::Failed(line) => line,
        other => panic!("{} should fail, got {other:?}", case.name),
    }
}

#[test]
fn the_committed_gallery_is_one_passing_case_per_mutant_and_control() {
    let receipt = committed();
    let cases = junit_cases(&receipt).expect("cases");
    let count = |key: &str| receipt.details[key].as_array().map_or(0, Vec::len);
    assert_eq!(cases.len(), count("mutants") + count("controls"));
    assert!(count("mutants") >= 14 && count("controls") >= 11, "the gallery as committed");
    assert!(cases.iter().all(|c| c.outcome == Outcome::Passed), "the committed run passed: {cases:?}");
    assert!(cases.iter().all(|c| c.seconds > 0.0));
    assert_eq!(cases.iter().filter(|c| c.classname == "mutants.controls").count(), count("controls"));
    assert!(cases.iter().any(|c| c.classname == "mutants.reduce" && c.name.starts_with("1 ")));
}

#[test]
fn a_survivor_an_undecided_check_and_a_flagged_control_fail_by_name() {
    let receipt = receipt_of(
        vec![
            build(
                3,
                "off-by-one",
                vec![check("sweep", "not_caught", "36 cases passed"), check("memcheck", "not_caught", "0 errors")],
            ),
            build(
                4,
                "no-barrier",
                vec![check("sweep", "caught", "7 mismatches"), check("racecheck", "timed_out", "killed after 120 s")],
            ),
            build(5, "tail", vec![check("sweep", "caught", "1 mismatch"), check("memcheck", "not_caught", "0 errors")]),
        ],
        vec![build(
            0,
            "real kernels",
            vec![check("sweep", "not_caught", "36 passed"), check("racecheck", "caught", "2 hazards")],
        )],
    );
    let cases = junit_cases(&receipt).expect("cases");
    assert_eq!(cases.len(), 4);
    let survived = failure(&cases[0]);
    assert!(
        survived.contains("mutant 3 (off-by-one) survived") && survived.contains("sweep: not caught (36 cases passed)")
    );
    assert!(survived.contains("rerun: harness mutants --id 3 --seed 0x1234"), "{survived}");
    assert!(failure(&cases[1]).contains("racecheck: timed out (killed after 120 s)"));
    assert_eq!(cases[2].outcome, Outcome::Passed);
    assert_eq!(
        (cases[2].classname.as_str(), cases[2].name.as_str(), cases[2].seconds),
        ("mutants.scan", "5 tail", 3.0)
    );
    let control = failure(&cases[3]);
    assert!(
        control.contains("control (real kernels) scan blelloch not clean: racecheck: caught (2 hazards)"),
        "{control}"
    );
}

#[test]
fn a_control_with_no_check_fails_and_a_receipt_of_another_kind_is_refused() {
    let cases = junit_cases(&receipt_of(vec![], vec![build(0, "real kernels", vec![])])).expect("cases");
    assert!(failure(&cases[0]).contains("no check ran"));
    let mut other = committed();
    other.details = json!({"records": []});
    let e = junit_cases(&other).expect_err("not a mutants receipt").to_string();
    assert!(e.contains("not a mutants receipt"), "{e}");
}

#[test]
fn only_a_receipt_written_during_the_run_is_reported() {
    let dir = fresh_temp_dir("mutants-junit-fresh");
    let path = dir.join("mutants.json");
    std::fs::write(&path, "{}").expect("write");
    let later = SystemTime::now() + Duration::from_secs(3600);
    let e = receipt_written_since(Some(&path), later).expect_err("older than the run").to_string();
    assert!(e.contains("this run wrote no receipt"), "{e}");
    let earlier = SystemTime::now() - Duration::from_secs(3600);
    assert_eq!(receipt_written_since(Some(&path), earlier).expect("fresh"), path);
    let missing = dir.join("absent.json");
    assert!(receipt_written_since(Some(&missing), earlier).is_err());
}

#[test]
fn a_report_with_list_or_into_a_missing_folder_is_refused_before_the_run() {
    let e = check_junit_path(Path::new("out.xml"), true).expect_err("--list").to_string();
    assert!(e.contains("--list runs nothing"), "{e}");
    let e = check_junit_path(Path::new("/no/such/folder/out.xml"), false).expect_err("missing").to_string();
    assert!(e.contains("/no/such/folder does not exist"), "{e}");
    assert!(check_junit_path(Path::new("out.xml"), false).is_ok());
}

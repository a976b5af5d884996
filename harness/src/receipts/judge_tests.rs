//! Each rule of the judge on a tampered copy of a committed receipt. The
//! committed receipts need not match the current sources (they are
//! regenerated on a GPU after the catalogues change), so every test judges
//! the untouched copy first and requires the tampered copy to add the
//! problem the rule names: the rule, not the receipt's freshness, is tested.
//! The sweep's model checks are judged against the keys of the copy's own
//! `cpu_cases` (the catalogue of its seed is what the gate uses; it may
//! have moved since the receipt was made).

use super::*;
use crate::receipts::MachineInfo;
use serde_json::json;
use std::path::PathBuf;

fn committed(kind: &str) -> Receipt {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join("receipts").join(format!("{kind}.json"));
    Receipt::load(&path).expect("the committed receipt parses")
}

fn own_model_keys(receipt: &Receipt) -> BTreeSet<String> {
    array(&receipt.details, "cpu_cases").iter().map(entry_key).collect()
}

/// Everything the judge says about `receipt`, one line each.
fn problems(receipt: &Receipt, model_keys: &BTreeSet<String>) -> Vec<String> {
    let mut report = CoverageReport::default();
    judge_common(receipt, &mut report);
    match receipt.kind.as_str() {
        "sweep" => judge_sweep_with(receipt, model_keys, &mut report),
        "sanitize" => judge_sanitize(receipt, &mut report),
        _ => judge_mutants(receipt, &mut report),
    }
    report.incomplete.into_iter().chain(report.failures).collect()
}

/// The problems `tamper` adds to the committed receipt of `kind` (the
/// model-check keys are the untouched copy's).
fn added(kind: &str, tamper: impl FnOnce(&mut Receipt)) -> Vec<String> {
    let original = committed(kind);
    let keys = own_model_keys(&original);
    let before = problems(&original, &keys);
    let mut copy = original;
    tamper(&mut copy);
    problems(&copy, &keys).into_iter().filter(|p| !before.contains(p)).collect()
}

fn assert_added(found: &[String], needle: &str) {
    assert!(found.iter().any(|p| p.contains(needle)), "no problem says '{needle}': {found:?}");
}

fn details<'a>(r: &'a mut Receipt, field: &str) -> &'a mut Vec<Value> {
    r.details[field].as_array_mut().expect("an array field")
}

#[test]
fn the_committed_receipts_break_no_field_rule() {
    for kind in ["sanitize", "mutants"] {
        assert_eq!(problems(&committed(kind), &BTreeSet::new()), Vec::<String>::new(), "{kind}");
    }
    let sweep = committed("sweep");
    assert_eq!(problems(&sweep, &own_model_keys(&sweep)), Vec::<String>::new());
}

#[test]
fn a_sweep_whose_model_checks_shrank_to_one_failure_fails() {
    let found = added("sweep", |r| {
        let mut one = details(r, "cpu_cases")[0].clone();
        one["verdict"] = json!("fail");
        *details(r, "cpu_cases") = vec![one];
        r.details["cpu_tally"] = json!({"passed": 0, "failed": 1, "skipped": 0});
        r.details["failures"] = json!(["reduce/warp_reduce n=1 ... expected=1 got=2"]);
        let gpu = r.details["gpu_tally"]["passed"].as_u64().unwrap();
        r.tally = Tally { passed: gpu, failed: 1, skipped: 0 };
    });
    assert_added(&found, "its tally records 1 failed check(s)");
    assert_added(&found, "failures are listed in details.failures");
    assert_added(&found, "model checks of the catalogue are not in the receipt");
    assert_added(&found, "model checks did not pass");
}

#[test]
fn a_sweep_of_a_mutant_without_gpu_or_machine_fails() {
    assert_added(&added("sweep", |r| r.details["mutant"] = json!(2)), "details.mutant is 2");
    assert_added(&added("sweep", |r| r.machine = MachineInfo::default()), "its machine does not describe a GPU");
    assert_added(&added("sweep", |r| r.details["gpu_skipped"] = json!("no GPU")), "details.gpu_skipped");
    let all_skipped = added("sweep", |r| {
        let n = r.details["gpu_tally"]["passed"].clone();
        r.details["gpu_tally"] = json!({"passed": 0, "failed": 0, "skipped": n});
    });
    assert_added(&all_skipped, "details.gpu_tally");
}

#[test]
fn a_sweep_tally_that_is_not_the_sum_of_its_parts_fails() {
    let found = added("sweep", |r| r.tally.passed += 1);
    assert_added(&found, "is not the sum of its GPU and model verdicts");
    let found = added("sweep", |r| {
        details(r, "cpu_cases").push(
            json!({"primitive": "reduce", "variant": "x", "size": "1", "family": "f", "seed": 1, "verdict": "pass"}),
        );
        let passed = r.details["cpu_tally"]["passed"].as_u64().unwrap();
        r.details["cpu_tally"]["passed"] = json!(passed + 1);
        r.tally.passed += 1;
    });
    assert_added(&found, "model checks in the receipt are not in the catalogue");
    let found = added("sweep", |r| {
        let first = details(r, "cpu_cases")[0].clone();
        details(r, "cpu_cases").push(first);
    });
    assert_added(&found, "model checks appear more than once");
}

#[test]
fn a_sanitize_finding_shadowed_by_a_clean_duplicate_fails() {
    let found = added("sanitize", |r| {
        let mut finding = details(r, "cases")[0].clone();
        finding["verdict"] = json!("findings");
        finding["findings"] = json!(["Invalid __global__ read of size 4"]);
        details(r, "cases").insert(0, finding);
    });
    assert_added(&found, "(case, tool) pairs appear more than once");
}

#[test]
fn a_clean_sanitize_entry_that_lists_a_finding_or_a_failed_tally_fails() {
    let found = added("sanitize", |r| details(r, "cases")[5]["findings"] = json!(["a race"]));
    assert_added(&found, "are called clean but list findings");
    let found = added("sanitize", |r| r.tally.failed = 3);
    assert_added(&found, "its tally records 3 failed check(s)");
    assert_added(&added("sanitize", |r| r.details["mutant"] = json!(6)), "details.mutant is 6");
}

#[test]
fn mutants_checks_must_exist_and_be_recorded_once() {
    let found = added("mutants", |r| {
        for field in ["mutants", "controls"] {
            for build in details(r, field).iter_mut() {
                for check in build["checks"].as_array_mut().unwrap() {
                    check["check"] = json!("bogus");
                }
            }
        }
    });
    assert_added(&found, "names a check 'bogus' that does not exist");
    let found = added("mutants", |r| {
        let checks = details(r, "mutants")[0]["checks"].as_array_mut().unwrap();
        let first = checks[0].clone();
        checks.push(first);
    });
    assert_added(&found, "records the check 'sweep' more than once");
}

#[test]
fn a_duplicate_mutant_or_a_flagged_control_after_a_clean_duplicate_fails() {
    let found = added("mutants", |r| {
        let mut dud = details(r, "mutants")[2].clone();
        for check in dud["checks"].as_array_mut().unwrap() {
            check["outcome"] = json!("did_not_compile");
        }
        details(r, "mutants").push(dud);
    });
    assert_added(&found, "appears more than once");
    let found = added("mutants", |r| {
        let mut flagged = details(r, "controls")[0].clone();
        flagged["checks"][1]["outcome"] = json!("caught");
        details(r, "controls").push(flagged);
    });
    assert_added(&found, "appears more than once");
    assert_added(&found, "is not its builds' verdicts");
}

#[test]
fn the_mutants_tally_is_checked() {
    let found = added("mutants", |r| r.tally = Tally { passed: 0, failed: 999, skipped: 42 });
    assert_added(&found, "is not its builds' verdicts");
    assert_added(&found, "its tally records 999 failed check(s)");
    assert_added(&found, "its tally records 42 skipped check(s)");
}

#[test]
fn the_gate_refuses_a_tampered_copy_of_the_mutants_receipt() {
    let dir = crate::test_dir::fresh_temp_dir("judge-gate");
    let mut receipt = committed("mutants");
    receipt.save(&dir.join("mutants.json")).unwrap();
    let clean = super::super::check_gate(&dir, &receipt.source_hash, Some(&["mutants"]));
    receipt.tally = Tally { passed: 0, failed: 999, skipped: 42 };
    receipt.save(&dir.join("mutants.json")).unwrap();
    let tampered = super::super::check_gate(&dir, &receipt.source_hash, Some(&["mutants"]));
    assert!(tampered.problems.len() > clean.problems.len(), "{:?}", tampered.problems);
    assert!(tampered.problems.iter().any(|p| p.to_string().contains("999 failed")), "{:?}", tampered.problems);
}

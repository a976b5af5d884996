//! The receipt gate's coverage rules on small catalogues: a complete
//! receipt passes; a subset, an edited verdict, other digests, extra cases,
//! an undecided mutant check or an unclean control each fail, and say why.

use super::*;
use crate::receipts::{MachineInfo, Receipt, Tally};
use serde_json::json;

fn small_plan() -> SweepPlan {
    SweepPlan {
        seed: 7,
        sizes: vec![1, 33, 257],
        quick: true,
        primitives: vec![Primitive::Reduce, Primitive::Compact],
        variants: vec![],
        one_family: false,
    }
}

/// A receipt holding a pass with the right digests for every case of `plan`.
fn complete_receipt(plan: &SweepPlan) -> Receipt {
    let catalogue = catalogue(plan);
    let digests = crate::sweep::gpu::references(&catalogue);
    let cases: Vec<Value> = catalogue
        .into_iter()
        .zip(digests)
        .map(|(case, d)| {
            let d = d.expect("the small catalogue generates");
            json!({
                "primitive": case.id.primitive, "variant": case.id.variant, "size": case.id.size,
                "n": case.id.n, "family": case.id.family, "seed": case.id.seed, "verdict": "pass",
                "millis": 0, "input_digest": d.input_digest, "expected_digest": d.expected_digest,
            })
        })
        .collect();
    let tally = Tally { passed: cases.len() as u64, failed: 0, skipped: 0 };
    let details = json!({"seed": format!("{:#x}", plan.seed), "gpu_cases": cases, "cpu_cases": []});
    Receipt::new("sweep", MachineInfo::default(), tally, details)
}

fn gpu_cases(receipt: &mut Receipt) -> &mut Vec<Value> {
    receipt.details["gpu_cases"].as_array_mut().expect("gpu_cases")
}

#[test]
fn a_receipt_of_every_case_passes() {
    let plan = small_plan();
    let report = check_sweep_against(&complete_receipt(&plan), &plan);
    assert!(report.incomplete.is_empty() && report.failures.is_empty(), "{report:?}");
    assert!(report.required > 50, "{}", report.required);
    assert_eq!(report.matched, report.required);
}

#[test]
fn a_subset_receipt_fails_and_names_what_is_missing() {
    let plan = small_plan();
    let mut receipt = complete_receipt(&plan);
    let kept: Vec<Value> = gpu_cases(&mut receipt).iter().filter(|c| c["primitive"] == "reduce").cloned().collect();
    let dropped = gpu_cases(&mut receipt).len() - kept.len();
    *gpu_cases(&mut receipt) = kept;
    receipt.tally.passed -= dropped as u64;
    let report = check_sweep_against(&receipt, &plan);
    let text = report.incomplete.join("\n");
    assert!(text.contains(&format!("{dropped} of the catalogue's")), "{text}");
    assert!(text.contains("compact "), "names the first missing cases: {text}");
    assert!(text.contains("more"), "{text}");
}

#[test]
fn an_edited_verdict_fails_whether_or_not_the_tally_was_edited_too() {
    let plan = small_plan();
    let mut receipt = complete_receipt(&plan);
    gpu_cases(&mut receipt)[3]["verdict"] = json!("fail");
    let report = check_sweep_against(&receipt, &plan);
    assert!(report.incomplete.iter().any(|r| r.contains("is not its verdicts")), "{report:?}");
    assert!(report.failures.iter().any(|r| r.contains("did not pass")), "{report:?}");
    receipt.tally.passed -= 1;
    receipt.tally.failed += 1;
    let report = check_sweep_against(&receipt, &plan);
    assert!(report.incomplete.is_empty(), "{report:?}");
    assert!(report.failures.iter().any(|r| r.contains("1 GPU cases did not pass")), "{report:?}");
}

#[test]
fn other_inputs_or_expected_outputs_fail() {
    let plan = small_plan();
    let mut receipt = complete_receipt(&plan);
    gpu_cases(&mut receipt)[0]["expected_digest"] = json!("0000");
    gpu_cases(&mut receipt)[1]["input_digest"] = json!("0000");
    let report = check_sweep_against(&receipt, &plan);
    assert!(report.incomplete.iter().any(|r| r.starts_with("2 cases ran on other inputs")), "{report:?}");
}

#[test]
fn a_receipt_from_another_seed_or_with_extra_cases_fails() {
    let plan = small_plan();
    let other = SweepPlan { seed: 8, ..small_plan() };
    let report = check_sweep_against(&complete_receipt(&other), &plan);
    assert!(report.incomplete.iter().any(|r| r.contains("not in the receipt")), "{report:?}");
    assert!(report.incomplete.iter().any(|r| r.contains("not in the current catalogue")), "{report:?}");
}

#[test]
fn a_receipt_without_case_verdicts_fails() {
    let mut receipt = complete_receipt(&small_plan());
    receipt.details = json!({"seed": "0x7"});
    receipt.tally = Tally { passed: 1, failed: 0, skipped: 0 };
    let report = check_sweep_against(&receipt, &small_plan());
    assert!(report.incomplete.iter().any(|r| r.contains("holds no GPU case verdicts")), "{report:?}");
    assert!(report.incomplete.iter().any(|r| r.contains("is not its verdicts")), "{report:?}");
}

#[test]
fn sanitizer_pairs_must_all_be_present_and_clean() {
    let entry = |variant: &str, tool: &str, verdict: &str| {
        json!({"primitive": "reduce", "variant": variant, "size": "33", "n": 33, "family": "small_ints",
               "seed": 5, "tool": tool, "verdict": verdict})
    };
    let required =
        vec!["reduce a 33 small_ints 0x5 memcheck".to_string(), "reduce b 33 small_ints 0x5 memcheck".to_string()];
    let receipt = |entries: Vec<Value>, tally: Tally| {
        Receipt::new("sanitize", MachineInfo::default(), tally, json!({"seed": "0x5eed", "cases": entries}))
    };
    let ok = receipt(
        vec![entry("a", "memcheck", "clean"), entry("b", "memcheck", "clean")],
        Tally { passed: 2, ..Tally::default() },
    );
    let report = check_tool_cases(&ok, &required);
    assert!(report.incomplete.is_empty() && report.failures.is_empty(), "{report:?}");
    let subset = receipt(vec![entry("a", "memcheck", "clean")], Tally { passed: 1, ..Tally::default() });
    assert!(check_tool_cases(&subset, &required).incomplete[0].starts_with("1 of the 2 (case, tool) pairs"));
    let unclean = receipt(
        vec![entry("a", "memcheck", "clean"), entry("b", "memcheck", "findings")],
        Tally { passed: 1, failed: 1, skipped: 0 },
    );
    assert!(
        check_tool_cases(&unclean, &required).failures[0].contains("reduce b 33 small_ints 0x5 memcheck (findings)")
    );
    let not_run = receipt(
        vec![entry("a", "memcheck", "clean"), entry("b", "memcheck", "not_run")],
        Tally { passed: 1, ..Tally::default() },
    );
    let report = check_tool_cases(&not_run, &required);
    assert!(!report.failures.is_empty() && !report.incomplete.is_empty(), "{report:?}");
}

fn build(m: &kernels::mutant::Mutant, outcomes: &[(&str, &str)]) -> Value {
    let checks: Vec<Value> =
        outcomes.iter().map(|(c, o)| json!({"check": c, "outcome": o, "detail": "", "seconds": 1.0})).collect();
    json!({"id": m.id, "name": m.name, "primitive": m.primitive, "variant": m.variant, "sizes": m.sizes, "checks": checks})
}

fn mutants_receipt(broken: Option<(u32, &str)>, control_outcome: &str) -> Receipt {
    let gallery = &kernels::mutant::GALLERY;
    let mutants: Vec<Value> = gallery
        .iter()
        .map(|m| match broken {
            Some((id, outcome)) if id == m.id => build(m, &[("sweep", outcome), ("memcheck", "not_caught")]),
            _ => build(m, &[("sweep", "caught"), ("memcheck", "not_caught")]),
        })
        .collect();
    let controls: Vec<Value> =
        gallery.iter().map(|m| build(m, &[("sweep", control_outcome), ("memcheck", "not_caught")])).collect();
    Receipt::new("mutants", MachineInfo::default(), Tally::default(), json!({"mutants": mutants, "controls": controls}))
}

#[test]
fn every_mutant_must_be_caught_and_every_control_clean() {
    let report = check_mutants_coverage(&mutants_receipt(None, "not_caught"));
    assert!(report.incomplete.is_empty() && report.failures.is_empty(), "{report:?}");
    assert_eq!(report.matched, kernels::mutant::GALLERY.len());
}

#[test]
fn a_mutant_that_did_not_compile_or_timed_out_is_not_caught() {
    for outcome in ["did_not_compile", "timed_out", "broken", "not_caught"] {
        let report = check_mutants_coverage(&mutants_receipt(Some((3, outcome)), "not_caught"));
        assert_eq!(report.matched, kernels::mutant::GALLERY.len() - 1, "{outcome}");
        assert!(report.failures.iter().any(|f| f.starts_with("mutant 3 ")), "{outcome}: {report:?}");
    }
}

#[test]
fn a_control_that_timed_out_is_a_failed_control() {
    let report = check_mutants_coverage(&mutants_receipt(None, "timed_out"));
    assert!(report.failures.iter().any(|f| f.contains("control") && f.contains("sweep: timed_out")), "{report:?}");
}

#[test]
fn a_case_recorded_twice_fails() {
    let plan = small_plan();
    let mut receipt = complete_receipt(&plan);
    let first = gpu_cases(&mut receipt)[0].clone();
    gpu_cases(&mut receipt).push(first);
    receipt.tally.passed += 1;
    let report = check_sweep_against(&receipt, &plan);
    assert!(report.incomplete.iter().any(|r| r.starts_with("1 cases appear more than once")), "{report:?}");
}

//! Attribution tests on the text logs and XML files of real H200 runs
//! (testdata/README.md), and on the ways a job fails to prove anything.

use super::*;
use crate::sanitize::parse::{parse_log, Tool};
use crate::sanitize::xml::parse_records;
use std::path::PathBuf;

fn testdata(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sanitize/testdata").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn id(marker: &str) -> CaseId {
    let parts: Vec<&str> = marker.split(' ').collect();
    CaseId {
        primitive: parts[0].into(),
        variant: parts[1].into(),
        size: parts[2].into(),
        n: parts[2].parse().unwrap_or(0),
        family: "small_ints".into(),
        seed: 7,
    }
}

fn outcome(tool: Tool, log: &str, xml: Result<Vec<crate::sanitize::xml::XmlRecord>, String>, exit: i32) -> JobOutcome {
    JobOutcome {
        tool,
        exit_code: Some(exit),
        timed_out: false,
        seconds: 1.0,
        log: PathBuf::from("logs/reduce-tool.log"),
        xml_path: PathBuf::from("logs/reduce-tool.xml"),
        parsed: parse_log(log),
        compile_error: crate::sanitize::run::compile_error_line(log),
        xml,
    }
}

/// The case list the child announced: what the parent's catalogue would be.
fn expected_from(log: &str) -> Vec<CaseId> {
    parse_log(log).cases.iter().map(|m| id(m)).collect()
}

fn captured(tool: Tool, stem: &str, exit: i32) -> (JobOutcome, Vec<CaseId>) {
    let log = testdata(&format!("{stem}.log"));
    let xml = parse_records(&testdata(&format!("{stem}.xml")));
    (outcome(tool, &log, xml, exit), expected_from(&log))
}

#[test]
fn clean_captured_runs_are_clean_case_by_case() {
    for (tool, stem) in
        [(Tool::Memcheck, "xml_mem_clean"), (Tool::Racecheck, "xml_race_clean"), (Tool::Initcheck, "xml_init_clean")]
    {
        let (outcome, expected) = captured(tool, stem, 0);
        let report = attribute(&outcome, &expected, 200);
        assert!(report.problems.is_empty(), "{stem}: {:?}", report.problems);
        assert!(!report.cases.is_empty());
        assert!(report.cases.iter().all(|c| c.verdict == CaseVerdict::Clean), "{stem}");
        assert_eq!(report.xml_records, Some(0));
    }
}

#[test]
fn memcheck_findings_go_to_their_case_and_leaks_to_every_case() {
    let (outcome, expected) = captured(Tool::Memcheck, "xml_memcheck_m6", 99);
    let report = attribute(&outcome, &expected, 200);
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert_eq!((report.text_blocks, report.xml_records), (9, Some(9)));
    let first = &report.cases[0];
    assert_eq!(first.variant, "multipass.i32");
    assert_eq!(first.verdict, CaseVerdict::Findings);
    let precise = first.findings.iter().find(|f| f.kind == "Precise").expect("the out-of-bounds read");
    assert_eq!(precise.text, "Invalid __global__ read of size 8 bytes is out of bounds");
    assert_eq!(precise.function.as_deref(), Some("combine_pair"));
    assert_eq!(precise.location.as_deref(), Some("reduce.cu:81"));
    // The read is reported in the first case only; the leaks (after `done`) on every case.
    for case in &report.cases[1..] {
        assert!(!case.findings.iter().any(|f| f.kind == "Precise"), "{}", case.variant);
    }
    for case in &report.cases {
        assert!(case.findings.iter().any(|f| f.source == "leak_summary" && f.text.contains("140 bytes")));
        assert!(case.findings.iter().any(|f| f.kind == "Leak" && f.text == "Leaked 132 bytes"));
        assert!(case.findings.iter().any(|f| f.source == "model"), "{}: the child's mismatch", case.variant);
    }
}

#[test]
fn racecheck_hazards_land_in_the_case_that_raced_only() {
    let (outcome, expected) = captured(Tool::Racecheck, "xml_racecheck_m1", 99);
    let report = attribute(&outcome, &expected, 200);
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert_eq!(report.cases[0].variant, "serial.i32");
    assert_eq!(report.cases[0].verdict, CaseVerdict::Clean);
    let raced = &report.cases[1];
    assert_eq!((raced.variant.as_str(), raced.size.as_str()), ("multipass.i32", "257"));
    assert_eq!(raced.verdict, CaseVerdict::Findings);
    assert_eq!(raced.findings.iter().filter(|f| f.kind == "Hazard").count(), 3);
    assert!(raced
        .findings
        .iter()
        .any(|f| f.kind == "Analysis" && f.location.as_deref() == Some("block_reduce.cuh:29")));
    // Hazard records carry no <level>: the text block's "Error:" decides.
    assert!(raced.findings.iter().all(|f| f.level == "error"));
}

#[test]
fn initcheck_errors_beyond_the_print_limit_mark_later_cases() {
    let (outcome, expected) = captured(Tool::Initcheck, "xml_initcheck_m8", 99);
    let report = attribute(&outcome, &expected, 200);
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    let first_bad = report.cases.iter().position(|c| c.verdict == CaseVerdict::Findings).unwrap();
    assert!(report.cases[first_bad..].iter().all(|c| c.verdict == CaseVerdict::Findings));
    assert!(report.cases.last().unwrap().findings.iter().any(|f| f.kind == "unprinted" && f.text.contains("25204")));
}

#[test]
fn a_missing_or_cut_xml_proves_nothing() {
    let log = testdata("xml_mem_clean.log");
    let expected = expected_from(&log);
    for xml in [Err("logs/x.xml could not be read: not found".to_string()), parse_records("<ComputeSanitizerOutput>")] {
        let report = attribute(&outcome(Tool::Memcheck, &log, xml, 0), &expected, 200);
        assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
        assert!(report.cases.iter().all(|c| c.verdict == CaseVerdict::Findings));
        assert!(report.cases[0].findings[0].text.contains("the job proves nothing"));
    }
}

#[test]
fn text_and_xml_must_agree_below_the_print_limit() {
    let (mut outcome, expected) = captured(Tool::Memcheck, "xml_memcheck_m6", 99);
    if let Ok(records) = &mut outcome.xml {
        records.pop();
    }
    let report = attribute(&outcome, &expected, 200);
    assert!(
        report.problems.iter().any(|p| p.contains("9 error report(s) but the XML holds 8")),
        "{:?}",
        report.problems
    );
    // At the print limit the files may differ in length without proving anything wrong.
    assert!(attribute(&outcome, &expected, 8).problems.is_empty());
}

#[test]
fn a_crashed_child_leaves_later_cases_not_run() {
    let log =
        "========= COMPUTE-SANITIZER\n@@primlab case reduce serial.i32 1\n@@primlab case reduce multipass.i32 1\n\
               Segmentation fault\n";
    let expected = vec![id("reduce serial.i32 1"), id("reduce multipass.i32 1"), id("reduce serial.i32 33")];
    let report =
        attribute(&outcome(Tool::Memcheck, log, parse_records("<ComputeSanitizerOutput/>"), 139), &expected, 200);
    assert!(report.problems.iter().any(|p| p.contains("no sanitizer summary")));
    assert!(report.problems.iter().any(|p| p.contains("@@primlab done")));
    let verdicts: Vec<CaseVerdict> = report.cases.iter().map(|c| c.verdict).collect();
    assert_eq!(verdicts, vec![CaseVerdict::Findings, CaseVerdict::Findings, CaseVerdict::NotRun]);
    assert!(report.cases[2].findings.is_empty());
}

#[test]
fn a_timeout_and_a_foreign_catalogue_are_job_problems() {
    let log = testdata("xml_mem_clean.log");
    let mut expected = expected_from(&log);
    expected[2].variant = "other.i32".into();
    let mut timed = outcome(Tool::Memcheck, &log, parse_records("<ComputeSanitizerOutput/>"), 0);
    timed.timed_out = true;
    timed.exit_code = None;
    let report = attribute(&timed, &expected, 200);
    assert!(report.problems.iter().any(|p| p.starts_with("timed out")), "{:?}", report.problems);
    assert!(report.problems.iter().any(|p| p.contains("case marker 3")), "{:?}", report.problems);
    assert!(report.cases.iter().all(|c| c.verdict == CaseVerdict::Findings));
}

#[test]
fn an_unexplained_exit_code_is_a_problem() {
    let log = testdata("xml_race_clean.log");
    let report = attribute(
        &outcome(Tool::Racecheck, &log, parse_records("<ComputeSanitizerOutput/>"), 3),
        &expected_from(&log),
        200,
    );
    assert!(report.problems.iter().any(|p| p.contains("exit code 3 without a finding")), "{:?}", report.problems);
}

#[test]
fn a_hazard_names_both_of_its_accesses() {
    let records = parse_records(&testdata("xml_racecheck_m1.xml")).expect("parses");
    assert_eq!(
        records[0].accesses,
        ["Write by thread (32,0,0) at block_reduce.cuh:29", "Read by thread (1,0,0) at block_reduce.cuh:41"]
    );
    let (outcome, expected) = captured(Tool::Racecheck, "xml_racecheck_m1", SANITIZER_ERROR_EXIT);
    let report = attribute(&outcome, &expected, 200);
    let first = report.cases.iter().flat_map(|c| &c.findings).find(|f| f.kind == "Hazard").expect("a hazard");
    let line = first.line();
    assert!(
        line.ends_with(
            "[Write by thread (32,0,0) at block_reduce.cuh:29; Read by thread (1,0,0) at block_reduce.cuh:41]"
        ),
        "{line}"
    );
}

/// Racecheck reports hazards between lanes of one warp as warnings and
/// exits with its finding code: the warnings are what it found, shown as
/// it gave them, and they fail their case (never "without a finding").
#[test]
fn warnings_the_tool_exits_on_are_findings_of_their_case() {
    let clean = testdata("xml_race_clean.log");
    let warning = "========= Warning: Potential WAR hazard detected at __shared__ 0x8 in block (0,0,0) :\n\
                   =========     Read Thread (1,0,0) at reduce+0x90 in kernel.cu:20\n\
                   =========     Write Thread (0,0,0) at reduce+0xa0 in kernel.cu:21\n";
    let log = clean
        .replacen(
            "@@primlab case reduce multipass.i32 257\n",
            &format!("@@primlab case reduce multipass.i32 257\n{warning}"),
            1,
        )
        .replace(
            "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)",
            "RACECHECK SUMMARY: 1 hazard displayed (0 errors, 1 warning)",
        );
    assert!(log.contains("1 hazard displayed"), "the clean log's summary line changed:\n{clean}");
    let thread = |n: u32, access: &str, x: u32, line: u32| {
        format!(
            "<thread{n}><access>{access}</access><threadIdx><x>{x}</x><y>0</y><z>0</z></threadIdx>\
                 <where><func>reduce</func><path>/k/kernel.cu</path><line>{line}</line></where></thread{n}>"
        )
    };
    let xml = format!(
        "<ComputeSanitizerOutput><record><kind>Hazard</kind><level>Warning</level><what><text>Potential WAR hazard detected</text>{}{}</what></record></ComputeSanitizerOutput>",
        thread(0, "Read", 1, 20),
        thread(1, "Write", 0, 21)
    );
    let outcome = outcome(Tool::Racecheck, &log, parse_records(&xml), SANITIZER_ERROR_EXIT);
    let report = attribute(&outcome, &expected_from(&log), 200);
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    let dirty: Vec<&CaseEntry> = report.cases.iter().filter(|c| c.verdict == CaseVerdict::Findings).collect();
    assert_eq!(dirty.len(), 1);
    assert_eq!(dirty[0].variant, "multipass.i32");
    let line = dirty[0].findings[0].line();
    assert_eq!(line, "warning Hazard: Potential WAR hazard detected in reduce (kernel.cu:20) [Read by thread (1,0,0) at kernel.cu:20; Write by thread (0,0,0) at kernel.cu:21]");
    // The same warnings with a clean exit are listed, not failed.
    let outcome = JobOutcome { exit_code: Some(0), ..outcome };
    let report = attribute(&outcome, &expected_from(&log), 200);
    assert!(report.cases.iter().all(|c| c.verdict == CaseVerdict::Clean));
    assert_eq!(report.cases.iter().map(|c| c.warnings.len()).sum::<usize>(), 1);
}

#[test]
fn a_nonzero_exit_with_nothing_parsed_shows_the_tool_s_own_text() {
    let dir = std::env::temp_dir().join(format!("primlab-tool-text-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let log_path = dir.join("job.log");
    let log = "========= COMPUTE-SANITIZER\n@@primlab case reduce serial.i32 257\n========= Target application could not be attached: the device is busy\n";
    std::fs::write(&log_path, log).expect("write");
    let mut job = outcome(Tool::Racecheck, log, parse_records("<ComputeSanitizerOutput/>"), 7);
    job.log = log_path;
    let report = attribute(&job, &expected_from(log), 200);
    std::fs::remove_dir_all(&dir).ok();
    let problem =
        report.problems.iter().find(|p| p.contains("exit code 7 without a finding")).expect("the exit is a problem");
    assert!(
        problem.contains(
            "the tool said: COMPUTE-SANITIZER | Target application could not be attached: the device is busy"
        ),
        "{problem}"
    );
}

/// A real racecheck run of a warp-synchronous reduction (`volatile` shared
/// memory, no `__syncwarp`; gallery entry 25) on the H200: 1,632,065
/// warp-level hazards, every one a warning, and the child's watchdog ended a
/// later case (the tool is slow on so many). The hazards fail the case they
/// came from, each shown with its qualifier and both accesses; the stopped
/// child is a problem of its own, never the only thing said.
#[test]
fn racecheck_warp_level_warnings_from_a_real_run_fail_their_case() {
    for exit in [SANITIZER_ERROR_EXIT, 1] {
        let (outcome, expected) = captured(Tool::Racecheck, "xml_racecheck_warp_level", exit);
        assert_eq!(outcome.parsed.racecheck_summary, Some((200, 0, 1_632_065)));
        let report = attribute(&outcome, &expected, 200);
        let first = &report.cases[0];
        assert_eq!((first.n, first.verdict), (1, CaseVerdict::Findings));
        assert_eq!(
            first.findings[0].line(),
            "warning Hazard: (Warp Level Programming) Potential RAW hazard detected in warp_reduce (<inline>:12) \
             [Write by thread (16,0,0) at <inline>:12; Read by thread (0,0,0) at <inline>:13]"
        );
        assert_eq!(first.findings.iter().filter(|f| f.kind == "Hazard").count(), 3);
        assert!(report.problems.iter().any(|p| p.contains("never printed `@@primlab done`")), "{:?}", report.problems);
        assert!(!report.problems.iter().any(|p| p.contains("without a finding")), "{:?}", report.problems);
    }
    // The same warnings under a clean exit would be listed, not failed.
    let (outcome, expected) = captured(Tool::Racecheck, "xml_racecheck_warp_level", 0);
    let report = attribute(&outcome, &expected, 200);
    assert_eq!(report.cases[0].warnings.len(), 3);
    assert!(report.cases[0].findings.iter().all(|f| f.kind != "Hazard"));
}

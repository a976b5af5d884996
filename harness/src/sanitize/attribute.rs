//! From one job's text log and XML to a verdict per (case, tool).
//!
//! The rules, in the order they are applied:
//! * Findings (count, kind, level, text, function, file:line) come from the
//!   XML records. The records carry no case, so the i-th record is the i-th
//!   error block of the text log, and that block belongs to the case whose
//!   `@@primlab case` marker precedes it (the tool prints reports in the
//!   order they happen, between the child's markers).
//! * Below `--print-limit` the text must show exactly as many error blocks
//!   as the XML has records; otherwise the pairing is unknown and the job
//!   proves nothing. So does a job that timed out, printed no sanitizer
//!   summary, left no readable and closed XML file, whose child never printed
//!   its `@@primlab done` line, or whose markers are not the parent's catalogue.
//! * What belongs to no single case (before the first marker, after the
//!   `done` line, the leak summary, a job problem) is listed on every case
//!   that ran; errors beyond the print limit on every case from the one of
//!   the last printed error on (they happened after it).
//! * A case whose marker never appeared did not run: `not_run`, never clean.

use super::options::SANITIZER_ERROR_EXIT;
use super::parse::Severity;
use super::run::JobOutcome;
use crate::sweep::case::CaseId;
use serde::Serialize;

/// One thing reported against a case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CaseFinding {
    /// "sanitizer" (an XML record), "sanitizer_text" (a text block without its
    /// XML record), "leak_summary", "model" (the child's model mismatch), "job".
    pub source: String,
    /// The record's kind (Precise, Api, Leak, Hazard, Analysis, ...), or the source's.
    pub kind: String,
    /// "error" or "warning".
    pub level: String,
    /// What was reported.
    pub text: String,
    /// Kernel function, when the report names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    /// `file:line`, when the report names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// A hazard's two accesses (which thread did what, where).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub accesses: Vec<String>,
}

impl CaseFinding {
    fn job(kind: &str, text: String) -> CaseFinding {
        CaseFinding {
            source: "job".into(),
            kind: kind.into(),
            level: "error".into(),
            text,
            function: None,
            location: None,
            accesses: Vec::new(),
        }
    }

    fn is_error(&self) -> bool {
        self.level == "error"
    }

    /// One line: `kind: text at function (file:line)`.
    pub fn line(&self) -> String {
        let mut out = format!("{} {}: {}", self.level, self.kind, self.text);
        if let Some(f) = &self.function {
            out.push_str(&format!(" in {f}"));
        }
        if let Some(l) = &self.location {
            out.push_str(&format!(" ({l})"));
        }
        if !self.accesses.is_empty() {
            out.push_str(&format!(" [{}]", self.accesses.join("; ")));
        }
        out
    }
}

/// A case's verdict under one tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CaseVerdict {
    /// It ran, the job proved itself, and no error was reported against it.
    Clean,
    /// It ran and errors were reported against it (or its job proves nothing).
    Findings,
    /// Its marker never appeared: the child stopped before it.
    NotRun,
}

/// One (case, tool) entry of the receipt's `details.cases`.
#[derive(Debug, Clone, Serialize)]
pub struct CaseEntry {
    /// Primitive.
    pub primitive: String,
    /// Variant.
    pub variant: String,
    /// Size as printed.
    pub size: String,
    /// Elements.
    pub n: usize,
    /// Input data family.
    pub family: String,
    /// Seed of the input (0x-hex, as in failure lines).
    pub seed: String,
    /// Tool.
    pub tool: String,
    /// Verdict.
    pub verdict: CaseVerdict,
    /// Errors reported against it (empty when clean or not run).
    pub findings: Vec<CaseFinding>,
    /// Warnings reported against it (never a failure on their own).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<CaseFinding>,
    /// The job's text log.
    pub log: String,
}

impl CaseEntry {
    /// The entry of case `id` as `tool` judged it (the seed in hex).
    fn of_case(
        id: &CaseId,
        tool: &str,
        verdict: CaseVerdict,
        findings: Vec<CaseFinding>,
        warnings: Vec<CaseFinding>,
        log: &str,
    ) -> CaseEntry {
        CaseEntry {
            primitive: id.primitive.clone(),
            variant: id.variant.clone(),
            size: id.size.clone(),
            n: id.n,
            family: id.family.clone(),
            seed: format!("{:#x}", id.seed),
            tool: tool.into(),
            verdict,
            findings,
            warnings,
            log: log.into(),
        }
    }
}

/// One job's attribution.
#[derive(Debug, Clone)]
pub struct JobReport {
    /// Why the job proves nothing (empty when it proved itself).
    pub problems: Vec<String>,
    /// One entry per expected case, in catalogue order.
    pub cases: Vec<CaseEntry>,
    /// Error blocks in the text log.
    pub text_blocks: usize,
    /// Records in the XML (None when it could not be read).
    pub xml_records: Option<usize>,
}

fn severity_word(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

/// A record's text with the qualifier its text headline puts in front
/// (`Warning: (Warp Level Programming) Potential RAW hazard ...`), which the
/// XML record leaves out.
fn qualified(headline: &str, text: &str) -> String {
    let body = headline.split_once(": ").map_or(headline, |(_, rest)| rest);
    match body.strip_prefix('(').and_then(|b| b.split_once(')')) {
        Some((qualifier, _)) if !text.starts_with('(') => format!("({qualifier}) {text}"),
        _ => text.to_string(),
    }
}

/// The problems that make a job prove nothing.
fn job_problems(outcome: &JobOutcome, expected: &[CaseId], print_limit: usize) -> Vec<String> {
    let parsed = &outcome.parsed;
    let mut problems = Vec::new();
    if let Some(line) = &outcome.compile_error {
        problems.push(format!("the child did not compile its kernels: {line}"));
    }
    if outcome.timed_out {
        problems.push(format!("timed out after {:.0} s (its process group was killed)", outcome.seconds));
    }
    if !parsed.has_summary() {
        problems.push(format!("no sanitizer summary line (exit {:?}): the tool did not finish", outcome.exit_code));
    }
    match &outcome.xml {
        Err(e) => problems.push(format!("{e}: its findings cannot be read")),
        Ok(records) if records.len() < print_limit && records.len() != parsed.findings.len() => problems.push(format!(
            "the text log shows {} error report(s) but the XML holds {} record(s) (below the print limit of \
             {print_limit}, they must agree)",
            parsed.findings.len(),
            records.len()
        )),
        Ok(_) => {}
    }
    match parsed.done {
        None => problems.push("the child never printed `@@primlab done` (it crashed or was killed)".into()),
        Some((cases, _)) if cases as usize != parsed.cases.len() => problems
            .push(format!("the child says {cases} cases ran but the log holds {} case markers", parsed.cases.len())),
        Some(_) => {}
    }
    if parsed.cases.len() > expected.len() {
        problems.push(format!("{} case markers but the catalogue has {} cases", parsed.cases.len(), expected.len()));
    }
    if let Some((i, (got, want))) =
        parsed.cases.iter().zip(expected).enumerate().find(|(_, (got, want))| **got != want.marker())
    {
        problems.push(format!(
            "case marker {} is `{got}` where the catalogue has `{}`: the child ran other cases than expected",
            i + 1,
            want.marker()
        ));
    }
    // Warnings are findings too: the tool exits with its finding code on them.
    let seen = parsed.error_count() > 0 || !parsed.findings.is_empty() || !parsed.child_failures.is_empty();
    match outcome.exit_code {
        Some(0) if parsed.error_count() > 0 => {
            problems.push(format!("exit code 0 despite {} reported error(s)", parsed.error_count()))
        }
        Some(code) if code != 0 && !seen => problems.push(format!(
            "exit code {code} without a finding (compute-sanitizer exits {SANITIZER_ERROR_EXIT} on a finding); \
             the tool said: {}",
            tool_text(&outcome.log)
        )),
        _ => {}
    }
    problems
}

/// The tool's own last lines (`========= ...`), or the log's last lines
/// when it wrote none of its own: what to show when nothing was parsed.
fn tool_text(log: &std::path::Path) -> String {
    const SHOWN: usize = 8;
    let Ok(text) = crate::bounded::read_text(log, 64 << 20) else { return "(its log cannot be read)".into() };
    let own: Vec<&str> =
        text.lines().filter(|l| l.starts_with("=========") && l.trim_matches('=').trim().len() > 1).collect();
    let lines: Vec<&str> = if own.is_empty() { text.lines().collect() } else { own };
    let tail = &lines[lines.len().saturating_sub(SHOWN)..];
    if tail.is_empty() {
        "(nothing: the log is empty)".into()
    } else {
        tail.iter().map(|l| l.trim_start_matches('=').trim()).collect::<Vec<_>>().join(" | ")
    }
}

/// Attributes one job's findings to the cases of `expected` (the parent's
/// catalogue for the job, in the order the child runs it).
pub fn attribute(outcome: &JobOutcome, expected: &[CaseId], print_limit: usize) -> JobReport {
    let parsed = &outcome.parsed;
    let problems = job_problems(outcome, expected, print_limit);
    let ran = parsed.cases.len().min(expected.len());
    let mut per_case: Vec<Vec<CaseFinding>> = vec![Vec::new(); ran];
    let mut whole_job: Vec<CaseFinding> = Vec::new();
    let mut place =
        |index: Option<usize>, after_done: bool, finding: CaseFinding, whole: &mut Vec<CaseFinding>| match index
            .filter(|i| *i < ran && !after_done)
        {
            Some(i) => per_case[i].push(finding),
            None => whole.push(finding),
        };
    let records = outcome.xml.as_ref().ok();
    let mut last_error_case: Option<usize> = None;
    for (i, block) in parsed.findings.iter().enumerate() {
        let finding = match records.and_then(|r| r.get(i)) {
            Some(record) => CaseFinding {
                source: "sanitizer".into(),
                kind: record.kind.clone(),
                level: record
                    .level
                    .as_deref()
                    .map(|l| l.to_ascii_lowercase())
                    .unwrap_or_else(|| severity_word(block.severity).into()),
                text: qualified(&block.headline, &record.text),
                function: record.function.clone(),
                location: record.location(),
                accesses: record.accesses.clone(),
            },
            None => CaseFinding {
                source: "sanitizer_text".into(),
                kind: "text".into(),
                level: severity_word(block.severity).into(),
                text: block.headline.clone(),
                function: None,
                location: None,
                accesses: Vec::new(),
            },
        };
        if finding.is_error() && !block.after_done {
            last_error_case = block.case_index.or(last_error_case);
        }
        place(block.case_index, block.after_done, finding, &mut whole_job);
    }
    // Records beyond the text blocks cannot be placed in a case.
    for record in records.into_iter().flatten().skip(parsed.findings.len()) {
        whole_job.push(CaseFinding {
            source: "sanitizer".into(),
            kind: record.kind.clone(),
            level: record.level.as_deref().map(|l| l.to_ascii_lowercase()).unwrap_or_else(|| "error".into()),
            text: format!("{} (no matching report in the text log)", record.text),
            function: record.function.clone(),
            location: record.location(),
            accesses: record.accesses.clone(),
        });
    }
    for failure in &parsed.child_failures {
        let finding = CaseFinding {
            source: "model".into(),
            kind: "model_mismatch".into(),
            level: "error".into(),
            text: failure.line.clone(),
            function: None,
            location: None,
            accesses: Vec::new(),
        };
        place(failure.case_index, false, finding, &mut whole_job);
    }
    if let Some((bytes, allocations)) = parsed.leak_summary.filter(|(bytes, _)| *bytes > 0) {
        whole_job.push(CaseFinding {
            source: "leak_summary".into(),
            kind: "Leak".into(),
            level: "error".into(),
            text: format!("LEAK SUMMARY: {bytes} bytes leaked in {allocations} allocations"),
            function: None,
            location: None,
            accesses: Vec::new(),
        });
    }
    whole_job.extend(problems.iter().map(|p| CaseFinding::job("job_failed", format!("the job proves nothing: {p}"))));
    if let Some(unprinted) = parsed.unprinted.filter(|u| *u > 0) {
        let from = last_error_case.unwrap_or(0);
        let finding = CaseFinding::job(
            "unprinted",
            format!("{unprinted} further error(s) beyond --print-limit, in this case or a later one"),
        );
        for findings in per_case.iter_mut().skip(from) {
            findings.push(finding.clone());
        }
    }
    // Warnings the tool did not exit cleanly on (racecheck's warp-level
    // hazards: it exits with its finding code on them) fail their case,
    // shown as the tool gave them; under a clean exit they are listed only.
    let warnings_found = outcome.exit_code != Some(0);
    let log = outcome.log.display().to_string();
    let cases = expected
        .iter()
        .enumerate()
        .map(|(i, id)| {
            let (verdict, errors, warnings) = match per_case.get(i) {
                None => (CaseVerdict::NotRun, Vec::new(), Vec::new()),
                Some(own) => {
                    let all: Vec<CaseFinding> = own.iter().chain(&whole_job).cloned().collect();
                    let (errors, warnings): (Vec<_>, Vec<_>) = all
                        .into_iter()
                        .partition(|f| f.is_error() || (warnings_found && f.source.starts_with("sanitizer")));
                    let verdict = if errors.is_empty() { CaseVerdict::Clean } else { CaseVerdict::Findings };
                    (verdict, errors, warnings)
                }
            };
            CaseEntry::of_case(id, outcome.tool.name(), verdict, errors, warnings, &log)
        })
        .collect();
    JobReport {
        problems,
        cases,
        text_blocks: parsed.findings.len(),
        xml_records: outcome.xml.as_ref().ok().map(Vec::len),
    }
}

/// The entries of a job that could not be started: every case fails with the reason.
pub fn unstarted(expected: &[CaseId], tool: &str, reason: &str, log: &str) -> Vec<CaseEntry> {
    let finding = CaseFinding::job("job_failed", format!("the job could not start: {reason}"));
    expected
        .iter()
        .map(|id| CaseEntry::of_case(id, tool, CaseVerdict::Findings, vec![finding.clone()], Vec::new(), log))
        .collect()
}

#[cfg(test)]
#[path = "attribute_tests.rs"]
mod tests;

//! Parsing compute-sanitizer logs: the tool's summary lines ("ERROR SUMMARY",
//! "RACECHECK SUMMARY"), each reported error or hazard, and the harness's own
//! case markers, so every finding is attributed to the case that ran before it.

use serde::{Deserialize, Serialize};

/// The line the sanitizer child prints before each case:
/// `@@primlab case <primitive> <variant> <size>`.
pub const CASE_MARKER: &str = "@@primlab case";

/// The child's last line: `@@primlab done N cases, M failed`.
pub const DONE_MARKER: &str = "@@primlab done";

/// A compute-sanitizer tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tool {
    /// Out-of-bounds and misaligned accesses, hardware exceptions.
    Memcheck,
    /// Shared-memory data-access hazards.
    Racecheck,
    /// Invalid uses of synchronization primitives.
    Synccheck,
    /// Reads of uninitialised global memory.
    Initcheck,
}

impl Tool {
    /// All four, in the order they are run.
    pub const ALL: [Tool; 4] = [Tool::Memcheck, Tool::Racecheck, Tool::Synccheck, Tool::Initcheck];

    /// The `--tool` argument.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Memcheck => "memcheck",
            Tool::Racecheck => "racecheck",
            Tool::Synccheck => "synccheck",
            Tool::Initcheck => "initcheck",
        }
    }

    /// Parses a `--tool` name.
    pub fn from_name(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|t| t.name() == name)
    }
}

/// Whether a finding counts against the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// An error, or a hazard the tool reports as an error.
    Error,
    /// A warning (reported, does not fail the gate on its own).
    Warning,
}

/// One reported problem: the first line of the sanitizer's report block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// Error or warning.
    pub severity: Severity,
    /// The report's headline, without the `========= ` prefix.
    pub headline: String,
    /// The case (`primitive variant size`) that was running, if a marker preceded it.
    pub case: Option<String>,
    /// Position of that case's marker among the log's markers.
    pub case_index: Option<usize>,
    /// Whether it came after the child's `@@primlab done` line (leaks, teardown).
    pub after_done: bool,
}

/// A model mismatch the child reported (`@@primlab fail <line>`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChildFailure {
    /// The failure line (primitive/variant, size, seed, index, expected, got).
    pub line: String,
    /// Position of the marker of the case it belongs to.
    pub case_index: Option<usize>,
}

/// Everything read from one log.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParsedLog {
    /// `N` of "ERROR SUMMARY: N errors", if the line was present.
    pub error_summary: Option<u64>,
    /// (hazards, errors, warnings) of "RACECHECK SUMMARY: H hazards displayed (E errors, W warnings)".
    pub racecheck_summary: Option<(u64, u64, u64)>,
    /// Each finding in log order.
    pub findings: Vec<Finding>,
    /// Every case marker in order (`primitive variant size`).
    pub cases: Vec<String>,
    /// Lines of the form `@@primlab fail ...` the child printed (model mismatches).
    pub child_failures: Vec<ChildFailure>,
    /// (cases, failed) of the child's last line `@@primlab done N cases, M failed`:
    /// absent when the child died before it finished.
    pub done: Option<(u64, u64)>,
    /// (bytes, allocations) of "LEAK SUMMARY: B bytes leaked in A allocations".
    pub leak_summary: Option<(u64, u64)>,
    /// `M` of "ERROR SUMMARY: M errors were not printed" (beyond `--print-limit`).
    pub unprinted: Option<u64>,
    /// Whether the tool noted that the wrapped program exited nonzero.
    pub target_failed: bool,
}

impl ParsedLog {
    /// Errors the tool reported: the larger of the summary counts and the
    /// findings of error severity (a truncated log still counts its findings).
    pub fn error_count(&self) -> u64 {
        let listed = self.findings.iter().filter(|f| f.severity == Severity::Error).count() as u64;
        let summary = self.error_summary.unwrap_or(0).max(self.racecheck_summary.map(|(_, e, _)| e).unwrap_or(0));
        summary.max(listed)
    }

    /// Whether the log ended with the tool's summary (a crash or a timeout
    /// leaves none, and then the run proves nothing).
    pub fn has_summary(&self) -> bool {
        self.error_summary.is_some() || self.racecheck_summary.is_some()
    }
}

const PREFIX: &str = "========= ";

/// Headlines that open an error report, by tool family (matched at the start
/// of the text after the prefix).
const ERROR_HEADLINES: &[&str] = &[
    "Invalid __global__",
    "Invalid __shared__",
    "Invalid __local__",
    "Invalid __generic__",
    "Misaligned",
    "Out-of-range",
    "Program hit",
    "Malloc/Free error",
    "Leaked",
    "Error: Race reported",
    "ERROR: Potential",
    "ERROR: Race",
    "Barrier error",
    "Warp level",
    "Invalid arguments",
    "Uninitialized __global__ memory read",
    "Uninitialized __shared__ memory read",
    "Uninitialized",
    "Cuda API error",
    "CUDA API error",
    "Error:",
    "ERROR:",
    "Internal Sanitizer Error",
];

/// The tool's note that the wrapped program exited nonzero: not a finding of
/// the tool (the harness child exits 1 on a model mismatch), kept apart.
const TARGET_FAILED: &str = "Target application returned an error";

const WARNING_HEADLINES: &[&str] = &["Warning: Race reported", "WARNING: Potential", "Warning:", "WARNING:"];

fn classify(body: &str) -> Option<Severity> {
    // Indented lines continue the previous report (frames, addresses).
    if body.starts_with(' ') || body.starts_with('\t') {
        return None;
    }
    if WARNING_HEADLINES.iter().any(|h| body.starts_with(h)) {
        return Some(Severity::Warning);
    }
    if ERROR_HEADLINES.iter().any(|h| body.starts_with(h)) {
        return Some(Severity::Error);
    }
    None
}

fn parse_count(text: &str) -> Option<u64> {
    text.split_whitespace().next()?.parse().ok()
}

/// Parses a whole log (the child's stdout and stderr merged with the tool's).
pub fn parse_log(text: &str) -> ParsedLog {
    let mut parsed = ParsedLog::default();
    let mut case: Option<String> = None;
    for raw in text.lines() {
        let line = raw.trim_end();
        let case_index = parsed.cases.len().checked_sub(1);
        if let Some(rest) = line.strip_prefix(CASE_MARKER) {
            let name = rest.trim().to_string();
            parsed.cases.push(name.clone());
            case = Some(name);
            continue;
        }
        if let Some(rest) = line.strip_prefix("@@primlab fail") {
            parsed.child_failures.push(ChildFailure { line: rest.trim().to_string(), case_index });
            continue;
        }
        if let Some(rest) = line.strip_prefix(DONE_MARKER) {
            // "N cases, M failed"
            let numbers: Vec<u64> = rest.split(|c: char| !c.is_ascii_digit()).filter_map(|s| s.parse().ok()).collect();
            if let [cases, failed] = numbers[..] {
                parsed.done = Some((cases, failed));
            }
            continue;
        }
        let Some(body) = line.strip_prefix(PREFIX).or_else(|| line.strip_prefix("=========")) else {
            continue;
        };
        let trimmed = body.trim();
        if let Some(rest) = trimmed.strip_prefix("ERROR SUMMARY:") {
            // "N errors", and with a print limit also "M errors were not printed ...".
            if rest.contains("not printed") {
                parsed.unprinted = parse_count(rest);
            } else {
                parsed.error_summary = parse_count(rest);
            }
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("LEAK SUMMARY:") {
            // "B bytes leaked in A allocations"
            let numbers: Vec<u64> = rest.split(|c: char| !c.is_ascii_digit()).filter_map(|s| s.parse().ok()).collect();
            if let [bytes, allocations, ..] = numbers[..] {
                parsed.leak_summary = Some((bytes, allocations));
            }
            continue;
        }
        if trimmed.starts_with(TARGET_FAILED) {
            parsed.target_failed = true;
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("RACECHECK SUMMARY:") {
            // "H hazards displayed (E errors, W warnings)"
            let numbers: Vec<u64> = rest
                .split(|c: char| !c.is_ascii_digit())
                .filter(|s| !s.is_empty())
                .filter_map(|s| s.parse().ok())
                .collect();
            if let [hazards, errors, warnings, ..] = numbers[..] {
                parsed.racecheck_summary = Some((hazards, errors, warnings));
            } else if let [hazards] = numbers[..] {
                parsed.racecheck_summary = Some((hazards, hazards, 0));
            }
            continue;
        }
        if let Some(severity) = classify(body) {
            parsed.findings.push(Finding {
                severity,
                headline: trimmed.to_string(),
                case: case.clone(),
                case_index,
                after_done: parsed.done.is_some(),
            });
        }
    }
    parsed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_memcheck_log_has_zero_errors_and_a_summary() {
        let log =
            "========= COMPUTE-SANITIZER\n@@primlab case reduce multipass 33\nok\n========= ERROR SUMMARY: 0 errors\n";
        let parsed = parse_log(log);
        assert_eq!(parsed.error_summary, Some(0));
        assert!(parsed.has_summary());
        assert_eq!(parsed.error_count(), 0);
        assert_eq!(parsed.cases, vec!["reduce multipass 33".to_string()]);
    }

    #[test]
    fn findings_are_attributed_to_the_preceding_case() {
        let log = "\
@@primlab case scan blelloch 1
@@primlab case scan blelloch 513
========= Invalid __global__ read of size 4 bytes
=========     at scan_blelloch_block+0x1d0 in scan.cu:88
=========     by thread (1,0,0) in block (1,0,0)
========= ERROR SUMMARY: 1 error
";
        let parsed = parse_log(log);
        assert_eq!(parsed.error_count(), 1);
        assert_eq!(parsed.findings.len(), 1);
        assert_eq!(parsed.findings[0].case.as_deref(), Some("scan blelloch 513"));
        assert_eq!(parsed.findings[0].case_index, Some(1));
    }

    #[test]
    fn racecheck_summary_counts_errors_and_warnings() {
        let log = "\
========= Error: Race reported between Write access at block_reduce+0x90 in block_reduce.cuh:29
=========     and Read access at block_reduce+0xd0 in block_reduce.cuh:41 [8 hazards]
========= Warning: Race reported between Read access at x and Write access at y [2 hazards]
========= RACECHECK SUMMARY: 2 hazards displayed (1 error, 1 warning)
";
        let parsed = parse_log(log);
        assert_eq!(parsed.racecheck_summary, Some((2, 1, 1)));
        assert_eq!(parsed.error_count(), 1);
        assert_eq!(parsed.findings.iter().filter(|f| f.severity == Severity::Warning).count(), 1);
    }

    #[test]
    fn a_log_without_summary_is_reported_as_such() {
        let parsed = parse_log("@@primlab case x y 1\nSegmentation fault\n");
        assert!(!parsed.has_summary());
    }

    /// Logs captured on the H200 (2026-11-29) from real runs, trimmed to their
    /// first reports and their summaries (see testdata/README.md).
    fn captured(name: &str) -> ParsedLog {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sanitize/testdata").join(name);
        parse_log(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
    }

    #[test]
    fn captured_clean_runs_parse_as_clean() {
        for name in ["memcheck_clean.log", "racecheck_clean.log", "synccheck_clean.log"] {
            let parsed = captured(name);
            assert!(parsed.has_summary(), "{name}");
            assert_eq!(parsed.error_count(), 0, "{name}");
            assert!(parsed.findings.is_empty(), "{name}");
            assert!(!parsed.target_failed, "{name}");
            assert!(!parsed.cases.is_empty(), "{name}");
        }
        assert_eq!(captured("racecheck_clean.log").racecheck_summary, Some((0, 0, 0)));
    }

    #[test]
    fn captured_racecheck_hazards_are_errors_attributed_to_their_case() {
        let parsed = captured("racecheck_raw_hazards.log");
        assert_eq!(parsed.racecheck_summary, Some((200, 2872, 0)));
        assert_eq!(parsed.error_count(), 2872);
        let first = &parsed.findings[0];
        assert!(first.headline.starts_with("Error: Potential RAW hazard detected at __shared__"));
        assert_eq!(first.case.as_deref(), Some("reduce multipass.i32 1"));
        assert!(parsed.target_failed, "the child also reported model mismatches");
        assert!(!parsed.child_failures.is_empty());
    }

    #[test]
    fn captured_initcheck_counts_the_printed_summary_not_the_unprinted_one() {
        let parsed = captured("initcheck_uninitialised_reads.log");
        assert_eq!(parsed.error_summary, Some(419_350));
        assert!(parsed.findings.iter().all(|f| f.headline.starts_with("Uninitialized __global__ memory read")));
    }

    #[test]
    fn captured_memcheck_out_of_bounds_read_is_an_error() {
        let parsed = captured("memcheck_out_of_bounds.log");
        assert_eq!(parsed.error_summary, Some(15));
        assert_eq!(parsed.findings[0].headline, "Invalid __global__ read of size 8 bytes");
        assert_eq!(parsed.findings[0].case.as_deref(), Some("reduce multipass.i32 1"));
        assert!(parsed.findings.iter().any(|f| f.headline.starts_with("Program hit CUDA_ERROR_LAUNCH_FAILED")));
        assert!(!parsed.findings.iter().any(|f| f.headline.starts_with("Target application")));
    }

    #[test]
    fn child_failures_are_collected() {
        let parsed = parse_log("@@primlab fail scan/blelloch n=513 seed=7 index=512 expected=1 got=2\n");
        assert_eq!(parsed.child_failures.len(), 1);
    }
}

//! What `harness sanitize` prints and writes from the (case, tool) entries:
//! the variant x tool table, the findings on the console, the JUnit report.

use super::attribute::{CaseEntry, CaseVerdict};
use super::parse::Tool;
use crate::junit::{Outcome, TestCase};
use crate::table::Table;
use std::collections::BTreeMap;

/// Sizes of one variant under one tool: clean, with findings, not run.
#[derive(Default)]
struct Cell {
    clean: Vec<String>,
    findings: Vec<String>,
    not_run: Vec<String>,
}

/// Rows `primitive variant`, one column per tool: "clean x7",
/// "FAIL at 33,257", "NOT RUN at 4099" (both when both).
pub fn table(cases: &[CaseEntry], tools: &[Tool]) -> Table {
    let mut grid: BTreeMap<String, BTreeMap<String, Cell>> = BTreeMap::new();
    for case in cases {
        let cell = grid
            .entry(format!("{} {}", case.primitive, case.variant))
            .or_default()
            .entry(case.tool.clone())
            .or_default();
        match case.verdict {
            CaseVerdict::Clean => cell.clean.push(case.size.clone()),
            CaseVerdict::Findings => cell.findings.push(case.size.clone()),
            CaseVerdict::NotRun => cell.not_run.push(case.size.clone()),
        }
    }
    let mut table =
        Table::new(std::iter::once("primitive variant".to_string()).chain(tools.iter().map(|t| t.name().to_string())));
    for (variant, by_tool) in &grid {
        let mut row = vec![variant.clone()];
        for tool in tools {
            row.push(match by_tool.get(tool.name()) {
                None => "no case".into(),
                Some(cell) if cell.findings.is_empty() && cell.not_run.is_empty() => {
                    format!("clean x{}", cell.clean.len())
                }
                Some(cell) => {
                    let mut parts = Vec::new();
                    if !cell.findings.is_empty() {
                        parts.push(format!("FAIL at {}", cell.findings.join(",")));
                    }
                    if !cell.not_run.is_empty() {
                        parts.push(format!("NOT RUN at {}", cell.not_run.join(",")));
                    }
                    parts.join("; ")
                }
            });
        }
        table.row(row);
    }
    table
}

/// `sanitize <tool> <primitive> <variant> n=<size> seed=<seed>`: names a case everywhere.
pub fn case_label(case: &CaseEntry) -> String {
    format!("{} {} {} n={} seed={}", case.tool, case.primitive, case.variant, case.size, case.seed)
}

/// Lines for the console: every failing case with its first findings, at most `max_cases`.
pub fn finding_lines(cases: &[CaseEntry], max_cases: usize) -> Vec<String> {
    let failing: Vec<&CaseEntry> = cases.iter().filter(|c| c.verdict != CaseVerdict::Clean).collect();
    let mut lines = Vec::new();
    for case in failing.iter().take(max_cases) {
        match case.verdict {
            CaseVerdict::NotRun => {
                lines.push(format!("  NOT RUN {}: its case marker never appeared (log {})", case_label(case), case.log))
            }
            _ => {
                lines.push(format!("  FAIL {} (log {})", case_label(case), case.log));
                for finding in case.findings.iter().take(3) {
                    lines.push(format!("       {}", finding.line()));
                }
                if case.findings.len() > 3 {
                    lines.push(format!("       ... {} more in the receipt", case.findings.len() - 3));
                }
            }
        }
    }
    if failing.len() > max_cases {
        lines.push(format!("  ... {} more failing (case, tool) pairs in the receipt", failing.len() - max_cases));
    }
    lines
}

/// One JUnit test case per (case, tool): classname `sanitize.<primitive>.<tool>`,
/// name `<variant> n=<size>`. A case that did not run is a failure (the run
/// was asked to check it), never a pass or a skip.
pub fn junit_cases(cases: &[CaseEntry]) -> Vec<TestCase> {
    cases
        .iter()
        .map(|case| TestCase {
            classname: format!("sanitize.{}.{}", case.primitive, case.tool),
            name: format!("{} n={}", case.variant, case.size),
            seconds: 0.0,
            outcome: match case.verdict {
                CaseVerdict::Clean => Outcome::Passed,
                CaseVerdict::NotRun => Outcome::Failed(format!(
                    "not run: the marker of {} never appeared in the log {} (the child stopped before it)",
                    case_label(case),
                    case.log
                )),
                CaseVerdict::Findings => {
                    let mut text =
                        format!("{} ({} finding(s), log {})", case_label(case), case.findings.len(), case.log);
                    for finding in &case.findings {
                        text.push('\n');
                        text.push_str(&finding.line());
                    }
                    Outcome::Failed(text)
                }
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sanitize::attribute::CaseFinding;

    fn entry(variant: &str, size: &str, tool: &str, verdict: CaseVerdict) -> CaseEntry {
        CaseEntry {
            primitive: "scan".into(),
            variant: variant.into(),
            size: size.into(),
            n: size.parse().unwrap_or(0),
            family: "small_ints".into(),
            seed: "0x7".into(),
            tool: tool.into(),
            verdict,
            findings: if verdict == CaseVerdict::Findings {
                vec![CaseFinding {
                    source: "sanitizer".into(),
                    kind: "Precise".into(),
                    level: "error".into(),
                    text: "Invalid __global__ read of size 4 bytes".into(),
                    function: Some("scan_tile".into()),
                    location: Some("scan.cu:88".into()),
                    accesses: Vec::new(),
                }]
            } else {
                vec![]
            },
            warnings: vec![],
            log: "logs/scan-memcheck.log".into(),
        }
    }

    /// memcheck clean at 33, with findings at 513 and not run at 4099;
    /// racecheck clean at 33.
    fn run_cases() -> Vec<CaseEntry> {
        vec![
            entry("blelloch.i32", "33", "memcheck", CaseVerdict::Clean),
            entry("blelloch.i32", "513", "memcheck", CaseVerdict::Findings),
            entry("blelloch.i32", "4099", "memcheck", CaseVerdict::NotRun),
            entry("blelloch.i32", "33", "racecheck", CaseVerdict::Clean),
        ]
    }

    #[test]
    fn junit_has_one_case_per_case_and_tool_and_not_run_fails() {
        let junit = junit_cases(&run_cases());
        assert_eq!(junit.len(), 4);
        assert_eq!(junit[0].classname, "sanitize.scan.memcheck");
        assert_eq!(junit[0].name, "blelloch.i32 n=33");
        assert_eq!(junit[0].outcome, Outcome::Passed);
        let Outcome::Failed(text) = &junit[1].outcome else { panic!("{:?}", junit[1].outcome) };
        assert!(
            text.contains("scan.cu:88") && text.contains("logs/scan-memcheck.log") && text.contains("seed=0x7"),
            "{text}"
        );
        assert!(matches!(&junit[2].outcome, Outcome::Failed(t) if t.starts_with("not run")));
        assert_eq!(junit[2].name, "blelloch.i32 n=4099");
        assert_eq!((junit[3].classname.as_str(), &junit[3].outcome), ("sanitize.scan.racecheck", &Outcome::Passed));
    }

    #[test]
    fn the_table_names_failing_and_unrun_sizes() {
        let cases = run_cases();
        let text = table(&cases, &[Tool::Memcheck, Tool::Racecheck, Tool::Synccheck]).render();
        assert!(text.contains("FAIL at 513; NOT RUN at 4099"), "{text}");
        assert!(text.contains("clean x1"), "{text}");
        assert!(text.contains("no case"), "{text}");
        let lines = finding_lines(&cases, 10).join("\n");
        assert!(lines.contains("FAIL memcheck scan blelloch.i32 n=513 seed=0x7"), "{lines}");
        assert!(lines.contains("NOT RUN memcheck scan blelloch.i32 n=4099"), "{lines}");
    }
}

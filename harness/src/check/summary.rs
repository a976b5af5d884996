//! The Markdown summary of a check: verdict, what ran, the first failures
//! with their rerun commands, sanitizer lines and timings.

use super::manifest::Manifest;
use super::sanitize::Sanitized;
use super::timed::Timed;
use super::verdict::Decision;
use crate::sweep::case::{failure_line, CaseResult, Verdict};

/// Failure lines listed in the summary (the receipt holds all).
pub const SHOWN: usize = 10;

/// The summary text.
pub fn markdown(
    manifest: &Manifest,
    seed: u64,
    results: &[CaseResult],
    sanitized: Option<&Sanitized>,
    timed: Option<&Timed>,
    decision: &Decision,
) -> String {
    let failed: Vec<&CaseResult> = results.iter().filter(|r| matches!(r.verdict, Verdict::Fail(_))).collect();
    let mut sizes: Vec<usize> = results.iter().map(|r| r.id.n).collect();
    sizes.dedup();
    let mut out = format!(
        "# check: {} ({} {}): {}\n\n- manifest: `{}`\n- module: `{}`\n- contract: {}\n- rule: {}\n- seed: `{seed:#x}`\n\
         - cases: {} ({} passed, {} failed, {} could not run) over {} sizes from {} to {}\n",
        manifest.name,
        manifest.primitive_name(),
        manifest.contract.name,
        decision.outcome.word().to_uppercase(),
        manifest.path.display(),
        manifest.module.path.display(),
        manifest.contract.summary,
        crate::cases::rules::rule_words(manifest.contract),
        results.len() + decision.not_run.iter().filter(|c| c.reason == super::verdict::NEVER_REPORTED).count(),
        decision.passed,
        decision.failed,
        decision.not_run.len(),
        sizes.len(),
        sizes.iter().min().unwrap_or(&0),
        sizes.iter().max().unwrap_or(&0),
    );
    if !failed.is_empty() {
        out.push_str("\n## Failures\n\n```\n");
        for r in failed.iter().take(SHOWN) {
            if let Verdict::Fail(m) = &r.verdict {
                out.push_str(&format!(
                    "{}\n  {}\n",
                    failure_line(&r.id, m),
                    super::rerun_line(&manifest.path, r.id.n, seed, r.id.seed)
                ));
            }
        }
        out.push_str("```\n");
    }
    if !decision.not_run.is_empty() {
        out.push_str("\n## Could not run\n\n```\n");
        for line in super::verdict::not_run_lines(&decision.not_run) {
            out.push_str(&format!("{line}\n"));
        }
        out.push_str("```\n");
    }
    if let Some(s) = sanitized {
        out.push_str(&format!("\n## compute-sanitizer ({})\n\n", if s.clean { "clean" } else { "FINDINGS" }));
        for line in &s.lines {
            out.push_str(&format!("- {line}\n"));
        }
    }
    if let Some(t) = timed {
        out.push_str(&format!(
            "\n## Timing (median us, cold protocol)\n\n| n | yours | ours ({}) | CUB |\n|---:|---:|---:|---:|\n",
            t.ours
        ));
        let us = |v: Option<f64>| v.map(|u| format!("{u:.1}")).unwrap_or_else(|| "-".into());
        for row in &t.rows {
            out.push_str(&format!("| {} | {:.1} | {} | {} |\n", row.n, row.user_us, us(row.ours_us), us(row.cub_us)));
        }
        out.push_str(&format!("\nCUB: {} (`cub_bench`'s own protocol).\n", t.cub));
        if let Some(e) = &t.error {
            out.push_str(&format!("\nTiming failed: {e}\n"));
        }
    }
    out
}

/// The static pass's findings, when there are any.
pub fn static_section(statics: &super::static_pass::StaticReport) -> String {
    if statics.findings.is_empty() {
        return String::new();
    }
    let title = match (statics.failures(), statics.warnings()) {
        (0, 0) => "intended only".to_string(),
        (0, w) => format!("{w} warning(s), no failure"),
        (f, 0) => format!("FINDINGS: {f} failure(s)"),
        (f, w) => format!("FINDINGS: {f} failure(s), {w} warning(s)"),
    };
    let mut out = format!("\n## Divergent collectives ({title})\n\n");
    for line in statics.lines() {
        out.push_str(&format!("- {line}\n"));
    }
    out
}

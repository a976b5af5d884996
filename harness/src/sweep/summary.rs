//! Summaries of sweep results: counts per primitive and variant.

use super::case::{CaseResult, Verdict};
use crate::receipts::Tally;
use crate::table::Table;
use std::collections::BTreeMap;

/// Counts over all results.
pub fn tally(results: &[CaseResult]) -> Tally {
    let mut t = Tally::default();
    for r in results {
        match r.verdict {
            Verdict::Pass => t.passed += 1,
            Verdict::Fail(_) => t.failed += 1,
            Verdict::Skipped { .. } => t.skipped += 1,
        }
    }
    t
}

/// (primitive, variant) -> (tally, largest size, sizes visited).
fn grouped(results: &[CaseResult]) -> BTreeMap<(String, String), (Tally, usize, usize)> {
    let mut groups: BTreeMap<(String, String), (Tally, usize, usize)> = BTreeMap::new();
    for r in results {
        let entry = groups.entry((r.id.primitive.clone(), r.id.variant.clone())).or_default();
        match r.verdict {
            Verdict::Pass => entry.0.passed += 1,
            Verdict::Fail(_) => entry.0.failed += 1,
            Verdict::Skipped { .. } => entry.0.skipped += 1,
        }
        entry.1 = entry.1.max(r.id.n);
        entry.2 += 1;
    }
    groups
}

/// A JSON list of per-variant counts for reports.
pub fn by_variant(results: &[CaseResult]) -> serde_json::Value {
    serde_json::Value::Array(
        grouped(results)
            .into_iter()
            .map(|((p, v), (t, largest, _))| {
                serde_json::json!({"primitive": p, "variant": v, "passed": t.passed, "failed": t.failed, "skipped": t.skipped, "largest_n": largest})
            })
            .collect(),
    )
}

/// Prints a table of counts per primitive and variant under `title`.
pub fn print_table(title: &str, results: &[CaseResult]) {
    if results.is_empty() {
        return;
    }
    let mut table = Table::new(["primitive", "variant", "cases", "passed", "failed", "skipped", "largest n"]);
    for ((p, v), (t, largest, cases)) in grouped(results) {
        table.row([
            p,
            v,
            cases.to_string(),
            t.passed.to_string(),
            if t.failed > 0 { format!("{} FAIL", t.failed) } else { "0".into() },
            t.skipped.to_string(),
            largest.to_string(),
        ]);
    }
    println!("\n{title}\n{}", table.render());
}

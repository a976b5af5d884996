//! The CPU half of the sweep: every hardware-scope model (warp shuffle tree,
//! block reduction layouts, multi-pass reduction, Blelloch, Hillis–Steele,
//! recursive device scan, softmax merge tree, float trees) against the
//! direct definitions, plus the laws of compaction, segmented reduction and
//! histograms — the model's own conformance catalogue, run in parallel.

use super::case::{failure_line, CaseId, CaseResult, Mismatch, Verdict};
use super::SweepPlan;
use crate::progress::Progress;
use model::conformance::{catalogue_with_seed, Check};
use rayon::prelude::*;
use std::time::Instant;

/// The checks `plan` selects.
pub fn checks(plan: &SweepPlan, explicit_sizes: bool) -> Vec<Check> {
    let random = if plan.quick { 2 } else { 6 };
    catalogue_with_seed(plan.seed, random)
        .into_iter()
        .filter(|c| plan.primitives.is_empty() || plan.primitives.iter().any(|p| p.name() == c.primitive))
        .filter(|c| plan.wants_variant(&c.algorithm))
        .filter(|c| !explicit_sizes || plan.sizes.contains(&c.size))
        .collect()
}

/// Runs the selected checks; prints failures (up to `max_shown`) as they come.
pub fn run(plan: &SweepPlan, explicit_sizes: bool, max_shown: usize) -> anyhow::Result<Vec<CaseResult>> {
    let checks = checks(plan, explicit_sizes);
    let progress = Progress::new("model", checks.len() as u64);
    let shown = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<CaseResult> = checks
        .par_iter()
        .map(|check| {
            let started = Instant::now();
            let verdict = match check.run() {
                Ok(_) => Verdict::Pass,
                Err(m) => Verdict::Fail(Mismatch { index: m.index, expected: m.expected, got: m.got, what: m.check }),
            };
            let id = CaseId {
                primitive: check.primitive.clone(),
                variant: check.algorithm.clone(),
                size: check.size.to_string(),
                n: check.size,
                family: check.family.clone(),
                seed: check.seed,
            };
            if let Verdict::Fail(m) = &verdict {
                if shown.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < max_shown {
                    progress.println(&format!("FAIL model {}", failure_line(&id, m)));
                }
            }
            progress.step(&check.describe());
            CaseResult::new(id, verdict, started.elapsed().as_millis() as u64)
        })
        .collect();
    progress.finish();
    Ok(results)
}

//! The receipt gate of `make verify`: without a GPU, it recomputes on the
//! CPU the catalogue of GPU cases that the current sources define (case id,
//! input digest, expected-output digest) and accepts a receipt only if it
//! holds a passing verdict for every one of them, made by the current
//! sources (the verdict hash), with a tally equal to its verdicts.

use super::coverage::{check_sanitize_coverage, check_sweep_coverage, CoverageReport};
use super::Receipt;
use crate::junit;
use crate::verdict_hash::{seed_for, SEEDED};
use std::fmt;
use std::path::Path;

/// The receipts the gate requires, by kind and file name.
pub const GATED: [(&str, &str); 3] =
    [("sweep", "sweep.json"), ("sanitize", "sanitize.json"), ("mutants", "mutants.json")];

/// The command that refreshes the gated receipts on a GPU machine.
pub const REFRESH_COMMAND: &str = "`harness receipts status` names the stale receipts; make build-release here, \
    then on a GPU machine `scripts/gpu_run.sh proof` remakes exactly those, and commit receipts/";

/// One reason the gate fails.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GateProblem {
    /// The receipt file is absent or unreadable.
    Missing {
        /// Receipt kind.
        kind: String,
        /// What went wrong reading it.
        reason: String,
    },
    /// The receipt was made from other sources than the checkout's.
    Stale {
        /// Receipt kind.
        kind: String,
        /// Hash in the receipt.
        receipt_hash: String,
        /// Hash of the current sources.
        current_hash: String,
    },
    /// The receipt does not cover the catalogue, or disagrees with it.
    Incomplete {
        /// Receipt kind.
        kind: String,
        /// What is missing or wrong.
        reason: String,
    },
    /// The receipt records failures.
    Failures {
        /// Receipt kind.
        kind: String,
        /// The failed checks (count and the first few).
        reason: String,
    },
}

impl GateProblem {
    /// The receipt kind it concerns.
    pub fn kind(&self) -> &str {
        match self {
            GateProblem::Missing { kind, .. }
            | GateProblem::Stale { kind, .. }
            | GateProblem::Incomplete { kind, .. }
            | GateProblem::Failures { kind, .. } => kind,
        }
    }
}

impl fmt::Display for GateProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GateProblem::Missing { kind, reason } => write!(f, "receipts/{kind}.json: {reason}"),
            GateProblem::Stale { kind, receipt_hash, current_hash } => write!(
                f,
                "receipts/{kind}.json was made from sources with verdict hash {} but the checkout hashes to {}: \
                 kernels, launch code, catalogues, comparisons or Cargo.lock changed since the last GPU run",
                short(receipt_hash),
                short(current_hash)
            ),
            GateProblem::Incomplete { kind, reason } => write!(f, "receipts/{kind}.json: {reason}"),
            GateProblem::Failures { kind, reason } => write!(f, "receipts/{kind}.json records failures: {reason}"),
        }
    }
}

fn short(hash: &str) -> &str {
    &hash[..hash.len().min(12)]
}

/// What the gate found, receipt by receipt.
#[derive(Debug, Default)]
pub struct GateReport {
    /// Every problem; empty means the gate passes.
    pub problems: Vec<GateProblem>,
    /// What each receipt was checked against (kind, cases required, cases matched).
    pub checked: Vec<(String, CoverageReport)>,
}

/// Checks the gated receipts in `dir` against the sources whose verdict
/// hash is `current_hash`. `only` restricts the check to some kinds (tests).
pub fn check_gate(dir: &Path, current_hash: &str, only: Option<&[&str]>) -> GateReport {
    let mut report = GateReport::default();
    for (kind, file) in GATED {
        if only.is_some_and(|o| !o.contains(&kind)) {
            continue;
        }
        let mut problem = |p: GateProblem| report.problems.push(p);
        let receipt = match Receipt::load(&dir.join(file)) {
            Ok(r) => r,
            Err(e) => {
                problem(GateProblem::Missing { kind: kind.to_string(), reason: format!("{e:#}") });
                continue;
            }
        };
        let incomplete = |reason: String| GateProblem::Incomplete { kind: kind.to_string(), reason };
        if receipt.kind != kind {
            problem(incomplete(format!("holds a '{}' receipt, not a '{kind}' receipt", receipt.kind)));
            continue;
        }
        if receipt.schema != super::SCHEMA {
            problem(incomplete(format!(
                "receipt layout {} is not the current {} (it has no per-case digests)",
                receipt.schema,
                super::SCHEMA
            )));
            continue;
        }
        if receipt.source_hash != current_hash {
            problem(GateProblem::Stale {
                kind: kind.to_string(),
                receipt_hash: receipt.source_hash.clone(),
                current_hash: current_hash.to_string(),
            });
        }
        if receipt.coverage != "full" {
            problem(incomplete(format!("made by a partial run ({}), not a full one", receipt.coverage)));
        }
        let mut coverage = match kind {
            "sweep" => check_sweep_coverage(&receipt),
            "sanitize" => check_sanitize_coverage(&receipt),
            _ => super::coverage::check_mutants_coverage(&receipt),
        };
        super::judge::judge(&receipt, &mut coverage);
        if let Some(why) = wrong_seed(&receipt, current_hash) {
            coverage.incomplete.push(why);
        }
        for reason in &coverage.incomplete {
            problem(incomplete(reason.clone()));
        }
        for reason in &coverage.failures {
            problem(GateProblem::Failures { kind: kind.to_string(), reason: reason.clone() });
        }
        report.checked.push((kind.to_string(), coverage));
    }
    report
}

/// Why the receipt's seed is not the one its sources derive, if it is not.
/// Gated inputs are drawn from [`seed_for`] of the verdict hash, so a
/// receipt re-keyed by hand to other sources names other inputs than
/// theirs.
fn wrong_seed(receipt: &Receipt, current_hash: &str) -> Option<String> {
    let purpose = SEEDED.iter().find(|p| **p == receipt.kind)?;
    let want = seed_for(purpose, current_hash);
    let got = super::coverage::seed_of(receipt.details.get("seed"));
    (got != Some(want)).then(|| {
        format!(
            "details.seed is {} where the sources {} derive {want:#x}: a gated {purpose} draws its inputs from its verdict hash",
            got.map_or("missing".to_string(), |s| format!("{s:#x}")),
            short(current_hash)
        )
    })
}

/// The gate's JUnit report: one test case per gated receipt.
pub fn junit_cases(report: &GateReport) -> Vec<junit::TestCase> {
    GATED
        .iter()
        .map(|(kind, file)| {
            let problems: Vec<String> =
                report.problems.iter().filter(|p| p.kind() == *kind).map(|p| p.to_string()).collect();
            junit::TestCase {
                classname: "receipts".to_string(),
                name: format!("receipts/{file}"),
                seconds: 0.0,
                outcome: if problems.is_empty() {
                    junit::Outcome::Passed
                } else {
                    junit::Outcome::Failed(problems.join("\n"))
                },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::receipts::{Coverage, MachineInfo, Receipt, Tally};

    fn temp_dir(name: &str) -> std::path::PathBuf {
        crate::test_dir::fresh_temp_dir(&format!("gate-{name}"))
    }

    /// A GPU as a receipt describes it.
    fn machine() -> MachineInfo {
        MachineInfo {
            gpu: "NVIDIA H200".into(),
            compute_capability: "9.0".into(),
            sm_count: 132,
            memory_bytes: 1 << 37,
            driver: "580".into(),
            nvrtc: "13.0".into(),
            ..MachineInfo::default()
        }
    }

    /// A mutants receipt (cheap to check: no catalogue to recompute) with
    /// every mutant caught by the sweep, every control clean (one per
    /// distinct build), every check recorded and a tally of them.
    fn mutants_receipt(hash: &str) -> Receipt {
        let build = |m: &kernels::mutant::Mutant, sweep: &str| {
            let checks: Vec<serde_json::Value> = super::super::judge::MUTANT_CHECKS
                .iter()
                .map(|c| serde_json::json!({"check": c, "outcome": if *c == "sweep" { sweep } else { "not_caught" }}))
                .collect();
            serde_json::json!({"id": m.id, "name": m.name, "primitive": m.primitive, "variant": m.variant,
                               "sizes": m.sizes, "checks": checks})
        };
        let gallery = &kernels::mutant::GALLERY;
        let mut controls: Vec<serde_json::Value> = Vec::new();
        for m in gallery.iter() {
            let control = build(m, "not_caught");
            let same = |c: &serde_json::Value| {
                c["primitive"] == control["primitive"]
                    && c["variant"] == control["variant"]
                    && c["sizes"] == control["sizes"]
            };
            if !controls.iter().any(same) {
                controls.push(control);
            }
        }
        let tally = Tally { passed: (gallery.len() + controls.len()) as u64, failed: 0, skipped: 0 };
        let seed = seed_for("mutants", hash);
        let details = serde_json::json!({
            "mutants": gallery.iter().map(|m| build(m, "caught")).collect::<Vec<_>>(),
            "controls": controls,
            "seed": format!("{seed:#x}"),
        });
        let mut r = Receipt::new("mutants", machine(), tally, details).with_coverage(&Coverage::Full);
        r.source_hash = hash.to_string();
        r
    }

    fn gate(dir: &std::path::Path, hash: &str) -> Vec<GateProblem> {
        check_gate(dir, hash, Some(&["mutants"])).problems
    }

    #[test]
    fn a_full_receipt_of_the_current_sources_passes() {
        let dir = temp_dir("ok");
        mutants_receipt("abc").save(&dir.join("mutants.json")).unwrap();
        assert_eq!(gate(&dir, "abc"), vec![]);
    }

    #[test]
    fn a_receipt_of_other_sources_is_stale() {
        let dir = temp_dir("stale");
        mutants_receipt("old").save(&dir.join("mutants.json")).unwrap();
        let problems = gate(&dir, "new");
        assert!(matches!(&problems[0], GateProblem::Stale { kind, .. } if kind == "mutants"), "{problems:?}");
        assert!(problems[0].to_string().contains("the checkout hashes to new"));
        // Its seed is the old sources' too (re-keying source_hash alone cannot help).
        assert!(problems[1..].iter().all(|p| p.to_string().contains("derive")), "{problems:?}");
    }

    #[test]
    fn a_partial_run_or_an_old_layout_is_refused() {
        let dir = temp_dir("partial");
        mutants_receipt("h")
            .with_coverage(&Coverage::Partial("--id 3".into()))
            .save(&dir.join("mutants.json"))
            .unwrap();
        let problems = gate(&dir, "h");
        assert!(
            problems.iter().any(|p| p.to_string().contains("made by a partial run (partial: --id 3)")),
            "{problems:?}"
        );
        let mut old = mutants_receipt("h");
        old.schema = 1;
        old.save(&dir.join("mutants.json")).unwrap();
        assert!(gate(&dir, "h")[0].to_string().contains("receipt layout 1 is not the current 2"));
    }

    #[test]
    fn a_missing_or_mislabelled_receipt_fails() {
        let dir = temp_dir("missing");
        assert!(matches!(&gate(&dir, "h")[..], [GateProblem::Missing { .. }]));
        let mut other = mutants_receipt("h");
        other.kind = "sweep".into();
        other.save(&dir.join("mutants.json")).unwrap();
        assert!(gate(&dir, "h")[0].to_string().contains("holds a 'sweep' receipt"));
    }

    #[test]
    fn a_receipt_re_keyed_by_hand_names_the_seed_of_other_sources() {
        let seeded = |kind: &str, hash: &str| {
            let seed = seed_for(kind, hash);
            let details = serde_json::json!({"seed": format!("{seed:#x}")});
            Receipt::new(kind, MachineInfo::default(), Tally::default(), details)
        };
        for kind in SEEDED {
            assert_eq!(wrong_seed(&seeded(kind, "new"), "new"), None, "{kind}");
            // The sources changed and only source_hash was edited: the seed is the old sources'.
            let why = wrong_seed(&seeded(kind, "old"), "new").expect("a re-keyed receipt");
            assert!(why.contains("draws its inputs from its verdict hash"), "{why}");
            let mut unseeded = seeded(kind, "new");
            unseeded.details = serde_json::json!({});
            assert!(wrong_seed(&unseeded, "new").expect("no seed").contains("details.seed is missing"));
        }
        assert_eq!(wrong_seed(&mutants_receipt("h"), "h"), None, "the mutants run draws its seed from its hash too");
    }

    #[test]
    fn the_junit_report_has_one_case_per_gated_receipt() {
        let dir = temp_dir("junit");
        let report = check_gate(&dir, "h", Some(&["mutants"]));
        let cases = junit_cases(&report);
        assert_eq!(cases.len(), GATED.len());
        assert!(cases
            .iter()
            .any(|c| c.name == "receipts/mutants.json" && matches!(c.outcome, junit::Outcome::Failed(_))));
    }
}

//! The receipt gate of `make verify`: a kernel change lands only with a fresh
//! GPU sweep and sanitizer pass, and no committed receipt may record a failure.

use super::Receipt;
use std::fmt;
use std::path::Path;

/// The receipts the gate requires, by kind and file name.
pub const GATED: [(&str, &str); 2] = [("sweep", "sweep.json"), ("sanitize", "sanitize.json")];

/// The command that refreshes the gated receipts on a GPU machine.
pub const REFRESH_COMMAND: &str = "make build-release here, then on a GPU machine: \
    ./target/release/harness sweep --json receipts/sweep.json && ./target/release/harness sanitize \
    (or `make gpu-receipts`), and commit receipts/";

/// One reason the gate fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateProblem {
    /// The receipt file is absent or unreadable.
    Missing {
        /// Receipt kind.
        kind: String,
        /// What went wrong reading it.
        reason: String,
    },
    /// The receipt was made from other kernel sources.
    Stale {
        /// Receipt kind.
        kind: String,
        /// Hash in the receipt.
        receipt_hash: String,
        /// Hash of the current sources.
        current_hash: String,
    },
    /// The receipt records failures.
    Failures {
        /// Receipt kind.
        kind: String,
        /// Number of failed checks.
        failed: u64,
    },
    /// The receipt records no check at all, or skipped checks.
    Incomplete {
        /// Receipt kind.
        kind: String,
        /// What is missing.
        reason: String,
    },
}

impl fmt::Display for GateProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GateProblem::Missing { kind, reason } => write!(f, "receipts/{kind}.json: {reason}"),
            GateProblem::Stale { kind, receipt_hash, current_hash } => write!(
                f,
                "receipts/{kind}.json was made from kernel sources {} but the current sources hash to {}: \
                 the kernels or their launch code changed since the last GPU run",
                short(receipt_hash),
                short(current_hash)
            ),
            GateProblem::Failures { kind, failed } => {
                write!(f, "receipts/{kind}.json records {failed} failed check(s)")
            }
            GateProblem::Incomplete { kind, reason } => write!(f, "receipts/{kind}.json is incomplete: {reason}"),
        }
    }
}

fn short(hash: &str) -> &str {
    &hash[..hash.len().min(12)]
}

/// Checks the gated receipts in `dir` against `current_hash`.
pub fn check_gate(dir: &Path, current_hash: &str) -> Vec<GateProblem> {
    let mut problems = Vec::new();
    for (kind, file) in GATED {
        let receipt = match Receipt::load(&dir.join(file)) {
            Ok(r) => r,
            Err(e) => {
                problems.push(GateProblem::Missing { kind: kind.to_string(), reason: format!("{e:#}") });
                continue;
            }
        };
        if receipt.kind != kind {
            problems.push(GateProblem::Incomplete {
                kind: kind.to_string(),
                reason: format!("holds a '{}' receipt", receipt.kind),
            });
        }
        if receipt.source_hash != current_hash {
            problems.push(GateProblem::Stale {
                kind: kind.to_string(),
                receipt_hash: receipt.source_hash.clone(),
                current_hash: current_hash.to_string(),
            });
        }
        if receipt.tally.failed > 0 {
            problems.push(GateProblem::Failures { kind: kind.to_string(), failed: receipt.tally.failed });
        }
        if receipt.tally.passed == 0 {
            problems.push(GateProblem::Incomplete { kind: kind.to_string(), reason: "no check passed".into() });
        }
        if receipt.tally.skipped > 0 {
            problems.push(GateProblem::Incomplete {
                kind: kind.to_string(),
                reason: format!("{} check(s) were skipped", receipt.tally.skipped),
            });
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::receipts::{MachineInfo, Tally};

    fn write(dir: &Path, kind: &str, hash: &str, tally: Tally) {
        let mut r = Receipt::new(kind, MachineInfo::default(), tally, serde_json::json!({}));
        r.source_hash = hash.to_string();
        r.save(&dir.join(format!("{kind}.json"))).unwrap();
    }

    fn temp_dir(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("primlab-gate-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    const OK: Tally = Tally { passed: 10, failed: 0, skipped: 0 };

    #[test]
    fn matching_clean_receipts_pass() {
        let dir = temp_dir("ok");
        write(&dir, "sweep", "abc", OK);
        write(&dir, "sanitize", "abc", OK);
        assert_eq!(check_gate(&dir, "abc"), vec![]);
    }

    #[test]
    fn a_changed_kernel_source_fails_the_gate() {
        let dir = temp_dir("stale");
        write(&dir, "sweep", "old", OK);
        write(&dir, "sanitize", "new", OK);
        let problems = check_gate(&dir, "new");
        assert_eq!(problems.len(), 1);
        assert!(matches!(&problems[0], GateProblem::Stale { kind, .. } if kind == "sweep"));
        assert!(problems[0].to_string().contains("current sources hash to new"));
    }

    #[test]
    fn a_recorded_failure_fails_the_gate() {
        let dir = temp_dir("failed");
        write(&dir, "sweep", "h", Tally { passed: 9, failed: 1, skipped: 0 });
        write(&dir, "sanitize", "h", OK);
        assert_eq!(check_gate(&dir, "h"), vec![GateProblem::Failures { kind: "sweep".into(), failed: 1 }]);
    }

    #[test]
    fn missing_or_skipped_receipts_fail_the_gate() {
        let dir = temp_dir("missing");
        write(&dir, "sanitize", "h", Tally { passed: 3, failed: 0, skipped: 2 });
        let problems = check_gate(&dir, "h");
        assert!(matches!(&problems[0], GateProblem::Missing { kind, .. } if kind == "sweep"));
        assert!(matches!(&problems[1], GateProblem::Incomplete { kind, .. } if kind == "sanitize"));
    }
}

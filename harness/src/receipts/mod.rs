//! Receipts: JSON records of GPU runs (sweep, sanitize, mutants, bench),
//! committed under `receipts/` and keyed by the kernel-source hash, and the
//! gate that `make verify` runs on them without a GPU.

pub mod coverage;
mod gate;
pub mod judge;
mod machine;
pub mod output;
pub mod status;
mod time;

pub use gate::{check_gate, junit_cases, REFRESH_COMMAND};
pub use machine::{run_quiet as machine_run_quiet, MachineInfo};
pub use output::{receipt_path, write_atomic, Coverage};
pub use time::utc_timestamp;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Version of the receipt layout: 2 adds `coverage`, per-case digests and
/// the verdict hash (schema 1 receipts were keyed by the kernel sources only).
pub const SCHEMA: u32 = 2;

/// Counts of a run's verdicts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    /// Checks that ran and passed.
    pub passed: u64,
    /// Checks that ran and failed.
    pub failed: u64,
    /// Checks that could not run (each with a reason in the results).
    pub skipped: u64,
}

/// One GPU run's record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Receipt {
    /// "sweep", "sanitize", "mutants" or "bench".
    pub kind: String,
    /// [`SCHEMA`].
    pub schema: u32,
    /// The verdict hash of the binary that ran ([`crate::verdict_hash::VERDICT_HASH`]):
    /// everything that decides what runs on the GPU and how it is judged.
    pub source_hash: String,
    /// "full" when the run covered its command's whole catalogue, else
    /// `"partial: <why>"` (filtered, quick, mutant, no GPU).
    #[serde(default)]
    pub coverage: String,
    /// When the run finished (UTC, RFC 3339).
    pub created_utc: String,
    /// The command line that produced it.
    pub command: String,
    /// GPU, driver, toolkit.
    pub machine: MachineInfo,
    /// Verdict counts.
    pub tally: Tally,
    /// Kind-specific details (cases, tools, timings).
    pub details: serde_json::Value,
}

impl Receipt {
    /// A receipt of `kind` for the current sources, marked as a partial run
    /// until [`Receipt::with_coverage`] says otherwise.
    pub fn new(kind: &str, machine: MachineInfo, tally: Tally, details: serde_json::Value) -> Receipt {
        Receipt {
            kind: kind.to_string(),
            schema: SCHEMA,
            source_hash: crate::verdict_hash::VERDICT_HASH.to_string(),
            coverage: "partial: coverage not stated".to_string(),
            created_utc: utc_timestamp(),
            command: std::env::args().collect::<Vec<_>>().join(" "),
            machine,
            tally,
            details,
        }
    }

    /// The same receipt, marked with its run's coverage.
    pub fn with_coverage(mut self, coverage: &Coverage) -> Receipt {
        self.coverage = match coverage {
            Coverage::Full => "full".to_string(),
            Coverage::Partial(why) => format!("partial: {why}"),
        };
        self
    }

    /// Writes pretty JSON to `path` atomically (temporary file and rename),
    /// creating its directory.
    pub fn save(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self)?;
        write_atomic(path, (text + "\n").as_bytes())
    }

    /// Reads a receipt.
    pub fn load(path: &Path) -> Result<Receipt> {
        let text = crate::bounded::read_text(path, crate::bounded::JSON_LIMIT).map_err(anyhow::Error::msg)?;
        serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
    }
}

/// The repository's `receipts/` directory (relative to the working directory
/// unless `PRIMLAB_RECEIPTS` names another).
pub fn receipts_dir() -> PathBuf {
    std::env::var_os("PRIMLAB_RECEIPTS").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("receipts"))
}

#[cfg(test)]
#[path = "readme_table_tests.rs"]
mod readme_table_tests;

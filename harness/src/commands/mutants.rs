//! `harness mutants`: its options, handed to the planted-bug runner
//! (`crate::mutants`) as plain values.

use clap::Args;
use std::path::PathBuf;

/// Options of `harness mutants`.
#[derive(Debug, Args)]
pub struct MutantsArgs {
    /// Only these mutant ids (repeatable).
    #[arg(long = "id")]
    pub ids: Vec<u32>,
    /// Directory for sanitizer logs of the mutants.
    #[arg(long, default_value = "target/mutant-logs")]
    pub log_dir: PathBuf,
    /// Receipt path (default: receipts/mutants.json for the whole gallery,
    /// receipts/partial/mutants.json for an --id subset).
    #[arg(long)]
    pub receipt: Option<PathBuf>,
    /// Seconds before one check (a sweep or one sanitizer tool) of one build is killed.
    #[arg(long, default_value_t = 120)]
    pub timeout_secs: u64,
    /// Checks (a build's sweep or one sanitizer tool on it) run at once.
    #[arg(long, default_value_t = 4)]
    pub jobs: usize,
    /// Seed of every build's inputs (default: derived from the verdict hash, as the receipt
    /// gate requires; any other seed makes a partial run).
    #[arg(long, value_parser = crate::grammar::parse_seed)]
    pub seed: Option<u64>,
    /// List the gallery and exit (no GPU needed).
    #[arg(long)]
    pub list: bool,
}

/// `harness mutants`.
pub fn run(args: &MutantsArgs) -> anyhow::Result<bool> {
    crate::mutants::run(&crate::mutants::MutantsOptions {
        ids: args.ids.clone(),
        log_dir: args.log_dir.clone(),
        receipt: args.receipt.clone(),
        timeout_secs: args.timeout_secs,
        jobs: args.jobs,
        seed: args.seed,
        list: args.list,
    })
}

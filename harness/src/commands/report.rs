//! `harness report`: its options, handed to the report (`crate::report`).

use clap::Args;
use std::path::PathBuf;

/// Options of `harness report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Benchmark receipt to read.
    #[arg(long, default_value = "receipts/bench.json")]
    pub receipt: PathBuf,
    /// Output directory for report.md and the PNG plots (default: receipts/report when the
    /// receipt is a full run's, receipts/partial/report otherwise; a partial receipt's report
    /// never replaces receipts/report or any full run's report).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// `harness report`.
pub fn run(args: &ReportArgs) -> anyhow::Result<bool> {
    crate::report::run(&args.receipt, args.out.as_deref())
}

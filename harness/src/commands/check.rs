//! `harness check`: its options, handed to the check runner (`crate::check`)
//! as plain values, with `--bench`'s timing composed here (`check_bench`).

use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// What `harness check` puts on stdout.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum CheckFormat {
    /// Lines for a person.
    #[default]
    Text,
    /// The receipt as one JSON document (with --validate-only: the manifest's validation);
    /// every other line goes to stderr.
    Json,
}

/// Options of `harness check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The manifest (TOML) naming the primitive, contract, module and launches.
    #[arg(long)]
    pub manifest: PathBuf,
    /// Sizes, comma separated: 1000,2^20,2^28+1 (default: the sweep's boundary, random and large sizes).
    #[arg(long, value_delimiter = ',', value_name = "N,N,...", value_parser = crate::grammar::parse_size)]
    pub sizes: Vec<usize>,
    /// Seed of the inputs (a fresh one is drawn and printed when omitted).
    #[arg(long, value_parser = crate::grammar::parse_seed)]
    pub seed: Option<u64>,
    /// Stop after this many failing cases (default 1: a check ends at its first failure, printed
    /// at once); `--all` runs every case.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..), conflicts_with = "all")]
    pub maxfail: u64,
    /// Run every case whatever fails (every failure is counted).
    #[arg(long)]
    pub all: bool,
    /// Also the large-offset sizes past 2^31 and 2^32 (where 32-bit indices wrap), and every data
    /// family at every size (by default, past 2^24 each size runs one family, in turn): minutes
    /// of host work and tens of GB of host memory.
    #[arg(long)]
    pub deep: bool,
    /// Also run the cases under compute-sanitizer's four tools at the sanitizer sizes.
    #[arg(long)]
    pub sanitize: bool,
    /// Also time the kernel beside our default variant of the primitive and CUB (when its baseline builds).
    #[arg(long)]
    pub bench: bool,
    /// Where the receipt and summary go (default: check-out/ next to the manifest).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Also write a JUnit XML report (one test case per case) to this path.
    #[arg(long, value_name = "PATH")]
    pub junit: Option<PathBuf>,
    /// Failure lines shown (every failure is counted).
    #[arg(long, default_value_t = 20)]
    pub max_failures_shown: usize,
    /// Validate the manifest (and compile its module) without running anything.
    #[arg(long)]
    pub validate_only: bool,
    /// What stdout carries: text, or the receipt as one JSON document (messages go to stderr).
    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    pub format: CheckFormat,
    /// Internal: the compute-sanitizer child (sanitizer sizes, one family, case markers).
    #[arg(long, hide = true)]
    pub sanitize_child: bool,
    /// Internal: run the cases from this position on as a watchdog worker
    /// (JSON lines on stdout; the parent `harness check` supervises it).
    #[arg(long, hide = true, value_name = "K")]
    pub worker_from: Option<usize>,
}

impl From<&CheckArgs> for crate::check::CheckOptions {
    fn from(args: &CheckArgs) -> Self {
        crate::check::CheckOptions {
            manifest: args.manifest.clone(),
            sizes: args.sizes.clone(),
            seed: args.seed,
            sanitize: args.sanitize,
            out: args.out.clone(),
            junit: args.junit.clone(),
            max_failures_shown: args.max_failures_shown,
            validate_only: args.validate_only,
            sanitize_child: args.sanitize_child,
            worker_from: args.worker_from,
            maxfail: (!args.all).then_some(args.maxfail as usize),
            deep: args.deep,
            json: args.format == CheckFormat::Json,
            worker: crate::check::WorkerProgram::ThisExecutable,
        }
    }
}

/// `harness check`.
pub fn run(args: &CheckArgs) -> anyhow::Result<bool> {
    let timer: &crate::check::UserTimer = &super::check_bench::run;
    crate::check::run(&args.into(), args.bench.then_some(timer))
}

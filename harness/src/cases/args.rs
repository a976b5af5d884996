//! Command-line options of `harness cases`.

use crate::registry::Primitive;
use clap::{Args, Subcommand};
use std::path::PathBuf;

/// `harness cases`: the case catalogue as files, for kernels the harness cannot launch.
#[derive(Debug, Args)]
pub struct CasesArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: CasesAction,
}

/// The `cases` subcommands.
#[derive(Debug, Subcommand)]
pub enum CasesAction {
    /// Write every case's inputs and exact expected output as .npy files plus index.json.
    Export(ExportArgs),
    /// Check the outputs a program wrote next to an export's index.json.
    Verify {
        /// The folder `cases export` wrote.
        dir: PathBuf,
        /// Failure lines shown (every failure is counted).
        #[arg(long, default_value_t = 20)]
        max_failures_shown: usize,
        /// Also write a JUnit XML report (one test case per case) to this path.
        #[arg(long, value_name = "PATH")]
        junit: Option<PathBuf>,
    },
}

/// Options of `harness cases export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The primitive whose cases to write.
    #[arg(long)]
    pub primitive: Primitive,
    /// One contract (every contract of the primitive when omitted).
    #[arg(long)]
    pub contract: Option<String>,
    /// Sizes, comma separated: 1000,2^20,2^28+1 (default: the sweep's boundary and random sizes up to 2^20).
    #[arg(long, value_delimiter = ',', value_name = "N,N,...", value_parser = crate::size_grammar::parse_size)]
    pub sizes: Vec<usize>,
    /// Seed of the inputs (a fresh one is drawn and printed when omitted).
    #[arg(long, value_parser = crate::cli::parse_seed)]
    pub seed: Option<u64>,
    /// The folder to write (created; it must be empty or hold an earlier export).
    pub dir: PathBuf,
}

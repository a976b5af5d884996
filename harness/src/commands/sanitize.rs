//! `harness sanitize`: its options, handed to the sanitizer runner
//! (`crate::sanitize`) as plain values.

use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

/// Options of `harness sanitize`.
#[derive(Debug, Args)]
pub struct SanitizeArgs {
    /// Only these primitives (repeatable).
    #[arg(long = "primitive", value_name = "NAME", value_enum)]
    pub primitives: Vec<crate::registry::Primitive>,
    /// Only these tools (repeatable): memcheck, racecheck, synccheck, initcheck.
    #[arg(long = "tool", value_name = "TOOL")]
    pub tools: Vec<String>,
    /// Sizes instead of 1,31,33,257,513,4099,262145 (1000,2^20,2^28+1 style).
    #[arg(long, value_delimiter = ',', value_name = "N,N,...", value_parser = crate::grammar::parse_size)]
    pub sizes: Vec<usize>,
    /// Seconds before one sanitizer job is killed.
    #[arg(long, default_value_t = 480)]
    pub timeout_secs: u64,
    /// Sanitizer jobs run at once.
    #[arg(long, default_value_t = 4)]
    pub jobs: usize,
    /// Directory for the full logs.
    #[arg(long, default_value = "target/sanitize-logs")]
    pub log_dir: PathBuf,
    /// Seed of every generated input (decimal or 0x-hex; default: derived from the verdict hash,
    /// as the receipt gate requires); recorded in the receipt.
    #[arg(long, value_parser = crate::grammar::parse_seed)]
    pub seed: Option<u64>,
    /// Receipt path (default: receipts/sanitize.json for a run of every primitive, tool and
    /// default size; receipts/partial/sanitize.json otherwise).
    #[arg(long)]
    pub receipt: Option<PathBuf>,
    /// Also write a JUnit XML report: one test case per (case, tool).
    #[arg(long, value_name = "PATH")]
    pub junit: Option<PathBuf>,
    /// Compile a planted bug into the kernels (used by `harness mutants`).
    #[arg(long, default_value_t = 0, hide = true)]
    pub mutant: u32,
}

/// `harness sanitize`.
pub fn run(args: &SanitizeArgs) -> anyhow::Result<bool> {
    let tools = args
        .tools
        .iter()
        .map(|t| {
            crate::sanitize::parse::Tool::from_name(t)
                .ok_or_else(|| anyhow::anyhow!("unknown tool '{t}': use memcheck, racecheck, synccheck or initcheck"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    crate::sanitize::run(&crate::sanitize::SanitizeOptions {
        primitives: args.primitives.iter().map(|p| p.name().to_string()).collect(),
        tools,
        sizes: args.sizes.clone(),
        seed: args.seed.unwrap_or_else(crate::verdict_hash::sanitize_seed),
        timeout: Duration::from_secs(args.timeout_secs),
        jobs: args.jobs,
        log_dir: args.log_dir.clone(),
        receipt: args.receipt.clone(),
        junit: args.junit.clone(),
        mutant: args.mutant,
    })
}

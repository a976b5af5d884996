//! The command line: `harness <command> [options]`.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// primlab harness: proves GPU primitives right against an exact model, race-free under
/// compute-sanitizer, and times them beside CUB and PyTorch.
///
/// Start with `harness sweep`. Without a GPU it checks the model and its hardware-scope
/// algorithms and says that GPU checks were skipped, and why.
#[derive(Debug, Parser)]
#[command(name = "harness", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check every primitive at the sizes where kernels break: the model's hardware-scope
    /// algorithms against the direct definitions (CPU), then every GPU kernel variant against
    /// the model with poisoned outputs (GPU, when one is present). Exits nonzero on any mismatch.
    Sweep(SweepArgs),
    /// Run every kernel variant under compute-sanitizer memcheck, racecheck, synccheck and
    /// initcheck at the boundary sizes; print a variant x tool table; write receipts/sanitize.json.
    Sanitize(SanitizeArgs),
    /// Run the planted-bug gallery through sweep and sanitize and report which check caught each.
    Mutants(MutantsArgs),
    /// Time every primitive beside CUB, PyTorch and bandwidth ceilings; write receipts and a report.
    Bench(BenchCommand),
    /// Regenerate the Markdown report and PNG plots from receipts (no GPU needed).
    Report(ReportArgs),
    /// Write the model's JSON fixtures into fixtures/ (or, with --check, fail if they drifted).
    Fixtures(FixturesArgs),
    /// Inspect the committed GPU receipts.
    Receipts(ReceiptsArgs),
    /// (internal) Run one primitive's GPU cases with case markers, for compute-sanitizer.
    #[command(hide = true)]
    SanitizeChild(SanitizeChildArgs),
    /// Check your own kernel (CUDA C++, PTX or cubin, described by a TOML manifest) against the case catalogue.
    Check(crate::check::args::CheckArgs),
    /// Export the case catalogue as .npy files for other frameworks, and verify their outputs.
    Cases(crate::cases::args::CasesArgs),
}

/// Options of `harness sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Seed of every generated input (when omitted: a fresh one, printed). A receipt for the
    /// gate needs the seed derived from the verdict hash: `harness receipts seed sweep`.
    #[arg(long, value_parser = parse_seed)]
    pub seed: Option<u64>,
    /// Skip the largest sizes (2^24, 2^28) and use fewer random sizes.
    #[arg(long)]
    pub quick: bool,
    /// Only these primitives (repeatable).
    #[arg(long = "primitive", value_name = "NAME", value_enum)]
    pub primitives: Vec<crate::registry::Primitive>,
    /// Only variants whose name contains this text (repeatable); a filter that
    /// matches nothing is an error that lists the valid variants.
    #[arg(long = "variant", value_name = "TEXT")]
    pub variants: Vec<String>,
    /// Only these sizes (comma-separated, each at least 1: 1000,2^20,2^28+1), instead of the
    /// boundary + random + large sizes.
    #[arg(long, value_delimiter = ',', value_name = "N,N,...", value_parser = crate::size_grammar::parse_size)]
    pub sizes: Vec<usize>,
    /// Only the model checks (no GPU even if present).
    #[arg(long, conflicts_with_all = ["gpu_only", "require_gpu"])]
    pub cpu_only: bool,
    /// Only the GPU checks (skip the model self-checks); fails when no GPU is present.
    #[arg(long)]
    pub gpu_only: bool,
    /// Fail (exit nonzero) when the GPU checks cannot run, instead of counting them as skipped.
    #[arg(long)]
    pub require_gpu: bool,
    /// Write a receipt to this path. Only a full GPU run (no filters, no --quick, no
    /// mutant) may write receipts/sweep.json, and no partial run replaces a full receipt.
    /// (`--json` is the old spelling, kept for one release with a warning.)
    #[arg(long = "receipt", alias = "json", value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Write a JUnit XML report (one test case per check) to this path.
    #[arg(long, value_name = "PATH")]
    pub junit: Option<PathBuf>,
    /// Compile a planted bug into the kernels (used by `harness mutants`).
    #[arg(long, default_value_t = 0, hide = true)]
    pub mutant: u32,
    /// Print the GPU cases the options select (no GPU needed) and exit.
    #[arg(long)]
    pub list: bool,
    /// Stop after this many failures are printed (all are still counted).
    #[arg(long, default_value_t = 50)]
    pub max_failures_shown: usize,
    /// Spread the GPU cases over N GPUs (or 'all'), one thread per GPU, and add the sharded
    /// reduce and scan cases over all N through NCCL (needs libnccl.so: scripts/nccl_env.sh).
    #[arg(long, value_name = "N|all", value_parser = crate::multigpu::parse_gpus, conflicts_with = "cpu_only")]
    pub gpus: Option<crate::multigpu::GpuCount>,
}

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
    #[arg(long, value_delimiter = ',', value_name = "N,N,...", value_parser = crate::size_grammar::parse_size)]
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
    #[arg(long, value_parser = parse_seed)]
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
    #[arg(long, value_parser = parse_seed)]
    pub seed: Option<u64>,
    /// List the gallery and exit (no GPU needed).
    #[arg(long)]
    pub list: bool,
}

/// Options of `harness bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// A short run: n = 2^10, 2^16, 2^20, 2^24, 2^28, 3 warm-ups and 20 / 10 timed calls,
    /// baselines with --quick (under 2 minutes on an H200).
    #[arg(long)]
    pub quick: bool,
    /// Only these primitives (repeatable; the ceilings always run).
    #[arg(long = "primitive", value_name = "NAME", value_enum)]
    pub primitives: Vec<crate::registry::Primitive>,
    /// Directory of the CUB/PyTorch baseline programs.
    #[arg(long, default_value = "scripts/baselines")]
    pub baselines: PathBuf,
    /// Skip the CUB and PyTorch baselines (the report says so).
    #[arg(long)]
    pub no_baselines: bool,
    /// Receipt path (default: receipts/bench.json for a full run, receipts/partial/bench.json
    /// for a partial one: --quick, --primitive or --no-baselines; a partial run is refused
    /// receipts/bench.json and never replaces a full run's receipt).
    #[arg(long, value_name = "PATH")]
    pub receipt: Option<PathBuf>,
    /// Run the float atomic crossover study (always part of a full run; with
    /// --quick or --primitive only when asked).
    #[arg(long)]
    pub crossover: bool,
    /// Directory of the Markdown report and PNG plots written after the run (default:
    /// receipts/report for a full run, receipts/partial/report for a partial one).
    /// (`--report` is the old spelling, kept for one release with a warning.)
    #[arg(long = "out", alias = "report", value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// Only these 1-D sizes, comma separated element counts, powers of two up to 2^30 (2^20 or
    /// 1048576). A bare number below 64 is the old spelling, a log2 exponent (20 = 2^20), kept
    /// for one release with a warning. Given alone, the row entries are left out. Makes the run
    /// partial.
    #[arg(long, value_name = "N,N,...", value_delimiter = ',', value_parser = crate::size_grammar::parse_bench_size)]
    pub sizes: Vec<u32>,
    /// Only this variant (repeatable; the ceilings always run). Makes the run partial.
    #[arg(long = "variant", value_name = "TEXT")]
    pub variants: Vec<String>,
    /// Only this row shape of the row primitives, ROWSxCOLS (repeatable). Given alone, the
    /// 1-D entries are left out. Makes the run partial.
    #[arg(long = "shape", value_name = "ROWSxCOLS", value_parser = crate::bench::select::parse_shape)]
    pub shapes: Vec<(usize, usize)>,
    /// Also time every entry back to back (batches of calls between two events, per call =
    /// total / calls), recorded beside the cold per-call timing as timing mode "hot".
    #[arg(long)]
    pub hot: bool,
    /// Adaptive sampling: the fewest timed calls of a record (default 20 when --max-noise or
    /// --max-time is given, capped at the protocol's count).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(usize))]
    pub min_samples: Option<usize>,
    /// Adaptive sampling: stop a record once its median's 95 % interval is within this much of
    /// the median (3% or 0.03: the "±" of the report); at most the protocol's count of calls.
    #[arg(long, value_name = "PERCENT", value_parser = crate::bench::export::parse_fraction)]
    pub max_noise: Option<f64>,
    /// Adaptive sampling: stop a record's timed calls after this many seconds (once the
    /// minimum is taken). Each record says why it stopped.
    #[arg(long, visible_alias = "timeout", value_name = "SECONDS", value_parser = parse_seconds)]
    pub max_time: Option<f64>,
    /// Also write every record as CSV (one row each) to this path.
    #[arg(long, value_name = "PATH")]
    pub csv: Option<PathBuf>,
    /// What stdout carries: text, or one JSON summary of every record (messages go to stderr).
    #[arg(long, value_enum, default_value_t = crate::bench::export::OutputFormat::Text)]
    pub format: crate::bench::export::OutputFormat,
}

/// Parses a positive, finite number of seconds.
pub fn parse_seconds(text: &str) -> Result<f64, String> {
    match text.trim().trim_end_matches('s').parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("'{text}' is not a positive number of seconds")),
    }
}

impl Default for BenchArgs {
    /// The options of a plain `harness bench` (a full run): the `#[arg]` defaults above.
    fn default() -> BenchArgs {
        BenchArgs {
            quick: false,
            primitives: Vec::new(),
            baselines: "scripts/baselines".into(),
            no_baselines: false,
            receipt: None,
            crossover: false,
            report: None,
            sizes: Vec::new(),
            variants: Vec::new(),
            shapes: Vec::new(),
            hot: false,
            min_samples: None,
            max_noise: None,
            max_time: None,
            csv: None,
            format: crate::bench::export::OutputFormat::Text,
        }
    }
}

/// `harness bench`: the single-GPU options, plus `--gpus` (kept out of
/// [`BenchArgs`] so that the single-GPU bench is untouched by it).
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct BenchCommand {
    /// The single-GPU bench's options (`--quick` also shortens `--gpus` runs).
    #[command(flatten)]
    pub args: BenchArgs,
    /// Instead: weak (2^30 int32 per GPU) and strong (2^32 in all) scaling of the sharded
    /// reduce and scan over 1, 2, 4, ... N GPUs through NCCL; writes receipts/multigpu-bench.json.
    #[arg(long, value_name = "N|all", value_parser = crate::multigpu::parse_gpus)]
    pub gpus: Option<crate::multigpu::GpuCount>,
    /// Instead of a run: a tool over bench receipts (no GPU needed).
    #[command(subcommand)]
    pub action: Option<BenchAction>,
}

/// `harness bench <action>`.
#[derive(Debug, Subcommand)]
pub enum BenchAction {
    /// Compare two bench receipts record by record: NEW / OLD median with a 95 % interval, and
    /// faster / slower / within noise. Prints the summary first, then the changed records.
    /// Exit status: 0 no regression, 1 a record slower beyond the threshold and its noise,
    /// 2 bad input.
    Compare {
        /// The earlier receipt.
        old: PathBuf,
        /// The later receipt.
        new: PathBuf,
        /// A record regresses (exit 1) when the whole interval of NEW / OLD, widened by the run
        /// drift, lies above 1 + this (3% or 0.03).
        #[arg(long, value_name = "PERCENT", default_value = "3%", value_parser = crate::bench::export::parse_fraction)]
        threshold: f64,
        /// List every matched record, not only the changed ones.
        #[arg(long)]
        all: bool,
        /// Also write every matched record as CSV (one row each) to this path.
        #[arg(long, value_name = "PATH")]
        csv: Option<PathBuf>,
        /// What stdout carries: text, or one JSON document (summary and every matched record).
        #[arg(long, value_enum, default_value_t = crate::bench::export::OutputFormat::Text)]
        format: crate::bench::export::OutputFormat,
    },
}

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

/// Options of `harness fixtures`.
#[derive(Debug, Args)]
pub struct FixturesArgs {
    /// Compare with the committed fixtures instead of writing; exit nonzero on drift.
    #[arg(long)]
    pub check: bool,
    /// Fixture directory.
    #[arg(long, default_value = "fixtures")]
    pub dir: PathBuf,
}

/// Options of `harness receipts`.
#[derive(Debug, Args)]
pub struct ReceiptsArgs {
    /// What to do with them.
    #[command(subcommand)]
    pub action: ReceiptsAction,
}

/// Receipt actions.
#[derive(Debug, Subcommand)]
pub enum ReceiptsAction {
    /// Fail unless receipts/sweep.json, sanitize.json and mutants.json were made by full GPU
    /// runs of the current sources and hold a passing verdict for every case of the catalogue
    /// the sources define (recomputed here on the CPU: ids, input and expected-output digests).
    /// The gate `make verify` runs.
    Check {
        /// Receipt directory.
        #[arg(long, default_value = "receipts")]
        dir: PathBuf,
        /// Workspace root whose sources the receipts must match.
        #[arg(long, default_value = ".")]
        root: PathBuf,
        /// Write a JUnit XML report (one test case per gated receipt) to this path.
        #[arg(long, value_name = "PATH")]
        junit: Option<PathBuf>,
    },
    /// Say which gated receipts (sweep, sanitize, mutants) the checkout's sources made stale,
    /// from the receipts alone (no GPU, no catalogue recomputed), and the command that remakes
    /// exactly those. Exit 0: nothing is stale; 1: something is; 2: it cannot tell (no sources
    /// at --root, or this binary was built from other sources than the checkout's).
    Status {
        /// Receipt directory.
        #[arg(long, default_value = "receipts")]
        dir: PathBuf,
        /// Workspace root whose sources the receipts must match.
        #[arg(long, default_value = ".")]
        root: PathBuf,
        /// Print only the stale kinds, one per line (for scripts).
        #[arg(long)]
        names: bool,
    },
    /// Print the seed a gated run of this binary's sources must use (`sweep`, `sanitize` or
    /// `mutants`): derived from the verdict hash, so that a receipt re-keyed to other sources
    /// names the wrong inputs. Each of the three uses it by default.
    Seed {
        /// The run: sweep, sanitize or mutants.
        #[arg(value_parser = ["sweep", "sanitize", "mutants"])]
        purpose: String,
    },
    /// Print the verdict hash of the workspace (and of this binary's build), and the files it covers.
    Hash {
        /// Workspace root.
        #[arg(long, default_value = ".")]
        root: PathBuf,
        /// Also list every file the hash covers.
        #[arg(long)]
        files: bool,
    },
}

/// Options of the internal `sanitize-child`.
#[derive(Debug, Args)]
pub struct SanitizeChildArgs {
    /// The primitive whose cases to run.
    #[arg(long)]
    pub primitive: String,
    /// Sizes to run.
    #[arg(long, value_delimiter = ',', value_parser = crate::size_grammar::parse_size)]
    pub sizes: Vec<usize>,
    /// Only variants whose name contains this text (repeatable).
    #[arg(long = "variant")]
    pub variants: Vec<String>,
    /// Planted bug id.
    #[arg(long, default_value_t = 0)]
    pub mutant: u32,
    /// Seed.
    #[arg(long, default_value_t = crate::sanitize::DEFAULT_SEED, value_parser = parse_seed)]
    pub seed: u64,
}

/// Flags renamed so that every command spells them alike: (command, old
/// spelling, new spelling). The old one is a clap alias for one release;
/// [`old_spelling_warnings`] says so on stderr.
pub const RENAMED_FLAGS: [(&str, &str, &str); 2] = [("sweep", "--json", "--receipt"), ("bench", "--report", "--out")];

/// The warnings for old spellings in a command line (`args[0]` is the
/// program): a flag of [`RENAMED_FLAGS`] given to its command, alone or as
/// `--flag=value`, before any `--`. None for the harness's own internal runs
/// (the hidden `--mutant` flag: `harness mutants` starts its sweeps with the
/// old `--json`, and their logs are not read by a person).
pub fn old_spelling_warnings(args: &[String]) -> Vec<String> {
    let Some(command) = args.iter().skip(1).find(|a| !a.starts_with('-')) else { return Vec::new() };
    if args.iter().any(|a| a == "--mutant" || a.starts_with("--mutant=")) {
        return Vec::new();
    }
    let mut warnings = Vec::new();
    for arg in args.iter().skip(1).take_while(|a| a.as_str() != "--") {
        for (cmd, old, new) in RENAMED_FLAGS {
            let named = arg == old || arg.strip_prefix(old).is_some_and(|rest| rest.starts_with('='));
            if command == cmd && named {
                warnings.push(format!(
                    "warning: `harness {cmd} {old}` is the old spelling of {new}; it keeps working for one release"
                ));
            }
        }
    }
    warnings
}

/// Accepts decimal or 0x-prefixed hexadecimal seeds.
pub fn parse_seed(text: &str) -> Result<u64, String> {
    let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    parsed.map_err(|_| format!("'{text}' is not a seed: give a decimal or 0x-hex 64-bit number"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn bench_takes_axes_hot_and_a_compare_subcommand() {
        let parsed = Cli::try_parse_from(["harness", "bench", "--sizes", "20,2^24", "--shape", "4096x1024", "--hot"]);
        let Command::Bench(b) = parsed.unwrap().command else { panic!("not bench") };
        assert_eq!((b.args.sizes, b.args.shapes, b.args.hot), (vec![20, 24], vec![(4096, 1024)], true));
        assert!(b.action.is_none());
        let Command::Bench(c) =
            Cli::try_parse_from(["harness", "bench", "compare", "a.json", "b.json"]).unwrap().command
        else {
            panic!("not bench")
        };
        let Some(BenchAction::Compare { old, new, threshold, all, .. }) = c.action else { panic!("not compare") };
        assert_eq!((old, new), (PathBuf::from("a.json"), PathBuf::from("b.json")));
        assert_eq!((threshold, all), (0.03, false), "the default gate is 3 %");
        let parsed = Cli::try_parse_from(["harness", "bench", "compare", "a", "b", "--threshold", "5%", "--all"]);
        let Command::Bench(c) = parsed.unwrap().command else { panic!("not bench") };
        let Some(BenchAction::Compare { threshold, all, .. }) = c.action else { panic!("not compare") };
        assert_eq!((threshold, all), (0.05, true));
        assert!(Cli::try_parse_from(["harness", "bench", "compare", "a", "b", "--threshold", "5"]).is_err());
        let parsed =
            Cli::try_parse_from(["harness", "bench", "--max-noise", "1%", "--max-time", "2", "--min-samples", "8"]);
        let Command::Bench(b) = parsed.unwrap().command else { panic!("not bench") };
        assert_eq!((b.args.max_noise, b.args.max_time, b.args.min_samples), (Some(0.01), Some(2.0), Some(8)));
        let parsed = Cli::try_parse_from(["harness", "bench", "--timeout", "3", "--format", "csv"]);
        let Command::Bench(b) = parsed.unwrap().command else { panic!("not bench") };
        assert_eq!((b.args.max_time, b.args.format), (Some(3.0), crate::bench::export::OutputFormat::Csv));
        assert!(Cli::try_parse_from(["harness", "bench", "--max-time", "0"]).is_err());
        assert!(Cli::try_parse_from(["harness", "bench", "--sizes", "0"]).is_err());
    }

    #[test]
    fn every_command_reads_sizes_in_the_same_grammar() {
        let want = vec![1000, 1 << 20, (1 << 28) + 1];
        let Command::Sweep(a) =
            Cli::try_parse_from(["harness", "sweep", "--sizes", "1000,2^20,2^28+1"]).unwrap().command
        else {
            panic!("not a sweep")
        };
        assert_eq!(a.sizes, want);
        let Command::Sanitize(a) =
            Cli::try_parse_from(["harness", "sanitize", "--sizes", "1000,2^20,2^28+1"]).unwrap().command
        else {
            panic!("not sanitize")
        };
        assert_eq!(a.sizes, want);
        let Command::Check(a) =
            Cli::try_parse_from(["harness", "check", "--manifest", "m.toml", "--sizes", "1000,2^20,2^28+1"])
                .unwrap()
                .command
        else {
            panic!("not check")
        };
        assert_eq!(a.sizes, want);
        let Command::Cases(a) = Cli::try_parse_from([
            "harness",
            "cases",
            "export",
            "--primitive",
            "scan",
            "--sizes",
            "1000,2^20,2^28+1",
            "d",
        ])
        .unwrap()
        .command
        else {
            panic!("not cases")
        };
        let crate::cases::args::CasesAction::Export(e) = a.action else { panic!("not export") };
        assert_eq!(e.sizes, want);
        let Command::Bench(b) =
            Cli::try_parse_from(["harness", "bench", "--sizes", "2^20,1048576,2^10+2^10"]).unwrap().command
        else {
            panic!("not bench")
        };
        assert_eq!(b.args.sizes, vec![20, 20, 11], "bench keeps log2 exponents inside");
        let err = Cli::try_parse_from(["harness", "sweep", "--sizes", "2^20+x"]).unwrap_err().to_string();
        assert!(err.contains("'2^20+x' is not a size"), "{err}");
    }

    #[test]
    fn old_spellings_still_parse_and_are_warned_about() {
        let Command::Sweep(a) = Cli::try_parse_from(["harness", "sweep", "--json", "r.json"]).unwrap().command else {
            panic!("not a sweep")
        };
        assert_eq!(a.json, Some(PathBuf::from("r.json")));
        let Command::Sweep(a) = Cli::try_parse_from(["harness", "sweep", "--receipt", "r.json"]).unwrap().command
        else {
            panic!("not a sweep")
        };
        assert_eq!(a.json, Some(PathBuf::from("r.json")));
        let Command::Bench(b) = Cli::try_parse_from(["harness", "bench", "--report=dir"]).unwrap().command else {
            panic!("not bench")
        };
        assert_eq!(b.args.report, Some(PathBuf::from("dir")));
        let Command::Bench(b) = Cli::try_parse_from(["harness", "bench", "--out", "dir"]).unwrap().command else {
            panic!("not bench")
        };
        assert_eq!(b.args.report, Some(PathBuf::from("dir")));
        let line = |args: &[&str]| old_spelling_warnings(&args.iter().map(|a| a.to_string()).collect::<Vec<_>>());
        let warned = line(&["harness", "sweep", "--json", "r.json", "--quick"]);
        assert_eq!(warned.len(), 1);
        assert!(warned[0].contains("`harness sweep --json` is the old spelling of --receipt"), "{warned:?}");
        assert!(line(&["harness", "bench", "--report=d"])[0].contains("of --out"));
        assert!(line(&["harness", "sweep", "--receipt", "r.json"]).is_empty());
        assert!(line(&["harness", "report", "--out", "d"]).is_empty());
        assert!(line(&["harness", "bench", "--reporter"]).is_empty());
        assert!(line(&["harness", "sweep", "--", "--json"]).is_empty());
        assert!(line(&["harness", "sweep", "--mutant", "3", "--json", "r.json"]).is_empty(), "internal runs");
    }

    #[test]
    fn check_and_cases_verify_write_junit() {
        let Command::Check(a) =
            Cli::try_parse_from(["harness", "check", "--manifest", "m.toml", "--junit", "j.xml"]).unwrap().command
        else {
            panic!("not check")
        };
        assert_eq!(a.junit, Some(PathBuf::from("j.xml")));
        let Command::Cases(c) =
            Cli::try_parse_from(["harness", "cases", "verify", "d", "--junit", "j.xml"]).unwrap().command
        else {
            panic!("not cases")
        };
        let crate::cases::args::CasesAction::Verify { junit, .. } = c.action else { panic!("not verify") };
        assert_eq!(junit, Some(PathBuf::from("j.xml")));
    }

    #[test]
    fn seeds_parse_in_decimal_and_hex() {
        assert_eq!(parse_seed("42"), Ok(42));
        assert_eq!(parse_seed("0x2a"), Ok(42));
        assert!(parse_seed("forty-two").unwrap_err().contains("not a seed"));
    }

    #[test]
    fn gpus_parses_and_rejects_zero() {
        use crate::multigpu::GpuCount;
        let Command::Sweep(a) = Cli::try_parse_from(["harness", "sweep", "--gpus", "2"]).unwrap().command else {
            panic!("not a sweep")
        };
        assert_eq!(a.gpus, Some(GpuCount::Exactly(2)));
        let Command::Bench(b) = Cli::try_parse_from(["harness", "bench", "--gpus", "all", "--quick"]).unwrap().command
        else {
            panic!("not a bench")
        };
        assert_eq!(b.gpus, Some(GpuCount::All));
        assert!(b.args.quick);
        let Command::Bench(b) = Cli::try_parse_from(["harness", "bench", "--quick"]).unwrap().command else {
            panic!("not a bench")
        };
        assert_eq!(b.gpus, None);
        let err = Cli::try_parse_from(["harness", "sweep", "--gpus", "0"]).unwrap_err().to_string();
        assert!(err.contains("--gpus 0 asks for no GPU"), "{err}");
        let err = Cli::try_parse_from(["harness", "bench", "--gpus", "many"]).unwrap_err().to_string();
        assert!(err.contains("not a GPU count"), "{err}");
        assert!(Cli::try_parse_from(["harness", "sweep", "--gpus", "1", "--cpu-only"]).is_err());
    }

    #[test]
    fn unknown_arguments_are_errors_not_panics() {
        let err = Cli::try_parse_from(["harness", "sweep", "--bogus"]).unwrap_err();
        assert!(err.to_string().contains("--bogus"));
        let err = Cli::try_parse_from(["harness", "sweep", "--seed", "x"]).unwrap_err();
        assert!(err.to_string().contains("not a seed"));
    }
}

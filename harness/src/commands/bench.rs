//! `harness bench`: its options and its actions (a run, the multi-GPU
//! scaling study, `compare`), handed to the bench library as plain values.

use crate::bench::BenchOptions;
use clap::{Args, Subcommand};
use std::path::PathBuf;

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
    #[arg(long, value_name = "N,N,...", value_delimiter = ',', value_parser = parse_bench_size)]
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
    /// the median (3% or 0.03: the "±" of the report); at most twice the protocol's count of calls.
    #[arg(long, value_name = "PERCENT", value_parser = crate::bench::export::parse_fraction)]
    pub max_noise: Option<f64>,
    /// Adaptive sampling: stop a record's timed calls after this many seconds (once the
    /// minimum is taken). Each record says why it stopped.
    #[arg(long, visible_alias = "timeout", value_name = "SECONDS", value_parser = crate::grammar::parse_seconds)]
    pub max_time: Option<f64>,
    /// Time the protocol's fixed count per record (200 calls below 2^24 elements, 30 from
    /// there; --quick 20 / 10) instead of sampling adaptively, a full run's default (a ±0.5 %
    /// noise target and 2 s per record, up to twice the fixed count).
    #[arg(long, conflicts_with_all = ["min_samples", "max_noise", "max_time"])]
    pub fixed_count: bool,
    /// Also write every record as CSV (one row each) to this path.
    #[arg(long, value_name = "PATH")]
    pub csv: Option<PathBuf>,
    /// What stdout carries: text, or one JSON summary of every record (messages go to stderr).
    #[arg(long, value_enum, default_value_t = crate::bench::export::OutputFormat::Text)]
    pub format: crate::bench::export::OutputFormat,
}

impl From<&BenchArgs> for BenchOptions {
    fn from(args: &BenchArgs) -> BenchOptions {
        BenchOptions {
            quick: args.quick,
            primitives: args.primitives.clone(),
            baselines: args.baselines.clone(),
            no_baselines: args.no_baselines,
            receipt: args.receipt.clone(),
            crossover: args.crossover,
            report: args.report.clone(),
            sizes: args.sizes.clone(),
            variants: args.variants.clone(),
            shapes: args.shapes.clone(),
            hot: args.hot,
            min_samples: args.min_samples,
            max_noise: args.max_noise,
            max_time: args.max_time,
            fixed_count: args.fixed_count,
            csv: args.csv.clone(),
            format: args.format,
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
    /// Time the selection in K whole processes of this binary, one after another, and write one
    /// receipt holding every process's records, each tagged with its process (at least 2;
    /// `bench compare` judges only receipts of several processes, on the spread between them).
    #[arg(long, value_name = "K", conflicts_with = "gpus")]
    pub processes: Option<usize>,
    /// Print which primitives' sources this build was built from (JSON: a digest per primitive
    /// and one of the shared code) and exit; `bench ab` asks both builds for it.
    #[arg(long, hide = true, conflicts_with_all = ["gpus", "processes"])]
    pub digests: bool,
    /// Instead of a run: a tool over bench receipts (no GPU needed).
    #[command(subcommand)]
    pub action: Option<BenchAction>,
}

/// `harness bench <action>`.
#[derive(Debug, Subcommand)]
pub enum BenchAction {
    /// Compare two bench receipts record by record: NEW / OLD median with a 95 % interval, each
    /// record of ours judged against the references of the same runs (CUB, PyTorch, the
    /// ceilings), and faster / slower / within noise. Prints the summary first, then the
    /// changed records. Exit status: 0 no regression, 1 a record slower beyond the threshold
    /// and its noise, 2 bad input or a record that could not be judged.
    Compare {
        /// The earlier receipt.
        old: PathBuf,
        /// The later receipt.
        new: PathBuf,
        /// A record regresses (exit 1) when the whole judged interval of its NEW / OLD lies
        /// above 1 + this (3% or 0.03).
        #[arg(long, value_name = "PERCENT", default_value = "3%", value_parser = crate::bench::export::parse_fraction)]
        threshold: f64,
        /// A reference whose own NEW / OLD lies beyond this factor (or its inverse) is not used;
        /// a record of ours left without one is UNJUDGED (exit 2).
        #[arg(long, value_name = "FACTOR", default_value_t = crate::bench::compare_references::DEFAULT_LIMIT)]
        reference_limit: f64,
        /// Judge the plain NEW / OLD, widened by the copy ceiling's drift, instead of against
        /// the references (two runs of one machine minutes apart, or receipts without them).
        #[arg(long)]
        raw: bool,
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
    /// The merge gate without an earlier receipt: two harness builds time the same selection
    /// in interleaved rounds on this GPU, and each record of ours is judged on its rounds'
    /// NEW / OLD. Without --primitive it times only the primitives whose sources differ between
    /// the builds plus one unchanged control (everything when shared code differs or a build
    /// cannot say). Exit status: 0 no regression, 1 a regression, 2 a build that could not run.
    Ab(AbArgs),
}

/// Options of `harness bench ab`.
#[derive(Debug, Args)]
pub struct AbArgs {
    /// The old build's harness binary.
    pub old: PathBuf,
    /// The new build's harness binary.
    pub new: PathBuf,
    /// Interleaved rounds, each timing both builds once (OLD first on odd rounds, NEW first
    /// on even ones); the paired interval needs at least 2.
    #[arg(long, default_value_t = 6)]
    pub rounds: usize,
    /// Stop after this many rounds (at least 2) once every record of ours is decided: its
    /// interval wholly above 1 + threshold (a regression) or wholly below it (none).
    /// Default: 3 (at most --rounds); --min-rounds equal to --rounds runs every round.
    #[arg(long, value_name = "N")]
    pub min_rounds: Option<usize>,
    /// A record regresses (exit 1) when the whole 95 % interval of its rounds' NEW / OLD lies
    /// above 1 + this (3% or 0.03).
    #[arg(long, value_name = "PERCENT", default_value = "3%", value_parser = crate::bench::export::parse_fraction)]
    pub threshold: f64,
    /// The folder of both builds' receipts and logs, round by round (created; new or empty;
    /// default receipts/partial/ab/run-UNIXSECONDS).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// List every record, not only the changed ones.
    #[arg(long)]
    pub all: bool,
    /// What both builds time, after `--`: bench options such as `--primitive scan --quick`
    /// (not --receipt, --out, --format, --csv, --gpus or --no-baselines: ab sets them).
    #[arg(last = true, value_name = "BENCH OPTIONS")]
    pub bench_args: Vec<String>,
}

/// `harness bench`, its `--gpus` study, its `compare` or its `ab`.
pub fn run(command: BenchCommand) -> anyhow::Result<bool> {
    if let (None, Some(processes)) = (&command.action, command.processes) {
        // The same binary again, once per process, with these options (from `bench` on).
        let args: Vec<String> = std::env::args().skip(1).collect();
        return crate::bench::processes::run(processes, &args, command.args.receipt.as_deref());
    }
    match (command.action, command.gpus) {
        (Some(BenchAction::Compare { old, new, threshold, reference_limit, raw, all, csv, format }), _) => {
            use crate::bench::compare::{Basis, Options};
            let basis = if raw { Basis::Raw } else { Basis::References { limit: reference_limit } };
            crate::bench::compare::run(&old, &new, &Options { threshold, basis, all, csv, format })
        }
        (Some(BenchAction::Ab(ab)), _) => crate::bench::ab::run(&crate::bench::ab::AbOptions {
            old: ab.old,
            new: ab.new,
            rounds: ab.rounds,
            min_rounds: ab.min_rounds.unwrap_or_else(|| crate::bench::ab::default_min_rounds(ab.rounds)),
            threshold: ab.threshold,
            out: ab.out.unwrap_or_else(|| {
                let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
                crate::receipts::receipts_dir().join("partial/ab").join(format!("run-{}", now.as_secs()))
            }),
            all: ab.all,
            bench_args: ab.bench_args,
        }),
        (None, _) if command.digests => {
            let digests = crate::bench::digests::for_this_build().map_err(anyhow::Error::msg)?;
            println!("{}", serde_json::to_string_pretty(&digests)?);
            Ok(true)
        }
        (None, Some(gpus)) => {
            let outcome = crate::multigpu::scaling_bench::run(&BenchOptions::from(&command.args), gpus)?;
            crate::multigpu::scaling_report::print_report(&outcome.configs, &outcome.analysis);
            Ok(outcome.passed)
        }
        (None, None) => {
            let outcome = crate::bench::run(&BenchOptions::from(&command.args))?;
            crate::bench::report::write_after_run(&outcome);
            Ok(outcome.passed)
        }
    }
}

/// Bare numbers below this were log2 exponents in `bench --sizes`.
pub const BENCH_OLD_EXPONENT_BELOW: u64 = 64;

/// One `bench --sizes` entry as the log2 exponent bench works in, and the
/// warning to print when it was written the old way (a bare exponent).
/// A size in the common grammar must be a power of two (the baselines take
/// log2 sizes); its range is checked by bench's own parser.
pub fn bench_size(text: &str) -> Result<(u32, Option<String>), String> {
    let trimmed = text.trim();
    let bare = trimmed.bytes().all(|b| b.is_ascii_digit()) && !trimmed.is_empty();
    if bare && trimmed.parse::<u64>().is_ok_and(|v| v < BENCH_OLD_EXPONENT_BELOW) {
        let k = crate::bench::select::parse_size(trimmed)?;
        let warning = format!(
            "warning: bench --sizes {trimmed} reads {trimmed} as a log2 exponent (2^{trimmed} elements), the old \
             spelling kept for one release; write 2^{trimmed}: sizes are element counts everywhere"
        );
        return Ok((k, Some(warning)));
    }
    let n = crate::grammar::parse_size(text)?;
    if !n.is_power_of_two() {
        return Err(format!("'{text}' = {n} is not a power of two (bench times powers of two: write 2^K)"));
    }
    Ok((crate::bench::select::parse_size(&format!("2^{}", n.trailing_zeros()))?, None))
}

/// `bench --sizes` value parser: [`bench_size`], its warning printed.
pub fn parse_bench_size(text: &str) -> Result<u32, String> {
    let (k, warning) = bench_size(text)?;
    if let Some(w) = warning {
        eprintln!("{w}");
    }
    Ok(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_reads_element_counts_and_warns_on_the_old_exponents() {
        assert_eq!(bench_size("2^20"), Ok((20, None)));
        assert_eq!(bench_size("1048576"), Ok((20, None)));
        assert_eq!(bench_size("2^10+2^10"), Ok((11, None)));
        let (k, warning) = bench_size("20").expect("the old spelling");
        assert_eq!(k, 20);
        assert!(warning.expect("a warning").contains("write 2^20"));
        assert!(bench_size("1000").unwrap_err().contains("not a power of two"));
        assert!(bench_size("2^31").unwrap_err().contains("above 2^30"), "{:?}", bench_size("2^31"));
        assert!(bench_size("0").is_err());
    }
}

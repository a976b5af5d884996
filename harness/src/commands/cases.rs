//! `harness cases`: its options and subcommands, handed to the cases
//! library (`crate::cases`) as plain values.

use crate::cases::typed::rows::Named;
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
        /// Only these cases (their names in index.json, e.g. c00012); every case when omitted.
        /// The others' outputs are not read, so a program may write just these.
        #[arg(long = "case", value_delimiter = ',', value_name = "CASE,CASE,...")]
        cases: Vec<String>,
        /// Also write a JUnit XML report (one test case per case) to this path.
        #[arg(long, value_name = "PATH")]
        junit: Option<PathBuf>,
        /// Print one JSON document on stdout (the counts and every checked case with its
        /// verdict, failure line, mismatch summary and rerun line); the counts line goes to stderr.
        #[arg(long)]
        json: bool,
    },
    /// Print, as JSON, what `check` does beyond one run (the two poisons and the schedule
    /// perturbation) for a runner that calls the user's code itself.
    Defences(DefencesArgs),
}

/// Options of `harness cases defences`.
#[derive(Debug, Args)]
pub struct DefencesArgs {
    /// The device's virtual architecture (compute_90) to compile the holding kernel for;
    /// without it the JSON has no perturbation and says why.
    #[arg(long)]
    pub arch: Option<String>,
    /// The device's SM count (each case's share of SMs held depends on it).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub sm_count: u32,
    /// How many cases get a perturbation (case i of an export gets entry i).
    #[arg(long, default_value_t = 0)]
    pub cases: usize,
}

/// Options of `harness cases export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The primitive whose cases to write: a registry primitive, or a row kind (layernorm,
    /// rmsnorm, cross_entropy: its contracts ride on softmax's row blocks).
    #[arg(long, value_parser = primitive_names())]
    pub primitive: Named,
    /// One contract (every contract of the primitive when omitted; a row kind's: its name,
    /// e.g. layernorm.bf16.bf16.affine, or its parts with --dtype-in).
    #[arg(long)]
    pub contract: Option<String>,
    /// Check the contract as this framework states it (torch, numpy): its named rule over
    /// the contract where one is the framework's, else the contract itself (said on stderr).
    #[arg(long)]
    pub framework: Option<String>,
    /// A typed contract's operator: sum, min, max (with --dtype-in; --contract then names
    /// its kind: inclusive or exclusive for scan, argmax or argmin for arg_reduce).
    #[arg(long)]
    pub op: Option<String>,
    /// A typed contract's input type: int32, int64, bfloat16, float32, float64.
    #[arg(long)]
    pub dtype_in: Option<String>,
    /// A typed contract's output type (default: the input's; int64 for arg_reduce).
    #[arg(long)]
    pub dtype_out: Option<String>,
    /// A typed float sum's accumulator (default: the widest of input, output and float32).
    #[arg(long)]
    pub accumulator: Option<String>,
    /// A typed float sum's relative tolerance (instead of the order-free bound).
    #[arg(long)]
    pub rtol: Option<f64>,
    /// A typed float sum's absolute tolerance.
    #[arg(long)]
    pub atol: Option<f64>,
    /// A typed float sum's tolerance in units in the last place of the output type.
    #[arg(long)]
    pub ulp: Option<u32>,
    /// A typed float arg reduction's NaN rule: nan_first or nan_ignored (default: inputs finite);
    /// a float min's or max's: nan_propagate or nan_ignored (default: no input holds NaN).
    #[arg(long)]
    pub nan_rule: Option<String>,
    /// Sizes, comma separated: 1000,2^20,2^28+1 (default: the sweep's boundary and random sizes up to 2^20).
    #[arg(long, value_delimiter = ',', value_name = "N,N,...", value_parser = crate::grammar::parse_size)]
    pub sizes: Vec<usize>,
    /// Seed of the inputs (a fresh one is drawn and printed when omitted).
    #[arg(long, value_parser = crate::grammar::parse_seed)]
    pub seed: Option<u64>,
    /// Also the large sizes a default `check` visits: 2^24, 2^28 and 2^28+1 (files of
    /// gigabytes; not with --sizes).
    #[arg(long, conflicts_with = "sizes")]
    pub deep: bool,
    /// The folder to write (created; it must be empty or hold an earlier export).
    pub dir: PathBuf,
}

/// `--primitive`: a registry primitive or a row kind, its possible values listed by clap.
fn primitive_names() -> impl clap::builder::TypedValueParser<Value = Named> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(Named::all()).try_map(|name| name.parse::<Named>())
}

impl ExportArgs {
    /// The export's options; a row kind's contract must be of that kind.
    fn options(&self) -> anyhow::Result<crate::cases::export::ExportOptions> {
        let args = self;
        Ok(crate::cases::export::ExportOptions {
            primitive: args.primitive.primitive,
            contract: args.primitive.contract(args.contract.as_deref()).map_err(anyhow::Error::msg)?,
            request: args.request(),
            framework: args.framework.clone(),
            sizes: args.sizes.clone(),
            seed: args.seed,
            deep: args.deep,
            dir: args.dir.clone(),
        })
    }

    /// The typed contract's parts given, if any.
    fn request(&self) -> Option<crate::cases::typed::Request> {
        crate::cases::typed::Request {
            kind: None,
            op: self.op.clone(),
            dtype_in: self.dtype_in.clone(),
            dtype_out: self.dtype_out.clone(),
            accumulator: self.accumulator.clone(),
            rtol: self.rtol,
            atol: self.atol,
            ulp: self.ulp,
            nan: self.nan_rule.clone(),
        }
        .given()
    }
}

/// Runs `harness cases`.
pub fn run(args: &CasesArgs) -> anyhow::Result<bool> {
    match &args.action {
        CasesAction::Export(export) => crate::cases::export::run(&export.options()?),
        CasesAction::Verify { dir, max_failures_shown, cases, junit, json } => {
            crate::cases::verify::run(dir, *max_failures_shown, cases, junit.as_deref(), *json)
        }
        CasesAction::Defences(d) => {
            let defences = crate::check::defences::defences(d.arch.as_deref(), d.sm_count, d.cases);
            println!("{}", serde_json::to_string_pretty(&defences)?);
            Ok(true)
        }
    }
}

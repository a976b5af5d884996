//! `harness check`: the registry's case catalogue for one primitive and
//! contract (the sweep's sizes, data families and seeds, poisoned outputs,
//! the exact model) run against a user's own kernel, described by a TOML
//! manifest; optionally under the four compute-sanitizer tools and timed
//! beside our default variant and CUB. Writes a receipt and a Markdown summary.

pub mod budget;
pub mod catalogue;
pub mod defences;
pub mod divergence;
pub mod error;
pub mod expr;
pub mod extra_sizes;
pub mod host_memory;
pub mod launch;
pub mod manifest;
pub mod module;
pub mod perturb;
pub mod poison;
pub mod report;
pub mod runs;
pub mod sanitize;
pub mod static_pass;
pub mod streamed;
pub mod summary;
pub mod time_spent;
pub mod timed;
pub mod verdict;
pub mod watchdog;
pub mod worker;

use crate::receipts::{MachineInfo, Receipt};
use crate::sweep::case::{failure_line, CaseResult, Verdict};
use crate::sweep::sizes;
use anyhow::Result;
use manifest::Manifest;
use std::path::Path;

/// What `harness check` does (its options, as plain values).
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// The manifest (TOML) naming the primitive, contract, module and launches.
    pub manifest: std::path::PathBuf,
    /// Sizes (default: the sweep's boundary, random and large sizes).
    pub sizes: Vec<usize>,
    /// Seed of the inputs (a fresh one, printed, when `None`).
    pub seed: Option<u64>,
    /// Also run the cases under compute-sanitizer's four tools.
    pub sanitize: bool,
    /// Where the receipt and summary go (default: check-out/ next to the manifest).
    pub out: Option<std::path::PathBuf>,
    /// Also write a JUnit XML report here.
    pub junit: Option<std::path::PathBuf>,
    /// Failure lines shown (every failure is counted).
    pub max_failures_shown: usize,
    /// Validate the manifest (and compile its module) without running anything.
    pub validate_only: bool,
    /// The compute-sanitizer child (sanitizer sizes, one family, case markers).
    pub sanitize_child: bool,
    /// Run the cases from this position on as a watchdog worker.
    pub worker_from: Option<usize>,
    /// Stop after this many failing cases (`None`: run every case).
    pub maxfail: Option<usize>,
    /// Also the large-offset size past 2^31, every data family there.
    pub deep: bool,
    /// Print the receipt as one JSON document on stdout; every other line goes to stderr.
    pub json: bool,
    /// The harness executable that runs the cases (the watchdog workers and
    /// the sanitizer child).
    pub worker: WorkerProgram,
}

/// The executable whose `check --worker-from K` (and `--sanitize-child`) runs the cases.
#[derive(Debug, Clone, Default)]
pub enum WorkerProgram {
    /// This executable: the `harness` binary.
    #[default]
    ThisExecutable,
    /// A harness executable a caller of the library found (a test binary
    /// cannot be its own worker), held to this build ([`watchdog::build_id`]).
    At(std::path::PathBuf),
    /// None was found: why, and where it looked (an error once a GPU is
    /// found and cases are to run; without a GPU none is needed).
    Missing(String),
}

/// One failure as `check` prints it: its line (`FAIL ...`, or `check: FAIL
/// divergence at ...` from the static pass) and the indented lines under it
/// (the mismatch summary, the rerun line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailureLines {
    /// The failure line.
    pub line: String,
    /// The lines under it, without their indentation.
    pub details: Vec<String>,
}

impl FailureLines {
    /// The lines as printed: the failure line, then each detail indented by five spaces.
    pub fn text(&self) -> String {
        let details: String = self.details.iter().map(|l| format!("\n     {l}")).collect();
        format!("{}{details}", self.line)
    }
}

/// What a whole check (cases run) ended with, for the command line (its
/// exit status: [`exit_of`]) and the library (its result).
#[derive(Debug, Clone)]
pub struct Checked {
    /// The verdict.
    pub outcome: verdict::Outcome,
    /// The registry primitive.
    pub primitive: String,
    /// The contract.
    pub contract: String,
    /// The run seed.
    pub seed: u64,
    /// The sizes visited.
    pub sizes: Vec<usize>,
    /// Cases planned.
    pub planned: usize,
    /// Cases that passed.
    pub passed: usize,
    /// Cases that failed.
    pub failed: usize,
    /// Every failure: the static pass's, then the cases' (in the order they ended).
    pub failures: Vec<FailureLines>,
    /// A `NOT RUN ...` line for each planned case that did not run.
    pub not_run: Vec<String>,
    /// The receipt written.
    pub receipt: std::path::PathBuf,
    /// The line that ends an incomplete check (`check: INCOMPLETE: ...`).
    pub incomplete: Option<String>,
}

/// How `check` ended.
#[derive(Debug, Clone)]
pub enum Ended {
    /// A mode that runs no whole check (`--validate-only`, a worker, the
    /// sanitizer child): whether it passed.
    Done(bool),
    /// No GPU to run the cases on (the manifest was validated first): why.
    NoGpu(String),
    /// The cases ran.
    Checked(Box<Checked>),
}

/// The command line's result of a check: Ok(true) passed (exit 0),
/// Ok(false) failed or checked nothing (exit 1), and
/// [`crate::exit::CannotRun`] (exit 2) for no GPU or an incomplete check.
pub fn exit_of(ended: Ended) -> Result<bool> {
    match ended {
        Ended::Done(passed) => Ok(passed),
        Ended::NoGpu(reason) => Err(crate::exit::CannotRun(no_gpu_line(&reason)).into()),
        Ended::Checked(checked) => match checked.incomplete {
            Some(line) => Err(crate::exit::CannotRun(line).into()),
            None => Ok(checked.outcome.exit_status() == crate::exit::PASSED),
        },
    }
}

/// `check: cannot run: no GPU (<reason>)`.
pub fn no_gpu_line(reason: &str) -> String {
    format!("check: cannot run: no GPU ({reason})")
}

/// Whether stdout carries the JSON document (`check --format json`): set
/// once by [`run`] in the parent process (workers and the sanitizer child
/// keep their own stdout protocol).
static DOCUMENT_ON_STDOUT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A line for a person: on stdout, or on stderr when stdout carries the JSON document.
pub fn say(line: &str) {
    if DOCUMENT_ON_STDOUT.load(std::sync::atomic::Ordering::Relaxed) {
        eprintln!("{line}");
    } else {
        println!("{line}");
    }
}

/// Times the user's kernel for `check --bench` (the bench's timing,
/// composed by the command): the device, the manifest, its loaded module.
pub type UserTimer = dyn Fn(&kernels::Gpu, &Manifest, &launch::Loaded) -> timed::Timed + Sync;

/// The command that reruns one size of a check.
pub fn rerun(manifest: &Path, n: usize, seed: u64) -> String {
    format!("harness check --manifest {} --sizes {n} --seed {seed:#x}", manifest.display())
}

/// The rerun line under a failure line: [`rerun`], and how the failure
/// line's `seed=` (the case's input seed) follows from the run seed it
/// passes, so that the two lines name one seed.
pub fn rerun_line(manifest: &Path, n: usize, run_seed: u64, case_seed: u64) -> String {
    format!(
        "rerun: {} (run seed {run_seed:#x}, from which this case's input seed={case_seed:#x} is derived)",
        rerun(manifest, n, run_seed)
    )
}

/// The sizes a check visits: `--sizes`, else the sweep's with one past 2^28 and one past 2^31
/// ([`extra_sizes::default_sizes`]; the sanitizer's for the child, whose parent passes the
/// sizes it chose from the launches).
pub fn visited_sizes(args: &CheckOptions, seed: u64) -> Vec<usize> {
    match (args.sizes.is_empty(), args.sanitize_child) {
        (true, true) => crate::sweep::sizes::SANITIZE_SIZES.to_vec(),
        (true, false) => extra_sizes::default_sizes(seed, args.deep),
        _ => sizes::sweep_sizes(&args.sizes, seed, false, true),
    }
}

/// The GPU `check` runs on, or why it cannot run.
fn open_gpu(args: &CheckOptions) -> std::result::Result<kernels::Gpu, String> {
    if args.validate_only {
        return Err("--validate-only was given".to_string());
    }
    kernels::Gpu::open(kernels::GpuOptions { ordinal: 0, mutant: 0 }).map_err(|e| match e {
        kernels::GpuError::Unavailable { reason } => reason,
        other => other.to_string(),
    })
}

/// The manifest, validated at `sizes` (and compiled for the GPU found, if
/// any), with the sizes it can launch at: a default size past 2^28 or 2^31
/// that its geometry cannot hold is dropped, and said so.
fn load_manifest(
    args: &CheckOptions,
    sizes: Vec<usize>,
    gpu: Option<&kernels::Gpu>,
) -> Result<(Manifest, Vec<usize>), error::ManifestError> {
    let arch = gpu.map(|g| {
        let (major, minor) = g.info().compute_capability;
        format!("compute_{major}{minor}")
    });
    let (manifest, sizes, unlaunchable) = extra_sizes::load_launchable(&args.manifest, sizes, arch.as_deref())?;
    if args.worker_from.is_none() {
        unlaunchable.iter().for_each(|line| say(&format!("check: {line}")));
    }
    Ok((manifest, sizes))
}

/// Runs `harness check`: Ok(false) on any failure or when nothing was
/// checked; a manifest error is an Err, and so is a machine it cannot run
/// on (no GPU: [`crate::exit::CannotRun`], exit status 2).
pub fn run(args: &CheckOptions, timer: Option<&UserTimer>) -> Result<bool> {
    exit_of(run_on(args, timer, open_gpu)?)
}

/// A check for the library's public API: [`run`]'s work, ended as it ended.
pub fn run_ended(args: &CheckOptions) -> Result<Ended> {
    run_on(args, None, open_gpu)
}

/// [`run`] on the GPU `open` gives (or the reason it gives for having none).
fn run_on(
    args: &CheckOptions,
    timer: Option<&UserTimer>,
    open: fn(&CheckOptions) -> std::result::Result<kernels::Gpu, String>,
) -> Result<Ended> {
    crate::sweep::check_sizes(&args.sizes)?;
    // Refused here, once, before any case: the workers read the same value.
    streamed::stream_from().map_err(anyhow::Error::msg)?;
    let seed = args.seed.unwrap_or_else(crate::sweep::fresh_seed);
    let sizes = visited_sizes(args, seed);
    if let Some(from) = args.worker_from {
        return worker::run(args, seed, sizes, from).map(Ended::Done);
    }
    DOCUMENT_ON_STDOUT.store(args.json && !args.sanitize_child, std::sync::atomic::Ordering::Relaxed);
    let gpu = open(args);
    let (manifest, sizes) = load_manifest(args, sizes, gpu.as_ref().ok())?;
    let statics =
        if args.sanitize_child { static_pass::StaticReport::default() } else { static_pass::run(&manifest, &sizes) };
    if !args.sanitize_child {
        print_validated(args, &manifest);
        statics.lines().iter().for_each(|line| say(&format!("check: {line}")));
    }
    if args.validate_only {
        if args.json {
            let document = serde_json::json!({
                "manifest": args.manifest.display().to_string(),
                "valid": true,
                "primitive": manifest.primitive_name(),
                "contract": manifest.contract.name,
                "sizes": sizes,
                "static_findings": statics.json(),
            });
            println!("{}", serde_json::to_string_pretty(&document)?);
        }
        return Ok(Ended::Done(true));
    }
    let gpu = match gpu {
        Ok(g) => g,
        Err(reason) => return Ok(Ended::NoGpu(crate::nvrtc_path::with_search_note(&reason))),
    };
    if let WorkerProgram::Missing(why) = &args.worker {
        return Err(crate::exit::CannotRun(format!("check: cannot run: {why}")).into());
    }
    let sizes = fit_sizes(args, &manifest, &gpu, seed, sizes)?;
    if args.sanitize_child {
        return worker::run_sanitize_child(&gpu, &manifest, seed, &sizes).map(Ended::Done);
    }
    say(&format!("check: seed {seed:#x}, sizes {sizes:?} on {} (rerun with --seed {seed:#x})", gpu.info().name));
    let plan = crate::sweep::SweepPlan::of_primitive(manifest.primitive, &sizes, seed);
    let planned = catalogue::cases(&plan, &manifest, args.deep);
    catalogue::outside_contract(&plan, &manifest, args.deep).iter().for_each(|line| say(&format!("check: {line}")));
    if !args.deep && sizes.iter().any(|&n| n > catalogue::ONE_FAMILY_PAST) {
        say("check: past 2^24 each size runs one data family, the families in turn (--deep runs every family at every size)");
    }
    say(&format!("check: {}", plan_line(&planned, args.maxfail)));
    // The static pass's failures count towards --maxfail: the first failure
    // is known before any case runs.
    let left = args.maxfail.map(|m| m.saturating_sub(statics.failures()));
    let supervised = if left == Some(0) {
        say("check: stopped: the divergence pass failed the kernel before any case ran (--maxfail N or --all runs the cases too)");
        worker::Supervised { results: Vec::new(), failures: Vec::new() }
    } else {
        worker::supervise(&CheckOptions { maxfail: left, ..args.clone() }, seed, &sizes, planned.len())?
    };
    let ran = Ran {
        results: supervised.results,
        failures: supervised.failures,
        planned: planned.iter().map(|s| s.id.clone()).collect(),
        statics,
    };
    finish(args, timer, &gpu, &manifest, seed, &sizes, &ran).map(|c| Ended::Checked(Box::new(c)))
}

/// The sizes whose cases fit this machine ([`budget::fit`]), each size left
/// out said so; the sanitizer child keeps its parent's sizes. Error: no size
/// fits ([`crate::exit::CannotRun`], exit status 2).
fn fit_sizes(
    args: &CheckOptions,
    manifest: &Manifest,
    gpu: &kernels::Gpu,
    seed: u64,
    sizes: Vec<usize>,
) -> Result<Vec<usize>> {
    if args.sanitize_child {
        return Ok(sizes);
    }
    let cases_at = |n: usize| {
        let plan = crate::sweep::SweepPlan::of_primitive(manifest.primitive, &[n], seed);
        catalogue::cases(&plan, manifest, args.deep).into_iter().map(|s| s.id).collect()
    };
    let machine = budget::Machine { device: gpu.info().total_memory as u64, host: host_memory::total() };
    let fitted = budget::fit(manifest, &sizes, cases_at, machine).map_err(anyhow::Error::msg)?;
    fitted.notes.iter().chain(&fitted.left_out).for_each(|line| say(&format!("check: {line}")));
    if fitted.sizes.is_empty() && !sizes.is_empty() {
        return Err(crate::exit::CannotRun(format!(
            "check: cannot run: no size fits this machine ({} size(s) asked, every one left out above)",
            sizes.len()
        ))
        .into());
    }
    Ok(fitted.sizes)
}

/// What ran: the cases' results, every case planned (fewer ran when
/// `--maxfail` stopped the run, or when a case never reported), and the
/// static pass.
struct Ran {
    results: Vec<CaseResult>,
    /// Every failing case's lines, as printed.
    failures: Vec<FailureLines>,
    planned: Vec<crate::sweep::case::CaseId>,
    statics: static_pass::StaticReport,
}

fn print_validated(args: &CheckOptions, manifest: &Manifest) {
    say(&format!(
        "check: {} is valid: {} {} ({}), module {}{}, {} launch(es), {} scratch buffer(s)",
        args.manifest.display(),
        manifest.primitive_name(),
        manifest.contract.name,
        manifest.contract.summary,
        manifest.module.path.display(),
        manifest.module.defines.iter().map(|d| format!(" -D{d}")).collect::<String>(),
        manifest.launches.len(),
        manifest.scratch.len()
    ));
}

/// What a check will visit, said before it starts: the cases, their sizes
/// from the smallest (most bugs show there, at once) to the largest, when
/// it stops, and about how long it takes.
pub fn plan_line(cases: &[crate::sweep::raw::RawSpec], maxfail: Option<usize>) -> String {
    let sizes: std::collections::BTreeSet<usize> = cases.iter().map(|c| c.id.n).collect();
    let elements: f64 = cases.iter().map(|c| c.id.n as f64).sum();
    // A rough model of a case on a fast host: 20 ms, and 50 ns an element for its
    // input, the model's answer, two or three runs and their comparisons.
    let seconds = cases.len() as f64 * 0.02 + elements * 50e-9;
    let stop = match maxfail {
        Some(1) => "stops at the first failing case (--maxfail N, --all to go on)".to_string(),
        Some(k) => format!("stops at the {k}th failing case (--all to go on)"),
        None => "runs every case (--all)".to_string(),
    };
    format!(
        "{} cases at {} sizes from {} to {} elements, smallest first; {stop}; about {:.0} s if it passes",
        cases.len(),
        sizes.len(),
        sizes.first().copied().unwrap_or(0),
        sizes.last().copied().unwrap_or(0),
        seconds.ceil()
    )
}

/// After the cases: the sanitizers and timing when asked, the verdict
/// ([`verdict::decide`]), the receipt and the summary. Ok(true) for a pass,
/// Ok(false) for a failure or a check that checked nothing; a check with a
/// case that could not run and no failure is [`crate::exit::CannotRun`]
/// (exit status 2), naming those cases.
fn finish(
    args: &CheckOptions,
    timer: Option<&UserTimer>,
    gpu: &kernels::Gpu,
    manifest: &Manifest,
    seed: u64,
    sizes: &[usize],
    ran: &Ran,
) -> Result<Checked> {
    let results = &ran.results[..];
    let stopped = results.len() < ran.planned.len();
    let out = report::out_dir(args.out.as_deref(), &args.manifest);
    report::claim(&out)?;
    let sanitized = match (args.sanitize, stopped) {
        (true, true) => {
            say(
                "check: the sanitizer runs are left out: not every case ran (--all runs them all, then the sanitizers)",
            );
            None
        }
        (true, false) => Some(sanitize::run(manifest, seed, &out, &args.worker)?),
        (false, _) => None,
    };
    let timed = match timer {
        Some(time) => Some(time(gpu, manifest, &launch::load(gpu, manifest)?)),
        None => None,
    };
    let decision = verdict::decide(&verdict::Happened {
        results,
        planned: &ran.planned,
        maxfail: args.maxfail,
        static_failures: ran.statics.failures(),
        sanitizers_clean: sanitized.as_ref().map(|s| s.clean),
        timing_worked: timed.as_ref().map(|t| t.error.is_none()),
    });
    say_counts(&decision, ran, seed);
    if let Some(line) = time_spent::line(results) {
        say(&line);
    }
    let mut details = receipt_details(args, manifest, seed, sizes, ran, &decision);
    details["sanitize"] = serde_json::json!(sanitized.as_ref().map(|s| &s.json));
    details["bench"] = serde_json::json!(timed.as_ref().map(|t| &t.json));
    if let Some(path) = &args.junit {
        let mut cases = junit_cases(manifest, seed, results);
        cases.extend(not_run_junit_cases(&decision));
        cases.extend(static_junit_case(&ran.statics));
        crate::junit::write(path, "check", &cases)?;
    }
    let receipt = out.join("receipt.json");
    let tally = crate::receipts::Tally {
        passed: decision.passed as u64,
        failed: decision.failed as u64,
        skipped: decision.not_run.len() as u64,
    };
    let document = Receipt::new("check", MachineInfo::collect(gpu), tally, details);
    document.save(&receipt)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&document)?);
    }
    let text = summary::markdown(manifest, seed, results, sanitized.as_ref(), timed.as_ref(), &decision)
        + &summary::static_section(&ran.statics);
    let summary_path = report::write(&out, "summary.md", &text)?;
    say(&format!("check: receipt {} and summary {}", receipt.display(), summary_path.display()));
    let incomplete = conclude(&decision, ran.planned.len());
    // The static pass's failing lines as printed (`check: FAIL divergence at ...`), then the cases'.
    let mut failures: Vec<FailureLines> = ran
        .statics
        .lines()
        .into_iter()
        .filter(|l| l.starts_with("FAIL "))
        .map(|l| FailureLines { line: format!("check: {l}"), details: Vec::new() })
        .collect();
    failures.extend(ran.failures.iter().cloned());
    Ok(Checked {
        outcome: decision.outcome,
        primitive: manifest.primitive_name().to_string(),
        contract: manifest.contract.name.to_string(),
        seed,
        sizes: sizes.to_vec(),
        planned: ran.planned.len(),
        passed: decision.passed,
        failed: decision.failed,
        failures,
        not_run: decision.not_run.iter().map(verdict::NotRun::line).collect(),
        receipt,
        incomplete,
    })
}

/// The counts line, and the line saying where `--maxfail` stopped the check.
fn say_counts(decision: &verdict::Decision, ran: &Ran, seed: u64) {
    let not_run = decision.not_run.len();
    let not_run_text = if not_run > 0 { format!(", {not_run} could not run") } else { String::new() };
    say(&format!(
        "check: {} passed, {} failed{not_run_text} of {} planned cases (seed {seed:#x})",
        decision.passed,
        decision.failed,
        ran.planned.len()
    ));
    let static_failures = ran.statics.failures();
    if static_failures > 0 {
        say(&format!(
            "check: and the divergence pass failed the kernel at {static_failures} collective(s) (the FAIL divergence lines above)"
        ));
    }
    let static_warnings = ran.statics.warnings();
    if static_warnings > 0 {
        say(&format!(
            "check: the divergence pass could not decide {static_warnings} collective(s) (the WARNING divergence lines above); they fail nothing"
        ));
    }
    if decision.stopped_by_maxfail && ran.results.len() < ran.planned.len() && !ran.results.is_empty() {
        say(&format!(
            "check: stopped after {} failing case(s): {} of the {} cases ran; --all runs every case",
            decision.failed,
            ran.results.len(),
            ran.planned.len()
        ));
    }
}

/// The receipt's details: what was checked, the verdict, every case, and every case that did not run.
fn receipt_details(
    args: &CheckOptions,
    manifest: &Manifest,
    seed: u64,
    sizes: &[usize],
    ran: &Ran,
    decision: &verdict::Decision,
) -> serde_json::Value {
    let results = &ran.results[..];
    let failures: Vec<String> = results
        .iter()
        .filter_map(|r| match &r.verdict {
            Verdict::Fail(m) => Some(failure_line(&r.id, m)),
            _ => None,
        })
        .collect();
    let stopped = decision.stopped_by_maxfail && results.len() < ran.planned.len();
    serde_json::json!({
        "manifest": args.manifest.display().to_string(),
        "name": manifest.name,
        "primitive": manifest.primitive_name(),
        "contract": manifest.contract.name,
        "rule": crate::cases::rules::rule_words(manifest.contract),
        "module": manifest.module.path.display().to_string(),
        "defines": manifest.module.defines,
        "seed": format!("{seed:#x}"),
        "sizes": sizes,
        "planned_cases": ran.planned.len(),
        "stopped_early": stopped.then(|| serde_json::json!({"ran": results.len(), "maxfail": args.maxfail})),
        "static_findings": ran.statics.json(),
        "verdict": decision.outcome.word(),
        "failures": failures,
        "not_run": decision.not_run.iter().map(verdict::NotRun::line).collect::<Vec<_>>(),
        "cases": results,
    })
}

/// The check's last lines: PASS, FAIL (with the cases that did not run
/// named too), or, for INCOMPLETE, the line that ends it (printed by the
/// command line on stderr, exit status 2, every case that did not run
/// named above it); never PASS with a case left out.
fn conclude(decision: &verdict::Decision, planned: usize) -> Option<String> {
    let lines = verdict::not_run_lines(&decision.not_run);
    lines.iter().for_each(|line| say(&format!("check: {line}")));
    match decision.outcome {
        verdict::Outcome::Pass => say("check: PASS"),
        verdict::Outcome::Fail => {
            if !decision.not_run.is_empty() {
                say(&format!("check: and {} case(s) could not run (the NOT RUN lines above)", decision.not_run.len()));
            }
            say("check: FAIL");
        }
        verdict::Outcome::NothingChecked => {
            eprintln!("check: nothing was checked");
            say("check: FAIL (nothing was checked)");
        }
        verdict::Outcome::Incomplete => {
            return Some(format!(
                "check: INCOMPLETE: {} of {planned} planned case(s) could not run (the NOT RUN lines above); {} \
                 passed and nothing that ran failed, but the kernel is not proven on the cases left out",
                decision.not_run.len(),
                decision.passed
            ))
        }
    }
    None
}

/// One JUnit test case, skipped with its reason, per planned case that never reported.
fn not_run_junit_cases(decision: &verdict::Decision) -> Vec<crate::junit::TestCase> {
    use crate::junit::{Outcome, TestCase};
    decision
        .not_run
        .iter()
        .filter(|c| c.reason == verdict::NEVER_REPORTED)
        .map(|c| TestCase {
            classname: format!("check.{}", c.id.primitive),
            name: format!("{} n={} {}", c.id.variant, c.id.size, c.id.family),
            seconds: 0.0,
            outcome: Outcome::Skipped(c.reason.clone()),
        })
        .collect()
}

/// The static pass as one JUnit test case, when it read the module.
fn static_junit_case(statics: &static_pass::StaticReport) -> Option<crate::junit::TestCase> {
    use crate::junit::{Outcome, TestCase};
    statics.not_read.is_none().then(|| TestCase {
        classname: "check.static".into(),
        name: "divergent collectives".into(),
        seconds: 0.0,
        outcome: if statics.failures() == 0 { Outcome::Passed } else { Outcome::Failed(statics.lines().join("\n")) },
    })
}

/// One JUnit test case per case: `check.<primitive>` / `<variant> n=<size>
/// <family>`, a failure carrying its failure line and rerun line.
pub fn junit_cases(manifest: &Manifest, seed: u64, results: &[CaseResult]) -> Vec<crate::junit::TestCase> {
    use crate::junit::{Outcome, TestCase};
    results
        .iter()
        .map(|r| TestCase {
            classname: format!("check.{}", r.id.primitive),
            name: format!("{} n={} {}", r.id.variant, r.id.size, r.id.family),
            seconds: r.millis as f64 / 1000.0,
            outcome: match &r.verdict {
                Verdict::Pass => Outcome::Passed,
                Verdict::Fail(m) => Outcome::Failed(format!(
                    "{}\n{}",
                    failure_line(&r.id, m),
                    rerun_line(&manifest.path, r.id.n, seed, r.id.seed)
                )),
                Verdict::Skipped { reason } => Outcome::Skipped(reason.clone()),
            },
        })
        .collect()
}

#[cfg(test)]
#[path = "check_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "contract_manifest_tests.rs"]
mod contract_manifest_tests;

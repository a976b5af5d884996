//! The library's public API: check a kernel described by a manifest, from
//! Rust, with what `harness check --manifest M` runs and prints.
//!
//! [`check_manifest`] reads and validates the manifest, compiles its module,
//! runs the static divergence pass, then every case of the contract's
//! catalogue with the defences `harness check` gives a user's kernel (a
//! watchdog worker process per run of cases, typed poison, two runs, guards
//! on both sides, a perturbed third run; the sanitizers with
//! [`CheckConfig::sanitize`]), and writes the same receipt and summary.
//!
//! **The cases run in a `harness` executable.** The watchdog that fails a
//! hanging kernel and survives a crashing one needs the cases in another
//! process, and a test binary cannot be that process. So the library runs
//! `harness check --worker-from K` of the harness binary built from the same
//! sources: [`CheckConfig::harness`], else `$PRIMLAB_HARNESS`, else a
//! `harness` beside this executable or one folder up (cargo puts test
//! binaries in `target/<profile>/deps/`, the harness in `target/<profile>/`).
//! A worker that is another build (another version or verdict hash, or
//! another number of cases) is refused. Without a GPU no worker is needed:
//! the check ends with [`CheckError::NoGpu`] after validating the manifest.
//!
//! No form taking a launch closure is offered: a closure cannot cross into
//! the worker process, so it could not get the watchdog, and this API runs
//! only with every defence. Describe the launches in the manifest instead
//! (`examples/check/scan_cuda/check.toml`).
//!
//! NVRTC must be loadable by this process (the manifest's CUDA source is
//! compiled here too, for the static pass): on `LD_LIBRARY_PATH` or the
//! loader's path. Unlike the `harness` binary, the library never starts its
//! caller's process again to find it.

use crate::check::{self, CheckOptions, Ended, WorkerProgram};
use std::fmt;
use std::path::{Path, PathBuf};

/// The variable naming the harness executable that runs the cases (as for
/// the Python package).
const HARNESS_VARIABLE: &str = "PRIMLAB_HARNESS";

/// How to check: sizes, seed, when to stop, what else to run, where the
/// receipt goes and which harness executable runs the cases. Built with
/// [`CheckConfig::new`] and its setters; the defaults are `harness
/// check`'s.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CheckConfig {
    sizes: Vec<usize>,
    seed: Option<u64>,
    maxfail: Option<usize>,
    deep: bool,
    sanitize: bool,
    out: Option<PathBuf>,
    harness: Option<PathBuf>,
}

impl Default for CheckConfig {
    fn default() -> Self {
        CheckConfig {
            sizes: Vec::new(),
            seed: None,
            maxfail: Some(1),
            deep: false,
            sanitize: false,
            out: None,
            harness: None,
        }
    }
}

impl CheckConfig {
    /// `harness check`'s defaults: the sweep's boundary, random and large
    /// sizes (up to 2^28 + 1), a fresh seed (printed), stop at the first
    /// failing case, no sanitizers, the receipt in `check-out/` beside the
    /// manifest, the harness executable found as the module docs say.
    pub fn new() -> CheckConfig {
        CheckConfig::default()
    }

    /// Only these sizes (element counts), as `--sizes`; an empty list keeps the defaults.
    pub fn sizes(mut self, sizes: impl IntoIterator<Item = usize>) -> CheckConfig {
        self.sizes = sizes.into_iter().collect();
        self
    }

    /// The run seed every case's input is derived from, as `--seed`.
    pub fn seed(mut self, seed: u64) -> CheckConfig {
        self.seed = Some(seed);
        self
    }

    /// Stop after this many failing cases, as `--maxfail` (0 is taken as 1).
    pub fn maxfail(mut self, failures: usize) -> CheckConfig {
        self.maxfail = Some(failures.max(1));
        self
    }

    /// Run every case whatever fails, as `--all`.
    pub fn all(mut self) -> CheckConfig {
        self.maxfail = None;
        self
    }

    /// Also the sizes past 2^31 and 2^32 and every data family at every size, as `--deep`.
    pub fn deep(mut self, deep: bool) -> CheckConfig {
        self.deep = deep;
        self
    }

    /// Also run the cases under compute-sanitizer's four tools, as `--sanitize`.
    pub fn sanitize(mut self, sanitize: bool) -> CheckConfig {
        self.sanitize = sanitize;
        self
    }

    /// Where the receipt and summary go, as `--out` (a folder holding files
    /// `check` did not write is refused).
    pub fn out(mut self, folder: impl Into<PathBuf>) -> CheckConfig {
        self.out = Some(folder.into());
        self
    }

    /// The harness executable that runs the cases (built from the same sources as this library).
    pub fn harness(mut self, executable: impl Into<PathBuf>) -> CheckConfig {
        self.harness = Some(executable.into());
        self
    }
}

/// How a check that ran its cases ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// Every planned case ran and passed, and every other gate held.
    Pass,
    /// Something failed: a case, the static divergence pass, a sanitizer.
    Fail,
    /// Nothing failed, but some planned case could not run.
    Incomplete,
    /// Nothing failed and nothing was left out, but no case passed.
    NothingChecked,
}

/// One failure, as `harness check` prints it: its line (`FAIL <primitive>/<variant>
/// n=... seed=... family=... check=... index=... expected=... got=...`, or
/// `check: FAIL divergence at ...`) and the lines under it (the mismatch
/// summary and the rerun command).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    lines: check::FailureLines,
}

impl Failure {
    /// The failure line, as printed.
    pub fn line(&self) -> &str {
        &self.lines.line
    }

    /// The lines under it, without their indentation: the mismatch summary, then the rerun line.
    pub fn details(&self) -> &[String] {
        &self.lines.details
    }
}

impl fmt::Display for Failure {
    /// The failure line and the lines under it, indented, exactly as `harness check` prints them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.lines.text())
    }
}

/// What a check that ran its cases found: its outcome, counts, failures
/// and receipt.
#[derive(Debug, Clone)]
pub struct CheckReport {
    checked: check::Checked,
    failures: Vec<Failure>,
}

impl CheckReport {
    fn of(checked: check::Checked) -> CheckReport {
        let failures = checked.failures.iter().map(|lines| Failure { lines: lines.clone() }).collect();
        CheckReport { checked, failures }
    }

    /// How it ended.
    pub fn outcome(&self) -> Outcome {
        match self.checked.outcome {
            check::verdict::Outcome::Pass => Outcome::Pass,
            check::verdict::Outcome::Fail => Outcome::Fail,
            check::verdict::Outcome::Incomplete => Outcome::Incomplete,
            check::verdict::Outcome::NothingChecked => Outcome::NothingChecked,
        }
    }

    /// The registry primitive (`scan`, `reduce`, ...).
    pub fn primitive(&self) -> &str {
        &self.checked.primitive
    }

    /// The contract checked (`exclusive.i32`, `sum.i32`, ...).
    pub fn contract(&self) -> &str {
        &self.checked.contract
    }

    /// The run seed (pass it to [`CheckConfig::seed`] to run the same inputs again).
    pub fn seed(&self) -> u64 {
        self.checked.seed
    }

    /// The sizes visited.
    pub fn sizes(&self) -> &[usize] {
        &self.checked.sizes
    }

    /// The cases planned.
    pub fn planned(&self) -> usize {
        self.checked.planned
    }

    /// The cases that passed.
    pub fn passed(&self) -> usize {
        self.checked.passed
    }

    /// The cases that failed.
    pub fn failed(&self) -> usize {
        self.checked.failed
    }

    /// Every failure: the static pass's, then the cases' in the order they ended.
    pub fn failures(&self) -> &[Failure] {
        &self.failures
    }

    /// A `NOT RUN <variant> n=<size> <family> seed=<seed>: <reason>` line per case that could not run.
    pub fn not_run(&self) -> &[String] {
        &self.checked.not_run
    }

    /// The receipt written (`receipt.json`, with `summary.md` beside it).
    pub fn receipt(&self) -> &Path {
        &self.checked.receipt
    }
}

impl fmt::Display for CheckReport {
    /// Every failure and not-run line as `harness check` prints them, then
    /// the counts and the outcome (`check: PASS`, `check: FAIL`, ...).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for failure in &self.failures {
            writeln!(f, "{failure}")?;
        }
        for line in &self.checked.not_run {
            writeln!(f, "check: {line}")?;
        }
        let c = &self.checked;
        writeln!(
            f,
            "check: {} {}: {} passed, {} failed, {} could not run of {} planned cases (seed {:#x})",
            c.primitive,
            c.contract,
            c.passed,
            c.failed,
            c.not_run.len(),
            c.planned,
            c.seed
        )?;
        match (&c.incomplete, c.outcome) {
            (Some(line), _) => f.write_str(line),
            (None, check::verdict::Outcome::NothingChecked) => f.write_str("check: FAIL (nothing was checked)"),
            (None, outcome) => write!(f, "check: {}", outcome.word().to_uppercase()),
        }
    }
}

/// Why [`check_manifest`] did not pass. Its [`Display`](fmt::Display) is
/// what `harness check` prints for the same end, and so is its `Debug`, so
/// that `.unwrap()` and a test returning `Result` show the failure lines.
#[non_exhaustive]
pub enum CheckError {
    /// The check ran and failed (a case, the static pass, a sanitizer), or checked nothing.
    Failed(Box<CheckReport>),
    /// Nothing failed, but some planned case could not run: the kernel is not proven on it.
    Incomplete(Box<CheckReport>),
    /// No GPU to run the cases on (the manifest was validated and compiled first).
    NoGpu {
        /// Why (`the driver reports no CUDA device`, `libcuda.so cannot be loaded ...`).
        reason: String,
    },
    /// NVRTC cannot be loaded by this process, so the manifest's CUDA
    /// source cannot be compiled (put its folder on `LD_LIBRARY_PATH`).
    NoNvrtc {
        /// The message `harness check` prints after `error: ` (the source, why, where it looked).
        message: String,
    },
    /// The manifest is wrong or its module does not compile: the message
    /// names the field and what to change.
    Manifest {
        /// The message `harness check` prints after `error: `.
        message: String,
    },
    /// The check could not run for another reason: no size fits the
    /// machine, no harness executable to run the cases, a worker of another
    /// build, an output folder refused, a bad size.
    CannotRun {
        /// The line `harness check` prints (`check: cannot run: ...`), or its message after `error: `.
        message: String,
    },
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckError::Failed(report) | CheckError::Incomplete(report) => write!(f, "{report}"),
            CheckError::NoGpu { reason } => f.write_str(&check::no_gpu_line(reason)),
            CheckError::NoNvrtc { message } | CheckError::Manifest { message } | CheckError::CannotRun { message } => {
                f.write_str(message)
            }
        }
    }
}

impl fmt::Debug for CheckError {
    /// The [`Display`](fmt::Display) text: `unwrap` then prints the failure lines, not a struct dump.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for CheckError {}

/// Checks the kernel that the manifest at `manifest` describes (TOML: its
/// primitive, contract, module and launches; see the repository's README,
/// "Check your own kernel") on every case of its contract, with `config`.
///
/// Prints what `harness check` prints as it goes (its plan, each failure
/// the moment it is known, the counts; `cargo test` captures them) and
/// writes the receipt and summary. Returns the report when every planned
/// case ran and passed; otherwise a [`CheckError`] whose text is the lines
/// `harness check` prints for that end, a failed case's `FAIL ...` line
/// first.
pub fn check_manifest(manifest: impl AsRef<Path>, config: &CheckConfig) -> Result<CheckReport, CheckError> {
    let options = CheckOptions {
        manifest: manifest.as_ref().to_path_buf(),
        sizes: config.sizes.clone(),
        seed: config.seed,
        sanitize: config.sanitize,
        out: config.out.clone(),
        max_failures_shown: 20,
        maxfail: config.maxfail,
        deep: config.deep,
        worker: match harness_executable(config.harness.as_deref()) {
            Ok(path) => WorkerProgram::At(path),
            Err(why) => WorkerProgram::Missing(why),
        },
        ..CheckOptions::default()
    };
    let ended = check::run_ended(&options).map_err(error_of)?;
    match ended {
        Ended::NoGpu(reason) => Err(CheckError::NoGpu { reason }),
        Ended::Checked(checked) => {
            let report = CheckReport::of(*checked);
            match report.outcome() {
                Outcome::Pass => Ok(report),
                Outcome::Incomplete => Err(CheckError::Incomplete(Box::new(report))),
                _ => Err(CheckError::Failed(Box::new(report))),
            }
        }
        // Only the command line's modes (--validate-only, a worker, the sanitizer child) end so.
        Ended::Done(_) => Err(CheckError::CannotRun { message: "check: ran no case".to_string() }),
    }
}

/// A manifest error, a refusal to run (exit status 2 for the command line) or another error.
fn error_of(e: anyhow::Error) -> CheckError {
    if let Some(manifest) = e.downcast_ref::<check::error::ManifestError>() {
        let message = crate::nvrtc_path::with_search_note(&manifest.to_string());
        return match manifest {
            check::error::ManifestError::NoCompiler { .. } => CheckError::NoNvrtc { message },
            _ => CheckError::Manifest { message },
        };
    }
    match e.downcast_ref::<crate::exit::CannotRun>() {
        Some(line) => CheckError::CannotRun { message: line.0.clone() },
        None => CheckError::CannotRun { message: crate::nvrtc_path::with_search_note(&format!("{e:#}")) },
    }
}

/// The harness executable that runs the cases: `named`, else
/// `$PRIMLAB_HARNESS`, else this executable when it is the harness, else a
/// `harness` beside it or one folder up. Err: where it looked.
fn harness_executable(named: Option<&Path>) -> Result<PathBuf, String> {
    let usable = |p: &Path| p.is_file();
    if let Some(path) = named {
        return if usable(path) {
            Ok(path.to_path_buf())
        } else {
            Err(format!("the harness executable {} (CheckConfig::harness) is not a file", path.display()))
        };
    }
    if let Some(path) = std::env::var_os(HARNESS_VARIABLE).filter(|v| !v.is_empty()).map(PathBuf::from) {
        return if usable(&path) {
            Ok(path)
        } else {
            Err(format!("${HARNESS_VARIABLE} names {}, which is not a file", path.display()))
        };
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate this executable: {e}"))?;
    let file_name = format!("harness{}", std::env::consts::EXE_SUFFIX);
    if exe.file_name().is_some_and(|n| n == file_name.as_str()) {
        return Ok(exe);
    }
    let tried: Vec<PathBuf> = exe.ancestors().skip(1).take(2).map(|dir| dir.join(&file_name)).collect();
    tried.iter().find(|p| usable(p)).cloned().ok_or_else(|| {
        format!(
            "no harness executable to run the cases (a test binary cannot be its own watchdog worker): \
             build it from the same sources (`cargo build -p harness`), then name it with \
             CheckConfig::harness or ${HARNESS_VARIABLE}; looked at {}",
            tried.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
        )
    })
}

#[cfg(test)]
#[path = "api_tests.rs"]
mod tests;

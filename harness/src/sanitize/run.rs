//! Running one compute-sanitizer job: the tool wraps a child
//! `harness sanitize-child` that runs one primitive's cases, with
//! `--error-exitcode`, `--xml --save <log_dir>/<job>.xml` and a wall-clock
//! timeout (which kills the whole process group). Both the text log (with
//! the child's case markers) and the XML are kept on disk.

use super::options::SanitizerOptions;
use super::parse::{parse_log, ParsedLog, Tool};
use super::process::run_with_timeout;
use super::xml::{parse_records, XmlRecord};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One sanitizer invocation.
#[derive(Debug, Clone)]
pub struct Job {
    /// The tool.
    pub tool: Tool,
    /// The primitive whose cases the child runs (e.g. "scan").
    pub primitive: String,
    /// File-name stem of its logs (unique among concurrent jobs).
    pub label: String,
    /// Arguments of the child after the executable (`sanitize-child ...`).
    pub child_args: Vec<String>,
}

impl Job {
    /// The text log's file name: `<label>-<tool>.log`.
    pub fn log_name(&self) -> String {
        format!("{}-{}.log", self.label, self.tool.name())
    }

    /// The XML file's name: `<label>-<tool>.xml`.
    pub fn xml_name(&self) -> String {
        format!("{}-{}.xml", self.label, self.tool.name())
    }
}

/// What one job came to.
#[derive(Debug, Clone)]
pub struct JobOutcome {
    /// The tool.
    pub tool: Tool,
    /// Exit code of compute-sanitizer (None if killed).
    pub exit_code: Option<i32>,
    /// Whether the timeout killed it.
    pub timed_out: bool,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// The text log's path.
    pub log: PathBuf,
    /// The XML file's path.
    pub xml_path: PathBuf,
    /// The parsed text log.
    pub parsed: ParsedLog,
    /// The child's NVRTC compile error line, if it printed one.
    pub compile_error: Option<String>,
    /// The XML's records, or why it could not be read (missing, cut short, malformed).
    pub xml: Result<Vec<XmlRecord>, String>,
}

/// Whether the child's output says NVRTC could not compile a kernel family
/// (`kernels::GpuError::Compile`, printed as `error: ... NVRTC failed to compile
/// <file> for <arch>:` by the child's `main`): returns that line.
pub fn compile_error_line(text: &str) -> Option<String> {
    text.lines().find(|l| l.contains(COMPILE_ERROR_TEXT)).map(|l| l.trim_start_matches("=========").trim().to_string())
}

/// The words `kernels::GpuError::Compile` displays with (checked by a test).
pub const COMPILE_ERROR_TEXT: &str = "NVRTC failed to compile";

/// Runs `job` under `sanitizer`, child executable `exe`, writing its log and XML into `log_dir`.
pub fn run_job(
    sanitizer: &Path,
    options: &SanitizerOptions,
    exe: &Path,
    job: &Job,
    log_dir: &Path,
    timeout: Duration,
) -> Result<JobOutcome> {
    std::fs::create_dir_all(log_dir).with_context(|| format!("creating {}", log_dir.display()))?;
    let log = log_dir.join(job.log_name());
    let xml_path = log_dir.join(job.xml_name());
    // A stale file from an earlier run must never stand in for this run's.
    for stale in [&log, &xml_path] {
        match std::fs::remove_file(stale) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("removing the stale {}", stale.display())),
        }
    }
    let mut args = options.args(job.tool, &xml_path);
    args.push(exe.to_string_lossy().into_owned());
    args.extend(job.child_args.iter().cloned());
    let expression =
        duct::cmd(sanitizer, &args).stderr_to_stdout().stdout_path(&log).env("PRIMLAB_SANITIZE_CHILD", "1");
    let what = format!("compute-sanitizer {} for {}", job.tool.name(), job.primitive);
    let finished = run_with_timeout(expression, timeout, &what)?;
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let xml = match std::fs::read_to_string(&xml_path) {
        Ok(xml_text) => parse_records(&xml_text).map_err(|e| format!("{} is not valid: {e}", xml_path.display())),
        Err(e) => Err(format!("{} could not be read: {e}", xml_path.display())),
    };
    Ok(JobOutcome {
        tool: job.tool,
        exit_code: finished.code,
        timed_out: finished.timed_out,
        seconds: finished.seconds,
        log,
        xml_path,
        parsed: parse_log(&text),
        compile_error: compile_error_line(&text),
        xml,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compile_error_text_is_what_kernels_prints() {
        let error = kernels::GpuError::Compile {
            module: "reduce.cu".into(),
            arch: "sm_90".into(),
            log: "reduce.cu(12): error: identifier \"x\" is undefined".into(),
        };
        let printed = format!("error: {:#}", anyhow::Error::from(error));
        assert_eq!(
            compile_error_line(&format!("========= COMPUTE-SANITIZER\n{printed}\n")).as_deref(),
            Some("error: NVRTC failed to compile reduce.cu for sm_90:")
        );
        assert_eq!(compile_error_line("@@primlab case reduce serial.i32 1\n"), None);
    }
}

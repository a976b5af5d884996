//! Running one compute-sanitizer job through duct: the tool wraps a child
//! `harness sanitize-child` that runs one primitive's cases, with
//! `--error-exitcode` and a wall-clock timeout, its whole log kept on disk.

use super::parse::{parse_log, ParsedLog, Tool};
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The exit code compute-sanitizer returns when its tool found an error.
pub const SANITIZER_ERROR_EXIT: i32 = 99;

/// One sanitizer invocation.
#[derive(Debug, Clone)]
pub struct Job {
    /// The tool.
    pub tool: Tool,
    /// The primitive whose cases the child runs (e.g. "scan").
    pub primitive: String,
    /// Arguments of the child after the executable (`sanitize-child ...`).
    pub child_args: Vec<String>,
}

impl Job {
    /// The log's file name: `<primitive>-<tool>.log`.
    pub fn log_name(&self) -> String {
        format!("{}-{}.log", self.primitive, self.tool.name())
    }
}

/// What one job came to.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JobOutcome {
    /// The tool.
    pub tool: Tool,
    /// The primitive.
    pub primitive: String,
    /// Exit code of compute-sanitizer (None if killed).
    pub exit_code: Option<i32>,
    /// Whether the timeout killed it.
    pub timed_out: bool,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// The log's path.
    pub log: PathBuf,
    /// The parsed log.
    pub parsed: ParsedLog,
}

impl JobOutcome {
    /// Whether the job proves its cases clean: it finished, printed its
    /// summary, reported no error, and the child's model checks all passed.
    pub fn is_clean(&self) -> bool {
        !self.timed_out
            && self.exit_code == Some(0)
            && self.parsed.has_summary()
            && self.parsed.error_count() == 0
            && self.parsed.child_failures.is_empty()
    }

    /// A one-line reason when not clean.
    pub fn problem(&self) -> Option<String> {
        if self.timed_out {
            return Some(format!("timed out after {:.0} s", self.seconds));
        }
        if self.parsed.error_count() > 0 {
            return Some(format!("{} error(s)", self.parsed.error_count()));
        }
        if !self.parsed.child_failures.is_empty() {
            return Some(format!("{} model mismatch(es)", self.parsed.child_failures.len()));
        }
        if !self.parsed.has_summary() {
            return Some(format!("no sanitizer summary (exit {:?})", self.exit_code));
        }
        if self.exit_code != Some(0) {
            return Some(format!("exit code {:?}", self.exit_code));
        }
        None
    }
}

/// Runs `job` under `sanitizer`, child executable `exe`, writing the log into `log_dir`.
pub fn run_job(sanitizer: &Path, exe: &Path, job: &Job, log_dir: &Path, timeout: Duration) -> Result<JobOutcome> {
    std::fs::create_dir_all(log_dir).with_context(|| format!("creating {}", log_dir.display()))?;
    let log = log_dir.join(job.log_name());
    let mut args: Vec<String> = vec![
        "--tool".into(),
        job.tool.name().into(),
        "--error-exitcode".into(),
        SANITIZER_ERROR_EXIT.to_string(),
        "--print-limit".into(),
        "200".into(),
    ];
    if job.tool == Tool::Racecheck {
        // Report hazards and the analysis, errors and warnings alike.
        args.extend(["--racecheck-report".into(), "all".into()]);
    }
    args.push(exe.to_string_lossy().into_owned());
    args.extend(job.child_args.iter().cloned());
    let started = Instant::now();
    let handle = duct::cmd(sanitizer, &args)
        .stderr_to_stdout()
        .stdout_path(&log)
        .unchecked()
        .env("PRIMLAB_SANITIZE_CHILD", "1")
        .start()
        .with_context(|| format!("starting {}", sanitizer.display()))?;
    let mut timed_out = false;
    let status = loop {
        if let Some(output) = handle.try_wait().context("waiting for compute-sanitizer")? {
            break Some(output.status);
        }
        if started.elapsed() > timeout {
            timed_out = true;
            handle.kill().context("killing a timed-out compute-sanitizer")?;
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let seconds = started.elapsed().as_secs_f64();
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    Ok(JobOutcome {
        tool: job.tool,
        primitive: job.primitive.clone(),
        exit_code: status.and_then(|s| s.code()),
        timed_out,
        seconds,
        log,
        parsed: parse_log(&text),
    })
}

//! Running a baseline program (or its build) through duct with a deadline:
//! stdout and stderr go to a log file, the exit status and a tail of the log
//! come back; a program past its deadline is killed and said to be.

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Lines of a log kept in a receipt.
pub const LOG_TAIL_LINES: usize = 12;

/// How a program run ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgramRun {
    /// The command line, for reproduction.
    pub command: String,
    /// Exit code (None when killed or ended by a signal).
    pub exit_code: Option<i32>,
    /// Whether the deadline killed it.
    pub timed_out: bool,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Where its output went.
    pub log: PathBuf,
    /// The last lines of that output.
    pub log_tail: String,
}

impl ProgramRun {
    /// Whether it exited with status 0.
    pub fn succeeded(&self) -> bool {
        !self.timed_out && self.exit_code == Some(0)
    }
}

/// A program started in the background.
pub struct RunningProgram {
    handle: duct::Handle,
    command: String,
    started: Instant,
    log: PathBuf,
}

/// `program args...` as one shell-like line.
pub fn command_line(program: &Path, args: &[String]) -> String {
    std::iter::once(program.display().to_string()).chain(args.iter().cloned()).collect::<Vec<_>>().join(" ")
}

/// Starts `program args` with stdout and stderr appended to `log`.
pub fn start(program: &Path, args: &[String], log: &Path) -> Result<RunningProgram> {
    if let Some(dir) = log.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let file = std::fs::File::create(log).with_context(|| format!("creating {}", log.display()))?;
    let command = command_line(program, args);
    // One open file for both streams (a shared offset: lines interleave in order).
    let for_stderr = file.try_clone().with_context(|| format!("opening {} twice", log.display()))?;
    let handle = duct::cmd(program, args)
        .stdin_null()
        .stdout_file(file)
        .stderr_file(for_stderr)
        .unchecked()
        .start()
        .with_context(|| format!("starting {command}"))?;
    Ok(RunningProgram { handle, command, started: Instant::now(), log: log.to_path_buf() })
}

impl RunningProgram {
    /// Waits until it exits or `deadline` passes (then kills it).
    pub fn finish(self, deadline: Instant) -> Result<ProgramRun> {
        let output = self.handle.wait_deadline(deadline).with_context(|| format!("waiting for {}", self.command))?;
        let (exit_code, timed_out) = match output {
            Some(output) => (output.status.code(), false),
            None => {
                // Our own child: killing it (and reaping it) is safe.
                let _ = self.handle.kill();
                (None, true)
            }
        };
        Ok(ProgramRun {
            command: self.command,
            exit_code,
            timed_out,
            seconds: self.started.elapsed().as_secs_f64(),
            log_tail: tail(&self.log, LOG_TAIL_LINES),
            log: self.log,
        })
    }
}

/// The last `lines` lines of the file at `path` (empty when unreadable).
pub fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read(path).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn temp(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("primlab-process-{name}-{}.log", std::process::id()))
    }

    /// Runs `sh -c script`, logging to the temp file `name`, until `within` has passed.
    fn shell(name: &str, script: &str, within: Duration) -> ProgramRun {
        start(Path::new("/bin/sh"), &["-c".into(), script.into()], &temp(name))
            .unwrap()
            .finish(Instant::now() + within)
            .unwrap()
    }

    #[test]
    fn a_finished_program_reports_its_exit_and_output() {
        let run = shell("ok", "echo one; echo two >&2; exit 3", Duration::from_secs(20));
        assert_eq!(run.exit_code, Some(3));
        assert!(!run.timed_out && !run.succeeded());
        assert!(run.log_tail.contains("one") && run.log_tail.contains("two"), "{}", run.log_tail);
    }

    #[test]
    fn a_program_past_its_deadline_is_killed() {
        let run = shell("slow", "exec sleep 30", Duration::from_millis(300));
        assert!(run.timed_out);
        assert!(run.seconds < 10.0);
    }

    #[test]
    fn tails_keep_the_last_lines() {
        let log = temp("tail");
        std::fs::write(&log, "a\nb\nc\n").unwrap();
        assert_eq!(tail(&log, 2), "b\nc");
        assert_eq!(tail(Path::new("/nonexistent/primlab"), 2), "");
    }
}

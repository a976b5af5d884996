//! Running a child command with a wall-clock limit. The child starts in a
//! process group of its own, and on timeout the whole group is killed:
//! compute-sanitizer runs the harness child as its own child, and killing
//! only the tool would leave that child holding the GPU.

use anyhow::{Context, Result};
use std::os::unix::process::CommandExt;
use std::time::{Duration, Instant};

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Finished {
    /// Exit code (None when a signal ended it, e.g. our kill).
    pub code: Option<i32>,
    /// Whether the time limit ran out and the group was killed.
    pub timed_out: bool,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// Sends SIGKILL to every process of group `pgid`.
fn kill_group(pgid: u32) -> Result<()> {
    // `kill -KILL -- -PGID`: a negative id names a process group (POSIX kill).
    let status = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .context("running kill(1) on a timed-out process group")?;
    if !status.success() {
        anyhow::bail!("kill -KILL -- -{pgid} failed ({status})");
    }
    Ok(())
}

/// Starts `expression` (already redirected by the caller) in a new process
/// group and waits for it, killing the group after `timeout`.
pub fn run_with_timeout(expression: duct::Expression, timeout: Duration, what: &str) -> Result<Finished> {
    let started = Instant::now();
    let handle = expression
        .unchecked()
        .before_spawn(|command| {
            // pgid = the child's pid: it and everything it starts share it.
            command.process_group(0);
            Ok(())
        })
        .start()
        .with_context(|| format!("starting {what}"))?;
    let pgid = handle.pids().first().copied();
    loop {
        if let Some(output) = handle.try_wait().with_context(|| format!("waiting for {what}"))? {
            return Ok(Finished {
                code: output.status.code(),
                timed_out: false,
                seconds: started.elapsed().as_secs_f64(),
            });
        }
        if started.elapsed() > timeout {
            let group_killed = match pgid {
                Some(pgid) => kill_group(pgid),
                None => Err(anyhow::anyhow!("no process id")),
            };
            // Reaps the group leader (and kills it directly should the group kill have failed).
            let direct = handle.kill();
            if let Err(e) = group_killed {
                // The leader is gone either way; its children may not be, and that must be said.
                eprintln!("warning: {what} timed out and its process group could not be killed: {e:#}");
                direct.with_context(|| format!("killing a timed-out {what}"))?;
            }
            return Ok(Finished { code: None, timed_out: true, seconds: started.elapsed().as_secs_f64() });
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeout_kills_the_grandchildren_too() {
        let dir = std::env::temp_dir().join(format!("primlab-pgroup-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pid_file = dir.join("grandchild.pid");
        // The shell starts a grandchild that would outlive it, records its pid, and waits.
        let script = format!("sleep 30 & echo $! > {}; wait", pid_file.display());
        let finished = run_with_timeout(duct::cmd!("sh", "-c", script), Duration::from_millis(700), "sh").unwrap();
        assert!(finished.timed_out);
        assert_eq!(finished.code, None);
        let pid = std::fs::read_to_string(&pid_file).unwrap().trim().to_string();
        // kill -0 fails once the process is gone (a zombie is reaped by init soon after).
        let mut alive = true;
        for _ in 0..50 {
            let probe =
                std::process::Command::new("kill").args(["-0", &pid]).stderr(std::process::Stdio::null()).status();
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            if !probe.map(|s| s.success()).unwrap_or(false) || stat.contains(") Z ") {
                alive = false;
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        assert!(!alive, "grandchild {pid} survived the timeout");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_command_that_finishes_reports_its_exit_code() {
        let finished = run_with_timeout(duct::cmd!("sh", "-c", "exit 3"), Duration::from_secs(20), "sh").unwrap();
        assert_eq!(finished, Finished { code: Some(3), timed_out: false, seconds: finished.seconds });
    }
}

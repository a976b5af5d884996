//! The watchdog: GPU cases run in a child process (a *worker*) that reports
//! each case to its parent as JSON lines; the parent gives every case a
//! deadline, and a case past it is a failure (`did not finish within S s`).
//! The parent then kills the worker, which tears its CUDA context down (a
//! kernel that spins forever dies with its process; nothing else can stop
//! it), and starts a new worker at the next case, so the remaining cases
//! still run and are counted. A worker that dies during a case (a crash, a
//! sticky driver error that exits) fails that case the same way.
//!
//! Protocol (worker stdout, one JSON object a line; any other line, such as
//! a kernel's device printf, is passed on to stderr):
//! `plan` (how many cases the catalogue has), then per case `start` (its id
//! and deadline) and `finish` (its result), and `done` at the end.

use crate::sweep::case::{CaseId, CaseResult, Verdict};
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// One line of a worker's report.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum WorkerEvent {
    /// The catalogue the worker walks has `cases` cases (it starts at its `--worker-from`).
    Plan {
        /// Cases in the whole catalogue.
        cases: usize,
        /// The worker's build ([`build_id`]); absent from a worker built before it was sent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        build: Option<String>,
    },
    /// Case `index` starts; it must finish within `deadline_ms`.
    Start {
        /// Position in the catalogue.
        index: usize,
        /// The case.
        id: CaseId,
        /// Its deadline in milliseconds.
        deadline_ms: u64,
        /// The host memory the case needs at most, and what was free as it started
        /// (bytes; said when a case is killed for memory).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        memory: Option<(u64, u64)>,
    },
    /// The case in flight enters a new phase (say, its launches after its
    /// inputs were made): its clock restarts with this deadline.
    Phase {
        /// The phase's deadline in milliseconds.
        deadline_ms: u64,
    },
    /// Case `index` failed a comparison: the mismatch summary to print
    /// under its failure line (sent just before its `Finish`).
    Detail {
        /// Position in the catalogue.
        index: usize,
        /// The summary's lines.
        lines: Vec<String>,
    },
    /// Case `index`'s float sums came this close to their bound: |error| /
    /// bound at their worst element, and a line saying where (a typed
    /// contract's; sent just before its `Finish`).
    Accuracy {
        /// Position in the catalogue.
        index: usize,
        /// |error| / bound at the worst element (above 1: it failed).
        ratio: f64,
        /// Where, in words.
        line: String,
    },
    /// Case `index` finished.
    Finish {
        /// Position in the catalogue.
        index: usize,
        /// Its result.
        result: CaseResult,
    },
    /// Every case from the worker's start was run.
    Done,
}

/// How long a case may take to make its inputs and the model's answer
/// (host work only: no kernel has run yet). Generous, since nothing can hang
/// here but the machine may be shared: the exact (rug) sums of 2^24 floats
/// take seconds on their own.
pub fn inputs_deadline(n: usize) -> Duration {
    Duration::from_secs(120) + Duration::from_nanos((n as u64).saturating_mul(500))
}

/// How long the runs of a case whose inputs are ready may take (the
/// launches, copies back and comparisons of `runs` runs): a kernel that
/// hangs is caught this long after the inputs were ready. It allows for our
/// slowest variants (a serial one-thread scan of 2^22 items; one float
/// atomic per element at 2^28, 0.47 s), for the host's share of each run
/// (copies and comparison, about 10-20 ns an element on the H200's host,
/// an exact rug sum per run for the float sums) and for a machine shared with
/// other jobs: 30 s plus 25 ns an element a run (43 s for two runs at 2^28,
/// 2 min at 2^31).
pub fn runs_deadline(n: usize, runs: u32) -> Duration {
    const SETUP: Duration = Duration::from_secs(30);
    const PER_ELEMENT_RUN_NS: u64 = 25;
    SETUP + Duration::from_nanos((n as u64).saturating_mul(PER_ELEMENT_RUN_NS).saturating_mul(runs as u64))
}

/// How long a worker may take before its first case (opening the GPU,
/// compiling every kernel family with NVRTC).
pub const STARTUP_DEADLINE: Duration = Duration::from_secs(600);

/// The failure of a case that did not finish in time.
pub fn timed_out(id: CaseId, deadline: Duration, millis: u64) -> CaseResult {
    let verdict = Verdict::fail("a result", format!("did not finish within {} s", deadline.as_secs()), "watchdog");
    CaseResult::new(id, verdict, millis)
}

/// What happened to a case during which the worker died. Killed by SIGKILL,
/// which the watchdog did not send, it was the host (the kernel's
/// out-of-memory killer, most often): the case could not run, which is no
/// fault of the kernel's; any other death is a crash of the case.
fn died(id: CaseId, status: &str, memory: Option<(u64, u64)>, millis: u64) -> CaseResult {
    let verdict = if status.contains("SIGKILL") || status.contains("signal: 9") {
        let needs = memory.map_or(String::new(), |(needs, free)| {
            format!(
                ": the case needs about {:.1} GB of host memory, {:.1} GB were free as it started",
                gb(needs),
                gb(free)
            )
        });
        Verdict::Skipped {
            reason: format!(
                "could not run: the process was killed during the case ({status}), most often because the host ran \
                 out of memory{needs}"
            ),
        }
    } else {
        Verdict::fail("a result", format!("the process died during the case ({status})"), "crash")
    };
    CaseResult::new(id, verdict, millis)
}

/// Bytes in GB (10^9).
pub fn gb(bytes: u64) -> f64 {
    bytes as f64 / 1e9
}

/// Writes one event as a JSON line on stdout (the worker's side).
pub fn report(event: &WorkerEvent) {
    let mut out = std::io::stdout().lock();
    if let Ok(line) = serde_json::to_string(event) {
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}

/// What a worker says it is: this crate's version and the verdict hash of
/// the sources it was built from. A check run from the library (a test
/// binary, whose workers are a `harness` executable found apart from it)
/// refuses a worker that says otherwise, or says nothing.
pub fn build_id() -> String {
    format!("harness {} verdict hash {}", env!("CARGO_PKG_VERSION"), crate::verdict_hash::VERDICT_HASH)
}

/// A worker to supervise: `program args... --worker-from K`.
#[derive(Debug, Clone)]
pub struct Worker {
    /// The executable (the harness itself, or the one a library caller names).
    pub program: PathBuf,
    /// Its arguments, without `--worker-from`.
    pub args: Vec<String>,
    /// The deadline before the first `start`.
    pub startup: Duration,
    /// What its `plan` must say, when the worker is not this executable:
    /// its [`build_id`] and how many cases its catalogue has (the parent's
    /// plan); a worker that differs is ended and the run refused.
    pub expect: Option<(String, usize)>,
}

impl Worker {
    /// A worker of this harness executable.
    pub fn of_self(args: Vec<String>) -> Result<Worker> {
        let program = std::env::current_exe().context("locating the harness executable")?;
        Ok(Worker { program, args, startup: STARTUP_DEADLINE, expect: None })
    }

    /// A worker of the harness executable at `program` (a library caller's),
    /// held to this build and to a catalogue of `cases` cases.
    pub fn of_program(program: PathBuf, args: Vec<String>, cases: usize) -> Worker {
        Worker { program, args, startup: STARTUP_DEADLINE, expect: Some((build_id(), cases)) }
    }

    fn spawn(&self, from: usize) -> Result<(Child, Receiver<String>)> {
        let mut child = Command::new(&self.program)
            .args(&self.args)
            .args(["--worker-from", &from.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("starting the case worker {}", self.program.display()))?;
        let stdout = child.stdout.take().context("the worker's stdout")?;
        let (send, receive) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(|l| l.ok()) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        Ok((child, receive))
    }
}

/// What the parent hears of its cases as they end.
pub trait Listener {
    /// The catalogue's size, when the first worker reports it.
    fn planned(&mut self, _cases: usize) {}
    /// The mismatch summary of the case in flight (before its `finished`).
    fn detail(&mut self, _lines: Vec<String>) {}
    /// How close the case in flight's float sums came to their bound (before its `finished`).
    fn accuracy(&mut self, _ratio: f64, _line: String) {}
    /// A case ended (ran, timed out, or its worker died): go on, or stop
    /// here (the worker is ended and the later cases are not run).
    fn finished(&mut self, result: &CaseResult) -> Flow;
}

/// Whether a supervised run goes on after a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Run the next case.
    Go,
    /// End the run here.
    Stop,
}

/// The case in flight.
struct Current {
    index: usize,
    id: CaseId,
    deadline: Duration,
    started: Instant,
    memory: Option<(u64, u64)>,
}

/// How one worker's run ended.
enum Ended {
    /// It reported `done`.
    Done,
    /// It stopped before the end (a case timed out or it died during one,
    /// or it left between two cases): a new worker goes on at this case.
    ResumeAt(usize),
}

/// Runs every case through workers: one worker normally, a new one after
/// each case that timed out or during which the worker died. Returns the
/// results in catalogue order, each case once.
pub fn supervise(worker: &Worker, listener: &mut dyn Listener) -> Result<Vec<CaseResult>> {
    let mut results = Vec::new();
    let mut from = 0;
    let mut total = None;
    loop {
        let (child, lines) = worker.spawn(from)?;
        match run_worker(worker, child, &lines, from, &mut total, &mut results, listener)? {
            Ended::Done => return Ok(results),
            Ended::ResumeAt(next) => {
                from = next;
                if total.is_some_and(|t| from >= t) {
                    return Ok(results);
                }
            }
        }
    }
}

/// Follows one worker until it is done or a case fails it.
fn run_worker(
    worker: &Worker,
    mut child: Child,
    lines: &Receiver<String>,
    from: usize,
    total: &mut Option<usize>,
    results: &mut Vec<CaseResult>,
    listener: &mut dyn Listener,
) -> Result<Ended> {
    // Between cases (and before the first) the worker gets the start-up
    // deadline, counted from its last event.
    let mut idle_since = Instant::now();
    let mut current: Option<Current> = None;
    let mut next = from;
    loop {
        let wait = match &current {
            Some(c) => c.deadline.saturating_sub(c.started.elapsed()),
            None => worker.startup.saturating_sub(idle_since.elapsed()).max(Duration::from_millis(1)),
        };
        let line = match lines.recv_timeout(wait) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => {
                kill(&mut child);
                let Some(c) = current else {
                    bail!("the case worker started no case within {} s", worker.startup.as_secs());
                };
                let result = timed_out(c.id, c.deadline, c.started.elapsed().as_millis() as u64);
                let flow = listener.finished(&result);
                results.push(result);
                return Ok(if flow == Flow::Stop { Ended::Done } else { Ended::ResumeAt(c.index + 1) });
            }
            Err(RecvTimeoutError::Disconnected) => {
                let status = child.wait().map(|s| s.to_string()).unwrap_or_else(|e| format!("wait failed: {e}"));
                let Some(c) = current else {
                    // Left between two cases (say, its context broke): go on
                    // with a new worker, unless it ran no case at all.
                    if next > from {
                        return Ok(Ended::ResumeAt(next));
                    }
                    bail!("the case worker ended before its next case ({status}); it started at case {from}");
                };
                let result = died(c.id, &status, c.memory, c.started.elapsed().as_millis() as u64);
                let flow = listener.finished(&result);
                results.push(result);
                return Ok(if flow == Flow::Stop { Ended::Done } else { Ended::ResumeAt(c.index + 1) });
            }
        };
        // Anything else on the worker's stdout (a user kernel's device
        // printf, flushed at its next synchronisation) is passed on, not an error.
        let Ok(event) = serde_json::from_str::<WorkerEvent>(&line) else {
            eprintln!("{line}");
            continue;
        };
        match event {
            WorkerEvent::Plan { cases, build } => {
                if let Some((want, planned)) = &worker.expect {
                    if build.as_ref() != Some(want) || cases != *planned {
                        kill(&mut child);
                        let said = build.as_deref().unwrap_or("no build");
                        bail!(
                            "the case worker {} is another build: it says {said} with {cases} cases, this library is \
                             {want} with {planned}; build both from the same sources (`cargo build -p harness`)",
                            worker.program.display()
                        );
                    }
                }
                if total.is_none() {
                    listener.planned(cases);
                }
                *total = Some(cases);
                if from >= cases {
                    kill(&mut child);
                    return Ok(Ended::Done);
                }
            }
            WorkerEvent::Start { index, id, deadline_ms, memory } => {
                let deadline = Duration::from_millis(deadline_ms);
                current = Some(Current { index, id, deadline, started: Instant::now(), memory });
            }
            WorkerEvent::Phase { deadline_ms } => {
                if let Some(c) = current.as_mut() {
                    c.deadline = Duration::from_millis(deadline_ms);
                    c.started = Instant::now();
                }
            }
            WorkerEvent::Detail { lines, .. } => listener.detail(lines),
            WorkerEvent::Accuracy { ratio, line, .. } => listener.accuracy(ratio, line),
            WorkerEvent::Finish { index, result } => {
                current = None;
                idle_since = Instant::now();
                next = index + 1;
                let flow = listener.finished(&result);
                results.push(result);
                if flow == Flow::Stop {
                    kill(&mut child);
                    return Ok(Ended::Done);
                }
            }
            WorkerEvent::Done => {
                let _ = child.wait();
                return Ok(Ended::Done);
            }
        }
    }
}

/// Ends a worker (SIGKILL: a spinning kernel ignores anything gentler) and reaps it.
fn kill(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// How long one case may take under a compute-sanitizer tool (which slows
/// kernels by one to two orders of magnitude; the sanitizer sizes are small).
pub fn sanitized_case_deadline(n: usize) -> Duration {
    Duration::from_secs(120) + Duration::from_micros((n as u64).saturating_mul(100))
}

/// The watchdog inside a process that cannot be supervised case by case (a
/// child of compute-sanitizer, whose parent only reads its log): a thread
/// that, when the armed case passes its deadline, prints the case's failure
/// as `@@primlab fail <line>` (the sanitizer log's failure marker) and kills
/// its own process, which tears the CUDA context down. The job then reports
/// that case failed and the cases after it not run.
pub struct InProcess {
    armed: std::sync::Arc<std::sync::Mutex<Option<(CaseId, Instant, Duration)>>>,
}

impl InProcess {
    /// Starts the watching thread (it lives as long as the process).
    pub fn start() -> InProcess {
        let armed: std::sync::Arc<std::sync::Mutex<Option<(CaseId, Instant, Duration)>>> = Default::default();
        let watched = armed.clone();
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(200));
            let guard = watched.lock().unwrap_or_else(|p| p.into_inner());
            if let Some((id, started, deadline)) = guard.as_ref().filter(|(_, s, d)| s.elapsed() > *d) {
                let result = timed_out(id.clone(), *deadline, started.elapsed().as_millis() as u64);
                if let Verdict::Fail(m) = &result.verdict {
                    let mut out = std::io::stdout().lock();
                    let _ = writeln!(out, "@@primlab fail {}", crate::sweep::case::failure_line(&result.id, m));
                    let _ = out.flush();
                }
                kill_self();
            }
        });
        InProcess { armed }
    }

    /// Case `id` starts now and must end within `deadline`.
    pub fn arm(&self, id: &CaseId, deadline: Duration) {
        *self.armed.lock().unwrap_or_else(|p| p.into_inner()) = Some((id.clone(), Instant::now(), deadline));
    }

    /// The case ended.
    pub fn disarm(&self) {
        *self.armed.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

/// SIGKILL to this process: a spinning kernel keeps the process alive
/// through anything gentler, and exit handlers could wait on the GPU.
fn kill_self() -> ! {
    let pid = std::process::id().to_string();
    let _ = Command::new("kill").args(["-KILL", &pid]).status();
    std::process::abort()
}

#[cfg(test)]
#[path = "watchdog_tests.rs"]
mod tests;

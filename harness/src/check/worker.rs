//! Where `check`'s cases run: a watchdog worker process supervised by the
//! `check` command (a case past its deadline fails, `did not finish within
//! S s`, and a new worker goes on with the next case), or the
//! compute-sanitizer child (case markers, one run a case, scratch left
//! uninitialised, the in-process watchdog).
//!
//! In a worker each case runs twice on the same buffers, under the two
//! poisons, and a case whose launches have more than one block runs a third
//! time beside the schedule-perturbing kernel ([`super::runs`]).
//! Scratch carries over from run to run and case to case.

use super::host_memory;
use super::launch::{self, Loaded, Scratch};
use super::manifest::{at, Manifest};
use super::perturb::Perturber;
use super::poison::Poison;
use super::runs::{run_checked, setup_failed, Runs};
use super::watchdog::{self, inputs_deadline, report, runs_deadline, WorkerEvent};
use super::CheckOptions;
use crate::sanitize::parse::{CASE_MARKER, DONE_MARKER};
use crate::sweep::case::{failure_line, CaseResult, Verdict};
use crate::sweep::raw::RawSpec;
use crate::sweep::SweepPlan;
use anyhow::Result;
use kernels::Gpu;
use std::io::Write;
use std::time::Instant;

/// The runs a user kernel's case gets at `n`: always two; a third,
/// perturbed, when some launch has more than one block, up to
/// [`PERTURB_MAX_LEN`] (beyond it the grids hold every SM many times over,
/// and a share held for a moment changes little while the host's share of
/// a case, its copies and comparison, grows with n).
pub fn runs_at(manifest: &Manifest, n: usize) -> Runs {
    // A grid of the case's parameters (a block per row) is taken to have several blocks.
    let multi_block = manifest.launches.iter().any(|l| l.grid.names_a_parameter() || at(&l.grid, n) > 1);
    Runs { repeat: true, perturb: multi_block && n <= PERTURB_MAX_LEN }
}

/// The largest size at which user kernels run beside the perturbing kernel.
pub const PERTURB_MAX_LEN: usize = 1 << 22;

/// The worker: cases from `from` on, reported as JSON lines.
pub fn run(args: &CheckOptions, seed: u64, sizes: Vec<usize>, from: usize) -> Result<bool> {
    let gpu = Gpu::open(kernels::GpuOptions { ordinal: 0, mutant: 0 })?;
    let (manifest, sizes) = super::load_manifest(args, sizes, Some(&gpu))?;
    let loaded = launch::load(&gpu, &manifest)?;
    let mut perturber = Perturber::new(&gpu)?;
    let plan = SweepPlan::of_primitive(manifest.primitive, &sizes, seed);
    let specs = super::catalogue::cases(&plan, &manifest, args.deep);
    report(&WorkerEvent::Plan { cases: specs.len(), build: Some(watchdog::build_id()) });
    let mut scratch = Scratch::default();
    for (index, spec) in specs.iter().enumerate().skip(from) {
        let runs = runs_at(&manifest, spec.id.n);
        let deadline = inputs_deadline(spec.id.n);
        let needs = super::budget::host_bytes(&manifest, &spec.id, super::streamed::stream_from_checked());
        let needs = u64::try_from(needs).unwrap_or(u64::MAX);
        let start = |memory| WorkerEvent::Start {
            index,
            id: spec.id.clone(),
            deadline_ms: deadline.as_millis() as u64,
            memory,
        };
        report(&start(host_memory::available().map(|free| (needs, free))));
        // A large case holds its share of the host's memory, waiting while the other checks'
        // large cases leave no room for it (the clock restarts meanwhile).
        let _share = if needs >= host_memory::LARGE_CASE_BYTES {
            let waiting = || report(&WorkerEvent::Phase { deadline_ms: deadline.as_millis() as u64 });
            Some(host_memory::HostShare::take(needs, waiting)?)
        } else {
            None
        };
        let free = host_memory::available();
        if let Some(why) = free.and_then(|free| host_memory::refusal(needs, free)) {
            let result = CaseResult::new(spec.id.clone(), Verdict::Skipped { reason: why }, 0);
            report(&WorkerEvent::Finish { index, result });
            continue;
        }
        let _ = (crate::cases::rules::take_detail(), super::streamed::judge::take_detail());
        let _ = crate::cases::rules::take_accuracy();
        let started = Instant::now();
        let verdict = run_case(&gpu, &manifest, &loaded, spec, &mut scratch, false, |gpu, run| {
            // The inputs are ready: from here a hang costs the runs' deadline only.
            let deadline = runs_deadline(spec.id.n, runs.count());
            report(&WorkerEvent::Phase { deadline_ms: deadline.as_millis() as u64 });
            run_checked(gpu, index, runs, Some(&mut perturber), run)
        });
        if let Some((ratio, line)) = crate::cases::rules::take_accuracy() {
            report(&WorkerEvent::Accuracy { index, ratio, line });
        }
        let mut detail = crate::cases::rules::take_detail();
        detail.extend(super::streamed::judge::take_detail());
        if !verdict.passed() && !detail.is_empty() {
            report(&WorkerEvent::Detail { index, lines: detail });
        }
        let result = CaseResult::new(spec.id.clone(), verdict, started.elapsed().as_millis() as u64);
        report(&WorkerEvent::Finish { index, result });
        // A sticky error (an illegal address, a trap) breaks this context for
        // every later case: leave, and the supervisor starts a new worker at
        // the next case.
        if gpu.synchronize().is_err() {
            return Ok(true);
        }
    }
    report(&WorkerEvent::Done);
    Ok(true)
}

/// Generates one case, prepares its buffers and scratch (`fresh_uninit`:
/// see [`Scratch::prepare`]), and hands the single run to `runs` (which runs
/// it as often as it decides).
fn run_case(
    gpu: &Gpu,
    manifest: &Manifest,
    loaded: &Loaded,
    spec: &RawSpec,
    scratch: &mut Scratch,
    fresh_uninit: bool,
    runs: impl FnOnce(&Gpu, &mut dyn FnMut(Poison) -> Verdict) -> Verdict,
) -> Verdict {
    let n = spec.id.n;
    if let Some(case) = super::streamed::case_of(manifest.contract, &spec.id, super::streamed::stream_from_checked()) {
        return super::streamed::gpu::run_case(gpu, manifest, loaded, &case, (scratch, fresh_uninit), runs);
    }
    // A large case of a streamed contract is made from its pieces, on every core.
    let made = super::streamed::whole_case(manifest.contract, &spec.id).unwrap_or_else(|| (spec.make)());
    let case = match made {
        Ok(case) => case,
        Err(e) => return super::runs::not_made(e),
    };
    let mut buffers = match launch::prepare(gpu, manifest, &case, n) {
        Ok(b) => b,
        Err(e) => return setup_failed(&e),
    };
    if let Err(e) = scratch.prepare(gpu, manifest, n, fresh_uninit) {
        return setup_failed(&e);
    }
    let on = launch::RunInputs { manifest, loaded, case: &case };
    runs(gpu, &mut |poison| launch::run_once(gpu, &on, &mut buffers, scratch, poison))
}

/// Prints failures and progress as the supervised cases end.
struct CheckListener<'a> {
    args: &'a CheckOptions,
    seed: u64,
    progress: Option<crate::progress::Progress>,
    shown: usize,
    failed: usize,
    /// The mismatch summary of the case in flight, printed under its failure line.
    detail: Vec<String>,
    /// The float sums' worst error against their bound over the passing cases (ratio, line).
    closest: Option<(f64, String)>,
    /// The case in flight's (ratio, line), kept if it passes.
    accuracy: Option<(f64, String)>,
    /// Every failing case's lines, as printed (shown or not).
    failures: Vec<super::FailureLines>,
}

impl watchdog::Listener for CheckListener<'_> {
    fn planned(&mut self, cases: usize) {
        self.progress = Some(crate::progress::Progress::new("check", cases as u64));
    }

    fn detail(&mut self, lines: Vec<String>) {
        self.detail = lines;
    }

    fn accuracy(&mut self, ratio: f64, line: String) {
        self.accuracy = Some((ratio, line));
    }

    fn finished(&mut self, result: &CaseResult) -> watchdog::Flow {
        let detail = std::mem::take(&mut self.detail);
        if let (Some((ratio, line)), Verdict::Pass) = (self.accuracy.take(), &result.verdict) {
            if self.closest.as_ref().is_none_or(|(worst, _)| ratio > *worst) {
                let case = format!("{} n={} {}", result.id.variant, result.id.size, result.id.family);
                self.closest = Some((ratio, format!("{case}: {line}")));
            }
        }
        // Every failure is kept for the result, printed as the progress allows.
        let failure = match &result.verdict {
            Verdict::Fail(m) => {
                self.failed += 1;
                let rerun = super::rerun_line(&self.args.manifest, result.id.n, self.seed, result.id.seed);
                let mut details = detail;
                details.push(rerun);
                self.failures
                    .push(super::FailureLines { line: format!("FAIL {}", failure_line(&result.id, m)), details });
                self.failures.last()
            }
            _ => None,
        };
        let Some(p) = &self.progress else { return self.flow() };
        if let Verdict::Skipped { reason } = &result.verdict {
            p.println(&format!("NOT RUN {} n={} {}: {reason}", result.id.variant, result.id.size, result.id.family));
        }
        if let Some(failure) = failure {
            if self.shown < self.args.max_failures_shown {
                self.shown += 1;
                p.println(&failure.text());
            }
        }
        p.step(&result.id.marker());
        self.flow()
    }
}

impl CheckListener<'_> {
    /// Stop once `--maxfail` failures are in (`--all`: never).
    fn flow(&self) -> watchdog::Flow {
        match self.args.maxfail {
            Some(max) if self.failed >= max => watchdog::Flow::Stop,
            _ => watchdog::Flow::Go,
        }
    }
}

/// What the supervised cases gave: their results in catalogue order, and
/// every failure's lines as `check` prints them.
pub struct Supervised {
    /// The cases' results.
    pub results: Vec<CaseResult>,
    /// Every failing case's lines (shown or not).
    pub failures: Vec<super::FailureLines>,
}

/// Runs every case in watchdog workers (`check --worker-from K` children
/// with the same manifest, seed and sizes) of `args.worker`: this
/// executable, or a harness executable a library caller found, held to
/// this build and to a catalogue of `planned` cases.
pub fn supervise(args: &CheckOptions, seed: u64, sizes: &[usize], planned: usize) -> Result<Supervised> {
    let manifest = std::fs::canonicalize(&args.manifest).unwrap_or_else(|_| args.manifest.clone());
    let sizes: Vec<String> = sizes.iter().map(usize::to_string).collect();
    let mut child = vec![
        "check".to_string(),
        "--manifest".into(),
        manifest.display().to_string(),
        "--seed".into(),
        format!("{seed:#x}"),
        "--sizes".into(),
        sizes.join(","),
    ];
    if args.deep {
        child.push("--deep".into());
    }
    let worker = match &args.worker {
        super::WorkerProgram::At(program) => watchdog::Worker::of_program(program.clone(), child, planned),
        super::WorkerProgram::ThisExecutable => watchdog::Worker::of_self(child)?,
        super::WorkerProgram::Missing(why) => anyhow::bail!("{why}"),
    };
    let mut listener = CheckListener {
        args,
        seed,
        progress: None,
        shown: 0,
        failed: 0,
        detail: Vec::new(),
        closest: None,
        accuracy: None,
        failures: Vec::new(),
    };
    let results = watchdog::supervise(&worker, &mut listener)?;
    if let Some(p) = listener.progress {
        p.finish();
    }
    if let Some((_, line)) = listener.closest {
        super::say(&format!("check: float sums of the passing cases came closest to their bound at {line}"));
    }
    Ok(Supervised { results, failures: listener.failures })
}

/// The compute-sanitizer child: every case once, announced by a marker, a
/// failure printed as `@@primlab fail <line>`, a case past its deadline
/// ending the process. Exit 1 on a mismatch.
pub fn run_sanitize_child(gpu: &Gpu, manifest: &Manifest, seed: u64, sizes: &[usize]) -> Result<bool> {
    let loaded = launch::load(gpu, manifest)?;
    // The sanitizer sizes with two data families each.
    let specs = super::sanitize::sanitizer_specs(manifest, sizes, seed);
    let watchdog = watchdog::InProcess::start();
    let mut scratch = Scratch::default();
    let mut failed = 0;
    for spec in &specs {
        say(&format!("{CASE_MARKER} {}", spec.id.marker()));
        watchdog.arm(&spec.id, watchdog::sanitized_case_deadline(spec.id.n));
        let verdict = run_case(gpu, manifest, &loaded, spec, &mut scratch, true, |_, run| run(Poison::First));
        watchdog.disarm();
        if let Verdict::Fail(m) = &verdict {
            failed += 1;
            say(&format!("@@primlab fail {}", failure_line(&spec.id, m)));
        }
    }
    say(&format!("{DONE_MARKER} {} cases, {failed} failed", specs.len()));
    Ok(failed == 0)
}

/// One line on stdout, flushed (the sanitizer log's order is the attribution).
fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

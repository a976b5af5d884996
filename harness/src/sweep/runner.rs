//! Running the GPU catalogue. The unit of work is one input and every case
//! that reads it: prepare the input (generate it, digest it, let the model
//! answer), run its cases, drop it. With markers (the sanitizer child, whose
//! attribution reads the case order) inputs run one after another on one
//! stream; otherwise several workers each take the next input, on a stream
//! of their own, so that host work (generation, the model, digests,
//! comparisons), transfers and kernels of different inputs overlap. The
//! largest inputs start first, and the elements of the inputs held at once
//! stay within a budget taken from the host's free memory. Results keep
//! the catalogue's order whatever order they finish in.

use super::case::{failure_line, CaseResult, Verdict};
use super::gpu::{catalogue, groups, GpuCase};
use super::{out_of_reach, SweepPlan};
use crate::budget::Budget;
use crate::progress::Progress;
use crate::registry::primitive::Primitive;
use anyhow::Result;
use std::collections::BTreeMap;
use std::io::Write;
use std::ops::Range;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How a catalogue is run.
#[derive(Debug, Clone, Copy)]
pub struct RunOptions {
    /// Failures printed in full, with their rerun line (all are counted).
    pub max_shown: usize,
    /// Announce each case on stdout before it runs and print failures as
    /// `@@primlab fail <line>` (the sanitizer child): one case at a time, in order.
    pub markers: bool,
    /// Workers running inputs at once (1: in catalogue order, on the given
    /// `Gpu`'s stream).
    pub workers: usize,
    /// Run each case that passed, of at most [`SECOND_RUN_MAX_LEN`] items, a second time with its buffers poisoned with
    /// [`kernels::SECOND_POISON_BYTE`] ([`second_run`]).
    pub second_run: bool,
}

/// The largest case that runs a second time: the catalogue's sizes up to
/// 2^24 (the 2^28 cases, which would double the sweep's time, and the
/// streamed ones past 2^32 run once).
pub const SECOND_RUN_MAX_LEN: usize = 1 << 24;

impl RunOptions {
    /// A sweep's run: one worker per core.
    pub fn sweep(max_shown: usize) -> RunOptions {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        RunOptions { max_shown, markers: false, workers: cores, second_run: true }
    }

    /// The sanitizer child's run: in order, with markers, once (the
    /// sanitizers watch every access; a second run would double their time).
    pub fn markers() -> RunOptions {
        RunOptions { max_shown: 0, markers: true, workers: 1, second_run: false }
    }
}

/// Where a run's time went: wall-clock time, and thread time summed over
/// workers (preparing inputs; running, comparing and digesting cases).
#[derive(Debug, Clone, Copy, Default)]
pub struct RunTimes {
    /// Seconds from the first input to the last result.
    pub wall: f64,
    /// Seconds spent compiling the kernels before the first case.
    pub compile: f64,
    /// Thread-seconds spent generating inputs.
    pub prepare: f64,
    /// Thread-seconds spent in the cases (GPU, model answers, comparison, digests).
    pub cases: f64,
    /// Workers.
    pub workers: usize,
    /// Cases that ran a second time ([`second_run`]).
    pub second_runs: usize,
}

impl RunTimes {
    /// One line for the log.
    pub fn describe(&self) -> String {
        format!(
            "{:.1} s wall with {} worker(s): kernels compiled in {:.1} s, then {:.1} thread-s preparing inputs, \
             {:.1} thread-s running, comparing and digesting cases ({} of them a second time, buffers poisoned \
             0x{:02X})",
            self.wall,
            self.workers,
            self.compile,
            self.prepare,
            self.cases,
            self.second_runs,
            kernels::SECOND_POISON_BYTE
        )
    }
}

/// Runs every case of `plan`'s catalogue; results in catalogue order.
pub fn run_gpu_cases(gpu: &kernels::Gpu, plan: &SweepPlan, options: RunOptions) -> Result<(Vec<CaseResult>, RunTimes)> {
    let started = Instant::now();
    let cases = catalogue(plan);
    let ranges = groups(&cases);
    let progress = if options.markers { None } else { Some(Progress::new("gpu sweep", cases.len() as u64)) };
    let shared = Shared {
        cases: &cases,
        plan,
        options,
        progress: progress.as_ref(),
        shown: AtomicUsize::new(0),
        results: Mutex::new((0..cases.len()).map(|_| None).collect()),
        prepare_nanos: AtomicUsize::new(0),
        case_nanos: AtomicUsize::new(0),
        second_runs: AtomicUsize::new(0),
        running: Mutex::new(BTreeMap::new()),
    };
    let workers = options.workers.clamp(1, ranges.len().max(1));
    let mut times = RunTimes { workers, ..RunTimes::default() };
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| -> Result<()> {
        scope.spawn(|| shared.heartbeat(&done));
        let ran = if options.markers || workers == 1 {
            ranges.iter().for_each(|range| shared.run_group(gpu, range.clone()));
            Ok(())
        } else {
            let compile_started = Instant::now();
            compile_families(gpu, plan);
            times.compile = compile_started.elapsed().as_secs_f64();
            run_parallel(gpu, &shared, &ranges, workers)
        };
        done.store(true, Ordering::Relaxed);
        ran
    })?;
    if let Some(p) = &progress {
        p.finish();
    }
    times.wall = started.elapsed().as_secs_f64();
    times.prepare = shared.prepare_nanos.load(Ordering::Relaxed) as f64 * 1e-9;
    times.cases = shared.case_nanos.load(Ordering::Relaxed) as f64 * 1e-9;
    times.second_runs = shared.second_runs.load(Ordering::Relaxed);
    let results = shared.results.into_inner().unwrap_or_else(|p| p.into_inner());
    let results = results.into_iter().collect::<Option<Vec<_>>>();
    let results = results.ok_or_else(|| anyhow::anyhow!("a worker stopped before every case had a result"))?;
    Ok((results, times))
}

/// What the workers share.
struct Shared<'a> {
    cases: &'a [GpuCase],
    plan: &'a SweepPlan,
    options: RunOptions,
    progress: Option<&'a Progress>,
    shown: AtomicUsize,
    results: Mutex<Vec<Option<CaseResult>>>,
    prepare_nanos: AtomicUsize,
    case_nanos: AtomicUsize,
    second_runs: AtomicUsize,
    /// The cases in flight (catalogue index) and when each started.
    running: Mutex<BTreeMap<usize, Instant>>,
}

/// How often the sweep names the cases that have run longer than this.
const HEARTBEAT: Duration = Duration::from_secs(60);

/// The cases of `running` that started at least `threshold` before `now`,
/// with their seconds so far.
fn long_running(running: &BTreeMap<usize, Instant>, now: Instant, threshold: Duration) -> Vec<(usize, u64)> {
    running
        .iter()
        .map(|(&index, &started)| (index, now.saturating_duration_since(started)))
        .filter(|(_, spent)| *spent >= threshold)
        .map(|(index, spent)| (index, spent.as_secs()))
        .collect()
}

impl Shared<'_> {
    /// Until `done`: every [`HEARTBEAT`], a line for each case that has run
    /// that long (a large case takes minutes, and a hung one would
    /// otherwise leave the log silent; the progress line names a case only
    /// when it finishes). Not in the sanitizer child, whose stdout is parsed.
    fn heartbeat(&self, done: &AtomicBool) {
        let Some(progress) = self.progress else { return };
        let mut last = Instant::now();
        while !done.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(250));
            if last.elapsed() < HEARTBEAT {
                continue;
            }
            last = Instant::now();
            let running = self.running.lock().unwrap_or_else(|p| p.into_inner()).clone();
            for (index, secs) in long_running(&running, last, HEARTBEAT) {
                progress.println(&format!(
                    "[{}] still running after {secs} s: {}",
                    progress.label(),
                    self.cases[index].id.marker()
                ));
            }
        }
    }

    /// Prepares the input of `range` and runs its cases on `gpu`; cases out
    /// of the device's reach ([`out_of_reach`]) are skipped, their input never made.
    fn run_group(&self, gpu: &kernels::Gpu, range: Range<usize>) {
        if self.skipped_out_of_reach(gpu, range.clone()) {
            return;
        }
        let started = Instant::now();
        let first = range.start;
        let input = self.cases[first].prepare();
        let prepare = started.elapsed();
        add_nanos(&self.prepare_nanos, prepare);
        for index in range {
            let case = &self.cases[index];
            if self.options.markers {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{} {}", crate::sanitize::parse::CASE_MARKER, case.id.marker());
                let _ = out.flush();
            }
            let case_started = Instant::now();
            self.running.lock().unwrap_or_else(|p| p.into_inner()).insert(index, case_started);
            let mut verdict = case.run(gpu, &input);
            if self.options.second_run && verdict == Verdict::Pass && case.id.n <= SECOND_RUN_MAX_LEN {
                verdict = second_run(case.run(&gpu.with_poison_byte(kernels::SECOND_POISON_BYTE), &input));
                self.second_runs.fetch_add(1, Ordering::Relaxed);
            }
            // The model's answers were made for the run: the digests say which
            // input ran and which answer it was compared with.
            let digest = case.reference(&input).ok();
            let spent = case_started.elapsed();
            self.running.lock().unwrap_or_else(|p| p.into_inner()).remove(&index);
            add_nanos(&self.case_nanos, spent);
            // The first case of an input carries its generation, as it always has.
            let millis = (spent + if index == first { prepare } else { Duration::ZERO }).as_millis() as u64;
            self.report(case, &verdict);
            let result = CaseResult::new(case.id.clone(), verdict, millis).with_digest(digest);
            self.results.lock().unwrap_or_else(|p| p.into_inner())[index] = Some(result);
        }
    }

    /// Whether the cases of `range` (one input: one primitive, one n) are out
    /// of `gpu`'s reach; if so each is recorded skipped with the reason.
    fn skipped_out_of_reach(&self, gpu: &kernels::Gpu, range: Range<usize>) -> bool {
        let first = &self.cases[range.start].id;
        let Some(primitive) = Primitive::from_name(&first.primitive) else { return false };
        let Some(reason) = out_of_reach(primitive, first.n, gpu.info().total_memory) else { return false };
        for index in range {
            let case = &self.cases[index];
            let verdict = Verdict::Skipped { reason: reason.clone() };
            self.report(case, &verdict);
            let result = CaseResult::new(case.id.clone(), verdict, 0);
            self.results.lock().unwrap_or_else(|p| p.into_inner())[index] = Some(result);
        }
        true
    }

    /// Prints a failure (as many as `max_shown` in full) and steps the progress.
    fn report(&self, case: &GpuCase, verdict: &Verdict) {
        if let (Verdict::Skipped { reason }, Some(p), false) = (verdict, self.progress, self.options.markers) {
            // A skip is printed as a skip (never as a pass), with its reason.
            p.println(&format!("SKIP {}/{} n={}: {reason}", case.id.primitive, case.id.variant, case.id.size));
        }
        if let Verdict::Fail(m) = verdict {
            let line = failure_line(&case.id, m);
            if self.options.markers {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "@@primlab fail {line}");
                let _ = out.flush();
            } else if self.shown.fetch_add(1, Ordering::Relaxed) < self.options.max_shown {
                if let Some(p) = self.progress {
                    p.println(&format!("FAIL {line}\n     rerun: {}", case.id.repro(self.plan.seed)));
                }
            }
        }
        if let Some(p) = self.progress {
            p.step(&case.id.marker());
        }
    }
}

/// The verdict of a case whose first run passed, from its second run under
/// [`kernels::SECOND_POISON_BYTE`]: our kernels get the defence `check`
/// gives a user's (a kernel that leaves an element unwritten, writes one
/// poison's value, or keeps state from one launch to the next cannot pass a
/// run under each poison). A failure says it was the second run's.
pub fn second_run(verdict: Verdict) -> Verdict {
    match verdict {
        Verdict::Fail(mut m) => {
            m.what = format!("second run (buffers poisoned 0x{:02X}): {}", kernels::SECOND_POISON_BYTE, m.what);
            Verdict::Fail(m)
        }
        Verdict::Skipped { reason } => Verdict::Skipped { reason: format!("second run: {reason}") },
        Verdict::Pass => Verdict::Pass,
    }
}

fn add_nanos(total: &AtomicUsize, spent: Duration) {
    total.fetch_add(spent.as_nanos().min(usize::MAX as u128) as usize, Ordering::Relaxed);
}

/// Compiles the kernel families of the plan's primitives at once, one
/// thread each, so that no worker waits for a compilation another family's
/// worker could have overlapped. A family that does not compile is left
/// to its cases, which report the error.
fn compile_families(gpu: &kernels::Gpu, plan: &SweepPlan) {
    let mut families: Vec<kernels::KernelFamily> = Vec::new();
    for family in Primitive::ALL.into_iter().filter(|p| plan.wants(*p)).flat_map(|p| p.families().iter().copied()) {
        if !families.contains(&family) {
            families.push(family);
        }
    }
    std::thread::scope(|scope| {
        for family in families {
            scope.spawn(move || gpu.module(family).map(|_| ()));
        }
    });
}

/// The elements an input of `range` holds (its largest case's n).
fn weight(cases: &[GpuCase], range: &Range<usize>) -> usize {
    cases[range.clone()].iter().map(|c| c.id.n).max().unwrap_or(1).max(1)
}

/// Elements of inputs held at once: a 64th of the host's available memory
/// in bytes (a prepared input with its answers and the downloaded outputs
/// is at most about 30 bytes an element), at least one 2^28 input and at
/// most eight.
fn element_budget() -> usize {
    let available = std::fs::read_to_string("/proc/meminfo").ok().and_then(|text| {
        let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
        line.split_whitespace().nth(1)?.parse::<usize>().ok().map(|kib| kib * 1024)
    });
    available.map_or(1 << 28, |bytes| bytes / 64).clamp(1 << 28, 8 << 28)
}

/// Runs the inputs of `ranges` on `workers` threads, each with a stream of
/// its own, the largest first.
fn run_parallel(gpu: &kernels::Gpu, shared: &Shared, ranges: &[Range<usize>], workers: usize) -> Result<()> {
    let mut order: Vec<usize> = (0..ranges.len()).collect();
    order.sort_by_key(|&g| std::cmp::Reverse(weight(shared.cases, &ranges[g])));
    let budget = Budget::new(element_budget());
    let next = AtomicUsize::new(0);
    let streams: Vec<kernels::Gpu> = (0..workers).map(|_| gpu.on_new_stream()).collect::<Result<_, _>>()?;
    std::thread::scope(|scope| {
        for stream in &streams {
            let (order, budget, next) = (&order, &budget, &next);
            scope.spawn(move || {
                // The context is current on the thread that opened it only.
                if let Err(e) = stream.context().bind_to_thread() {
                    eprintln!("sweep: a worker could not make the CUDA context current ({e}); its cases will say why");
                }
                while let Some(&g) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let taken = budget.take(weight(shared.cases, &ranges[g]));
                    shared.run_group(stream, ranges[g].clone());
                    budget.give(taken);
                }
            });
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::case::Mismatch;

    /// The heartbeat names the cases in flight for at least its period, with
    /// their seconds, and none younger.
    #[test]
    fn long_running_cases_are_named_with_their_seconds() {
        let now = Instant::now() + Duration::from_secs(1000);
        let running: BTreeMap<usize, Instant> =
            [(3, now - Duration::from_secs(61)), (7, now - Duration::from_secs(5))].into_iter().collect();
        assert_eq!(long_running(&running, now, HEARTBEAT), vec![(3, 61)]);
        assert!(long_running(&BTreeMap::new(), now, HEARTBEAT).is_empty());
        assert_eq!(long_running(&running, now, Duration::ZERO).len(), 2);
    }

    /// The sweep runs a passing case again under the second poison; the
    /// sanitizer child runs each case once.
    #[test]
    fn the_sweep_runs_twice_and_the_sanitizers_once() {
        assert!(RunOptions::sweep(5).second_run);
        assert!(!RunOptions::markers().second_run);
    }

    /// The two poisons differ in every bit, and an unwritten f32 is glaring
    /// under the second (under the first it is about -2.9e-16, which a
    /// tolerance can absorb).
    #[test]
    fn the_second_poison_differs_in_every_bit() {
        assert_eq!(kernels::POISON_BYTE ^ kernels::SECOND_POISON_BYTE, 0xFF);
        let first = f32::from_bits(u32::from_ne_bytes([kernels::POISON_BYTE; 4]));
        let second = f32::from_bits(u32::from_ne_bytes([kernels::SECOND_POISON_BYTE; 4]));
        assert!(first.abs() < 1e-15, "{first}");
        assert!(second.abs() > 1e15, "{second}");
    }

    /// A second run's failure says it was the second run's (the rerun line
    /// of the case reproduces both runs); its skip says so; a pass stays one.
    #[test]
    fn second_run_failures_name_the_run() {
        let failed = Verdict::Fail(Mismatch {
            index: Some(3),
            expected: "1".into(),
            got: "1515870810".into(),
            what: "kept items, in order".into(),
        });
        match second_run(failed) {
            Verdict::Fail(m) => {
                assert_eq!(m.what, "second run (buffers poisoned 0x5A): kept items, in order");
                assert_eq!((m.index, m.expected.as_str(), m.got.as_str()), (Some(3), "1", "1515870810"));
            }
            other => panic!("{other:?}"),
        }
        let skipped = second_run(Verdict::Skipped { reason: "device memory".into() });
        assert_eq!(skipped, Verdict::Skipped { reason: "second run: device memory".into() });
        assert_eq!(second_run(Verdict::Pass), Verdict::Pass);
    }
}

//! How a GPU case is run, and the sweep's worker process (the child the
//! [`watchdog`](super::watchdog) supervises).
//!
//! Each case runs twice on the same inputs: under the first poison, then
//! under the second (`kernels::Poison`), so that a kernel that leaves an
//! element unwritten, or happens to write one poison's value, cannot pass
//! both; every run must match the model. A multi-block case then runs a
//! third time while a co-resident kernel holds a share of the SMs
//! ([`Perturber`]), so its blocks run in another order. A failure of a later
//! run names it in its check (`second_run:...`, `perturbed:...`).

use super::case::{CaseResult, Verdict};
use super::gpu::{catalogue, gpu_error, GpuCase};
use super::perturb::Perturber;
use super::watchdog::{inputs_deadline, report, runs_deadline, WorkerEvent};
use super::SweepPlan;
use anyhow::Result;
use kernels::{Gpu, Poison};
use std::time::Instant;

/// Our kernels run twice up to this size (262,145, one past the recursion
/// level at 512^2, included); beyond it the host's share (generation,
/// copies, comparison: about 1.6 s a case at 2^24) would dominate the sweep,
/// and every schedule already ran all its levels but the last here twice.
pub const REPEAT_MAX_LEN: usize = 300_000;
/// The smallest size at which every multi-block schedule of ours has
/// several blocks (the largest single-block tile is 4,096 items).
pub const PERTURB_MIN_LEN: usize = 4097;
/// Our kernels are perturbed up to this size (larger grids hold every SM
/// many times over, so a share held for a moment changes little).
pub const PERTURB_MAX_LEN: usize = REPEAT_MAX_LEN;

/// Which extra runs a case gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Runs {
    /// Run again under the second poison.
    pub repeat: bool,
    /// Run again beside the holding kernel.
    pub perturb: bool,
}

impl Runs {
    /// The runs our own kernels get at size `n`.
    pub fn ours(n: usize) -> Runs {
        Runs { repeat: n <= REPEAT_MAX_LEN, perturb: (PERTURB_MIN_LEN..=PERTURB_MAX_LEN).contains(&n) }
    }

    /// How many times the case runs.
    pub fn count(self) -> u32 {
        1 + u32::from(self.repeat) + u32::from(self.perturb)
    }
}

/// A failure of a later run, with that run named in its check.
fn tagged(verdict: Verdict, run: &str) -> Verdict {
    match verdict {
        Verdict::Fail(mut m) => {
            m.what = format!("{run}:{}", m.what);
            Verdict::Fail(m)
        }
        other => other,
    }
}

/// Runs `run` (one full run of a case: poisoned outputs, launches,
/// comparison with the model) under the first poison, then as `runs` says
/// (case `index` chooses the perturbation). The first failure is the verdict.
pub fn run_checked(
    gpu: &Gpu,
    index: usize,
    runs: Runs,
    perturber: Option<&mut Perturber>,
    mut run: impl FnMut() -> Verdict,
) -> Verdict {
    gpu.set_poison(Poison::First);
    let first = run();
    if !first.passed() || !runs.repeat {
        return first;
    }
    gpu.set_poison(Poison::Second);
    let second = run();
    gpu.set_poison(Poison::First);
    if !second.passed() {
        return tagged(second, "second_run");
    }
    match perturber.filter(|_| runs.perturb) {
        Some(p) => tagged(perturbed(gpu, index, p, run), "perturbed"),
        None => Verdict::Pass,
    }
}

/// One run beside the holding kernel.
fn perturbed(gpu: &Gpu, index: usize, perturber: &mut Perturber, mut run: impl FnMut() -> Verdict) -> Verdict {
    if let Err(e) = perturber.hold(perturber.perturbation(index)) {
        return gpu_error(&e);
    }
    let verdict = run();
    match perturber.release(gpu) {
        Ok(()) => verdict,
        Err(e) => gpu_error(&e),
    }
}

/// The worker: runs the GPU catalogue of `plan` from case `from`, reporting
/// each case as JSON lines ([`WorkerEvent`]). (Sanitizer children run their
/// cases in process, once each and unperturbed: `run_gpu_cases_marked`.)
pub fn run_worker(gpu: &Gpu, plan: &SweepPlan, from: usize) -> Result<()> {
    // Compile before the first case, so compilation never counts against a case's deadline.
    gpu.load_all()?;
    let mut perturber = Some(Perturber::new(gpu)?);
    let cases = catalogue(plan);
    report(&WorkerEvent::Plan { cases: cases.len() });
    for (index, case) in cases.iter().enumerate().skip(from) {
        let runs = Runs::ours(case.id.n);
        let deadline = inputs_deadline(case.id.n);
        report(&WorkerEvent::Start { index, id: case.id.clone(), deadline_ms: deadline.as_millis() as u64 });
        let result = run_one(gpu, case, index, runs, perturber.as_mut());
        report(&WorkerEvent::Finish { index, result });
        // A sticky error (an illegal address, a trap) breaks this context for
        // every later case: leave, and the supervisor starts a new worker at
        // the next case.
        if gpu.synchronize().is_err() {
            return Ok(());
        }
    }
    report(&WorkerEvent::Done);
    Ok(())
}

/// One case of our catalogue with its digests: its input and the model's
/// answer first (host work, under the inputs' deadline), then its runs under
/// their own deadline.
fn run_one(gpu: &Gpu, case: &GpuCase, index: usize, runs: Runs, perturber: Option<&mut Perturber>) -> CaseResult {
    let started = Instant::now();
    // Makes (and keeps, for the runs) the input and the model's answer; its
    // digests say which input ran and which answer it was compared with.
    let digest = (case.reference)().ok();
    let deadline = runs_deadline(case.id.n, runs.count());
    report(&WorkerEvent::Phase { deadline_ms: deadline.as_millis() as u64 });
    let verdict = run_checked(gpu, index, runs, perturber, || (case.run)(gpu));
    CaseResult::new(case.id.clone(), verdict, started.elapsed().as_millis() as u64).with_digest(digest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_small_cases_run_twice_and_multi_block_ones_are_perturbed() {
        assert_eq!(Runs::ours(1), Runs { repeat: true, perturb: false });
        assert_eq!(Runs::ours(262_145), Runs { repeat: true, perturb: true });
        assert_eq!(Runs::ours(1 << 22), Runs { repeat: false, perturb: false });
        assert_eq!(Runs::ours(1 << 28), Runs { repeat: false, perturb: false });
        assert_eq!(Runs::ours(262_145).count(), 3);
    }

    #[test]
    fn a_later_run_names_itself_in_the_check() {
        let Verdict::Fail(m) = tagged(Verdict::fail_at(3, 1, 2, "prefix"), "second_run") else { unreachable!() };
        assert_eq!(m.what, "second_run:prefix");
        assert!(tagged(Verdict::Pass, "perturbed").passed());
    }
}

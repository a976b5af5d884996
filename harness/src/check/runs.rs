//! How one case of a user's kernel is run: each case runs twice on the same
//! inputs, under the first poison, then under the second ([`Poison`]), so
//! that a kernel that leaves an element unwritten, or happens to write one
//! poison's value, cannot pass both; and a kernel that keeps a counter or
//! flag from one launch to the next fails the second run. Every run must
//! match the model. A multi-block case then runs a third time while a
//! co-resident kernel holds a share of the SMs ([`Perturber`]), so its
//! blocks run in another order. A failure of a later run names it in its
//! check (`second_run:...`, `perturbed:...`).

use super::perturb::Perturber;
use super::poison::Poison;
use crate::sweep::case::Verdict;
use crate::sweep::gpu::gpu_error;
use kernels::Gpu;

/// Which extra runs a case gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Runs {
    /// Run again under the second poison.
    pub repeat: bool,
    /// Run again beside the holding kernel.
    pub perturb: bool,
}

impl Runs {
    /// How many times the case runs.
    pub fn count(self) -> u32 {
        1 + u32::from(self.repeat) + u32::from(self.perturb)
    }
}

/// The verdict on a case whose input or model answer could not be made (a
/// count the contract's type cannot hold, a generator's refusal): never the
/// kernel's fault, so the case could not run (`NOT RUN`, counted apart from
/// passes and failures), with why.
pub fn not_made(why: impl std::fmt::Display) -> Verdict {
    Verdict::Skipped { reason: format!("could not run: the case could not be made ({why})") }
}

/// The verdict on a case whose device buffers could not be set up (before
/// any launch of the user's kernel): a device out of memory could not run
/// the case (another process holds memory, or the case with what is
/// resident passes what is free), which is no fault of the kernel's; any
/// other error is the GPU call's failure.
pub fn setup_failed(e: &kernels::GpuError) -> Verdict {
    if out_of_memory(e) {
        return device_full(&e.to_string());
    }
    gpu_error(e)
}

/// The verdict on a case whose buffers the device had no memory for (`why`: the driver's error).
fn device_full(why: &str) -> Verdict {
    let why = why.replace('\n', " ");
    Verdict::Skipped { reason: format!("could not run: the device is out of memory for the case's buffers ({why})") }
}

/// Whether `e` is the driver's out-of-memory error, or a primitive's refusal
/// of buffers that do not fit the free device memory.
fn out_of_memory(e: &kernels::GpuError) -> bool {
    use cudarc::driver::sys::CUresult;
    matches!(e, kernels::GpuError::Driver { source, .. } if source.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY)
        || matches!(e, kernels::GpuError::DeviceMemory { .. })
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

/// Runs `run` (one full run of a case under the poison it is given:
/// poisoned outputs, launches, comparison with the model) under the first
/// poison, then as `runs` says (case `index` chooses the perturbation). The
/// first failure is the verdict.
pub fn run_checked(
    gpu: &Gpu,
    index: usize,
    runs: Runs,
    perturber: Option<&mut Perturber>,
    mut run: impl FnMut(Poison) -> Verdict,
) -> Verdict {
    let first = run(Poison::First);
    if !first.passed() || !runs.repeat {
        return first;
    }
    let second = run(Poison::Second);
    if !second.passed() {
        return tagged(second, "second_run");
    }
    match perturber.filter(|_| runs.perturb) {
        Some(p) => tagged(perturbed(gpu, index, p, || run(Poison::First)), "perturbed"),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_runs_once_twice_or_three_times() {
        assert_eq!(Runs { repeat: false, perturb: false }.count(), 1);
        assert_eq!(Runs { repeat: true, perturb: false }.count(), 2);
        assert_eq!(Runs { repeat: true, perturb: true }.count(), 3);
    }

    #[test]
    fn a_case_that_could_not_be_made_is_not_the_kernels_failure() {
        let Verdict::Skipped { reason } = not_made("a bin count does not fit int32") else { panic!("skipped") };
        assert_eq!(reason, "could not run: the case could not be made (a bin count does not fit int32)");
    }

    #[test]
    fn a_device_out_of_memory_while_setting_up_could_not_run_and_other_errors_fail() {
        use cudarc::driver::{sys::CUresult, DriverError};
        // (The driver's error text needs libcuda: only the decision and the verdict's words are checked here.)
        let error = |code| kernels::GpuError::Driver {
            context: "allocating 17179869184 elements".into(),
            source: DriverError(code),
        };
        assert!(out_of_memory(&error(CUresult::CUDA_ERROR_OUT_OF_MEMORY)));
        assert!(!out_of_memory(&error(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS)));
        assert!(!out_of_memory(&kernels::GpuError::Unavailable { reason: "no device".into() }));
        let Verdict::Skipped { reason } =
            device_full("CUDA driver error in allocating 17179869184 elements:\nout of memory")
        else {
            panic!("a full device is not the kernel's failure")
        };
        assert_eq!(reason, "could not run: the device is out of memory for the case's buffers (CUDA driver error in allocating 17179869184 elements: out of memory)");
    }

    #[test]
    fn a_later_run_names_itself_in_the_check() {
        let Verdict::Fail(m) = tagged(Verdict::fail_at(3, 1, 2, "prefix"), "second_run") else { unreachable!() };
        assert_eq!(m.what, "second_run:prefix");
        assert!(tagged(Verdict::Pass, "perturbed").passed());
    }
}

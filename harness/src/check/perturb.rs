//! Schedule perturbation: a co-resident kernel on a stream of its own holds
//! a varying share of the SMs while a case runs, so the case's blocks start
//! in other orders and at other times. The share and the release times
//! change from case to case ([`Perturbation::of_case`]), so a run of the
//! catalogue sees many schedules.
//!
//! The holding kernel is `check`'s own tool, compiled with NVRTC from the
//! source text below like a user's `.cu` file: it decides no verdict of our
//! primitives, so it stays outside the verdict hash, which covers every
//! `.cu` file of the tree.

use cudarc::driver::sys::{CUdevice_attribute, CUfunction_attribute};
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, PushKernelArg};
use cudarc::nvrtc::Ptx;
use kernels::{Gpu, GpuError, GpuResult};
use std::sync::Arc;

/// The kernel's source.
const SOURCE: &str = r#"// Schedule perturbation: a kernel that holds a share of the SMs while the
// kernels under test run on the rest, so their blocks are scheduled in other
// orders and at other times than on an idle GPU. Results that depend on
// block order (look-back that trusts blockIdx order, a missing fence before a
// flag, order-dependent atomics) show up here, where no sanitizer looks.
//
// Each block asks for a whole SM's shared memory (the launch sets it), so no
// two of them share an SM and the grid size is the number of SMs held.
// Even blocks hold until the host releases them; odd blocks let go one after
// another, stagger_ns apart, so the share held changes while the case runs.
// Every block also gives up at hold_ns: nothing may wait on this kernel
// forever (a kernel under test that needs every SM resident still ends).
extern "C" __global__ void __launch_bounds__(1024, 1)
primlab_hold_sms(const volatile unsigned int* release, unsigned long long hold_ns, unsigned long long stagger_ns) {
    extern __shared__ unsigned char held[];
    unsigned long long start;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    const unsigned long long limit =
        start + ((blockIdx.x & 1u) ? stagger_ns * (blockIdx.x / 2u + 1u) : hold_ns);
    if (threadIdx.x == 0) {
        held[0] = 0;
        unsigned long long now = start;
        while (*release == 0u && now < limit) {
            __nanosleep(2000);
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        }
    }
    // Every thread stays until thread 0 lets go (the block keeps its SM).
    __syncthreads();
}
"#;
/// The holding kernel's name in its module.
pub const KERNEL: &str = "primlab_hold_sms";
/// Threads of one holding block (with a whole SM's shared memory, one block per SM).
pub const THREADS: u32 = 1024;
/// The longest any block holds its SM: a cap, so that a kernel under test
/// that needs every SM resident still ends (later, not never).
pub const HOLD_CAP_NS: u64 = 2_000_000_000;

/// The holding kernel's PTX for virtual architecture `arch` (`compute_90`),
/// as [`Perturber::new`] loads it; a runner that launches user code itself
/// (the Python package) loads and launches the same text.
pub fn ptx(arch: &str) -> GpuResult<String> {
    Ok(kernels::user_source::compile_user_ptx("primlab_hold_sms.cu", SOURCE, arch, &[])?.ptx)
}

/// One case's perturbation: how many SMs are held, and how fast the odd
/// blocks let go of theirs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Perturbation {
    /// Blocks (= SMs) held at the start.
    pub sms_held: u32,
    /// Nanoseconds between two odd blocks' releases.
    pub stagger_ns: u64,
}

impl Perturbation {
    /// The perturbation of case `index` on a GPU of `sm_count` SMs: a
    /// quarter, half, three quarters or all but one of the SMs, with odd
    /// blocks letting go every 5, 50 or 500 microseconds.
    pub fn of_case(index: usize, sm_count: u32) -> Perturbation {
        let sms = sm_count.max(2);
        let sms_held = match index % 4 {
            0 => sms / 4,
            1 => sms / 2,
            2 => 3 * sms / 4,
            _ => sms - 1,
        }
        .max(1);
        let stagger_ns = [5_000, 50_000, 500_000][(index / 4) % 3];
        Perturbation { sms_held, stagger_ns }
    }
}

/// The holding kernel, loaded, with its stream and release flag.
pub struct Perturber {
    function: CudaFunction,
    stream: Arc<CudaStream>,
    release: CudaSlice<u32>,
    shared_bytes: u32,
    sm_count: u32,
}

fn driver<T>(result: Result<T, cudarc::driver::DriverError>, what: &str) -> GpuResult<T> {
    result.map_err(|source| GpuError::Driver { context: format!("schedule perturbation: {what}"), source })
}

impl Perturber {
    /// Compiles and loads the holding kernel on `gpu`'s context, with a
    /// non-blocking stream of its own (so it runs beside the Gpu's stream).
    pub fn new(gpu: &Gpu) -> GpuResult<Perturber> {
        let (major, minor) = gpu.info().compute_capability;
        let ptx = ptx(&format!("compute_{major}{minor}"))?;
        let ctx = gpu.context();
        let module = driver(ctx.load_module(Ptx::from_src(ptx)), "loading the module")?;
        let function = driver(module.load_function(KERNEL), "loading primlab_hold_sms")?;
        let optin = driver(
            ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN),
            "reading the shared memory limit",
        )?;
        let shared_bytes = optin.max(0) as u32;
        driver(
            function.set_attribute(
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                shared_bytes as i32,
            ),
            "allowing a whole SM's shared memory",
        )?;
        let stream = driver(ctx.new_stream(), "creating its stream")?;
        let release = driver(stream.alloc_zeros::<u32>(1), "allocating the release flag")?;
        Ok(Perturber { function, stream, release, shared_bytes, sm_count: gpu.info().sm_count.max(1) as u32 })
    }

    /// The perturbation case `index` gets on this GPU.
    pub fn perturbation(&self, index: usize) -> Perturbation {
        Perturbation::of_case(index, self.sm_count)
    }

    /// Starts holding SMs as `p` says; the caller then enqueues the case on
    /// the Gpu's stream and calls [`Perturber::release`] once it finished.
    pub fn hold(&mut self, p: Perturbation) -> GpuResult<()> {
        driver(self.stream.memset_zeros(&mut self.release), "clearing the release flag")?;
        let config = kernels::launch::config(p.sms_held, THREADS, self.shared_bytes);
        let mut builder = self.stream.launch_builder(&self.function);
        builder.arg(&self.release).arg(&HOLD_CAP_NS).arg(&p.stagger_ns);
        // SAFETY: the kernel takes (const unsigned*, u64, u64), matching these
        // arguments; the flag is a live one-word allocation.
        driver(unsafe { builder.launch(config) }, "launching primlab_hold_sms")?;
        Ok(())
    }

    /// Lets every held SM go (the flag is set from `gpu`'s stream, which is
    /// idle once the case finished) and waits for the holding kernel.
    pub fn release(&mut self, gpu: &Gpu) -> GpuResult<()> {
        super::poison::fill_pattern(gpu, &mut self.release, &1u32.to_le_bytes())?;
        driver(self.stream.synchronize(), "waiting for the held SMs")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_see_different_shares_and_release_rates() {
        let all: std::collections::BTreeSet<_> =
            (0..12).map(|i| Perturbation::of_case(i, 132)).map(|p| (p.sms_held, p.stagger_ns)).collect();
        assert_eq!(all.len(), 12, "twelve consecutive cases get twelve different perturbations");
        for i in 0..12 {
            let p = Perturbation::of_case(i, 132);
            assert!((1..132).contains(&p.sms_held), "{p:?}: at least one SM held and one left free");
        }
        assert_eq!(Perturbation::of_case(3, 1).sms_held, 1, "a one-SM GPU still gets a valid grid");
    }
}

//! A streamed case on the GPU: its buffers allocated whole on the device
//! (the device holds them; the host only pieces), its inputs uploaded a
//! piece at a time, and each run judged a piece at a time ([`super::judge`]).

use super::contracts::StreamedCase;
use super::judge::{judge, Judged};
use super::upload::upload;
use super::DeviceBytes;
use crate::check::launch::{self, Buffers, Loaded, Scratch};
use crate::check::manifest::Manifest;
use crate::check::poison::Poison;
use crate::check::runs::{not_made, setup_failed};
use crate::sweep::case::Verdict;
use crate::sweep::gpu::gpu_error;
use cudarc::driver::CudaSlice;
use kernels::{Gpu, GpuError};
use std::sync::OnceLock;

/// The device's buffers of one case, byte-addressed.
struct OnDevice<'a> {
    gpu: &'a Gpu,
    buffers: &'a mut Buffers,
}

/// A copy's driver error as the case's verdict.
fn copy_failed(what: String) -> impl FnOnce(cudarc::driver::DriverError) -> Verdict {
    move |source| gpu_error(&GpuError::Driver { context: what, source })
}

/// `len` bytes of `buffer` from byte `at`, read back (the copy completes before this returns).
fn read(gpu: &Gpu, buffer: &CudaSlice<u8>, at: usize, len: usize, what: &str) -> Result<Vec<u8>, Verdict> {
    if len == 0 {
        // A piece that appends nothing (a compaction piece keeping no item): no copy.
        return Ok(Vec::new());
    }
    let range = || format!("{what} bytes {at}..{} of {}", at + len, buffer.len());
    let view =
        buffer.try_slice(at..at + len).ok_or_else(|| Verdict::fail("a range within the buffer", range(), "copy"))?;
    let mut host = vec![0u8; len];
    gpu.stream().memcpy_dtoh(&view, &mut host).map_err(copy_failed(format!("reading {}", range())))?;
    gpu.synchronize().map_err(|e| gpu_error(&e))?;
    Ok(host)
}

impl DeviceBytes for OnDevice<'_> {
    fn write_input(&mut self, k: usize, at: usize, bytes: &[u8]) -> Result<(), Verdict> {
        if bytes.is_empty() {
            return Ok(());
        }
        let buffer = &mut self.buffers.inputs[k];
        let range = format!("input {k} bytes {at}..{} of {}", at + bytes.len(), buffer.len());
        let Some(mut view) = buffer.try_slice_mut(at..at + bytes.len()) else {
            return Err(Verdict::fail("a range within the buffer", range, "copy"));
        };
        // From pageable memory: the bytes are staged before this returns, so the piece may go.
        self.gpu.stream().memcpy_htod(bytes, &mut view).map_err(copy_failed(format!("writing {range}")))
    }

    fn read_input(&mut self, k: usize, at: usize, len: usize) -> Result<Vec<u8>, Verdict> {
        read(self.gpu, &self.buffers.inputs[k], at, len, &format!("input {k}"))
    }

    fn read_output(&mut self, k: usize, at: usize, len: usize) -> Result<Vec<u8>, Verdict> {
        read(self.gpu, &self.buffers.outputs[k].buffer, at, len, &format!("output {k}"))
    }

    fn whole_input(&mut self, k: usize) -> Result<Vec<u8>, Verdict> {
        self.gpu.download(&self.buffers.inputs[k]).map_err(|e| gpu_error(&e))
    }

    fn whole_output(&mut self, k: usize) -> Result<Vec<u8>, Verdict> {
        self.gpu.download(&self.buffers.outputs[k].buffer).map_err(|e| gpu_error(&e))
    }
}

/// Elements of the self-test's case: a few pieces of [`super::judge`]'s self-test.
const SELF_TEST_N: usize = 4099;

/// The self-test of this process's device copies ([`self_test`]), run once,
/// at the first streamed case.
static SELF_TEST: OnceLock<Result<(), String>> = OnceLock::new();

/// Bytes of each input buffer of `case`.
fn input_bytes(manifest: &Manifest, case: &StreamedCase) -> Vec<usize> {
    manifest.contract.inputs.iter().zip(&case.input_elements).map(|(b, &e)| e * b.dtype.size()).collect()
}

/// Proves this device's copies by range ([`super::judge::self_test`]) on a
/// small case of `manifest`'s contract, in buffers of its own. Error: what
/// differed, or why the test could not be made.
fn self_test(gpu: &Gpu, manifest: &Manifest) -> Result<(), String> {
    let contract = manifest.contract;
    let plan = crate::sweep::SweepPlan::of_primitive(manifest.primitive, &[SELF_TEST_N], 1);
    let specs = crate::sweep::raw::catalogue(&plan, manifest.primitive, contract, "self_test");
    let (spec, case) = specs
        .iter()
        .filter(|s| s.id.n == SELF_TEST_N)
        .find_map(|s| super::streamed(contract, &s.id).map(|case| (s, case)))
        .ok_or_else(|| format!("no case of {} streams at n = {SELF_TEST_N}", contract.name))?;
    let whole = (spec.make)()?;
    let buffers = launch::unfilled(gpu, manifest, &input_bytes(manifest, &case), &case.output_elements, vec![], case.n);
    let mut buffers = buffers.map_err(|e| e.to_string())?;
    launch::poison_outputs(gpu, &mut buffers, Poison::Second).map_err(|e| e.to_string())?;
    super::judge::self_test(contract, &case, &whole, &mut OnDevice { gpu, buffers: &mut buffers })
}

/// Runs `case`: allocates its buffers, uploads its inputs a piece at a
/// time, prepares the scratch (`fresh_uninit`: see [`Scratch::prepare`]),
/// and hands the single run (launch under a poison, then judge) to `runs`,
/// which runs it as often as it decides. The first streamed case of the
/// process first runs the self-test of the device's copies by range.
pub fn run_case(
    gpu: &Gpu,
    manifest: &Manifest,
    loaded: &Loaded,
    case: &StreamedCase,
    (scratch, fresh_uninit): (&mut Scratch, bool),
    runs: impl FnOnce(&Gpu, &mut dyn FnMut(Poison) -> Verdict) -> Verdict,
) -> Verdict {
    let contract = manifest.contract;
    if let Err(why) = SELF_TEST.get_or_init(|| self_test(gpu, manifest)) {
        return not_made(format!(
            "this device's copies by range failed their self-test, so no case is made in pieces: {why}"
        ));
    }
    let buffers = launch::unfilled(
        gpu,
        manifest,
        &input_bytes(manifest, case),
        &case.output_elements,
        case.params.clone(),
        case.n,
    );
    let mut buffers = match buffers {
        Ok(b) => b,
        Err(e) => return setup_failed(&e),
    };
    let uploaded = match upload(contract, case, super::PIECE, &mut OnDevice { gpu, buffers: &mut buffers }) {
        Ok(u) => u,
        Err(verdict) => return verdict,
    };
    if let Err(e) = scratch.prepare(gpu, manifest, case.n, fresh_uninit) {
        return setup_failed(&e);
    }
    let on = Judged { contract, case, uploaded: &uploaded };
    runs(gpu, &mut |poison| run_once(gpu, manifest, loaded, &on, &mut buffers, scratch, poison))
}

/// One run: launched under `poison`, then judged.
fn run_once(
    gpu: &Gpu,
    manifest: &Manifest,
    loaded: &Loaded,
    on: &Judged,
    buffers: &mut Buffers,
    scratch: &mut Scratch,
    poison: Poison,
) -> Verdict {
    if let Err(verdict) = launch::launch_poisoned(gpu, manifest, loaded, buffers, scratch, poison) {
        return verdict;
    }
    judge(on, poison, &mut OnDevice { gpu, buffers })
}

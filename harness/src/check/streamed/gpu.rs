//! A streamed case on the GPU: its buffers allocated whole on the device
//! (the device holds them; the host only pieces), its inputs uploaded a
//! piece at a time, and each run judged a piece at a time ([`super::judge`]).

use super::contracts::StreamedCase;
use super::judge::{judge, upload, DeviceBytes, Judged};
use crate::check::launch::{self, Buffers, Loaded, Scratch};
use crate::check::manifest::Manifest;
use crate::check::poison::Poison;
use crate::sweep::case::Verdict;
use crate::sweep::gpu::gpu_error;
use cudarc::driver::CudaSlice;
use kernels::{Gpu, GpuError};

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
}

/// Runs `case`: allocates its buffers, uploads its inputs a piece at a time,
/// prepares the scratch (`fresh_uninit`: see [`Scratch::prepare`]), and hands the single run (launch under a poison,
/// then judge) to `runs`, which runs it as often as it decides.
pub fn run_case(
    gpu: &Gpu,
    manifest: &Manifest,
    loaded: &Loaded,
    case: &StreamedCase,
    (scratch, fresh_uninit): (&mut Scratch, bool),
    runs: impl FnOnce(&Gpu, &mut dyn FnMut(Poison) -> Verdict) -> Verdict,
) -> Verdict {
    let contract = manifest.contract;
    let input_bytes: Vec<usize> =
        contract.inputs.iter().zip(&case.input_elements).map(|(b, &e)| e * b.dtype.size()).collect();
    let buffers = launch::unfilled(gpu, manifest, &input_bytes, &case.output_elements, case.params.clone(), case.n);
    let mut buffers = match buffers {
        Ok(b) => b,
        Err(e) => return gpu_error(&e),
    };
    let uploaded = match upload(contract, case, super::PIECE, &mut OnDevice { gpu, buffers: &mut buffers }) {
        Ok(u) => u,
        Err(verdict) => return verdict,
    };
    if let Err(e) = scratch.prepare(gpu, manifest, case.n, fresh_uninit) {
        return gpu_error(&e);
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

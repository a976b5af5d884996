//! Running the user's launch sequence on one case: inputs uploaded, every
//! output poisoned (every byte [`kernels::POISON_BYTE`], so an element never
//! written fails the comparison; each output's elements past the model's
//! output, up to its length and [`GUARD_ELEMENTS`] more, must stay
//! untouched), scratch zeroed or poisoned as the manifest says (left uninitialised in
//! the sanitizer child, `Manifest::uninit_scratch`), every launch
//! in order on the Gpu's stream with the case's parameters by value, then
//! the outputs compared with the model's by the contract's rule.

use super::manifest::{at, Arg, Manifest};
use super::module::Image;
use crate::sweep::case::Verdict;
use crate::sweep::gpu::gpu_error;
use crate::sweep::raw::{Array, RawCase, Value};
use cudarc::driver::{CudaFunction, CudaSlice, PushKernelArg};
use cudarc::nvrtc::Ptx;
use kernels::{Gpu, GpuResult};

/// A driver error with what was being done.
fn driver<T>(result: Result<T, cudarc::driver::DriverError>, what: impl FnOnce() -> String) -> GpuResult<T> {
    result.map_err(|source| kernels::GpuError::Driver { context: what(), source })
}

/// The module loaded on a GPU, one function per launch of the sequence.
pub struct Loaded {
    functions: Vec<CudaFunction>,
}

/// Loads the manifest's module and looks up every launch's entry point.
pub fn load(gpu: &Gpu, manifest: &Manifest) -> GpuResult<Loaded> {
    let image = match &manifest.module.image {
        Image::Ptx(text) => Ptx::from_src(text.clone()),
        Image::Cubin(bytes) => Ptx::from_binary(bytes.clone()),
    };
    let path = manifest.module.path.display().to_string();
    let module = driver(gpu.context().load_module(image), || format!("loading {path}"))?;
    let functions = manifest
        .launches
        .iter()
        .map(|l| driver(module.load_function(&l.kernel), || format!("loading entry point {} of {path}", l.kernel)))
        .collect::<GpuResult<Vec<_>>>()?;
    Ok(Loaded { functions })
}

/// Poisoned elements after each of the contract's outputs: a kernel that
/// writes past the end changes them, and the case fails with check `poison tail`.
pub const GUARD_ELEMENTS: usize = 64;

/// The device buffers of one case (all as bytes, in the contract's layout)
/// and its parameters.
pub struct Buffers {
    inputs: Vec<CudaSlice<u8>>,
    outputs: Vec<CudaSlice<u8>>,
    scratch: Vec<CudaSlice<u8>>,
    params: Vec<Value>,
    n: usize,
}

/// Uploads `case`'s inputs and allocates the poisoned outputs and the scratch.
pub fn prepare(gpu: &Gpu, manifest: &Manifest, case: &RawCase, n: usize) -> GpuResult<Buffers> {
    let inputs = case.inputs.iter().map(|a| gpu.upload(&a.to_le_bytes())).collect::<GpuResult<Vec<_>>>()?;
    let mut outputs = Vec::new();
    for (k, out) in manifest.contract.outputs.iter().enumerate() {
        let elements = out.len.elements(n, case.model_len(k)).max(case.model_len(k));
        outputs.push(gpu.alloc_poisoned::<u8>((elements + GUARD_ELEMENTS) * out.dtype.size())?);
    }
    let mut scratch = Vec::new();
    for s in &manifest.scratch {
        let bytes = (at(&s.len, n) as usize * s.dtype.size()).max(1);
        scratch.push(if s.zero {
            gpu.alloc_zeroed::<u8>(bytes)?
        } else if manifest.uninit_scratch {
            gpu.alloc_uninit::<u8>(bytes)?
        } else {
            gpu.alloc_poisoned::<u8>(bytes)?
        });
    }
    Ok(Buffers { inputs, outputs, scratch, params: case.params.clone(), n })
}

/// Enqueues one run: zeroes the `zero = true` scratch, then every launch
/// in order (zeroing the scratch each launch names first). No synchronisation.
pub fn enqueue(gpu: &Gpu, manifest: &Manifest, loaded: &Loaded, buffers: &mut Buffers) -> GpuResult<()> {
    let n = buffers.n;
    for (s, buffer) in manifest.scratch.iter().zip(buffers.scratch.iter_mut()) {
        if s.zero {
            gpu.memset_bytes(buffer, 0)?;
        }
    }
    let (n64, n32) = (n as u64, n as u32);
    for (i, (launch, function)) in manifest.launches.iter().zip(&loaded.functions).enumerate() {
        for &z in &launch.zero {
            gpu.memset_bytes(&mut buffers.scratch[z], 0)?;
        }
        let config = kernels::launch::config(
            at(&launch.grid, n) as u32,
            at(&launch.block, n) as u32,
            at(&launch.shared, n) as u32,
        );
        let mut builder = gpu.stream().launch_builder(function);
        for arg in &launch.args {
            match *arg {
                Arg::Input(k) => builder.arg(&buffers.inputs[k]),
                Arg::Output(k) => builder.arg(&buffers.outputs[k]),
                Arg::Param(k) => match &buffers.params[k] {
                    Value::Int32(v) => builder.arg(v),
                    Value::Int64(v) => builder.arg(v),
                    Value::Float32(v) => builder.arg(v),
                },
                Arg::Scratch(k) => builder.arg(&buffers.scratch[k]),
                Arg::N => builder.arg(&n64),
                Arg::N32 => builder.arg(&n32),
            };
        }
        // SAFETY: the manifest's argument count matches the entry point's
        // (checked for PTX and CUDA sources), each buffer argument is a live
        // device allocation of the size the contract and manifest state, and
        // the geometry was validated at this n.
        driver(unsafe { builder.launch(config) }, || format!("launch {} ({}) at n = {n}", i + 1, launch.kernel))?;
    }
    Ok(())
}

/// Runs the sequence on `case` and compares the outputs with the model's.
pub fn run_case(gpu: &Gpu, manifest: &Manifest, loaded: &Loaded, case: &RawCase, n: usize) -> Verdict {
    let mut buffers = match prepare(gpu, manifest, case, n) {
        Ok(b) => b,
        Err(e) => return gpu_error(&e),
    };
    if let Err(e) = enqueue(gpu, manifest, loaded, &mut buffers).and_then(|_| gpu.synchronize()) {
        return gpu_error(&e);
    }
    let mut got = Vec::new();
    for (k, (out, device)) in manifest.contract.outputs.iter().zip(&buffers.outputs).enumerate() {
        let bytes = match gpu.download(device) {
            Ok(b) => b,
            Err(e) => return gpu_error(&e),
        };
        let model = case.model_len(k);
        let len = (model * out.dtype.size()).min(bytes.len());
        if let Some(at) = bytes[len..].iter().position(|&b| b != kernels::POISON_BYTE) {
            let index = model + at / out.dtype.size();
            return Verdict::fail_at(
                index,
                format!("untouched (past the model's {model} elements of {})", out.role),
                format!("byte {:#04x}", bytes[len + at]),
                "poison tail",
            );
        }
        match Array::from_le_bytes(out.dtype, &bytes[..len]) {
            Ok(array) => got.push(array),
            Err(e) => return Verdict::fail("the output", e, "output"),
        }
    }
    manifest.contract.compare(case, &got)
}

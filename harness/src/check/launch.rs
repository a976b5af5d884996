//! Running the user's launch sequence on one case.
//!
//! * Inputs are uploaded once per case.
//! * Every output sits between guard elements ([`GUARD_ELEMENTS`] before,
//!   and after its last element as many more) and is filled, guards
//!   included, with the current poison of its type before each run (NaN for
//!   floats, see [`super::poison::Poison`]): an element never written fails the
//!   comparison, and a write before or past the output changes a guard
//!   (checks `guard before` and `guard after`). An output's elements past the
//!   model's output (compaction writes the kept items first) must stay
//!   poisoned too.
//! * Scratch persists across runs and cases ([`Scratch`]): a kernel that
//!   relies on what an earlier run left there, or forgets to reset a
//!   counter, fails its second run or the next case. `zero = true` scratch
//!   is zeroed before each run, as the manifest promises; under a sanitizer
//!   the other scratch is allocated afresh for each case and left
//!   uninitialised, so initcheck sees a read of scratch no launch wrote.
//! * Every launch runs in order on the Gpu's stream with the case's
//!   parameters by value; then the outputs are compared with the model's by
//!   the contract's rule.

use super::expr::Expr;
use super::manifest::{at, Arg, Manifest};
use super::module::Image;
use super::poison::{fill_pattern, ElementKind, Poison};
use crate::sweep::case::Verdict;
use crate::sweep::gpu::gpu_error;
use crate::sweep::raw::{Array, Buffer, RawCase, Value};
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

/// Poisoned elements on each side of every output: a kernel that writes
/// before its start or past its end changes them.
pub const GUARD_ELEMENTS: usize = 64;

/// Bytes of the guard before an output of `dtype`: [`GUARD_ELEMENTS`]
/// elements, rounded up to 256 bytes so that the output keeps the 256-byte
/// alignment of its allocation (kernels may use 16-byte vector accesses).
pub fn front_guard_bytes(element_size: usize) -> usize {
    (GUARD_ELEMENTS * element_size).next_multiple_of(256)
}

/// One output buffer: guards, the contract's elements, guards.
pub struct Output {
    pub(super) buffer: CudaSlice<u8>,
    pub(super) front: usize,
    pub(super) elements: usize,
    pub(super) dtype: crate::sweep::raw::Dtype,
}

impl Output {
    fn new(gpu: &Gpu, buffer: &Buffer, elements: usize) -> GpuResult<Output> {
        let size = buffer.dtype.size();
        let front = front_guard_bytes(size);
        let buffer_bytes = front + (elements + GUARD_ELEMENTS) * size;
        // Poisoned by every run before any launch reads or writes it.
        Ok(Output { buffer: gpu.alloc_uninit::<u8>(buffer_bytes)?, front, elements, dtype: buffer.dtype })
    }

    /// Fills all of it, guards included, with `poison`.
    fn poison(&mut self, gpu: &Gpu, poison: Poison) -> GpuResult<()> {
        fill_pattern(gpu, &mut self.buffer, &poison.pattern(ElementKind::of_dtype(self.dtype)))
    }
}

/// The user's scratch buffers, kept from case to case (see the module docs).
#[derive(Default)]
pub struct Scratch {
    buffers: Vec<CudaSlice<u8>>,
}

impl Scratch {
    /// Makes every scratch buffer hold at least what the manifest asks at
    /// `n`: kept when large enough, else replaced by a poisoned one; with
    /// `fresh_uninit` (sanitizer runs), always a new, exactly sized buffer,
    /// uninitialised unless the manifest zeroes it.
    pub fn prepare(&mut self, gpu: &Gpu, manifest: &Manifest, n: usize, fresh_uninit: bool) -> GpuResult<()> {
        for (k, s) in manifest.scratch.iter().enumerate() {
            let bytes = (at(&s.len, n) as usize * s.dtype.size()).max(1);
            let keep = !fresh_uninit && self.buffers.get(k).is_some_and(|b| b.len() >= bytes);
            if keep {
                continue;
            }
            let buffer = if fresh_uninit { gpu.alloc_uninit::<u8>(bytes)? } else { gpu.alloc_poisoned::<u8>(bytes)? };
            match self.buffers.get_mut(k) {
                Some(slot) => *slot = buffer,
                None => self.buffers.push(buffer),
            }
        }
        Ok(())
    }
}

/// The device buffers of one case (all as bytes, in the contract's layout)
/// and its parameters.
pub struct Buffers {
    pub(super) inputs: Vec<CudaSlice<u8>>,
    pub(super) outputs: Vec<Output>,
    pub(super) params: Vec<Value>,
    pub(super) n: usize,
}

/// Uploads `case`'s inputs and allocates its outputs (poisoned by each run).
pub fn prepare(gpu: &Gpu, manifest: &Manifest, case: &RawCase, n: usize) -> GpuResult<Buffers> {
    let inputs = case.inputs.iter().map(|a| gpu.upload(&a.to_le_bytes())).collect::<GpuResult<Vec<_>>>()?;
    let mut outputs = Vec::new();
    for (k, out) in manifest.contract.outputs.iter().enumerate() {
        let elements = out.len.elements(n, case.model_len(k)).max(case.model_len(k));
        outputs.push(Output::new(gpu, out, elements)?);
    }
    Ok(Buffers { inputs, outputs, params: case.params.clone(), n })
}

/// The buffers of a case made a piece at a time ([`super::streamed`]):
/// input `k` of `input_bytes[k]` bytes, allocated unwritten (the case's
/// pieces fill it), output `k` of `output_elements[k]` elements.
pub fn unfilled(
    gpu: &Gpu,
    manifest: &Manifest,
    input_bytes: &[usize],
    output_elements: &[usize],
    params: Vec<Value>,
    n: usize,
) -> GpuResult<Buffers> {
    // Every byte is written by the upload before any launch reads it.
    let inputs = input_bytes.iter().map(|&b| gpu.alloc_uninit::<u8>(b.max(1))).collect::<GpuResult<Vec<_>>>()?;
    let outputs = manifest
        .contract
        .outputs
        .iter()
        .zip(output_elements)
        .map(|(out, &elements)| Output::new(gpu, out, elements))
        .collect::<GpuResult<Vec<_>>>()?;
    Ok(Buffers { inputs, outputs, params, n })
}

/// Fills every output, guards included, with `poison`.
pub fn poison_outputs(gpu: &Gpu, buffers: &mut Buffers, poison: Poison) -> GpuResult<()> {
    buffers.outputs.iter_mut().try_for_each(|o| o.poison(gpu, poison))
}

/// Each launch's (grid, block, shared bytes) for a case of `n` elements and
/// these parameter values, or why a value is out of its range: an
/// expression of n alone was checked when the manifest was read, one that
/// names a parameter (`rows`, `segments`) only now, per case.
pub fn geometry(manifest: &Manifest, n: usize, params: &[Value]) -> Result<Vec<(u32, u32, u32)>, String> {
    let contract = manifest.contract;
    let value = |name: &str| {
        let k = contract.params.iter().position(|p| p.name == name)?;
        params.get(k)?.as_int().map(i128::from)
    };
    let bound: Vec<String> =
        contract.params.iter().zip(params).map(|(p, v)| format!("{}={}", p.name, v.to_json())).collect();
    let field = |i: usize, what: &str, e: &Expr, (low, high, rule): (i128, i128, &str)| -> Result<u32, String> {
        let launch = &manifest.launches[i];
        match e.eval_with(n, &value) {
            Ok(v) if (low..=high).contains(&v) => Ok(v as u32),
            other => Err(format!(
                "launch {} ({}) {what} = {} at n = {n} ({}): {rule}",
                i + 1,
                launch.kernel,
                other.map_or_else(|why| format!("undefined ({why})"), |v| v.to_string()),
                bound.join(", ")
            )),
        }
    };
    use super::manifest::{BLOCK_RULE, GRID_RULE, MAX_BLOCK, MAX_GRID, MAX_SHARED, SHARED_RULE};
    (0..manifest.launches.len())
        .map(|i| {
            let l = &manifest.launches[i];
            Ok((
                field(i, "grid", &l.grid, (1, MAX_GRID, GRID_RULE))?,
                field(i, "block", &l.block, (1, MAX_BLOCK, BLOCK_RULE))?,
                field(i, "shared", &l.shared, (0, MAX_SHARED, SHARED_RULE))?,
            ))
        })
        .collect()
}

/// Enqueues one run of the user's sequence: zeroes the `zero = true`
/// scratch, then every launch in order (zeroing the scratch each launch
/// names first), with the case's `geometry`. No synchronisation.
pub fn enqueue(
    gpu: &Gpu,
    manifest: &Manifest,
    loaded: &Loaded,
    buffers: &mut Buffers,
    scratch: &mut Scratch,
    geometry: &[(u32, u32, u32)],
) -> GpuResult<()> {
    let n = buffers.n;
    for (s, buffer) in manifest.scratch.iter().zip(scratch.buffers.iter_mut()) {
        if s.zero {
            gpu.memset_bytes(buffer, 0)?;
        }
    }
    let (n64, n32) = (n as u64, n as u32);
    for (i, ((launch, function), &(grid, block, shared))) in
        manifest.launches.iter().zip(&loaded.functions).zip(geometry).enumerate()
    {
        for &z in &launch.zero {
            gpu.memset_bytes(&mut scratch.buffers[z], 0)?;
        }
        let config = kernels::launch::config(grid, block, shared);
        let views: Vec<_> =
            buffers.outputs.iter().map(|o| o.buffer.slice(o.front..o.front + o.elements * o.dtype.size())).collect();
        let mut builder = gpu.stream().launch_builder(function);
        for arg in &launch.args {
            match *arg {
                Arg::Input(k) => builder.arg(&buffers.inputs[k]),
                Arg::Output(k) => builder.arg(&views[k]),
                Arg::Param(k) => match &buffers.params[k] {
                    Value::Int32(v) => builder.arg(v),
                    Value::Int64(v) => builder.arg(v),
                    Value::Float32(v) => builder.arg(v),
                    Value::Float64(v) => builder.arg(v),
                },
                Arg::Scratch(k) => builder.arg(&scratch.buffers[k]),
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

/// The buffers and module one run of a case needs.
pub struct RunInputs<'a> {
    /// The user's manifest.
    pub manifest: &'a Manifest,
    /// Its module, loaded.
    pub loaded: &'a Loaded,
    /// The case, with the model's outputs.
    pub case: &'a RawCase,
}

/// Runs the sequence once on prepared buffers, their outputs filled with
/// `poison` first, and compares the outputs (and their guards) with the model's.
pub fn run_once(gpu: &Gpu, on: &RunInputs, buffers: &mut Buffers, scratch: &mut Scratch, poison: Poison) -> Verdict {
    let (manifest, loaded, case) = (on.manifest, on.loaded, on.case);
    if let Err(verdict) = launch_poisoned(gpu, manifest, loaded, buffers, scratch, poison) {
        return verdict;
    }
    let mut got = Vec::new();
    for (k, (out, output)) in manifest.contract.outputs.iter().zip(&buffers.outputs).enumerate() {
        let bytes = match gpu.download(&output.buffer) {
            Ok(b) => b,
            Err(e) => return gpu_error(&e),
        };
        let layout = Layout { front: output.front, elements: output.elements, model: case.model_len(k) };
        match read_output(poison, out, layout, &bytes) {
            Ok(array) => got.push(array),
            Err(verdict) => return verdict,
        }
    }
    let verdict = crate::cases::rules::compare(manifest.contract, case, &got);
    if !verdict.passed() {
        crate::cases::rules::record_mismatch(manifest.contract, case, &got);
    }
    verdict
}

/// One run of the sequence, to its end: every output filled with `poison`,
/// then the launches at the case's geometry, then a synchronisation.
/// Error: a geometry out of range, or the GPU's error.
pub fn launch_poisoned(
    gpu: &Gpu,
    manifest: &Manifest,
    loaded: &Loaded,
    buffers: &mut Buffers,
    scratch: &mut Scratch,
    poison: Poison,
) -> Result<(), Verdict> {
    let geometry = geometry(manifest, buffers.n, &buffers.params)
        .map_err(|why| Verdict::fail("a launch geometry within range", why, "launch geometry"))?;
    poison_outputs(gpu, buffers, poison)
        .and_then(|_| enqueue(gpu, manifest, loaded, buffers, scratch, &geometry))
        .and_then(|_| gpu.synchronize())
        .map_err(|e| gpu_error(&e))
}

/// Where an output's elements sit in its downloaded buffer.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    /// Bytes of the guard before the output.
    pub front: usize,
    /// The output's elements (the contract's length at n).
    pub elements: usize,
    /// Elements the model's output has (compared); the rest must stay poisoned.
    pub model: usize,
}

/// The model-length part of one downloaded output buffer, once its guards
/// and its elements past the model's output are seen to hold `poison`; else
/// the failure (`guard before`, `poison tail`, `guard after`).
pub fn read_output(poison: Poison, out: &Buffer, layout: Layout, bytes: &[u8]) -> Result<Array, Verdict> {
    let size = out.dtype.size();
    let (front, body) = bytes.split_at(layout.front.min(bytes.len()));
    front_untouched(poison, out, layout, front)?;
    let used = (layout.model * size).min(body.len());
    tail_untouched(poison, out, layout, layout.model, &body[used..])?;
    Array::from_le_bytes(out.dtype, &body[..used]).map_err(|e| Verdict::fail("the output", e, "output"))
}

/// Whether `front`, the guard before `out`, still holds `poison`; else the
/// failure (`guard before`) with how far before the output the first write is.
pub fn front_untouched(poison: Poison, out: &Buffer, layout: Layout, front: &[u8]) -> Result<(), Verdict> {
    let kind = ElementKind::of_dtype(out.dtype);
    // `first_written` counts poison patterns (a byte for integers).
    let Some(at) = poison.first_written(kind, front) else { return Ok(()) };
    let before = (layout.front - at * poison.pattern(kind).len()).div_ceil(out.dtype.size());
    let got = format!("written {before} element(s) before {}", out.role);
    Err(Verdict::fail("untouched", got, "guard before"))
}

/// Whether `bytes`, the elements of `out` from element `from` on (past the
/// model's output; past `layout.elements` the guard after it), still hold
/// `poison`; else the failure (`poison tail` or `guard after`) at the first
/// element written.
pub fn tail_untouched(poison: Poison, out: &Buffer, layout: Layout, from: usize, bytes: &[u8]) -> Result<(), Verdict> {
    let kind = ElementKind::of_dtype(out.dtype);
    let Some(at) = poison.first_written(kind, bytes) else { return Ok(()) };
    let index = from + at * poison.pattern(kind).len() / out.dtype.size();
    let what = if index >= layout.elements { "guard after" } else { "poison tail" };
    let expected = format!("untouched (past the model's {} elements of {})", layout.model, out.role);
    Err(Verdict::fail_at(index, expected, "written", what))
}

#[cfg(test)]
#[path = "launch_tests.rs"]
mod tests;

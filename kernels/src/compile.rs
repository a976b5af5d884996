//! Run-time compilation through NVRTC: one program per [`KernelFamily`], for the
//! compute capability of the GPU found (or any named architecture, which is
//! how CI checks every kernel for sm_80 and sm_90 without a GPU).

use crate::error::{GpuError, GpuResult};
use crate::kernel_family::KernelFamily;
use crate::sources::translation_unit;
use cudarc::nvrtc::{result as nvrtc, sys as nvrtc_sys};
use std::ffi::CString;

/// The options every family is compiled with: the tuning policy as
/// `-DPRIMLAB_<FAMILY>_<NAME>=value` defines ([`crate::policy::defines`]).
/// A mutant is planted in the source ([`family_unit`]), not by an option.
pub fn compile_options(arch: &str) -> Vec<String> {
    let mut options = vec!["-std=c++17".to_string(), "-lineinfo".to_string(), format!("--gpu-architecture={arch}")];
    options.extend(crate::policy::define_options());
    options
}

/// The translation unit `family` compiles: its embedded source with every header inlined
/// and, for `mutant` other than 0, that planted bug's edits applied
/// ([`crate::mutant::plant`]); `mutant` 0 is the shipped kernels.
pub fn family_unit(family: KernelFamily, arch: &str, mutant: u32) -> GpuResult<String> {
    let compile_error =
        |log: String| GpuError::Compile { module: family.file().to_string(), arch: arch.to_string(), log };
    let unit = translation_unit(family.file())
        .ok_or_else(|| compile_error(format!("source {} is not embedded", family.file())))?;
    match mutant {
        0 => Ok(unit),
        id => crate::mutant::plant(id, family, &unit).map_err(compile_error),
    }
}

/// Whether `libnvrtc` can be loaded; cudarc panics on first use otherwise.
pub fn ensure_nvrtc() -> GpuResult<()> {
    // SAFETY: only tries to dlopen the library by its candidate names.
    if unsafe { nvrtc_sys::is_culib_present() } {
        Ok(())
    } else {
        Err(GpuError::NvrtcUnavailable {
            reason: "libnvrtc.so (CUDA 13) not found on the loader path; install the \
                     nvidia-cuda-nvrtc wheel (scripts/install_nvrtc.sh) or the CUDA toolkit"
                .to_string(),
        })
    }
}

/// NVRTC's (major, minor) version.
pub fn nvrtc_version() -> GpuResult<(i32, i32)> {
    ensure_nvrtc()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: two valid out-pointers.
    unsafe { nvrtc_sys::nvrtcVersion(&mut major, &mut minor) }
        .result()
        .map_err(|e| GpuError::NvrtcUnavailable { reason: format!("nvrtcVersion failed: {e:?}") })?;
    Ok((major, minor))
}

/// One compiled family.
#[derive(Debug, Clone)]
pub struct CompiledFamily {
    /// The family compiled.
    pub family: KernelFamily,
    /// Target architecture, e.g. `sm_90`.
    pub arch: String,
    /// Machine code for `arch`, loadable with `cuModuleLoadData`.
    pub cubin: Vec<u8>,
    /// NVRTC's log; empty when the source compiled without a warning.
    pub log: String,
}

struct Program(nvrtc_sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: created by create_program and destroyed once, here.
        let _ = unsafe { nvrtc::destroy_program(self.0) };
    }
}

fn c_chars_to_string(chars: &[std::ffi::c_char]) -> String {
    let bytes: Vec<u8> = chars.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).trim().to_string()
}

/// Compiles `family` for `arch` (e.g. `sm_90`). A compile error is returned
/// with NVRTC's log; warnings come back in [`CompiledFamily::log`].
pub fn compile_family(family: KernelFamily, arch: &str, mutant: u32) -> GpuResult<CompiledFamily> {
    let unit = family_unit(family, arch, mutant)?;
    let (cubin, log) = compile_source(family.file(), &unit, arch)?;
    Ok(CompiledFamily { family, arch: arch.to_string(), cubin, log })
}

/// The machine code of `family` for `arch`, from the on-disk cache when a
/// previous process compiled the identical translation unit with the same
/// options and NVRTC version, else compiled now and stored. The cache lives
/// in `$PRIMLAB_KERNEL_CACHE` (default `$XDG_CACHE_HOME/primlab/kernels` or
/// `~/.cache/primlab/kernels`); `PRIMLAB_KERNEL_CACHE=off` disables it. It
/// only saves NVRTC time (each sanitizer job is a new process): any cache
/// failure falls back to compiling.
pub fn cached_cubin(family: KernelFamily, arch: &str, mutant: u32) -> GpuResult<Vec<u8>> {
    let Some(path) = cache_path(family, arch, mutant) else {
        return Ok(compile_family(family, arch, mutant)?.cubin);
    };
    if let Ok(bytes) = std::fs::read(&path) {
        if !bytes.is_empty() {
            return Ok(bytes);
        }
    }
    let cubin = compile_family(family, arch, mutant)?.cubin;
    if let Some(dir) = path.parent() {
        let temporary = dir.join(format!(".{}.{}", std::process::id(), family.file()));
        let stored = std::fs::create_dir_all(dir)
            .and_then(|_| std::fs::write(&temporary, &cubin))
            .and_then(|_| std::fs::rename(&temporary, &path));
        if stored.is_err() {
            let _ = std::fs::remove_file(&temporary);
        }
    }
    Ok(cubin)
}

fn cache_path(family: KernelFamily, arch: &str, mutant: u32) -> Option<std::path::PathBuf> {
    let dir = match std::env::var_os("PRIMLAB_KERNEL_CACHE") {
        Some(v) if v == "off" => return None,
        Some(v) => std::path::PathBuf::from(v),
        None => std::env::var_os("XDG_CACHE_HOME")
            .map(std::path::PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cache")))?
            .join("primlab/kernels"),
    };
    let unit = family_unit(family, arch, mutant).ok()?;
    let (major, minor) = nvrtc_version().ok()?;
    // FNV-1a 64 over everything the cubin depends on.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in [unit.as_str(), &compile_options(arch).join(" "), &format!("nvrtc {major}.{minor}")] {
        for byte in part.bytes().chain([0u8]) {
            hash = (hash ^ byte as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    Some(dir.join(format!("{}-{arch}-m{mutant}-{hash:016x}.cubin", family.file().trim_end_matches(".cu"))))
}

/// Compiles one resolved translation unit; returns (cubin, log).
pub(crate) fn compile_source(name: &str, unit: &str, arch: &str) -> GpuResult<(Vec<u8>, String)> {
    compile_source_with(name, unit, arch, compile_options(arch))
}

/// [`compile_source`] with explicit NVRTC options (`arch` names the target
/// in the error only).
pub(crate) fn compile_source_with(
    name: &str,
    unit: &str,
    arch: &str,
    options: Vec<String>,
) -> GpuResult<(Vec<u8>, String)> {
    ensure_nvrtc()?;
    let compile_error = |log: String| GpuError::Compile { module: name.to_string(), arch: arch.to_string(), log };
    let source = CString::new(unit).map_err(|_| compile_error("source holds a NUL byte".into()))?;
    let c_name = CString::new(name).map_err(|_| compile_error("bad file name".into()))?;
    let program = Program(
        nvrtc::create_program(&source, Some(c_name.as_c_str()))
            .map_err(|e| compile_error(format!("nvrtcCreateProgram: {e:?}")))?,
    );
    // SAFETY: `program` is live; options are valid C strings.
    let compiled = unsafe { nvrtc::compile_program(program.0, &options) };
    // SAFETY: `program` is live.
    let log = unsafe { nvrtc::get_program_log(program.0) }.map(|chars| c_chars_to_string(&chars)).unwrap_or_default();
    if let Err(e) = compiled {
        return Err(compile_error(format!("{e:?}\noptions: {options:?}\n{log}")));
    }
    let mut size = 0usize;
    // SAFETY: `program` compiled successfully; `size` is a valid out-pointer.
    unsafe { nvrtc_sys::nvrtcGetCUBINSize(program.0, &mut size) }
        .result()
        .map_err(|e| compile_error(format!("nvrtcGetCUBINSize: {e:?}")))?;
    let mut cubin = vec![0u8; size];
    // SAFETY: `cubin` holds `size` bytes.
    unsafe { nvrtc_sys::nvrtcGetCUBIN(program.0, cubin.as_mut_ptr() as *mut std::ffi::c_char) }
        .result()
        .map_err(|e| compile_error(format!("nvrtcGetCUBIN: {e:?}")))?;
    Ok((cubin, log))
}

/// Compiles `family` for sm_90 with `appended` (e.g. `static_assert`s on
/// its constants) after its translation unit; returns NVRTC's log.
#[cfg(test)]
pub(crate) fn compile_family_with(family: KernelFamily, appended: &str) -> GpuResult<String> {
    let unit = translation_unit(family.file()).expect("embedded family source");
    let unit = format!("{unit}\n#line 1 \"<appended checks>\"\n{appended}\n");
    compile_source(family.file(), &unit, "sm_90").map(|(_, log)| log)
}

/// The `sm_XY` name of a compute capability.
pub fn arch_name(major: i32, minor: i32) -> String {
    format!("sm_{major}{minor}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every family compiles for sm_80 and sm_90 without an error or a warning.
    /// Needs libnvrtc on the loader path: `make verify` installs the
    /// `nvidia-cuda-nvrtc` wheel and sets LD_LIBRARY_PATH. Without it the
    /// test fails (it never reports a compile check that did not run).
    #[test]
    fn every_family_compiles_cleanly_for_sm80_and_sm90() {
        if let Err(e) = ensure_nvrtc() {
            panic!("{e}: run `make verify` (or scripts/install_nvrtc.sh and set LD_LIBRARY_PATH)");
        }
        for arch in ["sm_80", "sm_90"] {
            for family in KernelFamily::ALL {
                let compiled = compile_family(family, arch, 0).unwrap_or_else(|e| panic!("{e}"));
                assert!(compiled.log.is_empty(), "{} {arch} warned:\n{}", family.file(), compiled.log);
                assert!(!compiled.cubin.is_empty(), "{} {arch}: empty cubin", family.file());
            }
        }
    }

    /// Every operator instantiates every generic warp/block primitive and the
    /// look-back, so a new operator or schedule cannot break the others.
    #[test]
    fn every_operator_instantiates_every_block_primitive() {
        if let Err(e) = ensure_nvrtc() {
            panic!("{e}: run `make verify` (or scripts/install_nvrtc.sh and set LD_LIBRARY_PATH)");
        }
        let operators = [
            "SumI64",
            "MaxI64",
            "MinI64",
            "SumF32",
            "MaxF32",
            "SumCount",
            "CompensatedSumF32",
            "ArgMaxF32",
            "ArgMinF32",
            "ArgMaxI32",
            "ArgMinI32",
            "SoftmaxMerge",
            "AffineCompose",
        ];
        let mut unit = String::from(
            "#include \"common/block_reduce.cuh\"\n#include \"common/block_scan.cuh\"\n\
             #include \"common/decoupled_lookback.cuh\"\n#include \"common/operators.cuh\"\n#include \"common/bf16.cuh\"\n\
             using namespace primlab;\n",
        );
        for (i, op) in operators.iter().enumerate() {
            unit.push_str(&format!(
                "extern \"C\" __global__ void k{i}({op}::T* out, TileStatus<{op}::T> status) {{\n\
                 __shared__ BlockReduceStorage<{op}::T> r; __shared__ BlockScanStorage<{op}::T> s;\n\
                 __shared__ {op}::T items[kBlockItems]; __shared__ u32 slot;\n\
                 {op} op; {op}::T v = out[threadIdx.x];\n\
                 items[threadIdx.x] = v; items[threadIdx.x + kBlockThreads] = v; __syncthreads();\n\
                 {op}::T t = blelloch_block_scan(items, op);\n\
                 {op}::T total; {op}::T e = block_exclusive_scan(v, op, s, total);\n\
                 {op}::T a = block_all_reduce(v, op, r); {op}::T b = block_reduce(v, op, r);\n\
                 u32 tile = acquire_tile_id(status.tile_counter, &slot);\n\
                 {op}::T p = op.identity(); if (threadIdx.x < 32 && tile > 0) p = lookback_exclusive_prefix(status, tile, op);\n\
                 if (threadIdx.x == 0) {{ publish_aggregate(status, tile, a); publish_prefix(status, tile, b); }}\n\
                 out[threadIdx.x] = op(op(op(t, e), op(total, p)), items[threadIdx.x]); }}\n"
            ));
        }
        let unit = crate::sources::resolve_includes(&unit).expect("headers resolve");
        for arch in ["sm_80", "sm_90"] {
            let (cubin, log) = compile_source("instantiations.cu", &unit, arch).unwrap_or_else(|e| panic!("{e}"));
            assert!(log.is_empty(), "{arch} warned:\n{log}");
            assert!(!cubin.is_empty());
        }
    }
}

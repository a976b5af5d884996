//! A caller's own CUDA C++ source, compiled by NVRTC to PTX with the same
//! options as our families and with our `common/` headers available: every
//! quoted `#include "common/..."` line is inlined from the embedded copies,
//! exactly as for our own translation units.

use crate::compile::{compile_options, ensure_nvrtc};
use crate::error::{GpuError, GpuResult};
use crate::sources::resolve_includes;
use cudarc::nvrtc::result as nvrtc;
use std::ffi::CString;

/// A compiled source: its PTX text and NVRTC's log (empty without warnings).
#[derive(Debug, Clone)]
pub struct UserPtx {
    /// PTX text, loadable with `cuModuleLoadData` by any GPU of at least `arch`.
    pub ptx: String,
    /// NVRTC's log.
    pub log: String,
}

/// Compiles `text` (named `name` in messages) for the virtual architecture
/// `arch` (e.g. `compute_90`), with each of `defines` (`NAME` or
/// `NAME=VALUE`, checked by the caller) passed as `-DNAME[=VALUE]` after our
/// own options. A compile error is [`GpuError::Compile`] with NVRTC's log;
/// NVRTC missing is [`GpuError::NvrtcUnavailable`].
pub fn compile_user_ptx(name: &str, text: &str, arch: &str, defines: &[String]) -> GpuResult<UserPtx> {
    ensure_nvrtc()?;
    let compile_error = |log: String| GpuError::Compile { module: name.to_string(), arch: arch.to_string(), log };
    let unit =
        resolve_includes(text).ok_or_else(|| compile_error("a quoted include of common/ did not resolve".into()))?;
    let source = CString::new(unit).map_err(|_| compile_error("source holds a NUL byte".into()))?;
    let c_name = CString::new(name).map_err(|_| compile_error("bad file name".into()))?;
    let program = nvrtc::create_program(&source, Some(c_name.as_c_str()))
        .map_err(|e| compile_error(format!("nvrtcCreateProgram: {e:?}")))?;
    let mut options = compile_options(arch);
    options.extend(defines.iter().map(|d| format!("-D{d}")));
    // SAFETY: `program` is live until destroyed below; options are valid strings.
    let compiled = unsafe { nvrtc::compile_program(program, &options) };
    // SAFETY: `program` is live.
    let log = unsafe { nvrtc::get_program_log(program) }.map(|chars| to_string(&chars)).unwrap_or_default();
    let ptx = match compiled {
        // SAFETY: `program` compiled successfully.
        Ok(()) => unsafe { nvrtc::get_ptx(program) }
            .map(|chars| to_string(&chars))
            .map_err(|e| compile_error(format!("nvrtcGetPTX: {e:?}"))),
        Err(e) => Err(compile_error(format!("{e:?}\noptions: {options:?}\n{log}"))),
    };
    // SAFETY: created above and destroyed once, here.
    let _ = unsafe { nvrtc::destroy_program(program) };
    Ok(UserPtx { ptx: ptx?, log })
}

fn to_string(chars: &[std::ffi::c_char]) -> String {
    let bytes: Vec<u8> = chars.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Needs libnvrtc (as every compile test of this crate).
    #[test]
    fn a_source_including_our_headers_compiles_to_ptx_with_its_entry() {
        let text = "#include \"common/config.cuh\"\n\
                    extern \"C\" __global__ void twice(const int* in, long long* out, unsigned long long n) {\n\
                    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n\
                    if (i < n) out[i] = 2ll * in[i] + primlab::kBlockThreads * 0; }\n";
        let compiled = compile_user_ptx("twice.cu", text, "compute_80", &[]).unwrap_or_else(|e| panic!("{e}"));
        assert!(compiled.ptx.contains(".entry twice("), "{}", compiled.ptx);
        let broken = compile_user_ptx("broken.cu", "extern \"C\" __global__ void k() { nope; }", "compute_80", &[]);
        match broken {
            Err(GpuError::Compile { module, log, .. }) => {
                assert_eq!(module, "broken.cu");
                assert!(log.contains("nope"), "{log}");
            }
            other => panic!("expected a compile error, got {other:?}"),
        }
    }

    /// A define reaches the preprocessor: the entry exists only with it.
    #[test]
    fn a_define_selects_what_the_source_compiles() {
        let text = "#ifdef WITH_ENTRY\nextern \"C\" __global__ void only_with(int* p) { *p = WITH_ENTRY; }\n#endif\n";
        let with = compile_user_ptx("d.cu", text, "compute_80", &["WITH_ENTRY=7".to_string()])
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(with.ptx.contains(".entry only_with("), "{}", with.ptx);
        let without = compile_user_ptx("d.cu", text, "compute_80", &[]).unwrap_or_else(|e| panic!("{e}"));
        assert!(!without.ptx.contains(".entry only_with("), "{}", without.ptx);
    }
}

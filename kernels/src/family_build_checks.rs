//! Test checks that a family's module is whole: every kernel its plans launch is in the
//! compiled cubin, and every planted mutant of the family still compiles without a warning.
//! NVRTC runs on the CPU, so these need libnvrtc and no GPU.

use crate::compile::{compile_family, ensure_nvrtc};
use crate::kernel_family::KernelFamily;

/// Whether `cubin` holds the NUL-terminated symbol `name` (an entry's name in its string table).
fn has_symbol(cubin: &[u8], name: &str) -> bool {
    let needle = format!("{name}\0").into_bytes();
    cubin.windows(needle.len()).any(|w| w == needle)
}

/// Every name in `kernels` is in `family`'s sm_90 cubin of the real kernels; a name no kernel
/// has (`<stem>_no_such_kernel`, `stem` the file name without `.cu`) is not, so the search can
/// fail.
pub fn assert_kernels_present(family: KernelFamily, kernels: &[String]) {
    ensure_nvrtc().unwrap_or_else(|e| panic!("{e}: run `make verify`"));
    let compiled = compile_family(family, "sm_90", 0).unwrap_or_else(|e| panic!("{e}"));
    let stem = family.file().trim_end_matches(".cu");
    assert!(!has_symbol(&compiled.cubin, &format!("{stem}_no_such_kernel")), "the name check is vacuous");
    for name in kernels {
        assert!(has_symbol(&compiled.cubin, name), "kernel {name} missing from {}", family.file());
    }
}

/// Each of `mutants` builds `family` for every arch in `archs` with an empty NVRTC log.
pub fn assert_mutants_compile_cleanly(family: KernelFamily, archs: &[&str], mutants: &[u32]) {
    for arch in archs {
        for &mutant in mutants {
            let compiled = compile_family(family, arch, mutant)
                .unwrap_or_else(|e| panic!("{} mutant {mutant}: {e}", family.file()));
            assert!(compiled.log.is_empty(), "{} mutant {mutant} {arch} warned:\n{}", family.file(), compiled.log);
        }
    }
}

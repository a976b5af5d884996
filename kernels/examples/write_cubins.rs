//! Writes the machine code of every kernel family, compiled by NVRTC exactly
//! as the harness compiles it (the same options, the tuning policy's
//! defines, mutant 0), to one `<family>-<arch>.cubin` file each.
//!
//! It needs NVRTC but no GPU. Its use is proving that a source change is
//! neutral: write the cubins before and after the change and compare their
//! SASS (`cuobjdump -sass`), which `-lineinfo` keeps free of line numbers.
//!
//! Run: `cargo run -p primlab-kernels --example write_cubins -- <dir> [arch]`
//! (arch defaults to `sm_90`). Exit status 0 when every family compiled and
//! was written, 1 otherwise, with the family and the reason.

use std::path::PathBuf;
use std::process::ExitCode;

use kernels::compile::compile_family;
use kernels::KernelFamily;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next().map(PathBuf::from) else {
        eprintln!("usage: write_cubins <dir> [arch]");
        return ExitCode::FAILURE;
    };
    let arch = args.next().unwrap_or_else(|| "sm_90".to_string());
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("write_cubins: cannot create {}: {e}", dir.display());
        return ExitCode::FAILURE;
    }
    for family in KernelFamily::ALL {
        let compiled = match compile_family(family, &arch, 0) {
            Ok(compiled) => compiled,
            Err(e) => {
                eprintln!("write_cubins: {} for {arch}: {e}", family.file());
                return ExitCode::FAILURE;
            }
        };
        let path = dir.join(format!("{}-{arch}.cubin", family.file().trim_end_matches(".cu")));
        if let Err(e) = std::fs::write(&path, &compiled.cubin) {
            eprintln!("write_cubins: cannot write {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
        println!("{} ({} bytes)", path.display(), compiled.cubin.len());
    }
    ExitCode::SUCCESS
}

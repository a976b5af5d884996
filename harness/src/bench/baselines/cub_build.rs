//! Building `scripts/baselines/cub_bench.cu` with nvcc into
//! `target/baselines/`, in the background while primlab's own entries run.
//! The binary's name carries a hash of the source, the nvcc path and the
//! architecture, so a later run on the same machine reuses it; it is
//! renamed into place only when nvcc succeeded. `PRIMLAB_CUB_BENCH`
//! names a prebuilt binary instead.
//!
//! CUB comes from the CCCL headers in `PRIMLAB_CCCL_INCLUDE`, else from
//! `target/cccl/include` under the working directory (`scripts/install_cccl.sh`
//! puts the pinned release there), else from the toolkit nvcc belongs to.
//! Rule: a `-I` folder is searched before the toolkit's own CCCL (which
//! nvcc adds as a system folder), so the named headers win; their
//! `version.h` is part of the binary's name, so another release builds
//! another binary.

use super::locate;
use super::process::{self, ProgramRun, RunningProgram};
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Environment variable naming a prebuilt `cub_bench` binary.
pub const PREBUILT_ENV: &str = "PRIMLAB_CUB_BENCH";

/// Environment variable naming a folder of CCCL headers (holding `cub/`, `thrust/`, `cuda/`).
pub const CCCL_ENV: &str = "PRIMLAB_CCCL_INCLUDE";

/// Where `scripts/install_cccl.sh` puts the pinned CCCL headers, from the working directory.
pub const CCCL_INSTALLED: &str = "target/cccl/include";

/// The file of a CCCL header folder that names its release (`#define CCCL_VERSION 3005000`).
const CCCL_VERSION_HEADER: &str = "cuda/std/__cccl/version.h";

/// The CCCL headers a build uses besides the toolkit's: their folder and the
/// text of their version header.
#[derive(Debug, Clone, PartialEq)]
pub struct CcclHeaders {
    /// The `-I` folder.
    pub dir: PathBuf,
    /// Its `cuda/std/__cccl/version.h`.
    pub version_text: String,
}

impl CcclHeaders {
    /// The release, e.g. "3.5.0", from the version header (None: no `CCCL_VERSION` line).
    pub fn release(&self) -> Option<String> {
        let line = self.version_text.lines().find(|l| l.trim_start().starts_with("#define CCCL_VERSION "))?;
        let v: u64 = line.split_whitespace().nth(2)?.parse().ok()?;
        Some(format!("{}.{}.{}", v / 1_000_000, v / 1000 % 1000, v % 1000))
    }
}

/// The CCCL headers to build against: `explicit` (the value of
/// [`CCCL_ENV`]), which must be a CCCL folder, else `installed` when it is
/// one, else none (the toolkit's own).
pub fn cccl_headers(explicit: Option<&Path>, installed: &Path) -> Result<Option<CcclHeaders>, String> {
    let read = |dir: &Path| std::fs::read_to_string(dir.join(CCCL_VERSION_HEADER)).ok();
    match explicit {
        Some(dir) => match read(dir) {
            Some(version_text) => Ok(Some(CcclHeaders { dir: dir.to_path_buf(), version_text })),
            None => Err(format!(
                "${CCCL_ENV} = {} holds no {CCCL_VERSION_HEADER}: not a folder of CCCL headers \
                 (scripts/install_cccl.sh makes one in {CCCL_INSTALLED})",
                dir.display()
            )),
        },
        None => Ok(read(installed).map(|version_text| CcclHeaders { dir: installed.to_path_buf(), version_text })),
    }
}

/// Where the build and the baselines' outputs go.
pub fn work_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("target"));
    target.join("baselines")
}

/// How the binary was obtained, for the receipt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CubBuild {
    /// The binary.
    pub binary: PathBuf,
    /// "prebuilt ($PRIMLAB_CUB_BENCH)", "cached" or "built".
    pub how: String,
    /// The nvcc run, when one was needed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvcc: Option<ProgramRun>,
}

/// A build in progress (or one that needs no work).
pub enum PendingBuild {
    /// The binary exists already.
    Ready(CubBuild),
    /// nvcc is running.
    Running {
        /// The nvcc process.
        program: Box<RunningProgram>,
        /// Where the binary lands on success.
        binary: PathBuf,
        /// The CCCL it is built against, in words.
        against: String,
    },
    /// No build possible, and why.
    Absent(String),
}

fn short_hash(parts: &[&[u8]]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part);
        hasher.update([0u8]);
    }
    hasher.finalize().iter().take(6).map(|b| format!("{b:02x}")).collect()
}

/// Starts building `source` for `sm_<arch>` (e.g. "90"), or finds it built.
pub fn start(source: &Path, arch: &str) -> PendingBuild {
    if let Some(prebuilt) = std::env::var_os(PREBUILT_ENV) {
        let binary = PathBuf::from(prebuilt);
        return if binary.is_file() {
            PendingBuild::Ready(CubBuild { binary, how: format!("prebuilt (${PREBUILT_ENV})"), nvcc: None })
        } else {
            PendingBuild::Absent(format!("${PREBUILT_ENV} = {} is not a file", binary.display()))
        };
    }
    let nvcc = match locate::nvcc() {
        Ok(path) => path,
        Err(reason) => return PendingBuild::Absent(reason),
    };
    let text = match source_text(source) {
        Ok(text) => text,
        Err(e) => return PendingBuild::Absent(format!("{e:#}")),
    };
    let explicit = std::env::var_os(CCCL_ENV).map(PathBuf::from);
    let cccl = match cccl_headers(explicit.as_deref(), Path::new(CCCL_INSTALLED)) {
        Ok(cccl) => cccl,
        Err(reason) => return PendingBuild::Absent(reason),
    };
    let (cccl_dir, cccl_version) = cccl.as_ref().map_or((Vec::new(), Vec::new()), |c| {
        (c.dir.as_os_str().as_encoded_bytes().to_vec(), c.version_text.as_bytes().to_vec())
    });
    let dir = work_dir();
    let hash = short_hash(&[&text, nvcc.to_string_lossy().as_bytes(), arch.as_bytes(), &cccl_dir, &cccl_version]);
    let binary = dir.join(format!("cub_bench-sm_{arch}-{hash}"));
    let against = cccl.as_ref().map_or("the toolkit's CCCL".to_string(), |c| {
        format!("CCCL {} from {}", c.release().unwrap_or_else(|| "(release unknown)".into()), c.dir.display())
    });
    if binary.is_file() {
        return PendingBuild::Ready(CubBuild { binary, how: format!("cached (against {against})"), nvcc: None });
    }
    match spawn_nvcc(&nvcc, source, arch, cccl.as_ref().map(|c| c.dir.as_path()), &binary, &against) {
        Ok(program) => PendingBuild::Running { program: Box::new(program), binary, against },
        Err(e) => PendingBuild::Absent(format!("could not start nvcc: {e:#}")),
    }
}

/// What the binary is built from: `source` and then every `.cuh` beside it
/// (the headers it includes), in name order, each preceded by its name, so
/// that an edit to any of them names a new binary.
fn source_text(source: &Path) -> Result<Vec<u8>> {
    let mut text = std::fs::read(source).with_context(|| format!("cannot read {}", source.display()))?;
    let dir = source.parent().context("source path without a directory")?;
    let mut headers: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|e| e == "cuh"))
        .collect();
    headers.sort();
    for header in headers {
        text.extend_from_slice(header.file_name().unwrap_or_default().as_encoded_bytes());
        text.push(0);
        text.extend(std::fs::read(&header).with_context(|| format!("cannot read {}", header.display()))?);
    }
    Ok(text)
}

/// The file nvcc writes before it is renamed into place.
fn partial_path(binary: &Path) -> PathBuf {
    binary.with_extension(format!("partial-{}", std::process::id()))
}

fn spawn_nvcc(
    nvcc: &Path,
    source: &Path,
    arch: &str,
    cccl: Option<&Path>,
    binary: &Path,
    against: &str,
) -> Result<RunningProgram> {
    let dir = binary.parent().context("binary path without a directory")?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut args = vec!["-O3".to_string(), "-std=c++17".to_string(), format!("-arch=sm_{arch}")];
    if let Some(include) = cccl {
        args.push(format!("-I{}", include.display()));
    }
    args.extend(["-o".to_string(), partial_path(binary).display().to_string(), source.display().to_string()]);
    eprintln!("bench: building cub_bench against {against}");
    process::start(nvcc, &args, &dir.join("cub_build.log"))
}

/// Waits for a running build until `deadline`; the binary or why there is none.
pub fn finish(pending: PendingBuild, deadline: Instant) -> Result<CubBuild, (String, Option<ProgramRun>)> {
    match pending {
        PendingBuild::Ready(build) => Ok(build),
        PendingBuild::Absent(reason) => Err((reason, None)),
        PendingBuild::Running { program, binary, against } => {
            let run = match program.finish(deadline) {
                Ok(run) => run,
                Err(e) => return Err((format!("nvcc build: {e:#}"), None)),
            };
            let partial = partial_path(&binary);
            if run.succeeded() && partial.is_file() {
                // Only a successful build is renamed into place.
                if let Err(e) = std::fs::rename(&partial, &binary) {
                    return Err((format!("renaming {} into place: {e}", partial.display()), Some(run)));
                }
                Ok(CubBuild { binary, how: format!("built (against {against})"), nvcc: Some(run) })
            } else if run.timed_out {
                let _ = std::fs::remove_file(&partial);
                let reason = format!(
                    "nvcc did not finish building cub_bench within {:.0} s (killed); run `harness bench` without \
                     --quick once to build and cache it in {}",
                    run.seconds,
                    work_dir().display()
                );
                Err((reason, Some(run)))
            } else {
                let reason = format!("nvcc failed (exit {:?}): {}", run.exit_code, run.log_tail);
                Err((reason, Some(run)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_binary_name_depends_on_source_and_arch() {
        let a = short_hash(&[b"src", b"/usr/bin/nvcc", b"90"]);
        let b = short_hash(&[b"src", b"/usr/bin/nvcc", b"80"]);
        assert_ne!(a, b);
        assert_eq!(a.len(), 12);
        // Part boundaries matter.
        assert_ne!(short_hash(&[b"ab", b"c"]), short_hash(&[b"a", b"bc"]));
    }

    #[test]
    fn the_built_text_covers_every_header_beside_the_source() {
        let dir = std::env::temp_dir().join(format!("primlab-cub-build-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let source = dir.join("cub_bench.cu");
        std::fs::write(&source, "#include \"b.cuh\"\n").unwrap();
        std::fs::write(dir.join("b.cuh"), "int b;").unwrap();
        std::fs::write(dir.join("a.cuh"), "int a;").unwrap();
        std::fs::write(dir.join("notes.md"), "not compiled").unwrap();
        let before = source_text(&source).unwrap();
        assert_eq!(before, b"#include \"b.cuh\"\na.cuh\0int a;b.cuh\0int b;".to_vec());
        std::fs::write(dir.join("b.cuh"), "int c;").unwrap();
        assert_ne!(source_text(&source).unwrap(), before, "a header edit must name a new binary");
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(source_text(&source).is_err());
    }

    #[test]
    fn cccl_headers_come_from_the_named_folder_then_the_installed_one_else_the_toolkit() {
        let dir = crate::test_dir::fresh_temp_dir("cub-build-cccl");
        let (named, installed, empty) = (dir.join("named"), dir.join("installed"), dir.join("empty"));
        for (folder, version) in [(&named, 3005000), (&installed, 3000001)] {
            std::fs::create_dir_all(folder.join("cuda/std/__cccl")).unwrap();
            std::fs::write(folder.join(CCCL_VERSION_HEADER), format!("#pragma once\n#define CCCL_VERSION {version}\n"))
                .unwrap();
        }
        std::fs::create_dir_all(&empty).unwrap();
        let picked = cccl_headers(Some(&named), &installed).unwrap().unwrap();
        assert_eq!((picked.dir.as_path(), picked.release().as_deref()), (named.as_path(), Some("3.5.0")));
        let fallback = cccl_headers(None, &installed).unwrap().unwrap();
        assert_eq!(fallback.release().as_deref(), Some("3.0.1"));
        assert_eq!(cccl_headers(None, &empty).unwrap(), None, "no headers: the toolkit's CCCL");
        let e = cccl_headers(Some(&empty), &installed).unwrap_err();
        assert!(e.contains("PRIMLAB_CCCL_INCLUDE") && e.contains("not a folder of CCCL headers"), "{e}");
    }

    /// The pinned release `scripts/install_cccl.sh` installs is the one its check names.
    #[test]
    fn the_install_script_pins_one_wheel_and_its_release() {
        let script = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/install_cccl.sh"))
            .expect("scripts/install_cccl.sh");
        let value = |key: &str| {
            let line = script.lines().find(|l| l.starts_with(&format!("{key}="))).unwrap_or_else(|| panic!("{key}="));
            line.split('"').nth(1).unwrap_or_default().to_string()
        };
        let headers =
            CcclHeaders { dir: PathBuf::new(), version_text: format!("#define CCCL_VERSION {}", value("cccl_macro")) };
        assert_eq!(headers.release(), Some(value("cccl")), "cccl and cccl_macro name one release");
        assert!(!value("version").is_empty());
    }

    /// The shipped program: the entry file and the headers it is split into.
    #[test]
    fn the_shipped_source_includes_its_headers() {
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/baselines/cub_bench.cu");
        let text = String::from_utf8(source_text(&source).unwrap()).unwrap();
        for header in ["bench_support.cuh", "bench_options.cuh", "bench_runner.cuh", "bench_ops.cuh"] {
            assert!(text.contains(&format!("{header}\0")), "{header} is not hashed");
        }
    }
}

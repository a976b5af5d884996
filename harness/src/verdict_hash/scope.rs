//! What decides a GPU verdict, as paths of the workspace: the files whose
//! bytes make the verdict hash that keys every receipt. Shared by the build
//! script (which embeds the hash of the tree it built from) and by the
//! receipt gate (which hashes the checkout it runs in). Only `std` and
//! `sha2` are used, so that `build.rs` can include this file as it is.
//!
//! In scope: every CUDA source wherever it lives (outside the benchmark
//! baselines and the user examples), the shared plain-data types crate
//! (`types/`: the affine map and histogram spec), the kernels crate (launch code), the
//! model crate (every expected value), the harness code that builds the
//! case catalogues and compares (sweep, sanitize, mutants, multi-GPU cases,
//! registry), the build script, the manifests, `Cargo.lock` and the pinned
//! toolchain. Out of scope: documentation (`*.md`), the bench, report and
//! plot code, the command line's help text, and the root's `receipts/` and
//! `fixtures/` (JSON no build reads). Folder names are skipped only at the
//! root, as `.gitignore` does; links to files are hashed as their target,
//! links to folders refused, and an empty scope is an error. A test holds
//! cargo's dep-info of every crate to this scope (`dep_info_tests.rs`).

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Names never walked at the repository root, as the `/name` lines of
/// `.gitignore` and the result folders: build output, installed tools,
/// results, the model's JSON fixtures (read by no build). Only at the root:
/// a folder of the same name deeper down (`model/src/fixtures`, a
/// `kernels/cuda/common/fixtures` of headers) is compiled like any other.
const SKIPPED_AT_ROOT: [&str; 9] =
    ["target", ".git", ".nvrtc", ".whl", "gpu-out", "gpu-logs", "receipts", "fixtures", ".gl"];

/// Root names starting so are skipped too (`/.nvrtc.installing-*` of `.gitignore`).
const SKIPPED_ROOT_PREFIX: &str = ".nvrtc.installing-";

/// Whether the walk skips `name` in the folder `relative_dir` ("" at the root).
fn skipped(relative_dir: &str, name: &str) -> bool {
    // Version control data is never compiled, at any depth (submodules).
    name == ".git"
        || (relative_dir.is_empty() && (SKIPPED_AT_ROOT.contains(&name) || name.starts_with(SKIPPED_ROOT_PREFIX)))
}

/// CUDA sources under these prefixes do not decide a verdict of ours: the
/// CUB baseline programs time, they do not check; the examples are users'.
const CUDA_OUTSIDE_SCOPE: [&str; 2] = ["scripts/baselines/", "examples/"];

/// Rust and manifest files in scope: (path prefix, file extensions).
const RUST_SCOPE: [(&str, &[&str]); 14] = [
    ("types/", &["rs", "toml"]),
    ("kernels/", &["rs", "toml"]),
    ("model/", &["rs", "toml"]),
    ("harness/build.rs", &["rs"]),
    ("harness/Cargo.toml", &["toml"]),
    ("harness/src/sweep/", &["rs"]),
    // `harness sweep` writes the gated receipt from the runner's verdicts.
    ("harness/src/commands/sweep", &["rs"]),
    ("harness/src/sanitize/", &["rs"]),
    ("harness/src/mutants", &["rs"]),
    ("harness/src/multigpu/", &["rs"]),
    ("harness/src/registry/", &["rs"]),
    ("harness/src/verdict_hash/", &["rs"]),
    ("Cargo.", &["toml", "lock"]),
    ("rust-toolchain.toml", &["toml"]),
];

/// Files under a prefix of [`RUST_SCOPE`] that still do not decide a verdict.
const RUST_OUTSIDE_SCOPE: [&str; 3] = [
    "harness/src/multigpu/scaling_bench.rs",
    "harness/src/multigpu/scaling_bench_tests.rs",
    "harness/src/multigpu/scaling_report.rs",
];

/// Harness files compiled into the binary that deliberately do not decide a
/// GPU verdict (a test holds every compiled file to the scope or this list):
/// the bench, report and plots (timing, not verdicts), the receipt gate and
/// `cases`/`check` (they judge, they do not run the gated catalogues), the
/// command line, the library's root and public API (`check` from Rust),
/// output helpers, and the scaling study's files.
#[cfg(test)]
pub const HARNESS_OUTSIDE_SCOPE: [&str; 24] = [
    "harness/src/bench/",
    "harness/src/report/",
    "harness/src/receipts/",
    "harness/src/cases/",
    "harness/src/check/",
    "harness/src/edge_families/",
    "harness/src/commands/",
    "harness/src/cli.rs",
    "harness/src/main.rs",
    "harness/src/lib.rs",
    "harness/src/api",
    "harness/src/exit.rs",
    "harness/src/nvrtc_path.rs",
    "harness/src/grammar.rs",
    "harness/src/table.rs",
    "harness/src/budget.rs",
    "harness/src/layers_tests.rs",
    "harness/src/junit.rs",
    "harness/src/progress.rs",
    "harness/src/fixtures.rs",
    "harness/src/test_dir.rs",
    "harness/src/bounded.rs",
    "harness/assets/",
    "harness/src/multigpu/scaling_",
];

/// Whether the file at `relative` (a `/`-separated path from the workspace
/// root) is part of the verdict hash.
pub fn in_scope(relative: &str) -> bool {
    let extension = relative.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    if extension == "md" {
        return false;
    }
    if matches!(extension, "cu" | "cuh") {
        return !CUDA_OUTSIDE_SCOPE.iter().any(|p| relative.starts_with(p));
    }
    if RUST_OUTSIDE_SCOPE.contains(&relative) {
        return false;
    }
    RUST_SCOPE.iter().any(|(prefix, extensions)| relative.starts_with(prefix) && extensions.contains(&extension))
}

/// Every file of the tree at `root` in scope, as sorted relative paths. A
/// link to a file counts as the file it names (the build and `include_str!`
/// follow it); a link to a folder is refused, as is a tree with no file in scope.
pub fn scoped_files(root: &Path) -> Result<Vec<String>, String> {
    let mut files = Vec::new();
    walk(root, "", &mut files)?;
    files.retain(|f| in_scope(f));
    files.sort();
    if files.is_empty() {
        return Err(format!(
            "{} holds none of the sources the verdict hash covers (is it the workspace root?)",
            root.display()
        ));
    }
    Ok(files)
}

fn walk(root: &Path, relative_dir: &str, out: &mut Vec<String>) -> Result<(), String> {
    let dir = root.join(relative_dir);
    let entries = std::fs::read_dir(&dir).map_err(|e| format!("reading {}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("reading {}: {e}", dir.display()))?;
        let name = entry.file_name().to_string_lossy().to_string();
        if skipped(relative_dir, &name) {
            continue;
        }
        let relative = if relative_dir.is_empty() { name.clone() } else { format!("{relative_dir}/{name}") };
        let kind = entry.file_type().map_err(|e| format!("reading {relative}: {e}"))?;
        if kind.is_dir() {
            walk(root, &relative, out)?;
        } else if kind.is_file() {
            out.push(relative);
        } else if kind.is_symlink() {
            match std::fs::metadata(entry.path()) {
                Ok(target) if target.is_file() => out.push(relative),
                Ok(target) if target.is_dir() => {
                    return Err(format!(
                        "{relative} is a link to a folder: the verdict hash does not follow folder links \
                         (the build would); replace it with the folder or remove it"
                    ))
                }
                // A dangling link or one to a device: refused where it would count.
                _ if in_scope(&relative) => return Err(format!("{relative} is a link to no regular file")),
                _ => {}
            }
        } else if in_scope(&relative) {
            // A socket, pipe or device where a source would be: its bytes
            // cannot be hashed, so the tree cannot be vouched for.
            return Err(format!("{relative} is not a regular file (a socket, pipe or device): it cannot be hashed"));
        }
    }
    Ok(())
}

/// SHA-256 (hex) over (path, length, bytes) of every file in scope, and
/// their paths; an error when a file cannot be read or none is in scope.
pub fn verdict_hash_of(root: &Path) -> Result<(String, Vec<PathBuf>), String> {
    let files = scoped_files(root)?;
    let mut hasher = Sha256::new();
    let mut read = Vec::with_capacity(files.len());
    for relative in &files {
        let path = root.join(relative);
        let bytes = std::fs::read(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
        hasher.update((relative.len() as u64).to_le_bytes());
        hasher.update(relative.as_bytes());
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
        read.push(path);
    }
    let hex = hasher.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Ok((hex, read))
}

/// The seed a receipt of `purpose` ("sweep", "sanitize") draws its inputs
/// from, for sources of verdict hash `hash`: the first 8 bytes (big-endian)
/// of SHA-256("primlab-seed/" purpose "/" hash). Other sources, other inputs.
pub fn seed_for(purpose: &str, hash: &str) -> u64 {
    let digest = Sha256::new()
        .chain_update(b"primlab-seed/")
        .chain_update(purpose)
        .chain_update(b"/")
        .chain_update(hash)
        .finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first)
}

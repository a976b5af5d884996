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
//! plot code, the command line's help text, receipts and fixtures.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Folders never walked: build output, VCS data, installed tools, results.
const SKIPPED_DIRS: [&str; 9] =
    ["target", ".git", ".nvrtc", ".whl", "gpu-out", "gpu-logs", "receipts", "fixtures", ".gl"];

/// CUDA sources under these prefixes do not decide a verdict of ours: the
/// CUB baseline programs time, they do not check; the examples are users'.
const CUDA_OUTSIDE_SCOPE: [&str; 2] = ["scripts/baselines/", "examples/"];

/// Rust and manifest files in scope: (path prefix, file extensions).
const RUST_SCOPE: [(&str, &[&str]); 13] = [
    ("types/", &["rs", "toml"]),
    ("kernels/", &["rs", "toml"]),
    ("model/", &["rs", "toml"]),
    ("harness/build.rs", &["rs"]),
    ("harness/Cargo.toml", &["toml"]),
    ("harness/src/sweep/", &["rs"]),
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

/// Every file of the tree at `root` in scope, as sorted relative paths.
pub fn scoped_files(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    walk(root, root, &mut files);
    files.retain(|f| in_scope(f));
    files.sort();
    files
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().to_string();
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_dir() {
            if !SKIPPED_DIRS.contains(&name.as_str()) {
                walk(root, &path, out);
            }
        } else if kind.is_file() {
            if let Ok(relative) = path.strip_prefix(root) {
                out.push(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
}

/// SHA-256 (hex) over (path, length, bytes) of every file in scope.
pub fn verdict_hash_of(root: &Path) -> (String, Vec<PathBuf>) {
    let files = scoped_files(root);
    let mut hasher = Sha256::new();
    let mut read = Vec::with_capacity(files.len());
    for relative in &files {
        let path = root.join(relative);
        let bytes = std::fs::read(&path).unwrap_or_default();
        hasher.update((relative.len() as u64).to_le_bytes());
        hasher.update(relative.as_bytes());
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
        read.push(path);
    }
    let hex = hasher.finalize().iter().map(|b| format!("{b:02x}")).collect();
    (hex, read)
}

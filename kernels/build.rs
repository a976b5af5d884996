//! Embeds every CUDA source under `cuda/` and computes the kernel-source hash.
//!
//! The hash covers the CUDA sources and the Rust code that launches them
//! (`src/`, this file, `Cargo.toml`): receipts from GPU runs are keyed by it,
//! so any change to a kernel or its launch invalidates the committed receipts.

use sha2::{Digest, Sha256};
use std::fs;
use std::path::{Path, PathBuf};

fn files_under(root: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn relative(path: &Path, base: &Path) -> String {
    path.strip_prefix(base).expect("path under the package").to_string_lossy().replace('\\', "/")
}

fn main() {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let cuda_dir = manifest_dir.join("cuda");
    println!("cargo:rerun-if-changed=cuda");
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=Cargo.toml");

    let mut cuda = Vec::new();
    files_under(&cuda_dir, &mut cuda);
    cuda.retain(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("cu" | "cuh")));
    cuda.sort();

    let mut hashed = cuda.clone();
    files_under(&manifest_dir.join("src"), &mut hashed);
    hashed.push(manifest_dir.join("build.rs"));
    hashed.push(manifest_dir.join("Cargo.toml"));
    hashed.sort();
    hashed.dedup();

    let mut hasher = Sha256::new();
    for path in &hashed {
        let name = relative(path, &manifest_dir);
        let bytes = fs::read(path).expect("readable source file");
        hasher.update((name.len() as u64).to_le_bytes());
        hasher.update(name.as_bytes());
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
    }
    let digest = hasher.finalize();
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();

    let mut generated = String::new();
    generated.push_str("/// Every CUDA source, as (path relative to `kernels/cuda`, text).\n");
    generated.push_str("pub static CUDA_SOURCES: &[(&str, &str)] = &[\n");
    for path in &cuda {
        generated.push_str(&format!(
            "    ({:?}, include_str!({:?})),\n",
            relative(path, &cuda_dir),
            path.to_string_lossy()
        ));
    }
    generated.push_str("];\n");
    generated.push_str(&format!(
        "/// SHA-256 over every kernel source and the Rust code that launches them.\npub const SOURCE_HASH: &str = {hex:?};\n"
    ));
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it")).join("cuda_sources.rs");
    fs::write(out, generated).expect("writable OUT_DIR");
}

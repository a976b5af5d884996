//! Embeds the verdict hash of the tree being built (`PRIMLAB_VERDICT_HASH`):
//! one SHA-256 over every file that decides what runs on the GPU and how it
//! is judged (`src/verdict_hash/scope.rs` says which).

#[path = "src/verdict_hash/scope.rs"]
#[allow(dead_code)]
mod scope;

use std::path::PathBuf;

fn main() {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let root = manifest_dir.parent().expect("the harness lives in the workspace").to_path_buf();
    // A build script fails by panicking: the message is the build error.
    let (hash, files) = scope::verdict_hash_of(&root).unwrap_or_else(|e| panic!("verdict hash: {e}"));
    // Rebuild when a hashed file changes, or a file appears in a hashed folder.
    for file in &files {
        println!("cargo:rerun-if-changed={}", file.display());
    }
    for dir in [
        "types",
        "kernels",
        "model",
        "harness/src/sweep",
        "harness/src/sanitize",
        "harness/src/multigpu",
        "harness/src",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(dir).display());
    }
    println!("cargo:rustc-env=PRIMLAB_VERDICT_HASH={hash}");
}

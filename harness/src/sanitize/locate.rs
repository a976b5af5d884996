//! Finding the compute-sanitizer executable.

use std::path::{Path, PathBuf};

/// Where compute-sanitizer was looked for, in order.
pub fn candidates() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(explicit) = std::env::var_os("COMPUTE_SANITIZER") {
        out.push(PathBuf::from(explicit));
    }
    if let Some(path) = std::env::var_os("PATH") {
        out.extend(std::env::split_paths(&path).map(|dir| dir.join("compute-sanitizer")));
    }
    if let Some(home) = std::env::var_os("CUDA_HOME") {
        out.push(Path::new(&home).join("bin/compute-sanitizer"));
        out.push(Path::new(&home).join("compute-sanitizer/compute-sanitizer"));
    }
    out.push(PathBuf::from("/usr/local/cuda/bin/compute-sanitizer"));
    out.push(PathBuf::from("/usr/local/cuda/compute-sanitizer/compute-sanitizer"));
    // Versioned installs, newest first.
    if let Ok(entries) = std::fs::read_dir("/usr/local") {
        let mut versioned: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("cuda-")))
            .collect();
        versioned.sort();
        versioned.reverse();
        out.extend(versioned.into_iter().map(|p| p.join("bin/compute-sanitizer")));
    }
    out
}

/// The first executable candidate, or an error that says where it looked.
pub fn locate() -> anyhow::Result<PathBuf> {
    let searched = candidates();
    for candidate in &searched {
        if candidate.is_file() {
            return Ok(candidate.clone());
        }
    }
    anyhow::bail!(
        "compute-sanitizer not found: looked on PATH, under $CUDA_HOME, /usr/local/cuda and /usr/local/cuda-*; \
         set COMPUTE_SANITIZER=/path/to/compute-sanitizer or install the CUDA toolkit"
    )
}

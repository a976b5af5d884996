//! Finding the tools the baselines need: `nvcc` (PATH, `$CUDA_HOME/bin`,
//! `/usr/local/cuda/bin`) and `python3` (PATH).

use std::path::{Path, PathBuf};

/// Where `nvcc` was looked for, in order.
pub fn nvcc_candidates() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(path) = std::env::var_os("PATH") {
        out.extend(std::env::split_paths(&path).map(|dir| dir.join("nvcc")));
    }
    if let Some(home) = std::env::var_os("CUDA_HOME") {
        out.push(Path::new(&home).join("bin/nvcc"));
    }
    out.push(PathBuf::from("/usr/local/cuda/bin/nvcc"));
    out
}

/// The first `nvcc` found, or where it was looked for.
pub fn nvcc() -> Result<PathBuf, String> {
    first_file(&nvcc_candidates())
        .ok_or_else(|| "nvcc not found on PATH, under $CUDA_HOME/bin or in /usr/local/cuda/bin".to_string())
}

/// `python3` on PATH, or why not.
pub fn python3() -> Result<PathBuf, String> {
    let candidates: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).map(|dir| dir.join("python3")).collect())
        .unwrap_or_default();
    first_file(&candidates).ok_or_else(|| "python3 not found on PATH".to_string())
}

fn first_file(candidates: &[PathBuf]) -> Option<PathBuf> {
    candidates.iter().find(|c| c.is_file()).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvcc_is_looked_for_in_the_standard_place_last() {
        assert_eq!(nvcc_candidates().last(), Some(&PathBuf::from("/usr/local/cuda/bin/nvcc")));
    }
}

//! Finding NVRTC where this project's set-up or pip put it, when the loader
//! path does not name it: `make` installs the `nvidia-cuda-nvrtc` wheel's
//! libraries under the repository's `.nvrtc/nvidia/cu13/lib`, and pip under
//! a virtual environment's `site-packages/nvidia/cu13/lib`.
//!
//! Rule relied on: the dynamic loader answers a load by bare name with an
//! object already loaded under that soname, so once `libnvrtc.so.13` (and the
//! `libnvrtc-builtins` it loads by name) are loaded from a full path with
//! `RTLD_GLOBAL`, cudarc's load of `libnvrtc.so.13` by name finds them.

use std::path::{Path, PathBuf};

/// The library cudarc loads (CUDA 13).
const LIBRARY: &str = "libnvrtc.so.13";
/// The builtins NVRTC loads by name at its first compile.
const BUILTINS: &str = "libnvrtc-builtins.so.13.0";
/// Where the wheel keeps them, below a repository or `site-packages`.
const WHEEL_DIR: &str = "nvidia/cu13/lib";

/// The folders searched, in order: `$PRIMLAB_NVRTC_DIR`; `.nvrtc/<wheel>`
/// in every folder above the running executable and above the current
/// folder; each `site-packages/<wheel>` of `$VIRTUAL_ENV`; the CUDA toolkit.
pub fn candidate_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("PRIMLAB_NVRTC_DIR").map(PathBuf::from).into_iter().collect();
    let starts = [std::env::current_exe().ok(), std::env::current_dir().ok()];
    for start in starts.iter().flatten() {
        dirs.extend(start.ancestors().map(|a| a.join(".nvrtc").join(WHEEL_DIR)));
    }
    if let Some(venv) = std::env::var_os("VIRTUAL_ENV") {
        dirs.extend(site_packages(Path::new(&venv)).into_iter().map(|s| s.join(WHEEL_DIR)));
    }
    dirs.extend(["/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib"].map(PathBuf::from));
    let mut seen = std::collections::BTreeSet::new();
    dirs.retain(|d| seen.insert(d.clone()));
    dirs
}

/// `lib/python*/site-packages` folders of a virtual environment.
fn site_packages(venv: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(venv.join("lib")) else { return Vec::new() };
    entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("python"))
        .map(|e| e.path().join("site-packages"))
        .collect()
}

/// The first of `dirs` that holds the library.
pub fn first_holding(dirs: &[PathBuf]) -> Option<&PathBuf> {
    dirs.iter().find(|d| d.join(LIBRARY).is_file())
}

/// Loads NVRTC (its builtins first) from the first candidate folder that
/// holds it, for the life of the process. Ok: that folder; Err: the folders
/// searched, for the message that nothing was found.
pub fn preload() -> Result<PathBuf, Vec<PathBuf>> {
    let dirs = candidate_dirs();
    let Some(dir) = first_holding(&dirs).cloned() else { return Err(dirs) };
    for name in [BUILTINS, LIBRARY] {
        let path = dir.join(name);
        if !path.is_file() {
            continue;
        }
        use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
        // SAFETY: loading NVRTC runs only its initialisers, as the loader's
        // own search would; the handle is kept for the life of the process
        // (forgotten, never closed) because cudarc holds symbols from it.
        match unsafe { Library::open(Some(&path), RTLD_NOW | RTLD_GLOBAL) } {
            Ok(library) => std::mem::forget(library),
            Err(_) => return Err(vec![dir]),
        }
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_repository_install_is_found_above_the_executable_and_the_current_folder() {
        let dirs = candidate_dirs();
        let here = std::env::current_dir().expect("cwd");
        for folder in here.ancestors() {
            assert!(dirs.contains(&folder.join(".nvrtc").join(WHEEL_DIR)), "{}", folder.display());
        }
        assert!(dirs.contains(&PathBuf::from("/usr/local/cuda/lib64")));
    }

    #[test]
    fn the_first_folder_holding_the_library_is_chosen() {
        let root = std::env::temp_dir().join(format!("primlab-nvrtc-{}", std::process::id()));
        let (empty, full) = (root.join("empty"), root.join("full"));
        std::fs::create_dir_all(&empty).expect("mkdir");
        std::fs::create_dir_all(&full).expect("mkdir");
        std::fs::write(full.join(LIBRARY), b"").expect("write");
        let dirs = vec![root.join("missing"), empty.clone(), full.clone()];
        assert_eq!(first_holding(&dirs), Some(&full));
        assert_eq!(first_holding(&dirs[..2]), None);
        let _ = std::fs::remove_dir_all(&root);
    }
}

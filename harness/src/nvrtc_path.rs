//! Finding NVRTC where this project's set-up or pip put it, when the loader
//! path does not name it: `make` installs the `nvidia-cuda-nvrtc` wheel's
//! libraries under the repository's `.nvrtc/nvidia/cu13/lib`, and pip under
//! a virtual environment's `site-packages/nvidia/cu13/lib`.
//!
//! Rule relied on: the dynamic loader reads `LD_LIBRARY_PATH` once, when a
//! process starts, and the kernels crate loads `libnvrtc.so.13` (and NVRTC
//! its builtins) by bare name. So when no folder of that path holds the
//! library and one of [`candidate_dirs`] does, the harness runs itself again
//! at once ([`reexec_with_nvrtc`]: `exec`, the same process id, arguments
//! and environment) with that folder first on the path; the children it
//! starts (workers, sanitizer runs) inherit it.

use std::path::{Path, PathBuf};

/// The library cudarc loads (CUDA 13).
const LIBRARY: &str = "libnvrtc.so.13";
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

/// Where the harness looked for NVRTC, for a message that says it found
/// none: the loader path, then every folder of [`candidate_dirs`].
pub fn search_note() -> String {
    let loader = std::env::var_os("LD_LIBRARY_PATH").map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
    let dirs: Vec<String> = candidate_dirs().iter().map(|d| d.display().to_string()).collect();
    format!(
        "looked for {LIBRARY} on LD_LIBRARY_PATH ({}) and the loader's default folders, then in: {}; \
         `make` installs it under .nvrtc/, or set PRIMLAB_NVRTC_DIR to the folder that holds it",
        if loader.is_empty() { "unset" } else { loader.as_str() },
        dirs.join(", ")
    )
}

/// `reason` followed by [`search_note`] when it says NVRTC was not found.
pub fn with_search_note(reason: &str) -> String {
    if reason.contains("libnvrtc") && reason.contains("not found") && !reason.contains("looked for") {
        format!("{reason}; {}", search_note())
    } else {
        reason.to_string()
    }
}

/// Set in the environment of the run again, so that it never runs itself a third time.
const REEXEC_MARK: &str = "PRIMLAB_NVRTC_ON_PATH";

/// The folder to put first on the loader path: the first of `dirs` that
/// holds the library, when none of `loader_path` (`LD_LIBRARY_PATH`) does.
pub fn folder_to_add(loader_path: Option<&std::ffi::OsStr>, dirs: &[PathBuf]) -> Option<PathBuf> {
    let on_path = loader_path.map(|p| std::env::split_paths(p).collect::<Vec<_>>()).unwrap_or_default();
    if first_holding(&on_path).is_some() {
        return None;
    }
    first_holding(dirs).cloned()
}

/// Runs this executable again with NVRTC's folder first on the loader path
/// when that is needed (see the module docs); returns only when it is not
/// needed or `exec` failed (then the kernels crate's own error names what it
/// could not load).
pub fn reexec_with_nvrtc() {
    use std::os::unix::process::CommandExt;
    if std::env::var_os(REEXEC_MARK).is_some() {
        return;
    }
    let loader_path = std::env::var_os("LD_LIBRARY_PATH");
    let Some(folder) = folder_to_add(loader_path.as_deref(), &candidate_dirs()) else { return };
    let Ok(exe) = std::env::current_exe() else { return };
    let mut path = vec![folder];
    path.extend(loader_path.iter().flat_map(std::env::split_paths));
    let Ok(joined) = std::env::join_paths(path) else { return };
    // `exec` returns only on failure; the run then goes on without it.
    let _ = std::process::Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env("LD_LIBRARY_PATH", joined)
        .env(REEXEC_MARK, "1")
        .exec();
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
    fn a_missing_nvrtc_message_says_where_the_harness_looked() {
        let reason = "libnvrtc.so (CUDA 13) not found on the loader path";
        let noted = with_search_note(reason);
        assert!(noted.starts_with(reason), "{noted}");
        assert!(noted.contains("/usr/local/cuda/lib64") && noted.contains("LD_LIBRARY_PATH"), "{noted}");
        let here = std::env::current_dir().expect("cwd").join(".nvrtc").join(WHEEL_DIR);
        assert!(noted.contains(&here.display().to_string()), "{noted}");
        assert_eq!(with_search_note(&noted), noted, "noted once");
        assert_eq!(with_search_note("cuInit failed"), "cuInit failed");
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

    #[test]
    fn a_folder_is_added_only_when_the_loader_path_lacks_the_library() {
        let root = std::env::temp_dir().join(format!("primlab-nvrtc-path-{}", std::process::id()));
        let (on_path, wheel) = (root.join("on_path"), root.join("wheel"));
        std::fs::create_dir_all(&on_path).expect("mkdir");
        std::fs::create_dir_all(&wheel).expect("mkdir");
        std::fs::write(wheel.join(LIBRARY), b"").expect("write");
        let dirs = vec![wheel.clone()];
        assert_eq!(folder_to_add(None, &dirs), Some(wheel.clone()));
        assert_eq!(folder_to_add(Some(on_path.as_os_str()), &dirs), Some(wheel.clone()));
        std::fs::write(on_path.join(LIBRARY), b"").expect("write");
        assert_eq!(folder_to_add(Some(on_path.as_os_str()), &dirs), None, "the path already holds it");
        assert_eq!(folder_to_add(None, &[root.join("missing")]), None, "nothing to add");
        let _ = std::fs::remove_dir_all(&root);
    }
}

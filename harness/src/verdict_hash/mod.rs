//! The verdict hash: one SHA-256 over everything that decides what runs on
//! the GPU, what it is compared with and how ([`scope`]). Every receipt is
//! keyed by it; the gate recomputes it from the checkout.

#[path = "scope.rs"]
pub mod scope;

use std::path::Path;

/// The verdict hash of the tree this binary was built from.
pub const VERDICT_HASH: &str = env!("PRIMLAB_VERDICT_HASH");

/// The verdict hash of the workspace at `root` and the number of files it
/// covers; an error when a file cannot be read, a folder link is met, or no
/// file is in scope.
pub fn of_tree(root: &Path) -> anyhow::Result<(String, usize)> {
    let (hash, files) = scope::verdict_hash_of(root).map_err(anyhow::Error::msg)?;
    Ok((hash, files.len()))
}

pub use scope::seed_for;

/// The receipt kinds whose seed the gate requires to be [`seed_for`] their
/// verdict hash.
pub const SEEDED: [&str; 3] = ["sweep", "sanitize", "mutants"];

/// The seed of every planted-bug run of `harness mutants`: [`seed_for`]
/// this binary's verdict hash (the gate requires it).
pub fn mutants_seed() -> u64 {
    seed_for("mutants", VERDICT_HASH)
}

/// The seed of a sanitizer run given no `--seed`: [`seed_for`] this
/// binary's verdict hash (the gate requires it of a full run).
pub fn sanitize_seed() -> u64 {
    seed_for("sanitize", VERDICT_HASH)
}

#[cfg(test)]
mod tests {
    use super::scope::{in_scope, verdict_hash_of};
    use std::path::{Path, PathBuf};

    #[test]
    fn the_scope_holds_what_decides_verdicts_and_nothing_else() {
        for path in [
            "kernels/cuda/scan.cu",
            "kernels/cuda/common/block_scan.cuh",
            "kernels/src/scan.rs",
            "kernels/build.rs",
            "model/src/scan.rs",
            "model/src/fixtures/scan.rs",
            "harness/src/sweep/compare.rs",
            "harness/src/sweep/gpu/scan.rs",
            "harness/src/sanitize/parse.rs",
            "harness/src/mutants.rs",
            "harness/src/multigpu/sharded_scan.rs",
            "harness/src/some_new_place/helpers.cu",
            "Cargo.lock",
            "Cargo.toml",
        ] {
            assert!(in_scope(path), "{path} should decide verdicts");
        }
        for path in [
            "README.md",
            "kernels/README.md",
            "harness/src/multigpu/README.md",
            "harness/src/bench/report.rs",
            "harness/src/bench/plot.rs",
            "harness/src/report/table.rs",
            "harness/src/cli.rs",
            "harness/src/multigpu/scaling_bench.rs",
            "scripts/baselines/cub_bench.cu",
            "examples/check/scan/scan.cu",
        ] {
            assert!(!in_scope(path), "{path} should not decide verdicts");
        }
    }

    fn tree(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("primlab-verdict-hash-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (path, text) in [
            ("Cargo.lock", "lock"),
            ("README.md", "readme"),
            ("kernels/cuda/scan.cu", "kernel"),
            ("harness/src/sweep/compare.rs", "compare"),
            ("harness/src/bench/report.rs", "report"),
            ("harness/src/bench/plot.rs", "plot"),
        ] {
            let file = dir.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
        }
        dir
    }

    fn hash(root: &Path) -> String {
        verdict_hash_of(root).expect("a tree in scope").0
    }

    fn edit(root: &Path, path: &str, text: &str) {
        let file = root.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }

    #[test]
    fn docs_report_and_plot_changes_keep_the_hash() {
        let root = tree("docs");
        let before = hash(&root);
        edit(&root, "README.md", "a new readme");
        edit(&root, "harness/src/bench/report.rs", "a new report");
        edit(&root, "harness/src/bench/plot.rs", "a new plot");
        edit(&root, "kernels/NOTES.md", "new notes");
        assert_eq!(hash(&root), before);
    }

    #[test]
    fn comparison_kernel_and_lockfile_changes_change_the_hash() {
        let root = tree("verdicts");
        let mut seen = vec![hash(&root)];
        for (path, text) in [
            ("harness/src/sweep/compare.rs", "a looser comparison"),
            ("kernels/cuda/scan.cu", "another kernel"),
            ("harness/src/multigpu/helpers.cu", "CUDA outside kernels/"),
            ("Cargo.lock", "another lock"),
            ("model/src/scan.rs", "another model"),
        ] {
            edit(&root, path, text);
            let now = hash(&root);
            assert!(!seen.contains(&now), "changing {path} kept the hash");
            seen.push(now);
        }
    }

    #[test]
    fn names_are_skipped_only_at_the_root() {
        let root = tree("nested-skips");
        let mut seen = vec![hash(&root)];
        for path in [
            "kernels/cuda/common/fixtures/extra.cuh",
            "model/src/fixtures/scan.rs",
            "kernels/src/target/launch.rs",
            "model/src/receipts/rules.rs",
            "kernels/cuda/.nvrtc/helper.cuh",
        ] {
            edit(&root, path, "compiled");
            let now = hash(&root);
            assert!(!seen.contains(&now), "{path} is compiled but not hashed");
            seen.push(now);
        }
        let before = hash(&root);
        for path in ["fixtures/scan.json", "target/x.cu", "receipts/a.cu", ".nvrtc.installing-1/h.cuh", ".git/x.cu"] {
            edit(&root, path, "not compiled");
        }
        assert_eq!(hash(&root), before);
    }

    #[test]
    fn file_links_are_hashed_as_their_target_and_folder_links_refused() {
        let root = tree("links");
        let outside = root.join("outside");
        // The target's own name is out of scope: only the link brings it in.
        edit(&root, "outside/real.txt", "one");
        std::os::unix::fs::symlink(outside.join("real.txt"), root.join("kernels/cuda/linked.cuh")).unwrap();
        let before = hash(&root);
        edit(&root, "outside/real.txt", "two");
        assert_ne!(hash(&root), before, "an edit behind a link must change the hash");
        std::os::unix::fs::symlink(&outside, root.join("kernels/cuda/more")).unwrap();
        let e = verdict_hash_of(&root).unwrap_err();
        assert!(e.contains("kernels/cuda/more is a link to a folder"), "{e}");
    }

    #[test]
    fn a_source_that_cannot_be_read_is_an_error_not_a_skip() {
        // A socket where a source would be: no bytes to hash.
        let root = tree("socket");
        let path = root.join("kernels/cuda/stale.cuh");
        let _listener = std::os::unix::net::UnixListener::bind(&path).expect("a socket");
        let e = verdict_hash_of(&root).unwrap_err();
        assert!(e.contains("kernels/cuda/stale.cuh is not a regular file"), "{e}");
        // A file the hash cannot read (where permissions apply: not for root).
        let root = tree("unreadable");
        let file = root.join("kernels/cuda/scan.cu");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o000)).unwrap();
        if std::fs::read(&file).is_err() {
            let e = verdict_hash_of(&root).unwrap_err();
            assert!(e.contains("reading") && e.contains("scan.cu"), "{e}");
        }
        // A dangling link where a source would be.
        let root = tree("dangling");
        std::os::unix::fs::symlink(root.join("nowhere.cuh"), root.join("kernels/cuda/gone.cuh")).unwrap();
        assert!(verdict_hash_of(&root).unwrap_err().contains("kernels/cuda/gone.cuh is a link to no regular file"));
    }

    #[test]
    fn a_tree_with_nothing_in_scope_is_an_error() {
        let e = verdict_hash_of(Path::new("/nonexistent")).unwrap_err();
        assert!(e.contains("/nonexistent"), "{e}");
        let empty = crate::test_dir::fresh_temp_dir("verdict-hash-empty");
        edit(&empty, "README.md", "docs only");
        assert!(verdict_hash_of(&empty).unwrap_err().contains("holds none of the sources"));
    }

    #[test]
    fn seeds_follow_the_hash_and_the_purpose() {
        let a = super::seed_for("sweep", "aa");
        assert_eq!(a, super::seed_for("sweep", "aa"));
        assert_ne!(a, super::seed_for("sweep", "ab"));
        assert_ne!(a, super::seed_for("sanitize", "aa"));
    }
}

#[cfg(test)]
#[path = "dep_info_tests.rs"]
mod dep_info_tests;

//! The verdict hash: one SHA-256 over everything that decides what runs on
//! the GPU, what it is compared with and how ([`scope`]). Every receipt is
//! keyed by it; the gate recomputes it from the checkout.

#[path = "scope.rs"]
pub mod scope;

use std::path::Path;

/// The verdict hash of the tree this binary was built from.
pub const VERDICT_HASH: &str = env!("PRIMLAB_VERDICT_HASH");

/// The verdict hash of the workspace at `root` and the number of files it covers.
pub fn of_tree(root: &Path) -> (String, usize) {
    let (hash, files) = scope::verdict_hash_of(root);
    (hash, files.len())
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

    fn edit(root: &Path, path: &str, text: &str) {
        let file = root.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }

    #[test]
    fn docs_report_and_plot_changes_keep_the_hash() {
        let root = tree("docs");
        let before = verdict_hash_of(&root).0;
        edit(&root, "README.md", "a new readme");
        edit(&root, "harness/src/bench/report.rs", "a new report");
        edit(&root, "harness/src/bench/plot.rs", "a new plot");
        edit(&root, "kernels/NOTES.md", "new notes");
        assert_eq!(verdict_hash_of(&root).0, before);
    }

    #[test]
    fn comparison_kernel_and_lockfile_changes_change_the_hash() {
        let root = tree("verdicts");
        let mut seen = vec![verdict_hash_of(&root).0];
        for (path, text) in [
            ("harness/src/sweep/compare.rs", "a looser comparison"),
            ("kernels/cuda/scan.cu", "another kernel"),
            ("harness/src/multigpu/helpers.cu", "CUDA outside kernels/"),
            ("Cargo.lock", "another lock"),
            ("model/src/scan.rs", "another model"),
        ] {
            edit(&root, path, text);
            let hash = verdict_hash_of(&root).0;
            assert!(!seen.contains(&hash), "changing {path} kept the hash");
            seen.push(hash);
        }
    }
}

//! The check's output folder: a JSON receipt and a Markdown summary. The
//! folder is ours only if everything in it is listed in its `.check-files`
//! (written by an earlier check): a folder holding anything else is refused,
//! so a check never overwrites files it did not create.

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

/// The list of files a check created in its folder.
pub const OWNED_LIST: &str = ".check-files";

/// Files and folders a check writes.
pub const OWNED: [&str; 4] = ["receipt.json", "summary.md", "sanitize", OWNED_LIST];

/// The output folder: `--out` or `check-out/` beside the manifest.
pub fn out_dir(out: Option<&Path>, manifest: &Path) -> PathBuf {
    out.map(Path::to_path_buf).unwrap_or_else(|| manifest.parent().unwrap_or(Path::new(".")).join("check-out"))
}

/// Creates `dir` or accepts it when it holds only what an earlier check wrote.
pub fn claim(dir: &Path) -> Result<()> {
    if dir.exists() {
        let listed = std::fs::read_to_string(dir.join(OWNED_LIST)).unwrap_or_default();
        let mut foreign = Vec::new();
        for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
            let name = entry?.file_name().to_string_lossy().into_owned();
            if !(OWNED.contains(&name.as_str()) && (name == OWNED_LIST || listed.lines().any(|l| l == name))) {
                foreign.push(name);
            }
        }
        if !foreign.is_empty() {
            foreign.sort();
            bail!(
                "check: {} holds files this command did not create ({}); pass --out with an empty or new folder",
                dir.display(),
                foreign.join(", ")
            );
        }
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    std::fs::write(dir.join(OWNED_LIST), OWNED.join("\n") + "\n").with_context(|| format!("writing {}", dir.display()))
}

/// Writes `text` to `dir/name` (a name of [`OWNED`]).
pub fn write(dir: &Path, name: &str, text: &str) -> Result<PathBuf> {
    let path = dir.join(name);
    std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_with_foreign_files_is_refused_and_ours_is_reused() {
        let dir = std::env::temp_dir().join(format!("primlab-check-out-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        claim(&dir).expect("a new folder");
        write(&dir, "summary.md", "x").expect("written");
        claim(&dir).expect("our own folder again");
        std::fs::write(dir.join("notes.txt"), "mine").expect("written");
        let e = claim(&dir).unwrap_err().to_string();
        assert!(e.contains("holds files this command did not create (notes.txt)"), "{e}");
        assert_eq!(std::fs::read_to_string(dir.join("notes.txt")).expect("kept"), "mine");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

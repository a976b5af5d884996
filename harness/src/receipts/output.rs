//! Where a run may write, and how: every receipt and report is written to a
//! temporary file beside its destination and renamed over it, so a reader
//! never sees half a file and a crash never leaves one. A run that covered
//! less than the whole catalogue (filtered, quick, a mutant, CPU only) never
//! writes a default receipt path: without an explicit path it writes under
//! `receipts/partial/`, and it never replaces a full receipt wherever it is.

use anyhow::{bail, Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The folder, under the receipts directory, of receipts of partial runs.
pub const PARTIAL_DIR: &str = "partial";

/// Writes `bytes` to `path` through a temporary file in the same folder and
/// a rename (atomic on one file system), creating the folder.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("output");
    remove_stale_temporaries(&dir, name);
    let temp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| -> Result<()> {
        let mut file = std::fs::File::create(&temp).with_context(|| format!("creating {}", temp.display()))?;
        file.write_all(bytes).with_context(|| format!("writing {}", temp.display()))?;
        file.sync_all().with_context(|| format!("flushing {}", temp.display()))?;
        std::fs::rename(&temp, path).with_context(|| format!("renaming {} to {}", temp.display(), path.display()))
    })();
    if result.is_err() {
        // Only the temporary file this call created is removed.
        let _ = std::fs::remove_file(&temp);
    }
    result
}

/// Removes the temporaries `.{name}.tmp-PID` in `dir` that a process no
/// longer running left (an interrupted run: a signal skips the error path's
/// cleanup). A temporary of a live process, this one's included, is kept.
fn remove_stale_temporaries(dir: &Path, name: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let prefix = format!(".{name}.tmp-");
    for entry in entries.flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = file.strip_prefix(&prefix).and_then(|p| p.parse::<u32>().ok()) else { continue };
        let alive = Path::new(&format!("/proc/{pid}")).exists();
        if !alive && entry.file_type().is_ok_and(|t| t.is_file()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Whether a run covered its whole catalogue (only such a run may write the
/// default receipt path) or only part of it, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Coverage {
    /// Every case of the command's catalogue, on a GPU, real kernels.
    Full,
    /// Part of it; the text says which part (e.g. "--primitive scan").
    Partial(String),
}

impl Coverage {
    /// `Full` when `reasons` is empty, else `Partial` naming them all.
    pub fn from_reasons(reasons: Vec<String>) -> Coverage {
        if reasons.is_empty() {
            Coverage::Full
        } else {
            Coverage::Partial(reasons.join(", "))
        }
    }

    /// Whether it is a full run.
    pub fn is_full(&self) -> bool {
        matches!(self, Coverage::Full)
    }
}

/// Where a run's receipt goes. `explicit` is the path the user gave;
/// `default_name` the gated file name (e.g. "sweep.json") under `receipts_dir`.
///
/// * A full run writes `explicit`, else the default path.
/// * A partial run writes `explicit`, else `receipts_dir/partial/<default_name>`;
///   it is refused when its path is a default receipt path, or when the file
///   there holds a receipt of a full run (which it did not create).
pub fn receipt_path(
    explicit: Option<&Path>,
    receipts_dir: &Path,
    default_name: &str,
    coverage: &Coverage,
) -> Result<PathBuf> {
    let gated = GatedOutput {
        kind: "receipt",
        options: "--json/--receipt path",
        same: same_file_path,
        holds_full: holds_full_receipt,
    };
    gated_output_path(explicit, receipts_dir, default_name, coverage, &gated)
}

/// An output that only a full run may replace: a gated receipt, or the report folder.
pub struct GatedOutput {
    /// What it is, in messages ("receipt", "report").
    pub kind: &'static str,
    /// The options that send it elsewhere, in messages.
    pub options: &'static str,
    /// Whether two paths name the same output.
    pub same: fn(&Path, &Path) -> bool,
    /// Whether the output at a path was written by a full run.
    pub holds_full: fn(&Path) -> bool,
}

/// The path of `gated`: `explicit`, else `receipts_dir/<name>` for a full run
/// and `receipts_dir/partial/<name>` for a partial one. A partial run is
/// refused the full run's default path, and any path whose output a full run
/// wrote.
pub fn gated_output_path(
    explicit: Option<&Path>,
    receipts_dir: &Path,
    name: &str,
    coverage: &Coverage,
    gated: &GatedOutput,
) -> Result<PathBuf> {
    let default = receipts_dir.join(name);
    let partial_default = receipts_dir.join(PARTIAL_DIR).join(name);
    let path = match (explicit, coverage) {
        (Some(p), _) => p.to_path_buf(),
        (None, Coverage::Full) => default.clone(),
        (None, Coverage::Partial(_)) => partial_default.clone(),
    };
    if let Coverage::Partial(why) = coverage {
        let kind = gated.kind;
        if (gated.same)(&path, &default) {
            bail!(
                "refusing to write {}: this run is partial ({why}) and only a full run replaces the gated {kind}; \
                 give another {} or leave it out to write {}",
                path.display(),
                gated.options,
                partial_default.display()
            );
        }
        if (gated.holds_full)(&path) {
            bail!(
                "refusing to overwrite {}: it holds the {kind} of a full run, and this run is partial ({why})",
                path.display()
            );
        }
    }
    Ok(path)
}

fn same_file_path(a: &Path, b: &Path) -> bool {
    let canon = |p: &Path| -> PathBuf {
        let parent = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let dir = std::fs::canonicalize(parent).unwrap_or_else(|_| parent.to_path_buf());
        dir.join(p.file_name().unwrap_or_default())
    };
    canon(a) == canon(b)
}

/// Whether `path` holds a receipt that says it was made by a full run.
fn holds_full_receipt(path: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else { return false };
    let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) else { return false };
    value.get("coverage").and_then(|c| c.as_str()) == Some("full")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        crate::test_dir::fresh_temp_dir(&format!("output-{name}"))
    }

    #[test]
    fn atomic_writes_replace_whole_files_and_leave_no_temporary() {
        let dir = temp_dir("atomic");
        let path = dir.join("sub").join("r.json");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
        let names: Vec<_> = std::fs::read_dir(dir.join("sub")).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn temporaries_of_interrupted_runs_are_removed_by_the_next_write() {
        let dir = temp_dir("stale");
        let stale = dir.join(".r.json.tmp-999999999");
        let live = dir.join(format!(".r.json.tmp-{}", std::process::id()));
        std::fs::write(&stale, "half").unwrap();
        std::fs::write(dir.join(".other.json.tmp-999999999"), "not ours").unwrap();
        write_atomic(&dir.join("r.json"), b"whole").unwrap();
        assert!(!stale.exists(), "a dead process's temporary is left");
        assert!(!live.exists());
        assert!(dir.join(".other.json.tmp-999999999").exists(), "another file's temporary is not touched");
    }

    #[test]
    fn a_partial_run_never_writes_the_default_path() {
        let dir = temp_dir("partial");
        let partial = Coverage::Partial("--primitive scan".into());
        let p = receipt_path(None, &dir, "sweep.json", &partial).unwrap();
        assert_eq!(p, dir.join("partial").join("sweep.json"));
        let err = receipt_path(Some(&dir.join("sweep.json")), &dir, "sweep.json", &partial).unwrap_err();
        assert!(err.to_string().contains("only a full run replaces the gated receipt"), "{err}");
        assert_eq!(receipt_path(None, &dir, "sweep.json", &Coverage::Full).unwrap(), dir.join("sweep.json"));
    }

    #[test]
    fn a_partial_run_never_overwrites_a_full_receipt_anywhere() {
        let dir = temp_dir("full-elsewhere");
        let other = dir.join("elsewhere.json");
        std::fs::write(&other, r#"{"kind":"sweep","coverage":"full"}"#).unwrap();
        let partial = Coverage::Partial("no GPU".into());
        assert!(receipt_path(Some(&other), &dir, "sweep.json", &partial).is_err());
        std::fs::write(&other, r#"{"kind":"sweep","coverage":"partial"}"#).unwrap();
        assert_eq!(receipt_path(Some(&other), &dir, "sweep.json", &partial).unwrap(), other);
    }
}

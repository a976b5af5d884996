//! The divergence pass run on the user's module before any case: a barrier
//! or full-mask warp collective only some threads reach is a failure of the
//! check (no test data shows it reliably and no sanitizer reports it), named
//! by its source line; a line marked `primlab: intended` is listed, not
//! failed.
//!
//! Only the entries the manifest launches and the device functions
//! (`.func`) are read: other kernels in the same file are not under check.

use super::divergence::{self, Finding};
use super::manifest::Manifest;
use super::module::Image;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One finding with its source lines resolved.
#[derive(Debug, Clone)]
pub struct StaticFinding {
    /// What the pass found.
    pub finding: Finding,
    /// The collective's place: `file:line` (or the PTX line when the PTX has no line table).
    pub at: String,
    /// The branch it is under: `file:line` or the PTX line.
    pub branch_at: String,
    /// Marked `primlab: intended`: listed, not a failure.
    pub intended: bool,
}

/// What the pass found in one module.
#[derive(Debug, Clone, Default)]
pub struct StaticReport {
    /// Every finding, the intended ones included.
    pub findings: Vec<StaticFinding>,
    /// Why the pass did not read the module (a cubin has no PTX).
    pub not_read: Option<String>,
}

impl StaticReport {
    /// The findings that fail the check.
    pub fn failures(&self) -> usize {
        self.findings.iter().filter(|f| !f.intended).count()
    }

    /// One line per finding, for the console and the summary.
    /// The collectives of one source line under one branch share a line.
    pub fn lines(&self) -> Vec<String> {
        let mut groups: Vec<(&StaticFinding, Vec<usize>)> = Vec::new();
        for f in &self.findings {
            let same = |g: &&mut (&StaticFinding, Vec<usize>)| {
                let first = g.0;
                (&first.at, &first.branch_at, first.finding.kind, &first.finding.function, first.intended)
                    == (&f.at, &f.branch_at, f.finding.kind, &f.finding.function, f.intended)
            };
            match groups.iter_mut().find(same) {
                Some(group) => group.1.push(f.finding.ptx_line),
                None => groups.push((f, vec![f.finding.ptx_line])),
            }
        }
        let mut out: Vec<String> = groups
            .iter()
            .map(|(f, ptx_lines)| {
                let more =
                    if ptx_lines.len() > 1 { format!(" and {} more", ptx_lines.len() - 1) } else { String::new() };
                format!(
                    "{} divergence at {} (PTX line {} in {}: {}{more}): {}; under the branch at {}{}",
                    if f.intended { "intended" } else { "FAIL" },
                    f.at,
                    f.finding.ptx_line,
                    f.finding.function,
                    f.finding.statement,
                    f.finding.what(),
                    f.branch_at,
                    if f.intended { "" } else { " (mark the line `// primlab: intended` if it is meant)" }
                )
            })
            .collect();
        out.extend(self.not_read.iter().cloned());
        out
    }

    /// The receipt's `static_findings`.
    pub fn json(&self) -> serde_json::Value {
        let findings: Vec<serde_json::Value> = self
            .findings
            .iter()
            .map(|f| {
                serde_json::json!({
                    "kind": format!("{:?}", f.finding.kind),
                    "function": f.finding.function,
                    "at": f.at,
                    "ptx_line": f.finding.ptx_line,
                    "statement": f.finding.statement,
                    "branch_at": f.branch_at,
                    "intended": f.intended,
                })
            })
            .collect();
        serde_json::json!({ "findings": findings, "failures": self.failures(), "not_read": self.not_read })
    }
}

/// Runs the pass on `manifest`'s module.
pub fn run(manifest: &Manifest) -> StaticReport {
    let ptx = match &manifest.module.image {
        Image::Ptx(text) => text,
        Image::Cubin(_) => {
            return StaticReport {
                findings: Vec::new(),
                not_read: Some(
                    "note: the divergence pass reads PTX; a cubin is not read (give the CUDA source or its PTX)".into(),
                ),
            }
        }
    };
    let launched: Vec<&str> = manifest.launches.iter().map(|l| l.kernel.as_str()).collect();
    let entries: Vec<&str> = manifest.module.entries.iter().map(|e| e.name.as_str()).collect();
    let files = divergence::files(ptx);
    let mut sources = SourceLines::new(&manifest.module.path);
    let findings = divergence::analyze(ptx)
        .into_iter()
        .filter(|f| launched.contains(&f.function.as_str()) || !entries.contains(&f.function.as_str()))
        .map(|finding| {
            let place = |at: Option<(u32, u32)>, ptx_line: usize| match at
                .and_then(|(file, line)| files.get(&file).map(|path| (path, line)))
            {
                Some((path, line)) => format!("{}:{line}", sources.shown(path).display()),
                None => format!("PTX line {ptx_line}"),
            };
            let at = place(finding.source, finding.ptx_line);
            let branch_at = place(finding.branch.1, finding.branch.0);
            let lines = finding.source.and_then(|(file, _)| files.get(&file)).and_then(|path| sources.lines(path));
            let intended = divergence::intended(&finding, ptx, lines.as_deref());
            StaticFinding { finding, at, branch_at, intended }
        })
        .collect();
    StaticReport { findings, not_read: None }
}

/// The text of the files a line table names: the module's own file (NVRTC
/// names it by its file name), or a path relative to the module's folder.
struct SourceLines {
    module: PathBuf,
    read: BTreeMap<String, Option<Vec<String>>>,
}

impl SourceLines {
    fn new(module: &Path) -> SourceLines {
        SourceLines { module: module.to_path_buf(), read: BTreeMap::new() }
    }

    /// Where a line-table path is on disk, or the path as the table has it.
    fn shown(&self, path: &str) -> PathBuf {
        let named = Path::new(path);
        // Our include resolver names the user's own text `<inline>` (NVRTC
        // may put its working folder in front).
        if named.file_name().is_some_and(|f| f == "<inline>") {
            return self.module.clone();
        }
        if self.module.file_name().is_some_and(|f| Some(f) == named.file_name()) && named.components().count() == 1 {
            return self.module.clone();
        }
        let beside = self.module.parent().map(|p| p.join(named));
        beside.filter(|p| named.is_relative() && p.is_file()).unwrap_or_else(|| named.to_path_buf())
    }

    fn lines(&mut self, path: &str) -> Option<Vec<String>> {
        let shown = self.shown(path);
        self.read
            .entry(path.to_string())
            .or_insert_with(|| {
                crate::bounded::read_text(&shown, super::module::MODULE_LIMIT)
                    .ok()
                    .map(|t| t.lines().map(str::to_string).collect())
            })
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Gallery entry 22 (a full-mask shuffle under `if (i < n)`) fails by its
    /// source line; the same kernel with that line marked is listed as
    /// intended and fails nothing.
    #[test]
    fn a_finding_names_the_user_s_line_and_the_marker_turns_it_into_a_note() {
        if kernels::compile::ensure_nvrtc().is_err() {
            eprintln!("skipped (no NVRTC: the gallery's CUDA is compiled to PTX by NVRTC)");
            return;
        }
        let gallery =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/check/bugs/22_reduce_full_mask_in_branch");
        let manifest = super::super::manifest::load(&gallery.join("check.toml"), &[1], None).expect("loads");
        let report = run(&manifest);
        assert!(report.failures() > 0);
        let kernel = gallery.join("kernel.cu");
        assert!(report.findings.iter().all(|f| f.at == format!("{}:15", kernel.display())), "{:?}", report.lines());
        assert!(report.lines()[0].starts_with("FAIL divergence at "));
        assert_eq!(report.lines().len(), 1, "one source line, one line: {:?}", report.lines());

        let dir = std::env::temp_dir().join(format!("primlab-static-pass-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let text = std::fs::read_to_string(&kernel).expect("kernel");
        let marked: Vec<String> = text
            .lines()
            .enumerate()
            .map(|(i, l)| if i + 1 == 15 { format!("{l} // primlab: intended") } else { l.to_string() })
            .collect();
        std::fs::write(dir.join("kernel.cu"), marked.join("\n")).expect("write");
        std::fs::copy(gallery.join("check.toml"), dir.join("check.toml")).expect("copy");
        let manifest = super::super::manifest::load(&dir.join("check.toml"), &[1], None).expect("loads");
        let report = run(&manifest);
        std::fs::remove_dir_all(&dir).ok();
        assert!(!report.findings.is_empty());
        assert_eq!(report.failures(), 0, "{:?}", report.lines());
        assert!(report.lines()[0].starts_with("intended divergence at "));
    }

    /// A control of the gallery (correct) has nothing to report.
    #[test]
    fn a_correct_kernel_has_no_finding() {
        if kernels::compile::ensure_nvrtc().is_err() {
            eprintln!("skipped (no NVRTC: the gallery's CUDA is compiled to PTX by NVRTC)");
            return;
        }
        let gallery = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/check/bugs");
        let controls: Vec<PathBuf> = std::fs::read_dir(&gallery)
            .expect("gallery")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().ends_with("_control")))
            .collect();
        assert!(!controls.is_empty());
        for control in controls {
            let manifest = super::super::manifest::load(&control.join("check.toml"), &[1], None).expect("loads");
            let report = run(&manifest);
            assert_eq!(report.failures(), 0, "{}: {:?}", control.display(), report.lines());
        }
    }
}

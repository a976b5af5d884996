//! The divergence pass run on the user's module before any case: a barrier
//! or full-mask warp collective that the pass proves only some threads reach
//! is a failure of the check (no test data shows it reliably and no
//! sanitizer reports it), named by its source line; one under a branch the
//! pass cannot decide is a warning, shown with both lines, that fails
//! nothing; a line marked `primlab: intended` is listed, not failed.
//!
//! Only the entries the manifest launches and the device functions
//! (`.func`) are read: other kernels in the same file are not under check.

use super::divergence::{self, Certainty, Finding, Launches};
use super::manifest::{Arg, Manifest};
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
    /// The findings that fail the check: proven, not marked intended.
    pub fn failures(&self) -> usize {
        self.count(Certainty::Proven)
    }

    /// The findings the pass could not decide, not marked intended: shown,
    /// never failed.
    pub fn warnings(&self) -> usize {
        self.count(Certainty::Undecided)
    }

    fn count(&self, certainty: Certainty) -> usize {
        self.findings.iter().filter(|f| !f.intended && f.finding.certainty == certainty).count()
    }

    /// One line per finding, for the console and the summary.
    /// The collectives of one source line under one branch share a line.
    pub fn lines(&self) -> Vec<String> {
        let mut groups: Vec<(&StaticFinding, Vec<usize>)> = Vec::new();
        for f in &self.findings {
            let key = |g: &StaticFinding| {
                let d = &g.finding;
                (g.at.clone(), g.branch_at.clone(), d.kind, d.certainty, d.function.clone(), g.intended)
            };
            match groups.iter_mut().find(|g| key(g.0) == key(f)) {
                Some(group) => group.1.push(f.finding.ptx_line),
                None => groups.push((f, vec![f.finding.ptx_line])),
            }
        }
        let mut out: Vec<String> = groups.iter().map(|(f, ptx_lines)| line(f, ptx_lines.len())).collect();
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
                    "certainty": format!("{:?}", f.finding.certainty).to_lowercase(),
                    "witness": f.finding.witness,
                    "function": f.finding.function,
                    "at": f.at,
                    "ptx_line": f.finding.ptx_line,
                    "statement": f.finding.statement,
                    "branch_at": f.branch_at,
                    "intended": f.intended,
                })
            })
            .collect();
        serde_json::json!({
            "findings": findings,
            "failures": self.failures(),
            "warnings": self.warnings(),
            "not_read": self.not_read,
        })
    }
}

/// The line of one finding (with `count` collectives on its source line).
fn line(f: &StaticFinding, count: usize) -> String {
    let more = if count > 1 { format!(" and {} more", count - 1) } else { String::new() };
    let d = &f.finding;
    let (verdict, why) = match (f.intended, d.certainty) {
        (true, _) => ("intended", String::new()),
        (false, Certainty::Proven) => (
            "FAIL",
            format!(
                "{} (mark the line `// primlab: intended` if it is meant)",
                d.witness.as_ref().map(|w| format!(" ({w})")).unwrap_or_default()
            ),
        ),
        (false, Certainty::Undecided) => (
            "WARNING",
            " (its condition comes from values the pass does not follow: loaded data, a shuffle, a loop; \
             the cases still run)"
                .to_string(),
        ),
    };
    format!(
        "{verdict} divergence at {} (PTX line {} in {}: {}{more}): {}; under the branch at {}{why}",
        f.at,
        d.ptx_line,
        d.function,
        d.statement,
        d.what(),
        f.branch_at
    )
}

/// Runs the pass on `manifest`'s module, each kernel judged for the block
/// sizes its launches have at `sizes`.
pub fn run(manifest: &Manifest, sizes: &[usize]) -> StaticReport {
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
    let launches = launch_geometry(manifest, sizes);
    let geometry = |name: &str| launches.get(name).or_else(|| launches.get("")).cloned().unwrap_or_default();
    let findings = divergence::analyze_with(ptx, &geometry)
        .into_iter()
        .filter(|f| launched.contains(&f.function.as_str()) || !entries.contains(&f.function.as_str()))
        .map(|mut finding| {
            finding.witness = finding.witness.map(|w| with_argument_names(manifest, &finding.function, &w));
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

/// The block sizes of each launched kernel at `sizes` (where its block
/// expression names a parameter, the common ones); a device function gets
/// those of every launch.
fn launch_geometry(manifest: &Manifest, sizes: &[usize]) -> BTreeMap<String, Launches> {
    let mut out: BTreeMap<String, Launches> = BTreeMap::new();
    let mut all = Vec::new();
    for launch in &manifest.launches {
        let blocks: Option<Vec<u32>> =
            sizes.iter().map(|&n| launch.block.eval(n).ok().and_then(|b| u32::try_from(b).ok())).collect();
        let blocks = blocks.filter(|b| !b.is_empty()).unwrap_or_else(|| Launches::default().block_sizes);
        all.extend(blocks.iter().copied());
        out.entry(launch.kernel.clone()).or_insert(Launches { block_sizes: Vec::new() }).block_sizes.extend(blocks);
    }
    for launches in out.values_mut() {
        launches.block_sizes.sort_unstable();
        launches.block_sizes.dedup();
    }
    all.sort_unstable();
    all.dedup();
    if !all.is_empty() {
        // Device functions (`.func`): called from any launched kernel.
        out.insert(String::new(), Launches { block_sizes: all });
    }
    out
}

/// A witness with the PTX's parameter names (`k_param_2`) given the
/// manifest's argument names (`n`) for a launched kernel.
fn with_argument_names(manifest: &Manifest, function: &str, witness: &str) -> String {
    let Some(launch) = manifest.launches.iter().find(|l| l.kernel == function) else { return witness.to_string() };
    let mut out = witness.to_string();
    // From the last index down, so `_param_1` does not match inside `_param_12`.
    for (i, arg) in launch.args.iter().enumerate().rev() {
        let name = match arg {
            Arg::N | Arg::N32 => "n".to_string(),
            Arg::Param(k) => manifest.contract.params.get(*k).map_or(format!("parameter {k}"), |p| p.name.to_string()),
            Arg::Input(_) | Arg::Output(_) | Arg::Scratch(_) => continue,
        };
        out = out.replace(&format!("{function}_param_{i}"), &name);
    }
    out
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
    /// NVRTC, or a failure that says how to get it: a compile test that did
    /// not run must never pass.
    fn require_nvrtc() {
        if let Err(e) = kernels::compile::ensure_nvrtc() {
            panic!("{e}: run `make verify` (or scripts/install_nvrtc.sh and set LD_LIBRARY_PATH)");
        }
    }

    fn gallery(entry: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/check/bugs").join(entry)
    }

    #[test]
    fn a_finding_names_the_user_s_line_and_the_marker_turns_it_into_a_note() {
        require_nvrtc();
        let gallery = gallery("22_reduce_full_mask_in_branch");
        let manifest = super::super::manifest::load(&gallery.join("check.toml"), &[1], None).expect("loads");
        let report = run(&manifest, &[1, 33]);
        assert!(report.failures() > 0);
        assert_eq!(report.warnings(), 0);
        let kernel = gallery.join("kernel.cu");
        assert!(report.findings.iter().all(|f| f.at == format!("{}:15", kernel.display())), "{:?}", report.lines());
        assert!(report.lines()[0].starts_with("FAIL divergence at "));
        assert_eq!(report.lines().len(), 1, "one source line, one line: {:?}", report.lines());
        // The launch that shows it, in the manifest's words (n, blocks of 256).
        assert!(
            report.lines()[0].contains("(threads 0 and 1 of a block of 256, block 0 of 1, n = 1 take different sides)"),
            "{:?}",
            report.lines()
        );

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
        let report = run(&manifest, &[1]);
        std::fs::remove_dir_all(&dir).ok();
        assert!(!report.findings.is_empty());
        assert_eq!(report.failures(), 0, "{:?}", report.lines());
        assert!(report.lines()[0].starts_with("intended divergence at "));
    }

    /// A branch the pass cannot decide (on offsets[s] loaded from global
    /// memory, before a barrier) is a warning with both lines: counted
    /// apart, never a failure.
    #[test]
    fn an_undecided_branch_is_a_warning_that_fails_nothing() {
        require_nvrtc();
        let entry = gallery("50_segsum_empty_segment_skipped");
        let manifest = super::super::manifest::load(&entry.join("check.toml"), &[1], None).expect("loads");
        let report = run(&manifest, &[1, 4099]);
        assert_eq!(report.failures(), 0, "{:?}", report.lines());
        assert_eq!(report.warnings(), 2, "two barriers: {:?}", report.lines());
        let kernel = entry.join("kernel.cu");
        for line in report.lines() {
            assert!(line.starts_with("WARNING divergence at "), "{line}");
            assert!(line.contains(&format!("under the branch at {}:25", kernel.display())), "{line}");
            assert!(line.contains("the cases still run"), "{line}");
        }
        let json = report.json();
        assert_eq!((json["failures"].as_u64(), json["warnings"].as_u64()), (Some(0), Some(2)), "{json}");
        assert_eq!(json["findings"][0]["certainty"], "undecided", "{json}");
    }

    /// A control of the gallery (correct) has nothing to report: no
    /// failure, no warning.
    #[test]
    fn a_correct_kernel_has_no_finding() {
        require_nvrtc();
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
            let report = run(&manifest, &[1, 4099]);
            assert!(report.findings.is_empty(), "{}: {:?}", control.display(), report.lines());
        }
    }
}

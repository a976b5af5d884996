//! Where a bench run and `harness report` may write. The rule is the
//! receipts' own ([`crate::receipts::receipt_path`]): only a full run writes
//! the gated `receipts/bench.json` and its report `receipts/report/`; a
//! partial run (`--quick`, `--primitive`, `--no-baselines`) writes under
//! `receipts/partial/` unless given a path, is refused the default paths,
//! and never replaces a full run's receipt or report wherever it is. Every
//! file is written to a temporary name in its own folder and renamed.

use crate::bench::BenchOptions;
use crate::receipts::output::{gated_output_path, GatedOutput};
use crate::receipts::{Coverage, Receipt};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// The gated bench receipt's file name under the receipts directory.
pub const RECEIPT_FILE: &str = "bench.json";
/// The report folder's name under the receipts directory (and under
/// `partial/` for partial runs).
pub const REPORT_DIR: &str = "report";
/// The line `report.md` carries when it was rendered from a full run's receipt.
pub const FULL_REPORT_LINE: &str = "Coverage: full run.";

/// The coverage of a single-GPU bench run: partial when anything of the
/// catalogue was left out.
pub fn coverage(args: &BenchOptions) -> Coverage {
    let mut reasons = Vec::new();
    if args.quick {
        reasons.push("--quick".to_string());
    }
    if !args.primitives.is_empty() {
        reasons.push(format!("--primitive {}", args.primitives.iter().map(|p| p.name()).collect::<Vec<_>>().join(",")));
    }
    if args.no_baselines {
        reasons.push("--no-baselines".to_string());
    }
    // Any --sizes, --shape or --variant leaves part of the catalogue out.
    reasons.extend(crate::bench::config::BenchConfig::from_args(args).selection.reasons());
    Coverage::from_reasons(reasons)
}

/// The coverage a receipt records. Only `"full"` is a full run: a receipt
/// that records none (schema 1) cannot show that it was one.
pub fn receipt_coverage(receipt: &Receipt) -> Coverage {
    match receipt.coverage.as_str() {
        "full" => Coverage::Full,
        "" => Coverage::Partial(format!("coverage not recorded (receipt schema {})", receipt.schema)),
        other => Coverage::Partial(other.strip_prefix("partial: ").unwrap_or(other).to_string()),
    }
}

/// The report folder: `explicit`, else `receipts_dir/report` for a full run
/// and `receipts_dir/partial/report` for a partial one. A partial run is
/// refused the full run's folder, and any folder whose `report.md` was
/// rendered from a full run.
pub fn report_dir(explicit: Option<&Path>, receipts_dir: &Path, coverage: &Coverage) -> Result<PathBuf> {
    let gated =
        GatedOutput { kind: "report", options: "--report/--out folder", same: same_dir, holds_full: holds_full_report };
    gated_output_path(explicit, receipts_dir, REPORT_DIR, coverage, &gated)
}

fn same_dir(a: &Path, b: &Path) -> bool {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.components().collect());
    canon(a) == canon(b)
}

/// Whether `dir/report.md` says it was rendered from a full run.
fn holds_full_report(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("report.md")).is_ok_and(|text| text.lines().any(|l| l == FULL_REPORT_LINE))
}

/// Where a run's checkpoint goes: beside its receipt, `<stem>.checkpoint.json`.
pub fn checkpoint_path(receipt: &Path) -> PathBuf {
    let stem = receipt.file_stem().and_then(|s| s.to_str()).unwrap_or("bench");
    receipt.with_file_name(format!("{stem}.checkpoint.json"))
}

/// Renders a file through `draw`, which writes to the path it is given, at a
/// temporary path beside `path` (same extension, so format-by-extension
/// writers pick the same format), then renames it over `path`. On failure
/// only the temporary file is removed.
pub fn render_atomic(path: &Path, draw: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("output");
    let temp = match name.rsplit_once('.') {
        Some((stem, ext)) => dir.join(format!(".{stem}.tmp-{}.{ext}", std::process::id())),
        None => dir.join(format!(".{name}.tmp-{}", std::process::id())),
    };
    let result = draw(&temp).and_then(|()| {
        std::fs::rename(&temp, path).with_context(|| format!("renaming {} to {}", temp.display(), path.display()))
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::bail;

    fn temp_dir(name: &str) -> PathBuf {
        crate::test_dir::fresh_temp_dir(&format!("bench-output-{name}"))
    }

    fn args() -> BenchOptions {
        BenchOptions::default()
    }

    #[test]
    fn quick_primitive_and_no_baselines_runs_are_partial() {
        assert_eq!(coverage(&args()), Coverage::Full);
        let quick = BenchOptions { quick: true, ..args() };
        assert_eq!(coverage(&quick), Coverage::Partial("--quick".into()));
        let some = BenchOptions {
            primitives: vec![crate::registry::Primitive::Scan, crate::registry::Primitive::Reduce],
            no_baselines: true,
            ..args()
        };
        assert_eq!(coverage(&some), Coverage::Partial("--primitive scan,reduce, --no-baselines".into()));
        let narrowed = BenchOptions { sizes: vec![20], variants: vec!["single_pass".into()], ..args() };
        assert_eq!(coverage(&narrowed), Coverage::Partial("--sizes 2^20, --variant single_pass".into()));
        assert_eq!(coverage(&BenchOptions { hot: true, ..args() }), Coverage::Full);
    }

    #[test]
    fn partial_runs_never_write_the_full_receipt_or_report() {
        let dir = temp_dir("paths");
        for a in [
            BenchOptions { quick: true, ..args() },
            BenchOptions { primitives: vec![crate::registry::Primitive::Scan], ..args() },
            BenchOptions { no_baselines: true, ..args() },
        ] {
            let c = coverage(&a);
            let receipt = crate::receipts::receipt_path(None, &dir, RECEIPT_FILE, &c).unwrap();
            assert_eq!(receipt, dir.join("partial").join("bench.json"));
            assert!(crate::receipts::receipt_path(Some(&dir.join("bench.json")), &dir, RECEIPT_FILE, &c).is_err());
            assert_eq!(report_dir(None, &dir, &c).unwrap(), dir.join("partial").join("report"));
            let err = report_dir(Some(&dir.join("report")), &dir, &c).unwrap_err().to_string();
            assert!(err.contains("only a full run replaces"), "{err}");
        }
        assert_eq!(report_dir(None, &dir, &Coverage::Full).unwrap(), dir.join("report"));
        assert_eq!(report_dir(Some(&dir.join("report")), &dir, &Coverage::Full).unwrap(), dir.join("report"));
    }

    #[test]
    fn a_partial_report_never_replaces_a_full_one_elsewhere() {
        let dir = temp_dir("elsewhere");
        let other = dir.join("mine");
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(other.join("report.md"), format!("# primlab benchmark report\n\n{FULL_REPORT_LINE}\n")).unwrap();
        let partial = Coverage::Partial("--quick".into());
        let err = report_dir(Some(&other), &dir, &partial).unwrap_err().to_string();
        assert!(err.contains("it holds the report of a full run"), "{err}");
        std::fs::write(other.join("report.md"), "# primlab benchmark report\n\nCoverage: partial run (--quick).\n")
            .unwrap();
        assert_eq!(report_dir(Some(&other), &dir, &partial).unwrap(), other);
    }

    #[test]
    fn receipts_without_coverage_are_not_full() {
        let mut r = Receipt::new("bench", Default::default(), Default::default(), serde_json::json!({}));
        assert!(!receipt_coverage(&r).is_full());
        r.coverage = String::new();
        assert!(matches!(receipt_coverage(&r), Coverage::Partial(why) if why.contains("not recorded")));
        r = r.with_coverage(&Coverage::Partial("--quick".into()));
        assert_eq!(receipt_coverage(&r), Coverage::Partial("--quick".into()));
        r = r.with_coverage(&Coverage::Full);
        assert_eq!(receipt_coverage(&r), Coverage::Full);
    }

    #[test]
    fn atomic_renders_leave_only_the_finished_file() {
        let dir = temp_dir("render");
        let path = dir.join("plot.png");
        render_atomic(&path, |p| {
            assert!(p.extension().is_some_and(|e| e == "png"), "{}", p.display());
            std::fs::write(p, b"one").map_err(Into::into)
        })
        .unwrap();
        let err = render_atomic(&path, |p| {
            std::fs::write(p, b"half")?;
            bail!("drawing failed")
        });
        assert!(err.is_err());
        assert_eq!(std::fs::read(&path).unwrap(), b"one");
        let names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }
}

//! Reports: terminal tables now; the benchmark report and plots (`harness report`).

use anyhow::{bail, Context, Result};
use std::path::Path;

/// The list of files `harness report` wrote in its folder.
pub const OWNED_LIST: &str = ".report-files";

/// The first line of every report this harness renders.
const REPORT_TITLE: &str = "# primlab benchmark report";

/// `harness report`: regenerates the Markdown report and PNG plots from a bench receipt.
pub fn run(receipt_path: &Path, out: Option<&Path>) -> anyhow::Result<bool> {
    use crate::bench::output;
    // The receipt's own coverage decides where its report may go: a partial
    // receipt's report never replaces a full run's.
    let receipt = crate::receipts::Receipt::load(receipt_path)?;
    let coverage = output::receipt_coverage(&receipt);
    let out = output::report_dir(out, &crate::receipts::receipts_dir(), &coverage)?;
    if let crate::receipts::Coverage::Partial(why) = &coverage {
        println!("report: {} is a partial run's receipt ({why}): report in {}", receipt_path.display(), out.display());
    }
    claim(&out)?;
    let files = crate::bench::report::write_report(receipt_path, &out)?;
    record(&out, [&files.markdown, &files.csv].into_iter().chain(&files.plots))?;
    println!("report: {} and {} plot(s) in {}", files.markdown.display(), files.plots.len(), out.display());
    Ok(true)
}

/// Whether `name` in `dir` is a file a report wrote: listed in the folder's
/// [`OWNED_LIST`], or (a folder written before the list existed) the
/// report itself or one of its plots beside a report that is ours.
fn ours(dir: &Path, name: &str, listed: &[String]) -> bool {
    if name == OWNED_LIST || listed.iter().any(|l| l == name) {
        return true;
    }
    let titled = crate::bounded::read_text(&dir.join("report.md"), crate::bounded::JSON_LIMIT)
        .is_ok_and(|t| t.lines().next() == Some(REPORT_TITLE));
    let plot = name
        .strip_suffix(".png")
        .is_some_and(|stem| stem == "ceilings" || crate::registry::Primitive::ALL.iter().any(|p| p.name() == stem));
    titled && (name == "report.md" || name == crate::bench::report::RECORDS_CSV || plot)
}

/// Accepts `dir` when it is new or holds only what a report wrote; refuses
/// it otherwise, so that a report never overwrites files it did not write.
pub fn claim(dir: &Path) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(()) };
    let listed: Vec<String> = crate::bounded::read_text(&dir.join(OWNED_LIST), 1 << 16)
        .map(|t| t.lines().map(str::to_string).collect())
        .unwrap_or_default();
    let mut foreign = Vec::new();
    for entry in entries {
        let name =
            entry.with_context(|| format!("reading {}", dir.display()))?.file_name().to_string_lossy().into_owned();
        if !ours(dir, &name, &listed) {
            foreign.push(name);
        }
    }
    if !foreign.is_empty() {
        foreign.sort();
        bail!(
            "report: {} holds files a report did not write ({}); pass --out with an empty or new folder",
            dir.display(),
            foreign.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
        );
    }
    Ok(())
}

/// Lists the files written in `dir` (by name) in its [`OWNED_LIST`].
fn record<'a>(dir: &Path, files: impl Iterator<Item = &'a std::path::PathBuf>) -> Result<()> {
    let names: Vec<String> = files.filter_map(|p| p.file_name()).map(|n| n.to_string_lossy().into_owned()).collect();
    crate::receipts::write_atomic(&dir.join(OWNED_LIST), (names.join("\n") + "\n").as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_with_files_a_report_did_not_write_is_refused() {
        let dir = crate::test_dir::fresh_temp_dir("report-claim");
        claim(&dir.join("new")).expect("a new folder");
        claim(&dir).expect("an empty folder");
        std::fs::write(dir.join("notes.md"), "mine").unwrap();
        let e = claim(&dir).unwrap_err().to_string();
        assert!(e.contains("holds files a report did not write (notes.md)"), "{e}");
        std::fs::remove_file(dir.join("notes.md")).unwrap();
        // A report.md that is not a report, and a plot beside it, are not ours.
        std::fs::write(dir.join("report.md"), "# my notes\n").unwrap();
        std::fs::write(dir.join("scan.png"), "png").unwrap();
        assert!(claim(&dir).unwrap_err().to_string().contains("report.md, scan.png"));
        // Our own report and plots are, and so is whatever our list names.
        std::fs::write(dir.join("report.md"), format!("{REPORT_TITLE}\n\nbody\n")).unwrap();
        claim(&dir).expect("our own report and plots");
        std::fs::write(dir.join("extra.png"), "png").unwrap();
        assert!(claim(&dir).is_err());
        record(&dir, [dir.join("report.md"), dir.join("extra.png")].iter()).unwrap();
        claim(&dir).expect("listed files");
    }

    #[test]
    fn the_committed_report_folder_is_ours() {
        let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../receipts/report");
        claim(&dir).expect("receipts/report was written by a report");
    }
}

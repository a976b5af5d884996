//! Nsight Compute evidence for missed targets and other studies: text files
//! the lead writes on the GPU machine under `receipts/ncu/` (a missed
//! target's file is `<target id>.txt`, e.g. `ncu --clock-control none
//! --section SpeedOfLight ... > receipts/ncu/scan_2p28.txt`). The report
//! links each file by path with its length and a one-line description, and
//! never inlines it (a person opens the file; the report stays short).

use std::path::{Path, PathBuf};

/// Characters of a description at most (a longer first line is cut, with "...").
pub const MAX_TITLE_CHARS: usize = 160;

/// One evidence file.
#[derive(Debug, Clone, PartialEq)]
pub struct NcuEvidence {
    /// The file.
    pub path: PathBuf,
    /// What it is: its first comment line (`# ...`), else its first kernel
    /// header, else none.
    pub title: Option<String>,
    /// Lines in the file.
    pub total_lines: usize,
}

/// A kernel header line of `ncu` output: `  kernel_name(...) (grid)x(block), Context 1, Stream 7, ...`.
fn is_kernel_header(line: &str) -> bool {
    line.contains("Context") && line.contains("Stream")
}

/// `text` cut to [`MAX_TITLE_CHARS`] characters.
fn shortened(text: &str) -> String {
    if text.chars().count() <= MAX_TITLE_CHARS {
        return text.to_string();
    }
    let cut: String = text.chars().take(MAX_TITLE_CHARS).collect();
    format!("{}...", cut.trim_end())
}

/// The description of `text`: its first `#` line, else its first kernel header.
pub fn title(text: &str) -> Option<String> {
    let comment = text.lines().find_map(|l| l.trim_start().strip_prefix('#')).map(|l| l.trim_start_matches('#').trim());
    let header = || text.lines().find(|l| is_kernel_header(l)).map(str::trim);
    comment.filter(|c| !c.is_empty()).or_else(header).map(shortened)
}

/// The evidence file of target `id` under `dir`, when it exists.
pub fn evidence(dir: &Path, id: &str) -> Option<NcuEvidence> {
    read(&dir.join(format!("{id}.txt")))
}

fn read(path: &Path) -> Option<NcuEvidence> {
    let bytes = std::fs::read(path).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    Some(NcuEvidence { path: path.to_path_buf(), title: title(&text), total_lines: text.lines().count() })
}

/// Every `*.txt` under `dir`, sorted by name.
pub fn all(dir: &Path) -> Vec<NcuEvidence> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> =
        entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "txt")).collect();
    paths.sort();
    paths.iter().filter_map(|p| read(p)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "==PROF== Connected to process 1\n  scan_decoupled_lookback_exclusive_i32 (65536, 1, 1)x(256, 1, 1), Context 1, Stream 7, Device 0, CC 9.0\n    DRAM Throughput                 %        71.20\n";

    #[test]
    fn a_file_is_described_by_its_first_comment_else_its_first_kernel() {
        assert_eq!(
            title("# arg_reduce old against new\n# more\ndata\n").as_deref(),
            Some("arg_reduce old against new")
        );
        assert_eq!(
            title(SAMPLE).as_deref(),
            Some("scan_decoupled_lookback_exclusive_i32 (65536, 1, 1)x(256, 1, 1), Context 1, Stream 7, Device 0, CC 9.0")
        );
        assert_eq!(title("just numbers\n1 2 3\n"), None);
        let long = format!("# {}", "x".repeat(500));
        let cut = title(&long).unwrap();
        assert_eq!(cut.chars().count(), MAX_TITLE_CHARS + 3);
        assert!(cut.ends_with("..."));
    }

    #[test]
    fn files_are_found_by_target_id() {
        let dir = crate::test_dir::fresh_temp_dir("ncu-files");
        std::fs::write(dir.join("scan_2p28.txt"), SAMPLE).unwrap();
        std::fs::write(dir.join("notes.md"), "x").unwrap();
        let found = evidence(&dir, "scan_2p28").unwrap();
        assert_eq!(found.total_lines, 3);
        assert!(evidence(&dir, "reduce_2p28").is_none());
        assert_eq!(all(&dir).len(), 1);
    }
}

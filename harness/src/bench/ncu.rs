//! Nsight Compute evidence for missed targets: text files the lead writes
//! on the GPU machine as `receipts/ncu/<target id>.txt` (e.g. `ncu
//! --clock-control none --section SpeedOfLight ... > receipts/ncu/scan_2p28.txt`).
//! The report quotes the lines that carry the verdict (durations,
//! throughputs, occupancy, registers, bytes).

use std::path::{Path, PathBuf};

/// Lines quoted from one file at most.
pub const MAX_EXCERPT_LINES: usize = 40;

/// Substrings (lower case) of the lines worth quoting.
const KEYWORDS: [&str; 18] = [
    "duration",
    "dram throughput",
    "memory throughput",
    "dram__bytes",
    "lts__t_bytes",
    "l2 hit",
    "l1/tex hit",
    "achieved occupancy",
    "theoretical occupancy",
    "registers per thread",
    "block limit",
    "grid size",
    "block size",
    "waves per sm",
    "compute (sm) throughput",
    "elapsed cycles",
    "gpu__time_duration",
    "launch__",
];

/// One evidence file.
#[derive(Debug, Clone, PartialEq)]
pub struct NcuEvidence {
    /// The file.
    pub path: PathBuf,
    /// The quoted lines.
    pub excerpt: Vec<String>,
    /// Lines in the file.
    pub total_lines: usize,
}

/// A kernel header line of `ncu` output: `  kernel_name(...) (grid)x(block), Context 1, Stream 7, ...`.
fn is_kernel_header(line: &str) -> bool {
    line.contains("Context") && line.contains("Stream")
}

fn wanted(line: &str) -> bool {
    let lower = line.to_lowercase();
    is_kernel_header(line) || KEYWORDS.iter().any(|k| lower.contains(k))
}

/// The excerpt of `text`: kernel headers and verdict lines, or the first
/// lines when none match.
pub fn excerpt(text: &str) -> Vec<String> {
    let picked: Vec<String> =
        text.lines().filter(|l| wanted(l)).take(MAX_EXCERPT_LINES).map(|l| l.trim_end().to_string()).collect();
    if picked.is_empty() {
        text.lines().take(20).map(|l| l.trim_end().to_string()).collect()
    } else {
        picked
    }
}

/// The evidence file of target `id` under `dir`, when it exists.
pub fn evidence(dir: &Path, id: &str) -> Option<NcuEvidence> {
    read(&dir.join(format!("{id}.txt")))
}

fn read(path: &Path) -> Option<NcuEvidence> {
    let bytes = std::fs::read(path).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    Some(NcuEvidence { path: path.to_path_buf(), excerpt: excerpt(&text), total_lines: text.lines().count() })
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

    const SAMPLE: &str = "==PROF== Connected to process 1\n  scan_decoupled_lookback_exclusive_i32 (65536, 1, 1)x(256, 1, 1), Context 1, Stream 7, Device 0, CC 9.0\n    Section: GPU Speed Of Light Throughput\n    DRAM Throughput                 %        71.20\n    Duration                       us      1312.45\n    Achieved Occupancy              %        45.10\n    Something else                          1\n";

    #[test]
    fn the_excerpt_keeps_headers_and_verdict_lines() {
        let lines = excerpt(SAMPLE);
        assert_eq!(lines.len(), 4, "{lines:?}");
        assert!(lines[0].contains("scan_decoupled_lookback"));
        assert!(lines.iter().any(|l| l.contains("DRAM Throughput")));
        assert!(!lines.iter().any(|l| l.contains("Something else")));
    }

    #[test]
    fn files_are_found_by_target_id() {
        let dir = std::env::temp_dir().join(format!("primlab-ncu-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("scan_2p28.txt"), SAMPLE).unwrap();
        std::fs::write(dir.join("notes.md"), "x").unwrap();
        assert!(evidence(&dir, "scan_2p28").is_some());
        assert!(evidence(&dir, "reduce_2p28").is_none());
        assert_eq!(all(&dir).len(), 1);
    }
}

//! `harness fixtures`: writes the model's JSON fixtures into `fixtures/`
//! (with the schema as fixtures/README.md), or with `--check` regenerates
//! them in memory and fails on any drift from the committed files.

use crate::cli::FixturesArgs;
use anyhow::{Context, Result};
use std::collections::BTreeSet;
use std::path::Path;

/// The schema document, kept next to the code that writes the fixtures.
const SCHEMA: &str = include_str!("../../model/FIXTURES_SCHEMA.md");

/// Every file the fixture directory should hold: (name, bytes).
fn expected_files() -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> =
        model::fixtures::build_all().into_iter().map(|f| (f.file_name.clone(), f.to_json_string())).collect();
    files.push(("README.md".to_string(), SCHEMA.to_string()));
    files
}

fn write_all(dir: &Path, files: &[(String, String)]) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let keep: BTreeSet<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        if path.is_file() && !keep.contains(name.as_str()) {
            std::fs::remove_file(&path).with_context(|| format!("removing stale {}", path.display()))?;
        }
    }
    for (name, text) in files {
        std::fs::write(dir.join(name), text).with_context(|| format!("writing {name}"))?;
    }
    Ok(())
}

/// The differences between `dir` and the regenerated files, one line each.
fn drift(dir: &Path, files: &[(String, String)]) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    let expected: BTreeSet<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    if dir.is_dir() {
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
            if path.is_file() && !expected.contains(name.as_str()) {
                problems.push(format!("{name}: committed but no longer generated"));
            }
        }
    }
    for (name, text) in files {
        match std::fs::read_to_string(dir.join(name)) {
            Err(_) => problems.push(format!("{name}: generated but not committed")),
            Ok(committed) if committed != *text => {
                let line = committed.lines().zip(text.lines()).position(|(a, b)| a != b);
                problems.push(format!(
                    "{name}: differs from the model's output (first differing line {})",
                    line.map(|l| (l + 1).to_string()).unwrap_or_else(|| "past the end of one file".into())
                ));
            }
            Ok(_) => {}
        }
    }
    Ok(problems)
}

/// `harness fixtures [--check]`.
pub fn run(args: &FixturesArgs) -> Result<bool> {
    let files = expected_files();
    let bytes: usize = files.iter().map(|(_, t)| t.len()).sum();
    if args.check {
        let problems = drift(&args.dir, &files)?;
        if problems.is_empty() {
            println!("fixtures: {} files ({:.1} MB) match the model", files.len(), bytes as f64 / 1e6);
            return Ok(true);
        }
        for p in &problems {
            eprintln!("fixture drift: {p}");
        }
        eprintln!("fixture drift: regenerate with `cargo run -p harness -- fixtures` and review the diff");
        return Ok(false);
    }
    write_all(&args.dir, &files)?;
    println!("fixtures: wrote {} files ({:.1} MB) to {}", files.len(), bytes as f64 / 1e6, args.dir.display());
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drift_names_changed_missing_and_stale_files() {
        let dir = std::env::temp_dir().join(format!("primlab-fixtures-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let files = vec![("a.json".to_string(), "1\n2\n".to_string()), ("b.json".to_string(), "x\n".to_string())];
        write_all(&dir, &files).unwrap();
        assert!(drift(&dir, &files).unwrap().is_empty());
        std::fs::write(dir.join("a.json"), "1\n3\n").unwrap();
        std::fs::remove_file(dir.join("b.json")).unwrap();
        std::fs::write(dir.join("c.json"), "").unwrap();
        let problems = drift(&dir, &files).unwrap();
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems.iter().any(|p| p.starts_with("a.json") && p.contains("line 2")));
        assert!(problems.iter().any(|p| p.starts_with("b.json")));
        assert!(problems.iter().any(|p| p.starts_with("c.json")));
        write_all(&dir, &files).unwrap();
        assert!(!dir.join("c.json").exists());
    }
}

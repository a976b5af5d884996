//! `harness fixtures`: writes the model's JSON fixtures into `fixtures/`
//! (with the schema as fixtures/README.md), or with `--check` regenerates
//! them in memory and fails on any drift from the committed files.

use anyhow::{bail, Context, Result};
use clap::Args;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Options of `harness fixtures`.
#[derive(Debug, Args)]
pub struct FixturesArgs {
    /// Compare with the committed fixtures instead of writing; exit nonzero on drift.
    #[arg(long)]
    pub check: bool,
    /// Fixture directory.
    #[arg(long, default_value = "fixtures")]
    pub dir: PathBuf,
}

/// The schema document, kept next to the code that writes the fixtures.
const SCHEMA: &str = include_str!("../../../model/FIXTURES_SCHEMA.md");

/// Every file the fixture directory should hold: (name, bytes).
fn expected_files() -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> =
        model::fixtures::build_all().into_iter().map(|f| (f.file_name.clone(), f.to_json_string())).collect();
    files.push(("README.md".to_string(), SCHEMA.to_string()));
    files
}

/// What `dir` holds before a write: files of ours that will be replaced or
/// removed, and entries that are not ours (which make the write refuse).
#[derive(Debug, Default)]
struct Survey {
    /// Files of ours that the model no longer generates, and leftover
    /// temporaries of an interrupted write: removed, one line each.
    stale: Vec<String>,
    /// Entries that are not fixtures this command writes.
    foreign: Vec<String>,
}

/// Whether `text` is a fixture file: a JSON object whose `"schema"` names the
/// fixture schema family (`primlab.fixture.*`), which every fixture carries.
fn is_fixture_json(text: &str) -> bool {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(text) else { return false };
    value.get("schema").and_then(|s| s.as_str()).is_some_and(|s| s.starts_with("primlab.fixture."))
}

/// Whether `text` is a copy (perhaps of an older version) of the schema
/// document: it opens with the same title line.
fn is_schema_doc(text: &str) -> bool {
    let title = SCHEMA.lines().next().unwrap_or_default();
    let title_family = title.split('`').next().unwrap_or(title);
    text.lines().next().is_some_and(|first| first.starts_with(title_family))
}

/// Whether the file at `path` (named `name`) was written by this command:
/// a fixture (by its schema marker) or the schema document.
fn is_ours(path: &Path, name: &str) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else { return false };
    if name == "README.md" {
        is_schema_doc(&text)
    } else {
        name.ends_with(".json") && is_fixture_json(&text)
    }
}

/// A temporary file left by an interrupted atomic write of one of our files:
/// `.<name>.tmp-<pid>` where `<name>` is a JSON file or README.md.
fn is_our_temporary(name: &str) -> bool {
    let Some(rest) = name.strip_prefix('.') else { return false };
    let Some((base, pid)) = rest.rsplit_once(".tmp-") else { return false };
    !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()) && (base.ends_with(".json") || base == "README.md")
}

/// Sorts every entry of `dir` into ours (kept or stale) and not ours. A file
/// with a name we generate is still only ours if its content says so, since
/// writing would replace it.
fn survey(dir: &Path, files: &[(String, String)]) -> Result<Survey> {
    let mut out = Survey::default();
    if !dir.exists() {
        return Ok(out);
    }
    let generated: BTreeSet<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let entry = entry.with_context(|| format!("reading {}", dir.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = entry.file_type().with_context(|| format!("inspecting {}", entry.path().display()))?;
        if !kind.is_file() {
            out.foreign.push(format!("{name} (not a plain file)"));
        } else if is_our_temporary(&name) {
            out.stale.push(name);
        } else if !is_ours(&entry.path(), &name) {
            out.foreign.push(name);
        } else if !generated.contains(name.as_str()) {
            out.stale.push(name);
        }
    }
    out.stale.sort();
    out.foreign.sort();
    Ok(out)
}

/// Writes `files` into `dir`. Refuses, changing nothing, when `dir` holds
/// anything this command did not write; removes (saying so) only stale
/// files of ours. Each file is written atomically.
fn write_all(dir: &Path, files: &[(String, String)]) -> Result<()> {
    if dir.exists() && !dir.is_dir() {
        bail!("{} is not a directory", dir.display());
    }
    let found = survey(dir, files)?;
    if !found.foreign.is_empty() {
        const SHOWN: usize = 10;
        let mut list = found.foreign.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", ");
        if found.foreign.len() > SHOWN {
            list.push_str(&format!(", and {} more", found.foreign.len() - SHOWN));
        }
        bail!(
            "refusing to write fixtures into {}: it holds {} entr{} that are not fixtures this command writes ({list}); \
             nothing was changed. Give --dir an empty folder or one holding only fixtures",
            dir.display(),
            found.foreign.len(),
            if found.foreign.len() == 1 { "y" } else { "ies" }
        );
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for (name, text) in files {
        crate::receipts::write_atomic(&dir.join(name), text.as_bytes()).with_context(|| format!("writing {name}"))?;
    }
    for name in &found.stale {
        let path = dir.join(name);
        match std::fs::remove_file(&path) {
            // `write_atomic` removes a dead process's temporary of the file it writes.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            other => other.with_context(|| format!("removing stale {}", path.display()))?,
        }
        println!("fixtures: removed stale {}", path.display());
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
    use std::path::PathBuf;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("primlab-fixtures-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    /// A fixture-shaped file: the schema marker, then `body` lines.
    fn fixture_text(body: &str) -> String {
        format!("{{\n\"schema\":\"primlab.fixture.v1\",\n\"cases\":[{body}]\n}}\n")
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }

    #[test]
    fn drift_names_changed_missing_and_stale_files() {
        let dir = temp_dir("drift");
        let files = vec![("a.json".to_string(), fixture_text("1,\n2")), ("b.json".to_string(), fixture_text("3"))];
        write_all(&dir, &files).unwrap();
        assert!(drift(&dir, &files).unwrap().is_empty());
        std::fs::write(dir.join("a.json"), fixture_text("1,\n5")).unwrap();
        std::fs::remove_file(dir.join("b.json")).unwrap();
        std::fs::write(dir.join("c.json"), fixture_text("")).unwrap();
        let problems = drift(&dir, &files).unwrap();
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems.iter().any(|p| p.starts_with("a.json") && p.contains("line 4")), "{problems:?}");
        assert!(problems.iter().any(|p| p.starts_with("b.json")));
        assert!(problems.iter().any(|p| p.starts_with("c.json")));
        // c.json carries the fixture marker: ours and stale, so it is removed.
        write_all(&dir, &files).unwrap();
        assert_eq!(names(&dir), ["a.json", "b.json"]);
        assert!(drift(&dir, &files).unwrap().is_empty());
    }

    #[test]
    fn a_folder_with_other_files_is_refused_and_nothing_is_deleted() {
        let dir = temp_dir("foreign");
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("Cargo.toml"), "[workspace]\n").unwrap();
        std::fs::write(dir.join("sweep.json"), r#"{"kind":"sweep","coverage":"full"}"#).unwrap();
        // A name we generate, but content that is not ours: writing would replace it.
        std::fs::write(dir.join("a.json"), "{\"mine\": true}\n").unwrap();
        std::fs::write(dir.join("old.json"), fixture_text("")).unwrap();
        let before = names(&dir);
        let files = vec![("a.json".to_string(), fixture_text("1"))];
        let err = write_all(&dir, &files).unwrap_err().to_string();
        for name in ["Cargo.toml", "sweep.json", "a.json", "sub (not a plain file)"] {
            assert!(err.contains(name), "{name} not named in: {err}");
        }
        assert!(err.contains("nothing was changed"), "{err}");
        assert!(!err.contains("old.json"), "{err}");
        assert_eq!(names(&dir), before);
        assert_eq!(std::fs::read_to_string(dir.join("a.json")).unwrap(), "{\"mine\": true}\n");
        assert_eq!(std::fs::read_to_string(dir.join("Cargo.toml")).unwrap(), "[workspace]\n");
    }

    #[test]
    fn an_empty_missing_or_fixture_only_folder_is_written() {
        let files = vec![("a.json".to_string(), fixture_text("1")), ("README.md".to_string(), SCHEMA.to_string())];
        let missing = temp_dir("missing");
        write_all(&missing, &files).unwrap();
        assert_eq!(names(&missing), ["README.md", "a.json"]);

        let empty = temp_dir("empty");
        std::fs::create_dir_all(&empty).unwrap();
        write_all(&empty, &files).unwrap();
        assert_eq!(names(&empty), ["README.md", "a.json"]);

        let ours = temp_dir("ours");
        std::fs::create_dir_all(&ours).unwrap();
        std::fs::write(ours.join("a.json"), fixture_text("0")).unwrap();
        std::fs::write(ours.join("gone.json"), fixture_text("7")).unwrap();
        std::fs::write(ours.join(".a.json.tmp-4242"), "half a fi").unwrap();
        std::fs::write(ours.join("README.md"), "# Fixtures: schema `primlab.fixture.v0`\nold text\n").unwrap();
        write_all(&ours, &files).unwrap();
        assert_eq!(names(&ours), ["README.md", "a.json"]);
        assert_eq!(std::fs::read_to_string(ours.join("a.json")).unwrap(), fixture_text("1"));
        assert_eq!(std::fs::read_to_string(ours.join("README.md")).unwrap(), SCHEMA);
    }

    #[test]
    fn the_real_fixtures_are_recognised_as_ours() {
        for (name, text) in expected_files() {
            let ours = if name == "README.md" { is_schema_doc(&text) } else { is_fixture_json(&text) };
            assert!(ours, "{name} would not be recognised as a fixture");
        }
    }

    #[test]
    fn a_file_in_place_of_the_folder_is_refused() {
        let path = temp_dir("file");
        std::fs::write(&path, "x").unwrap();
        let err = write_all(&path, &[]).unwrap_err().to_string();
        assert!(err.contains("is not a directory"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "x");
    }
}

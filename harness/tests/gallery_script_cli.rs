//! `scripts/check_gallery.sh` on a small gallery of its own, with a stand-in
//! `harness` that fails exactly the runs a real check would (no GPU needed):
//! a bug caught by its plain check, one caught only by the `large` run its
//! `# gallery large:` line asks for, one that `# gallery may miss:`, and a
//! control. The gallery's exit status and its count must follow the runs.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A fresh temporary folder for one test.
fn temp(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("primlab-gallery-{tag}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("temp folder");
    dir
}

/// The stand-in harness: every run prints its seed; the plain check of `02_`
/// fails, `03_` fails only at `--sizes 4294968296`, everything else passes.
const STAND_IN: &str = r#"#!/usr/bin/env bash
echo "check: seed 0x5eed (drawn)"
args="$*"
case "$args" in
  *02_plain_bug*) echo "FAIL reduce/k.sum.i32 n=33 seed=0x1 family=small_ints check=sum index=- expected=1 got=2"; exit 1 ;;
  *03_large_bug*"--sizes 4294968296"*) echo "FAIL reduce/k.sum.i32 n=4294968296 seed=0x2 family=small_ints check=sum index=- expected=3 got=4"; exit 1 ;;
esac
exit 0
"#;

fn entry(gallery: &Path, id: &str, header: &str) {
    let dir = gallery.join(id);
    fs::create_dir_all(&dir).expect("entry folder");
    let toml = format!("{header}name = \"k\"\nprimitive = \"reduce\"\ncontract = \"sum.i32\"\n");
    fs::write(dir.join("check.toml"), toml).expect("check.toml");
}

/// A gallery of four entries and the stand-in, under `root`.
fn gallery(root: &Path) -> (PathBuf, PathBuf) {
    let gallery = root.join("bugs");
    entry(&gallery, "01_a_control", "# CONTROL: correct\n# expected catcher: none\n");
    entry(&gallery, "02_plain_bug", "# BUG: wrong sum\n# expected catcher: sum\n");
    entry(
        &gallery,
        "03_large_bug",
        "# BUG: wraps past 2^32\n# expected catcher: size past 2^32\n# gallery large: 4294968296\n",
    );
    entry(
        &gallery,
        "04_may_miss_bug",
        "# BUG: racy\n# expected catcher: perturbation\n# gallery may miss: the GPU rarely shows it\n",
    );
    let stand_in = root.join("harness");
    fs::write(&stand_in, STAND_IN).expect("stand-in");
    fs::set_permissions(&stand_in, fs::Permissions::from_mode(0o755)).expect("executable");
    (gallery, stand_in)
}

fn run_gallery(root: &Path, out: &str, large: &str) -> (Output, String) {
    let (gallery, stand_in) = gallery(root);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/check_gallery.sh");
    let out_dir = root.join(out);
    let output = Command::new("bash")
        .arg(script)
        .arg(&out_dir)
        .env("HARNESS", &stand_in)
        .env("GALLERY_DIR", &gallery)
        .env("GALLERY_GPUS", "1")
        .env("GALLERY_JOBS", "2")
        .env("GALLERY_LARGE", large)
        .output()
        .expect("bash runs the gallery");
    let table = fs::read_to_string(out_dir.join("gallery.tsv")).unwrap_or_default();
    (output, table)
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// With its `large` run the size-only bug is caught; the one that may miss
/// is listed by name and does not fail the gallery.
#[test]
fn a_large_run_catches_what_the_defaults_cannot() {
    let root = temp("large");
    let (output, table) = run_gallery(&root, "out", "1");
    let said = text(&output);
    assert_eq!(output.status.code(), Some(0), "{said}\n{table}");
    assert!(said.contains("bugs caught: 2 of 2 (and 1 that may miss, missed); controls OK: 1 of 1"), "{said}");
    assert!(said.contains("04_may_miss_bug missed, as it may: the GPU rarely shows it"), "{said}");
    let rows: Vec<Vec<&str>> = table.lines().skip(1).map(|l| l.split('\t').collect()).collect();
    let row = |id: &str, run: &str| rows.iter().find(|r| r[0] == id && r[2] == run).cloned();
    assert_eq!(row("03_large_bug", "check").map(|r| r[7].to_string()), Some("MISSED".into()));
    let large = row("03_large_bug", "large").expect("a large run of 03");
    assert_eq!((large[3], large[7]), ("1", "CAUGHT"), "{large:?}");
    assert!(large[9].contains("n=4294968296"), "{large:?}");
    assert_eq!(row("02_plain_bug", "large"), None, "no large run without the line");
    assert_eq!(row("01_a_control", "sanitize").map(|r| r[7].to_string()), Some("OK".into()));
    let _ = fs::remove_dir_all(&root);
}

/// Without the `large` runs the size-only bug is missed: the gallery fails.
#[test]
fn without_the_large_run_the_gallery_fails() {
    let root = temp("nolarge");
    let (output, table) = run_gallery(&root, "out", "0");
    let said = text(&output);
    assert_eq!(output.status.code(), Some(1), "{said}\n{table}");
    assert!(said.contains("bugs caught: 1 of 2 (and 1 that may miss, missed)"), "{said}");
    assert!(!table.contains("\tlarge\t"), "{table}");
    let _ = fs::remove_dir_all(&root);
}

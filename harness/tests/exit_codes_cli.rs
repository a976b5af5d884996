//! The documented exit statuses of the binary as users run it: 0 passed,
//! 1 a check failed, 2 could not run (no GPU where one is required, bad
//! input), 141 the reader of stdout went away (no panic); and old flag
//! spellings that still work with a warning.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn harness(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_harness")).args(args).output().expect("the harness runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A fresh temporary folder for one test.
fn temp(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("primlab-exit-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// A small export (reduce at n = 33 and 2^5+2, seed 1) in `dir`.
fn export(dir: &std::path::Path) {
    let out = harness(&[
        "cases",
        "export",
        "--primitive",
        "reduce",
        "--sizes",
        "33,2^5+2",
        "--seed",
        "1",
        dir.to_str().expect("utf-8"),
    ]);
    assert_eq!(out.status.code(), Some(0), "export: {}", text(&out.stderr));
}

#[test]
fn a_failed_check_exits_1_and_a_pass_exits_0() {
    let dir = temp("verify");
    export(&dir);
    // No program wrote the outputs: every case fails, which is a failed check, not bad input.
    let out = harness(&["cases", "verify", dir.to_str().expect("utf-8")]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{}", text(&out.stderr));
    assert!(stdout.contains("FAIL ") && stdout.contains("rerun: harness cases export --primitive reduce"), "{stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_exits_2_with_a_message() {
    let out = harness(&["sweep", "--sizes", "2^20+x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("'2^20+x' is not a size"), "{}", text(&out.stderr));
    let out = harness(&["check", "--manifest", "/nonexistent/check.toml", "--validate-only"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("/nonexistent/check.toml"), "{}", text(&out.stderr));
}

#[test]
fn sweep_that_requires_a_gpu_exits_2_without_one() {
    for flag in ["--gpu-only", "--require-gpu"] {
        let out = harness(&["sweep", flag, "--primitive", "reduce", "--sizes", "33", "--seed", "1"]);
        let stderr = text(&out.stderr);
        if !stderr.contains("the GPU checks cannot run (no GPU: ") {
            eprintln!("skipped (a GPU is present: the sweep ran, exit {:?})", out.status.code());
            return;
        }
        assert_eq!(out.status.code(), Some(2), "{flag}: {stderr}");
        assert!(stderr.contains(&format!("sweep: {flag} was given")), "{stderr}");
        assert!(!stderr.contains("error:"), "one clear line, not an error chain: {stderr}");
    }
}

#[test]
fn a_closed_stdout_ends_the_run_quietly_with_141() {
    let dir = temp("pipe");
    export(&dir);
    for args in [vec!["cases", "verify", dir.to_str().expect("utf-8")], vec!["receipts", "hash", "--files"]] {
        // A pipe whose reader is gone before the harness starts (`| head -0`):
        // its first write fails, whatever the timing (a reader closed after
        // the spawn could come too late, once the lines sat in the pipe).
        let (reader, writer) = std::io::pipe().expect("a pipe");
        drop(reader);
        let out = Command::new(env!("CARGO_BIN_EXE_harness"))
            .args(&args)
            .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
            .stdout(Stdio::from(writer))
            .stderr(Stdio::piped())
            .output()
            .expect("the harness runs");
        let stderr = text(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(out.status.code(), Some(141), "{args:?}: {stderr}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn old_spellings_work_with_a_warning() {
    let receipt = temp("old-json").join("sweep.json");
    let out = harness(&[
        "sweep",
        "--list",
        "--primitive",
        "reduce",
        "--sizes",
        "33",
        "--json",
        receipt.to_str().expect("utf-8"),
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("`harness sweep --json` is the old spelling of --receipt"), "{stderr}");
    let out = harness(&[
        "sweep",
        "--list",
        "--primitive",
        "reduce",
        "--sizes",
        "33",
        "--receipt",
        receipt.to_str().expect("utf-8"),
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!text(&out.stderr).contains("old spelling"), "{}", text(&out.stderr));
}

#[test]
fn cases_verify_writes_junit() {
    let dir = temp("junit");
    export(&dir);
    let junit = dir.with_extension("xml");
    let out = harness(&["cases", "verify", dir.to_str().expect("utf-8"), "--junit", junit.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let xml = std::fs::read_to_string(&junit).expect("the report was written");
    let cases = xml.matches("<testcase ").count();
    assert!(cases > 0 && xml.contains(&format!("failures=\"{cases}\"")), "{xml}");
    assert!(xml.contains("classname=\"cases.reduce\""), "{xml}");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&junit);
}

//! `harness bench compare` as CI runs it: on copies of the committed bench
//! receipt made into receipts of three processes (as `bench --processes 3`
//! writes them), an unchanged copy exits 0, a copy with a planted 10 %
//! slowdown of primlab's scans (judged against CUB, PyTorch and the ceilings
//! of the same receipts, which did not move) exits 1 at `--threshold 3%`, bad
//! input exits 2; the JSON on stdout and the CSV agree with the exit status.
//! The committed receipt itself holds one process: compared as it is, it is
//! not judged (exit 2, naming `bench ab`, no REGRESSION printed).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn harness(args: &[&str]) -> (Option<i32>, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_harness")).args(args).output().expect("the harness runs");
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (output.status.code(), text(&output.stdout), text(&output.stderr))
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("primlab-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    dir
}

/// Multiplies a record's times by `factor`.
fn scale(r: &mut Value, factor: f64) {
    for key in ["median_us", "min_us", "max_us"] {
        if let Some(v) = r[key].as_f64() {
            r[key] = Value::from(v * factor);
        }
    }
    if let Some(samples) = r["samples_us"].as_array_mut() {
        for s in samples.iter_mut() {
            *s = Value::from(s.as_f64().expect("a sample") * factor);
        }
    }
}

/// The committed receipt with only its scan and ceiling records (a small
/// copy), each primlab scan record's times multiplied by `factor`, as
/// timed by `processes` processes (more than one: each a copy of every
/// record tagged with its process, its times 0.1 % apart from the next's).
fn receipt_copy(path: &Path, factor: f64, processes: usize) {
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../receipts/bench.json");
    let mut receipt: Value = serde_json::from_str(&std::fs::read_to_string(committed).expect("receipts/bench.json"))
        .expect("the committed receipt is JSON");
    let records = receipt["details"]["records"].as_array_mut().expect("records");
    records.retain(|r| r["primitive"] == "scan" || r["primitive"] == "ceilings");
    for r in records.iter_mut().filter(|r| r["impl"] == "primlab") {
        scale(r, factor);
    }
    if processes > 1 {
        let one: Vec<Value> = std::mem::take(records);
        for p in 0..processes {
            for r in &one {
                let mut r = r.clone();
                scale(&mut r, 1.0 + 0.001 * p as f64);
                r["process"] = Value::from(p);
                records.push(r);
            }
        }
    }
    std::fs::write(path, serde_json::to_string(&receipt).expect("JSON")).expect("writing the copy");
}

#[test]
fn a_planted_slowdown_fails_the_gate_and_an_unchanged_receipt_passes() {
    let dir = fresh_dir("bench-compare-cli");
    let (old, same, slow) = (dir.join("old.json"), dir.join("same.json"), dir.join("slow.json"));
    receipt_copy(&old, 1.0, 3);
    receipt_copy(&same, 1.0, 3);
    receipt_copy(&slow, 1.1, 3);
    let paths = |a: &Path, b: &Path| [a.to_str().expect("utf-8").to_string(), b.to_str().expect("utf-8").to_string()];

    let [a, b] = paths(&old, &same);
    let (code, stdout, stderr) = harness(&["bench", "compare", &a, &b, "--threshold", "3%"]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("gate: pass"), "{stdout}");

    let [a, b] = paths(&old, &slow);
    let (code, stdout, stderr) = harness(&["bench", "compare", &a, &b, "--threshold", "3%"]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    let first = stdout.lines().next().unwrap_or_default();
    assert!(first.contains("REGRESSION"), "the summary comes first: {first}");
    assert!(stdout.contains("gate: FAIL"), "{stdout}");

    // The same comparison as JSON (stdout holds only the document) and CSV.
    let csv = dir.join("compare.csv");
    let csv_arg = csv.to_str().expect("utf-8");
    let (code, stdout, _) = harness(&["bench", "compare", &a, &b, "--format", "json", "--csv", csv_arg]);
    assert_eq!(code, Some(1));
    let doc: Value = serde_json::from_str(&stdout).expect("stdout is one JSON document");
    assert_eq!(doc["gate"], "fail");
    let regressions = doc["summary"]["regression"].as_u64().expect("a count");
    assert!(regressions > 0);
    let rows = std::fs::read_to_string(&csv).expect("the CSV");
    // One row per matched record: ours (gated) and the references (CUB, PyTorch, ceilings).
    let count = |name: &str| doc["summary"][name].as_u64().expect("a count");
    assert_eq!(rows.lines().count() as u64, count("matched") + count("references") + 1);
    assert!(count("references") > 0, "the committed receipt times CUB, PyTorch and the ceilings");
    assert_eq!(rows.lines().filter(|l| l.ends_with(",regression")).count() as u64, regressions);
    // `--format csv` puts the same rows on stdout, and only them.
    let (code, stdout, _) = harness(&["bench", "compare", &a, &b, "--format", "csv"]);
    assert_eq!(code, Some(1));
    assert_eq!(stdout, rows, "stdout is the CSV document");

    // Bad input: a missing receipt and a bad threshold exit 2.
    let missing = dir.join("missing.json");
    let [a, b] = paths(&old, &missing);
    assert_eq!(harness(&["bench", "compare", &a, &b]).0, Some(2));
    let [a, b] = paths(&old, &same);
    assert_eq!(harness(&["bench", "compare", &a, &b, "--threshold", "-3%"]).0, Some(2));
}

#[test]
fn single_process_receipts_are_not_judged() {
    let dir = fresh_dir("bench-compare-cli-one");
    let (old, slow) = (dir.join("old.json"), dir.join("slow.json"));
    receipt_copy(&old, 1.0, 1);
    receipt_copy(&slow, 1.1, 1);
    let (a, b) = (old.to_str().expect("utf-8"), slow.to_str().expect("utf-8"));
    let (code, stdout, stderr) = harness(&["bench", "compare", a, b, "--threshold", "3%"]);
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert!(!stdout.contains("REGRESSION") && !stderr.contains("REGRESSION"), "{stdout}{stderr}");
    assert!(stdout.contains("gate: CANNOT JUDGE") && stdout.contains("slower"), "the deltas are printed: {stdout}");
    assert!(stderr.contains("single-process receipts") && stderr.contains("harness bench ab"), "{stderr}");
    assert!(stderr.contains("--processes"), "{stderr}");
}

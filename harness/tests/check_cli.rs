//! `harness check` on a machine without a GPU says so plainly and exits 2
//! (could not run), after validating the manifest (the binary as users run it).

use std::process::Command;

#[test]
fn check_without_a_gpu_prints_the_cannot_run_line_and_exits_2() {
    // A PTX reduce and a CUDA compaction (two outputs; compiled by NVRTC first).
    for (example, valid) in
        [("reduce_ptx", "is valid: reduce sum.i32"), ("compact_cuda", "is valid: compact positive.i32")]
    {
        let manifest = format!("{}/../examples/check/{example}/check.toml", env!("CARGO_MANIFEST_DIR"));
        let output = Command::new(env!("CARGO_BIN_EXE_harness"))
            .args(["check", "--manifest", &manifest, "--sizes", "33", "--seed", "1"])
            .output()
            .expect("the harness runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        let stdout = String::from_utf8_lossy(&output.stdout);
        if !stderr.contains("check: cannot run: no GPU (") {
            // Only a machine with a GPU may get past this point.
            assert!(stdout.contains("check: seed 0x1"), "{example}: neither ran nor said why:\n{stdout}\n{stderr}");
            eprintln!("skipped (a GPU is present: the check ran)");
            return;
        }
        assert_eq!(output.status.code(), Some(2), "{example}: no GPU is 'could not run', not a failed check");
        assert!(stdout.contains(valid), "{example}: the manifest was not validated first:\n{stdout}");
    }
}

#[test]
fn the_binary_finds_the_nvrtc_that_make_installed_without_any_environment_variable() {
    let root = format!("{}/..", env!("CARGO_MANIFEST_DIR"));
    if !std::path::Path::new(&format!("{root}/.nvrtc/nvidia/cu13/lib/libnvrtc.so.13")).is_file() {
        eprintln!("skipped (no NVRTC under .nvrtc/: `make` installs it)");
        return;
    }
    let output = Command::new(env!("CARGO_BIN_EXE_harness"))
        .env_remove("LD_LIBRARY_PATH")
        .args(["check", "--manifest", &format!("{root}/examples/check/scan_cuda/check.toml"), "--validate-only"])
        .output()
        .expect("the harness runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("is valid: scan exclusive.i32"), "{stdout}");
}

#[test]
fn format_json_puts_one_document_on_stdout_and_every_other_line_on_stderr() {
    let manifest = format!("{}/../examples/check/reduce_ptx/check.toml", env!("CARGO_MANIFEST_DIR"));
    let output = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["check", "--manifest", &manifest, "--sizes", "33,4099", "--validate-only", "--format", "json"])
        .output()
        .expect("the harness runs");
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
    let document: serde_json::Value = serde_json::from_str(&stdout).expect("stdout is one JSON document");
    assert_eq!(document["valid"], true);
    assert_eq!((document["primitive"].as_str(), document["contract"].as_str()), (Some("reduce"), Some("sum.i32")));
    assert_eq!(document["sizes"], serde_json::json!([33, 4099]));
    assert!(stderr.contains("is valid: reduce sum.i32"), "the person's lines went to stderr: {stderr}");
    // A full check on a machine without a GPU: the reason on stderr, nothing on stdout, exit 2.
    let output = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["check", "--manifest", &manifest, "--sizes", "33", "--seed", "1", "--format", "json"])
        .output()
        .expect("the harness runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !stderr.contains("check: cannot run: no GPU (") {
        let document: serde_json::Value = serde_json::from_slice(&output.stdout).expect("the receipt on stdout");
        assert_eq!(document["kind"], "check", "a GPU is present: stdout holds the check's receipt");
        return;
    }
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty(), "no document when nothing ran: {}", String::from_utf8_lossy(&output.stdout));
}

#[test]
fn a_stream_start_that_is_not_a_size_is_refused_before_anything_runs() {
    let manifest = format!("{}/../examples/check/reduce_ptx/check.toml", env!("CARGO_MANIFEST_DIR"));
    let output = Command::new(env!("CARGO_BIN_EXE_harness"))
        .env("PRIMLAB_STREAM_FROM", "lots")
        .args(["check", "--manifest", &manifest, "--sizes", "33", "--validate-only"])
        .output()
        .expect("the harness runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "a bad setting could not run: {stderr}");
    assert!(stderr.contains("PRIMLAB_STREAM_FROM=\"lots\" is not a size"), "{stderr}");
    assert!(!String::from_utf8_lossy(&output.stdout).contains("is valid"), "refused before the manifest");
}

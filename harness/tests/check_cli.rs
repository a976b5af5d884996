//! `harness check` on a machine without a GPU says so plainly and exits 2
//! (could not run), after validating the manifest (the binary as users run it).
//! A test whose subject needs NVRTC fails when NVRTC is missing, unless
//! `PRIMLAB_ALLOW_NO_NVRTC=1` says to skip it.

use std::process::Command;

/// The repository root.
fn root() -> String {
    format!("{}/..", env!("CARGO_MANIFEST_DIR"))
}

/// Whether the NVRTC that `make` installs is under `.nvrtc/`: true when it
/// is; false (said so) when it is not and `PRIMLAB_ALLOW_NO_NVRTC=1`;
/// otherwise the test fails, since it cannot check what it is about.
fn nvrtc_for(test: &str) -> bool {
    if std::path::Path::new(&format!("{}/.nvrtc/nvidia/cu13/lib/libnvrtc.so.13", root())).is_file() {
        return true;
    }
    allowed_without_nvrtc(test, "NVRTC is not under .nvrtc/nvidia/cu13/lib (`make` installs it there)")
}

/// False (said so) when `PRIMLAB_ALLOW_NO_NVRTC=1`; otherwise `test` fails, naming what is `missing`.
fn allowed_without_nvrtc(test: &str, missing: &str) -> bool {
    assert!(
        std::env::var("PRIMLAB_ALLOW_NO_NVRTC").as_deref() == Ok("1"),
        "{test}: {missing}; set PRIMLAB_ALLOW_NO_NVRTC=1 to skip the tests that need it"
    );
    eprintln!("{test}: skipped (PRIMLAB_ALLOW_NO_NVRTC=1 and {missing})");
    false
}

#[test]
fn check_without_a_gpu_prints_the_cannot_run_line_and_exits_2() {
    // A PTX reduce and a CUDA compaction (two outputs; compiled by NVRTC first).
    for (example, valid) in
        [("reduce_ptx", "is valid: reduce sum.i32"), ("compact_cuda", "is valid: compact positive.i32")]
    {
        let manifest = format!("{}/examples/check/{example}/check.toml", root());
        let output = Command::new(env!("CARGO_BIN_EXE_harness"))
            .args(["check", "--manifest", &manifest, "--sizes", "33", "--seed", "1"])
            .output()
            .expect("the harness runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        let stdout = String::from_utf8_lossy(&output.stdout);
        if stderr.contains("cannot be compiled here") {
            let test = "check_without_a_gpu_prints_the_cannot_run_line_and_exits_2";
            if !allowed_without_nvrtc(test, &format!("{example} cannot be compiled: {stderr}")) {
                continue;
            }
        }
        assert!(stdout.contains(valid), "{example}: the manifest was not validated first:\n{stdout}\n{stderr}");
        if stderr.contains("check: cannot run: no GPU (") {
            assert_eq!(output.status.code(), Some(2), "{example}: no GPU is 'could not run', not a failed check");
            continue;
        }
        // Only a machine with a GPU gets here: the example's kernel is correct, so its check passes.
        assert!(stdout.contains("check: seed 0x1"), "{example}: neither ran nor said why:\n{stdout}\n{stderr}");
        assert_eq!(output.status.code(), Some(0), "{example}: a correct kernel did not pass:\n{stdout}\n{stderr}");
        assert!(stdout.contains("check: PASS"), "{example}:\n{stdout}");
    }
}

#[test]
fn the_binary_finds_the_nvrtc_that_make_installed_without_any_environment_variable() {
    if !nvrtc_for("the_binary_finds_the_nvrtc_that_make_installed_without_any_environment_variable") {
        return;
    }
    let root = root();
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

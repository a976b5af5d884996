//! `harness receipts hash` and `cases export` refuse bad input with a
//! message and exit status 2 (the binary as users run it).

use std::process::Command;

fn harness(args: &[&str]) -> (Option<i32>, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_harness")).args(args).output().expect("the harness runs");
    (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn hashing_a_folder_with_no_sources_exits_2_with_a_message() {
    let (code, stderr) = harness(&["receipts", "hash", "--root", "/nonexistent"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("/nonexistent"), "{stderr}");
}

#[test]
fn sizes_no_machine_can_hold_exit_2_without_a_panic() {
    let dir = std::env::temp_dir().join(format!("primlab-cli-sizes-{}", std::process::id()));
    for sizes in ["18446744073709551615", "4294967296"] {
        let (code, stderr) =
            harness(&["cases", "export", "--primitive", "scan", "--sizes", sizes, dir.to_str().expect("utf-8")]);
        assert_eq!(code, Some(2), "{sizes}: {stderr}");
        assert!(stderr.contains(&format!("n = {sizes}")) && !stderr.contains("panicked"), "{stderr}");
    }
}

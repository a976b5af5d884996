//! `cargo test` checking CUDA kernels through the harness library
//! ([`harness::check_manifest`]), as a Rust user keeps such a test: a
//! correct kernel passes, and a kernel with a planted bug fails with the
//! line `harness check` prints.
//!
//! Both come from the gallery (`examples/check/bugs/`): `03_argmax_control`
//! (a correct two-pass float argmax) and `32_argmax_signed_zero` (a packed-key
//! argmax whose float mapping puts -0.0 below +0.0, which the contract ties),
//! at the sweep's boundary sizes up to 4099 with a fixed seed.
//!
//! Without a GPU each test prints `skipped (no GPU: <reason>)` and counts as
//! skipped, never as passed (libtest has no run-time skip, so this file has
//! its own `main`, `harness = false`); `PRIMLAB_REQUIRE_GPU=1` makes a skip a
//! failure, for the GPU machine. Without NVRTC the manifests cannot be
//! validated: that fails, unless `PRIMLAB_ALLOW_NO_NVRTC=1` says to skip (as
//! the harness's own tests do). The cases run in a `harness` executable
//! built from the same sources: `cargo test --workspace` builds it beside
//! this test (`target/<profile>/harness`), or name it with `PRIMLAB_HARNESS`.
//! NVRTC must be loadable (`make verify` puts it on `LD_LIBRARY_PATH`).

use harness::{check_manifest, CheckConfig, CheckError, Outcome};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The gallery's folder: in the checkout this test was built in, else
/// `examples/check/bugs` under the current folder (a test binary carried to
/// a GPU machine and run from the repository's root there).
fn gallery() -> PathBuf {
    let built_in = Path::new(env!("CARGO_MANIFEST_DIR")).join("../check/bugs");
    let path = if built_in.is_dir() { built_in } else { PathBuf::from("examples/check/bugs") };
    std::fs::canonicalize(&path).unwrap_or(path)
}

/// The sizes and seed of both checks, and a receipt folder of their own
/// (under cargo's folder for test files, or the system's temporary folder
/// where that is absent).
fn config(name: &str) -> CheckConfig {
    let cargo_tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let tmp = if cargo_tmp.is_dir() { cargo_tmp.to_path_buf() } else { std::env::temp_dir() };
    CheckConfig::new()
        .sizes([1, 31, 32, 33, 255, 256, 257, 511, 512, 513, 4099])
        .seed(0x5eed)
        .out(tmp.join("primlab-rust-check").join(name))
}

/// How a test ended.
enum Ended {
    Passed,
    /// Skipped, and why (`no GPU: ...`).
    Skipped(String),
}

/// A check that could not run on this machine: skipped, with its reason;
/// any other error fails the test.
fn skipped(e: &CheckError) -> Option<Ended> {
    match e {
        CheckError::NoGpu { reason } => Some(Ended::Skipped(format!("no GPU: {reason}"))),
        CheckError::NoNvrtc { message } if std::env::var("PRIMLAB_ALLOW_NO_NVRTC").as_deref() == Ok("1") => {
            Some(Ended::Skipped(format!("no NVRTC, PRIMLAB_ALLOW_NO_NVRTC=1: {message}")))
        }
        _ => None,
    }
}

/// A correct kernel passes every case.
fn a_correct_kernel_passes() -> Result<Ended, String> {
    match check_manifest(gallery().join("03_argmax_control/check.toml"), &config("control")) {
        Ok(report) => {
            assert_eq!(report.outcome(), Outcome::Pass);
            assert!(report.passed() > 0 && report.passed() == report.planned(), "{report}");
            println!("{report}");
            Ok(Ended::Passed)
        }
        Err(e) => skipped(&e).ok_or_else(|| format!("the control failed:\n{e}")),
    }
}

/// A planted bug fails, and the failure is the line `harness check` prints.
fn a_planted_bug_fails_with_its_line() -> Result<Ended, String> {
    match check_manifest(gallery().join("32_argmax_signed_zero/check.toml"), &config("bug")) {
        Ok(report) => Err(format!("the planted bug passed:\n{report}")),
        Err(CheckError::Failed(report)) => {
            let first = report.failures().first().ok_or_else(|| format!("failed without a failure line:\n{report}"))?;
            let line = first.line();
            if !line.starts_with("FAIL arg_reduce/argmax_signed_zero.argmax.f32 n=") {
                return Err(format!("an unexpected failure line: {line}"));
            }
            if !first.details().iter().any(|d| d.starts_with("rerun: harness check --manifest ")) {
                return Err(format!("no rerun line under the failure:\n{first}"));
            }
            println!("the planted bug failed as expected:\n{first}");
            Ok(Ended::Passed)
        }
        Err(e) => skipped(&e).ok_or_else(|| format!("the check of the planted bug did not run to a failure:\n{e}")),
    }
}

type Test = (&'static str, fn() -> Result<Ended, String>);

const TESTS: [Test; 2] = [
    ("a_correct_kernel_passes", a_correct_kernel_passes),
    ("a_planted_bug_fails_with_its_line", a_planted_bug_fails_with_its_line),
];

/// Runs the tests whose names hold every filter given (options such as
/// `--nocapture` are ignored), libtest's way: one line per test, then the counts.
fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list") {
        TESTS.iter().for_each(|(name, _)| println!("{name}: test"));
        return ExitCode::SUCCESS;
    }
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    let chosen: Vec<&Test> =
        TESTS.iter().filter(|(name, _)| filters.iter().all(|f| name.contains(f.as_str()))).collect();
    let require_gpu = std::env::var("PRIMLAB_REQUIRE_GPU").as_deref() == Ok("1");
    println!("\nrunning {} tests", chosen.len());
    let (mut passed, mut failed, mut skips) = (0, 0, 0);
    for (name, test) in chosen {
        match std::panic::catch_unwind(test) {
            Ok(Ok(Ended::Passed)) => {
                passed += 1;
                println!("test {name} ... ok");
            }
            Ok(Ok(Ended::Skipped(reason))) if !require_gpu => {
                skips += 1;
                println!("test {name} ... skipped ({reason})");
            }
            Ok(Ok(Ended::Skipped(reason))) => {
                failed += 1;
                println!("test {name} ... FAILED: skipped ({reason}) and PRIMLAB_REQUIRE_GPU=1");
            }
            Ok(Err(why)) => {
                failed += 1;
                println!("test {name} ... FAILED\n{why}");
            }
            Err(_) => {
                failed += 1;
                println!("test {name} ... FAILED (panicked, above)");
            }
        }
    }
    let word = if failed == 0 { "ok" } else { "FAILED" };
    println!("\ntest result: {word}. {passed} passed; {failed} failed; {skips} skipped\n");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

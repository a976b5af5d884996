//! Honest exits of `harness sweep`: a run that checked nothing, a filter
//! that matches nothing, a size that cannot be a size, and a partial run
//! aimed at a full receipt all fail instead of passing quietly. These run
//! where CI runs, without a GPU.

use super::*;
use crate::cli::{Cli, Command};
use clap::Parser;

fn sweep_args(extra: &[&str]) -> SweepArgs {
    let mut argv = vec!["harness", "sweep", "--seed", "0x5eed"];
    argv.extend_from_slice(extra);
    match Cli::try_parse_from(argv).expect("valid arguments").command {
        Command::Sweep(a) => a,
        _ => unreachable!("a sweep"),
    }
}

fn no_gpu_here() -> bool {
    matches!(kernels::Gpu::open(kernels::GpuOptions::default()), Err(kernels::GpuError::Unavailable { .. }))
}

#[test]
fn a_sweep_that_checks_nothing_exits_nonzero() {
    if !no_gpu_here() {
        return; // On a GPU machine these cases run; the property is about machines without one.
    }
    for flags in [&["--gpu-only", "--sizes", "33"][..], &["--require-gpu", "--primitive", "reduce", "--sizes", "33"]] {
        assert!(!run(&sweep_args(flags)).expect("runs"), "{flags:?} passed without checking anything");
    }
}

#[test]
fn a_variant_filter_that_matches_nothing_lists_the_valid_names() {
    let err = run(&sweep_args(&["--primitive", "scan", "--variant", "nope", "--sizes", "33"])).unwrap_err().to_string();
    assert!(err.contains("--variant nope") && err.contains("decoupled_lookback.exclusive.i32"), "{err}");
}

#[test]
fn size_zero_is_refused_and_sizes_past_the_device_are_left_to_the_cases() {
    let err = run(&sweep_args(&["--sizes", "0,33"])).unwrap_err().to_string();
    assert!(err.contains("0 is not a size"), "{err}");
    // A size no device holds is not refused before the run: its cases are skipped with the
    // reason (`sweep::out_of_reach`), the others run.
    assert!(check_sizes(&[1 << 40, 33]).is_ok());
}

#[test]
fn unknown_primitives_are_refused_by_the_command_line_with_the_valid_values() {
    let err = Cli::try_parse_from(["harness", "sweep", "--primitive", "sort"]).unwrap_err().to_string();
    assert!(err.contains("possible values") && err.contains("segmented_reduce"), "{err}");
}

#[test]
fn a_cpu_only_sweep_never_replaces_a_gpu_receipt() {
    let dir = std::env::temp_dir().join(format!("primlab-sweep-receipt-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("sweep.json");
    let full = r#"{"kind":"sweep","coverage":"full","note":"a GPU receipt"}"#;
    std::fs::write(&path, full).unwrap();
    let json = path.to_string_lossy().to_string();
    let args = sweep_args(&["--cpu-only", "--primitive", "reduce", "--sizes", "33", "--json", &json]);
    let err = run(&args).unwrap_err().to_string();
    assert!(err.contains("refusing to overwrite") && err.contains("holds the receipt of a full run"), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), full, "the GPU receipt is untouched");
}

#[test]
fn only_a_run_without_filters_is_full() {
    assert!(partial_reasons(&sweep_args(&[])).is_empty());
    let reasons = partial_reasons(&sweep_args(&["--quick", "--primitive", "scan", "--variant", "blelloch"]));
    assert_eq!(reasons, vec!["--primitive scan", "--variant blelloch", "--quick"]);
    assert_eq!(partial_reasons(&sweep_args(&["--cpu-only"])), vec!["--cpu-only"]);
}

#[test]
fn a_junit_report_names_every_model_check() {
    let dir = std::env::temp_dir().join(format!("primlab-sweep-junit-{}", std::process::id()));
    let path = dir.join("sweep.xml");
    let junit = path.to_string_lossy().to_string();
    let passed =
        run(&sweep_args(&["--cpu-only", "--primitive", "reduce", "--sizes", "33", "--junit", &junit])).unwrap();
    assert!(passed);
    let xml = std::fs::read_to_string(&path).unwrap();
    assert!(xml.contains("classname=\"sweep.model.reduce\""), "{xml}");
    assert!(xml.contains("failures=\"0\""), "{xml}");
}

/// A failure's rerun line regenerates the same case: parsing its primitive,
/// variant, size and seed into a plan finds the same case id with the same
/// input digest. (The case's own input seed, given as `--seed`, would derive
/// a different input.)
#[test]
fn a_rerun_line_regenerates_the_same_case() {
    let run_seed = 0x5eed_1234;
    let full = SweepPlan {
        seed: run_seed,
        sizes: vec![33, 4097],
        quick: false,
        primitives: vec![Primitive::Scan, Primitive::Reduce],
        variants: vec![],
        one_family: false,
    };
    let cases = gpu::catalogue(&full);
    assert!(!cases.is_empty());
    for case in cases.iter().step_by(7) {
        let line = case.id.repro(run_seed);
        let arg = |flag: &str| {
            let words: Vec<&str> = line.split_whitespace().collect();
            let at = words.iter().position(|w| *w == flag).unwrap_or_else(|| panic!("{flag} in {line}"));
            words[at + 1].to_string()
        };
        let seed = u64::from_str_radix(arg("--seed").trim_start_matches("0x"), 16).expect("hex seed");
        let primitive = Primitive::from_name(&arg("--primitive")).expect("a registry primitive");
        let rerun = SweepPlan {
            seed,
            sizes: vec![arg("--sizes").parse().expect("a size")],
            quick: false,
            primitives: vec![primitive],
            variants: vec![arg("--variant")],
            one_family: false,
        };
        let again = gpu::catalogue(&rerun);
        let same = again.iter().find(|c| c.id == case.id).unwrap_or_else(|| panic!("{line} lost {:?}", case.id));
        let digest = |c: &gpu::GpuCase| c.standalone_reference().map(|d| d.input_digest).expect("reference");
        assert_eq!(digest(same), digest(case), "{line}: another input");
    }
}

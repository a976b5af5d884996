//! The CUB and PyTorch baselines, run in the same `harness bench` run as
//! primlab's kernels (after them, so that nothing shares the GPU): build
//! `cub_bench` with nvcc when present, run it and `torch_bench.py` with the
//! run's sizes, shapes and quick flag, and read their JSON Lines. An absent
//! baseline is reported with its reason; none is ever invented.

pub mod cub_build;
pub mod locate;
pub mod parse;
pub mod process;

use super::config::{BenchConfig, HISTOGRAM_BINS};
use super::ops::{cub_ops, torch_ops};
use super::record::{BenchRecord, IMPL_CUB, IMPL_TORCH};
use parse::{parse_jsonl, FailedBaselineRecord};
use process::ProgramRun;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Seconds a `--quick` run waits for the nvcc build, counted from the start of the run.
pub const QUICK_BUILD_WAIT_S: u64 = 75;
/// Seconds a full run waits for the nvcc build.
pub const FULL_BUILD_WAIT_S: u64 = 900;
/// Seconds `cub_bench` may run (quick, full).
pub const CUB_TIMEOUT_S: (u64, u64) = (90, 900);
/// Seconds `torch_bench.py` may run (quick, full).
pub const TORCH_TIMEOUT_S: (u64, u64) = (120, 900);

/// Whether a baseline ran, and what came of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaselineRun {
    /// `cub` or `torch`.
    #[serde(rename = "impl")]
    pub implementation: String,
    /// `ran` (records read), `absent` (could not run) or `failed` (ran but
    /// crashed or timed out; any records it wrote before are kept).
    pub status: String,
    /// Why absent or failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// How `cub_bench` was built.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<cub_build::CubBuild>,
    /// The program run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<ProgramRun>,
    /// The meta line (GPU, versions, clocks, protocol).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<serde_json::Value>,
    /// Timed records read.
    pub records: usize,
    /// Records with `"ok": false`, with their error text (not used for ratios).
    #[serde(default)]
    pub failed_records: Vec<FailedBaselineRecord>,
    /// Line numbers of lines that were not JSON.
    #[serde(default)]
    pub unreadable_lines: Vec<usize>,
}

impl BaselineRun {
    /// A baseline that could not run.
    pub fn absent(implementation: &str, reason: impl Into<String>) -> BaselineRun {
        BaselineRun {
            implementation: implementation.to_string(),
            status: "absent".into(),
            reason: Some(reason.into()),
            build: None,
            run: None,
            meta: None,
            records: 0,
            failed_records: Vec::new(),
            unreadable_lines: Vec::new(),
        }
    }
}

/// The arguments both baseline programs share: sizes, quick, segment
/// lengths, bins.
fn common_args(config: &BenchConfig, out: &Path) -> Vec<String> {
    let sizes = config.sizes_log2.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    let seg_lens = config.segment_lens.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
    let mut args = vec![
        "--out".to_string(),
        out.display().to_string(),
        "--sizes".into(),
        sizes,
        "--seg-lens".into(),
        seg_lens,
        "--bins".into(),
        HISTOGRAM_BINS.to_string(),
    ];
    if config.quick {
        args.push("--quick".into());
    }
    args
}

/// The `--ops` selection for the run's primitive filter (None: all ops).
fn ops_for(
    config: &BenchConfig,
    table: fn(&str) -> &'static [&'static str],
    with_ceilings: bool,
) -> Option<Vec<&'static str>> {
    if config.primitives.is_empty() {
        return None;
    }
    let mut ops: Vec<&'static str> = if with_ceilings { table("ceilings").to_vec() } else { Vec::new() };
    for primitive in &config.primitives {
        for op in table(primitive) {
            if !ops.contains(op) {
                ops.push(op);
            }
        }
    }
    Some(ops)
}

/// Reads what a program wrote to `out` after `run`, into a [`BaselineRun`].
fn collect(implementation: &str, out: &Path, run: ProgramRun) -> (BaselineRun, Vec<BenchRecord>) {
    let text = std::fs::read_to_string(out).unwrap_or_default();
    let parsed = parse_jsonl(&text, implementation);
    // cub_bench and torch_bench.py exit 1 when some check failed: the file is complete.
    let complete = !run.timed_out && matches!(run.exit_code, Some(0) | Some(1));
    let (status, reason) = if let Some(unavailable) = parsed.unavailable.clone() {
        ("absent", Some(unavailable))
    } else if complete && parsed.meta.is_some() {
        ("ran", None)
    } else if run.timed_out {
        ("failed", Some(format!("killed after {:.0} s (timeout); records written before are kept", run.seconds)))
    } else {
        ("failed", Some(format!("exit {:?}: {}", run.exit_code, run.log_tail)))
    };
    let baseline = BaselineRun {
        implementation: implementation.to_string(),
        status: status.into(),
        reason,
        build: None,
        meta: parsed.meta,
        records: parsed.records.len(),
        failed_records: parsed.failed,
        unreadable_lines: parsed.unreadable_lines,
        run: Some(run),
    };
    (baseline, parsed.records)
}

fn deadline_in(seconds: u64) -> Instant {
    Instant::now() + Duration::from_secs(seconds)
}

/// Waits for the build (until `build_deadline`) and runs `cub_bench`,
/// writing its JSONL and log into `work_dir`.
pub fn run_cub(
    pending: cub_build::PendingBuild,
    build_deadline: Instant,
    config: &BenchConfig,
    work_dir: &Path,
) -> (BaselineRun, Vec<BenchRecord>) {
    let build = match cub_build::finish(pending, build_deadline) {
        Ok(build) => build,
        Err((reason, nvcc)) => {
            let mut absent = BaselineRun::absent(IMPL_CUB, reason);
            absent.run = nvcc;
            return (absent, Vec::new());
        }
    };
    let out = work_dir.join("cub.jsonl");
    let _ = std::fs::remove_file(&out);
    let mut args = common_args(config, &out);
    if let Some(ops) = ops_for(config, cub_ops, true) {
        args.push("--ops".into());
        args.push(ops.join(","));
    }
    let timeout = if config.quick { CUB_TIMEOUT_S.0 } else { CUB_TIMEOUT_S.1 };
    let run = process::start(&build.binary, &args, &work_dir.join("cub.log"))
        .and_then(|program| program.finish(deadline_in(timeout)));
    match run {
        Ok(run) => {
            let (mut baseline, records) = collect(IMPL_CUB, &out, run);
            baseline.build = Some(build);
            (baseline, records)
        }
        Err(e) => {
            let mut absent = BaselineRun::absent(IMPL_CUB, format!("{e:#}"));
            absent.build = Some(build);
            (absent, Vec::new())
        }
    }
}

/// Runs `torch_bench.py` from `script_dir` with `python3`, writing its
/// JSONL and log into `work_dir`.
pub fn run_torch(script_dir: &Path, config: &BenchConfig, work_dir: &Path) -> (BaselineRun, Vec<BenchRecord>) {
    let python = match locate::python3() {
        Ok(python) => python,
        Err(reason) => return (BaselineRun::absent(IMPL_TORCH, reason), Vec::new()),
    };
    let script = script_dir.join("torch_bench.py");
    if !script.is_file() {
        return (BaselineRun::absent(IMPL_TORCH, format!("{} not found", script.display())), Vec::new());
    }
    let out = work_dir.join("torch.jsonl");
    let _ = std::fs::remove_file(&out);
    let mut args = vec![script.display().to_string()];
    args.extend(common_args(config, &out));
    let shapes = config.row_shapes.iter().map(|(r, c)| format!("{r}x{c}")).collect::<Vec<_>>().join(",");
    args.push("--shapes".into());
    args.push(shapes);
    // Top-k's rows and k from the run's own (ours are registered from the same two), so
    // that a `--shape` run times torch.topk at that shape, not at the script's defaults.
    let topk_shapes = config.topk_shapes().iter().map(|(r, c)| format!("{r}x{c}")).collect::<Vec<_>>().join(",");
    let topk_ks = config.topk_ks().iter().map(|k| k.to_string()).collect::<Vec<_>>().join(",");
    args.extend(["--topk-shapes".into(), topk_shapes, "--topk-ks".into(), topk_ks]);
    if let Some(ops) = ops_for(config, torch_ops, false) {
        if ops.is_empty() {
            return (BaselineRun::absent(IMPL_TORCH, "no torch op serves the selected primitives"), Vec::new());
        }
        args.push("--ops".into());
        args.push(ops.join(","));
    }
    let timeout = if config.quick { TORCH_TIMEOUT_S.0 } else { TORCH_TIMEOUT_S.1 };
    match process::start(&python, &args, &work_dir.join("torch.log"))
        .and_then(|program| program.finish(deadline_in(timeout)))
    {
        Ok(run) => collect(IMPL_TORCH, &out, run),
        Err(e) => (BaselineRun::absent(IMPL_TORCH, format!("{e:#}")), Vec::new()),
    }
}

/// The `cub_bench.cu` source under `script_dir`.
pub fn cub_source(script_dir: &Path) -> PathBuf {
    script_dir.join("cub_bench.cu")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::BenchOptions;

    fn config(quick: bool, primitives: &[&str]) -> BenchConfig {
        BenchConfig::from_args(&BenchOptions {
            quick,
            primitives: primitives
                .iter()
                .map(|p| crate::registry::Primitive::from_name(p).expect("a registry primitive"))
                .collect(),
            ..BenchOptions::default()
        })
    }

    #[test]
    fn quick_runs_pass_quick_and_the_run_sizes() {
        let args = common_args(&config(true, &[]), Path::new("x.jsonl"));
        assert_eq!(args[..4], ["--out", "x.jsonl", "--sizes", "10,16,20,24,28"]);
        assert!(args.contains(&"--quick".to_string()));
        assert!(args.contains(&"1024".to_string()));
    }

    #[test]
    fn a_primitive_filter_selects_ops_and_keeps_the_ceilings() {
        assert_eq!(ops_for(&config(false, &[]), cub_ops, true), None);
        let ops = ops_for(&config(false, &["scan"]), cub_ops, true).unwrap();
        assert_eq!(
            ops,
            [
                "memcpy_d2d",
                "read_ceiling_i32",
                "cub_exclusive_scan_i32_i64",
                "cub_exclusive_scan_i32_i64_n64",
                "cub_inclusive_scan_i32_i64",
                "cub_exclusive_scan_i32",
                "cub_exclusive_scan_f32"
            ]
        );
        assert_eq!(
            ops_for(&config(false, &["softmax"]), torch_ops, false).unwrap(),
            ["torch_softmax_f32", "torch_softmax_bf16"]
        );
    }

    #[test]
    fn a_timed_out_program_is_failed_and_keeps_its_records() {
        let dir = std::env::temp_dir().join(format!("primlab-collect-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("cub.jsonl");
        std::fs::write(
            &out,
            "{\"impl\":\"cub\",\"meta\":{}}\n{\"impl\":\"cub\",\"op\":\"memcpy_d2d\",\"n\":1024,\"median_us\":2.0,\"ok\":true,\"logical_bytes\":8192}\n",
        )
        .unwrap();
        let run = ProgramRun {
            command: "cub_bench".into(),
            exit_code: None,
            timed_out: true,
            seconds: 90.0,
            log: dir.join("cub.log"),
            log_tail: String::new(),
        };
        let (baseline, records) = collect(IMPL_CUB, &out, run);
        assert_eq!(baseline.status, "failed");
        assert!(baseline.reason.unwrap().contains("timeout"));
        assert_eq!(records.len(), 1);
    }

    #[test]
    fn a_cub_binary_runs_with_the_run_arguments_and_its_records_are_read() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("primlab-fake-cub-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let args_seen = dir.join("args.txt");
        let script = dir.join("cub_bench");
        std::fs::write(
            &script,
            format!(
                r#"#!/bin/sh
echo "$@" > {}
while [ $# -gt 0 ]; do if [ "$1" = --out ]; then out=$2; fi; shift; done
echo '{{"impl":"cub","meta":{{"gpu":"fake"}}}}' > "$out"
echo '{{"impl":"cub","op":"cub_reduce_sum_i32_i64","n":1024,"median_us":7.5,"min_us":7,"max_us":9,"iters":20,"warmups":3,"logical_bytes":4096,"gbps":0.5,"ok":true,"cache_policy":"rot","timed_region":"one call","params":{{}}}}' >> "$out"
echo '{{"impl":"cub","op":"cub_argmax_f32","n":1024,"ok":false,"error":"index 3 != 2","params":{{}}}}' >> "$out"
echo "cub_bench: 1 check(s) failed" >&2
exit 1
"#,
                args_seen.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let pending =
            cub_build::PendingBuild::Ready(cub_build::CubBuild { binary: script, how: "test".into(), nvcc: None });
        let (run, records) = run_cub(pending, Instant::now(), &config(true, &["reduce"]), &dir);
        assert_eq!(run.status, "ran", "{run:?}");
        assert_eq!(run.records, 1);
        assert_eq!(records[0].op, "reduce_sum_i32_i64");
        assert_eq!(run.failed_records[0].error, "index 3 != 2");
        assert_eq!(run.meta.as_ref().and_then(|m| m.get("gpu")).and_then(|g| g.as_str()), Some("fake"));
        assert!(run.run.as_ref().unwrap().log_tail.contains("1 check(s) failed"));
        let seen = std::fs::read_to_string(&args_seen).unwrap();
        assert!(seen.contains("--sizes 10,16,20,24,28") && seen.contains("--quick"), "{seen}");
        assert!(seen.contains("--ops memcpy_d2d,read_ceiling_i32,cub_reduce_sum_i32_i64"), "{seen}");
    }
}

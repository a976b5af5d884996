//! Tests of the benchmark report (`report.rs`), kept apart to keep that file short.

use super::*;
use crate::bench::baselines::parse::FailedBaselineRecord;
use crate::bench::config::Protocol;
use crate::bench::details::{NotWired, DETAILS_SCHEMA, TIMING_TEXT};
use crate::bench::entries::ceilings::{COPY_OP, READ_OP};
use crate::bench::record::SkippedEntry;
use crate::receipts::{MachineInfo, Tally};

/// A checked record as a run writes it: `what` is (implementation,
/// primitive, op, variant), `bytes_per` the logical bytes of one element.
fn rec(what: (&str, &str, &str, &str), n: usize, us: f64, bytes_per: u64) -> BenchRecord {
    let (implementation, primitive, op, variant) = what;
    let logical = bytes_per * n as u64;
    BenchRecord {
        min_us: Some(us * 0.98),
        max_us: Some(us * 1.1),
        check: "exact".into(),
        cache_policy: "single input buffer".into(),
        timed_region: "one plan enqueue".into(),
        bytes_moved_estimate: Some(logical + 64),
        launches: Some(2),
        params: serde_json::json!({}),
        ..BenchRecord::synthetic(implementation, primitive, op, variant, n, us, logical)
    }
}

/// A small synthetic run: ceilings, reduce (met), scan (missed), the
/// crossover variants, a failed entry and an absent torch.
fn synthetic_details() -> BenchDetails {
    let mut records = Vec::new();
    for k in [10u32, 20, 28] {
        let n = 1usize << k;
        // Microseconds of `bytes_per` x n bytes at `gbps`, plus a launch cost.
        let t = |launch: f64, bytes_per: f64, gbps: f64| launch + bytes_per * n as f64 / (gbps * 1e3);
        let per_element = 4.0 + 0.5e-3 * n as f64;
        // (what, launch us, logical bytes per element, GB/s).
        let timed = [
            ((IMPL_CEILING, "ceilings", COPY_OP, COPY_OP), 3.0, 8, 4200.0),
            ((IMPL_CEILING, "ceilings", READ_OP, READ_OP), 3.0, 4, 4260.0),
            ((IMPL_PRIMLAB, "reduce", "reduce_sum_i32_i64", "single_pass"), 3.0, 4, 4270.0),
            ((IMPL_PRIMLAB, "reduce", "reduce_sum_i32_i64", "multipass"), 3.0, 4, 3900.0),
            ((IMPL_CUB, "reduce", "reduce_sum_i32_i64", "cub_reduce_sum_i32_i64"), 5.0, 4, 4280.0),
            ((IMPL_PRIMLAB, "scan", "exclusive_scan_i32_i64", "decoupled_lookback"), 3.0, 12, 2500.0),
            ((IMPL_CUB, "scan", "exclusive_scan_i32_i64", "cub_exclusive_scan_i32_i64"), 3.0, 12, 3000.0),
            // A peer with no entry of ours (CUB's same-type scan): shown, never judged.
            ((IMPL_CUB, "scan", "exclusive_scan_i32", "cub_exclusive_scan_i32"), 3.0, 8, 2900.0),
            ((IMPL_CUB, "float_reduce", crossover::OP, "cub_reduce_sum_f32_gpu_to_gpu"), 70.0, 4, 2500.0),
            ((IMPL_PRIMLAB, "float_reduce", crossover::OP, crossover::PER_BLOCK), 5.0, 4, 4000.0),
            ((IMPL_PRIMLAB, "float_reduce", crossover::OP, crossover::TWO_PASS), 7.0, 4, 4000.0),
        ];
        for (what, launch, bytes_per, gbps) in timed {
            records.push(rec(what, n, t(launch, bytes_per as f64, gbps), bytes_per));
        }
        records.push(rec((IMPL_PRIMLAB, "float_reduce", crossover::OP, crossover::PER_ELEMENT), n, per_element, 4));
    }
    // Softmax at the target's shape: 1.3x torch with wide noise on both sides (within noise).
    let spread = |centre: f64, width: f64| -> Vec<f64> {
        (0..41).map(|i| centre - width + 2.0 * width * i as f64 / 40.0).collect()
    };
    for (implementation, variant, centre) in
        [(IMPL_PRIMLAB, "online_block", 1000.0), (IMPL_TORCH, "torch_softmax_f32", 1300.0)]
    {
        let mut r = rec((implementation, "softmax", "softmax_f32", variant), 8192 * 32000, centre, 8)
            .with_samples(spread(centre, 0.1 * centre));
        r.shape = Some([8192, 32000]);
        records.push(r);
    }
    let mut failed = rec((IMPL_PRIMLAB, "histogram", "histogram_even_i32_bins19", "global_atomic"), 1 << 20, 1.0, 4);
    failed.ok = false;
    failed.median_us = None;
    failed.gbps = None;
    failed.error = Some("histogram/global_atomic 2^20: bin counts: first mismatch at index 3".into());
    records.push(failed);
    // The scan records carry tight samples: their miss is certain.
    for r in records.iter_mut().filter(|r| r.primitive == "scan") {
        let m = r.median_us.unwrap();
        *r = r.clone().with_samples(vec![m * 0.999, m, m * 1.001, m, m * 1.0005]);
    }
    let crossover = crossover::analyse(&records);
    let mut cub = BaselineRun::absent(IMPL_CUB, "x");
    cub.status = "ran".into();
    cub.reason = None;
    cub.records = 6;
    cub.meta =
        Some(serde_json::json!({"gpu": "NVIDIA H200", "nvcc": "13.0.88", "cccl_version": 3005000, "cccl": "3.5.0"}));
    cub.failed_records.push(FailedBaselineRecord {
        op: "cub_argmax_f32".into(),
        n: 1024,
        shape: None,
        error: "index 3 != 2".into(),
    });
    BenchDetails {
        schema: DETAILS_SCHEMA,
        quick: true,
        sizes_log2: vec![10, 20, 28],
        row_shapes: vec![[8192, 32000]],
        segment_lens: vec![1024],
        protocol: Protocol::new(true),
        timing: TIMING_TEXT.into(),
        inputs: vec![("int32".into(), "[-9, 9]".into())],
        records,
        skipped: vec![SkippedEntry {
            primitive: "reduce".into(),
            op: "reduce_sum_i32_i64".into(),
            variant: "serial".into(),
            size: "2^28".into(),
            reason: "n = 268435456 exceeds serial's max_len() = 4194304".into(),
        }],
        not_wired: vec![NotWired { primitive: "softmax".into(), reason: "not merged".into() }],
        baselines: vec![cub],
        targets: Vec::new(),
        crossover,
        crossover_absent: None,
        aborted: None,
        compile_seconds: 1.0,
        wall_seconds: 42.0,
        clocks: crate::bench::clocks::ClockLog {
            unavailable: None,
            throttle_field: "clocks_event_reasons.active".into(),
            samples: vec![crate::bench::clocks::parse_line("1755, 3201, 0x0000000000000004, 55, 650.2", 0.0).unwrap()],
        },
    }
}

#[test]
fn the_report_and_plots_render_from_a_receipt_without_a_gpu() {
    let dir = std::env::temp_dir().join(format!("primlab-report-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("ncu")).unwrap();
    std::fs::write(
        dir.join("ncu/scan_2p28.txt"),
        "  scan_decoupled_lookback_exclusive_i32 (65536, 1, 1)x(256, 1, 1), Context 1, Stream 7\n    DRAM Throughput   %   71.2\n",
    )
    .unwrap();
    let machine = MachineInfo {
        gpu: "NVIDIA H200".into(),
        compute_capability: "9.0".into(),
        sm_count: 132,
        ..Default::default()
    };
    let details = synthetic_details();
    let receipt = Receipt::new(
        "bench",
        machine,
        Tally { passed: 30, failed: 1, skipped: 1 },
        serde_json::to_value(&details).unwrap(),
    );
    let receipt_path = dir.join("bench.json");
    receipt.save(&receipt_path).unwrap();

    let files = write_report(&receipt_path, &dir.join("report")).unwrap();
    let md = std::fs::read_to_string(&files.markdown).unwrap();
    for plot in ["ceilings.png", "reduce.png", "scan.png", "float_reduce.png", "softmax.png"] {
        let path = dir.join("report").join(plot);
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(&bytes[1..4], b"PNG", "{plot} is not a PNG");
        assert!(bytes.len() > 10_000, "{plot} is nearly empty");
        assert!(md.contains(&format!("]({plot})")), "{plot} not linked");
    }
    // The report leads with the targets table, then the peers and the misses.
    let at = |heading: &str| md.find(heading).unwrap_or_else(|| panic!("no {heading} in {md}"));
    assert!(
        at("## Targets") < at("## Against the faster peer")
            && at("## Against the faster peer") < at("## Missed targets")
    );
    assert!(
        at("## Missed targets") < at("## Results by primitive")
            && at("## Results by primitive") < at("## Machine and clocks")
    );
    assert!(
        md.contains("| target | verdict | ratio | judged on | requirement | primlab (default entry) | reference |"),
        "{md}"
    );
    assert!(md.contains("| reduce, int32->int64, at 2^28 | met |"), "{md}");
    assert!(md.contains("| exclusive scan, int32->int64, at 2^28 | **MISSED** |"), "{md}");
    assert!(md.contains("| softmax f32 [8192, 32000] | within noise |"), "{md}");
    assert!(md.contains("noise unknown"), "{md}");
    // Clocks, and the noise of the tables.
    assert!(md.contains("Clocks during the run (1 samples"), "{md}");
    assert!(md.contains("**Clock-limiting reasons seen:** software power cap."), "{md}");
    assert!(md.contains(" ±"), "{md}");
    // The missed target links its ncu file by path and quotes none of it.
    assert!(md.contains("- Why: ncu evidence [`"), "{md}");
    assert!(md.contains("](../ncu/scan_2p28.txt) (2 lines)"), "{md}");
    assert!(!md.contains("DRAM Throughput") && !md.contains("```text"), "{md}");
    // The evidence files are listed, described by their first kernel line.
    assert!(
        md.contains("| [`scan_2p28.txt`](../ncu/scan_2p28.txt) | 2 | scan_decoupled_lookback_exclusive_i32"),
        "{md}"
    );
    // Every record is in the CSV beside the report, not in the Markdown.
    assert!(!md.contains("<details>"), "{md}");
    let csv = std::fs::read_to_string(&files.csv).unwrap();
    assert_eq!(csv.lines().count(), details.records.len() + 1, "a header and one row per record");
    assert!(md.contains("[`records.csv`](records.csv)"), "{md}");
    assert!(md.contains("Why the checked records stopped:"), "{md}");
    // Crossover, failures, skips, absences.
    assert!(md.contains("## Float atomic crossover study"));
    assert!(md.contains("Smallest size at which block aggregation wins (and keeps winning): 2^20"), "{md}");
    assert!(md.contains("FAILED primlab global_atomic"));
    assert!(md.contains("exceeds serial's max_len()"));
    assert!(md.contains("cub_argmax_f32 2^10 failed its own check"));
    assert!(md.contains("softmax: not benchmarked"));
    // The CCCL release the CUB baseline was built with.
    assert!(md.contains("nvcc 13.0.88, cccl 3.5.0"), "{md}");
    // A peer op with no entry of ours is no pair of the faster-peer table.
    let peers = &md[at("## Against the faster peer")..at("## Missed targets")];
    assert!(!peers.contains("exclusive_scan_i32 ") && !peers.contains("| exclusive_scan_i32 |"), "{peers}");
}

#[test]
fn a_non_bench_receipt_is_refused() {
    let dir = std::env::temp_dir().join(format!("primlab-report-kind-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("sweep.json");
    Receipt::new("sweep", MachineInfo::default(), Tally::default(), serde_json::json!({})).save(&path).unwrap();
    let err = write_report(&path, &dir.join("out")).unwrap_err();
    assert!(err.to_string().contains("not a bench receipt"));
}

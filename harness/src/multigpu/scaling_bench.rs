//! `harness bench --gpus N`: weak and strong scaling of the sharded reduce
//! and scan over 1, 2, 4, ... N GPUs.
//!
//! * **Weak**: 2^30 int32 per GPU (4 GiB in, plus 8 GiB of int64 scan
//!   output per GPU). Efficiency = t(1 GPU, 2^30) / t(g GPUs, 2^30 each).
//! * **Strong**: 2^32 int32 in all, split over g GPUs. The single-GPU
//!   kernels take 64-bit sizes (up to 2^40 - 512), so the 1-GPU reference runs the
//!   whole 2^32 (48 GiB with the scan's output); should a shard ever pass
//!   their `max_len`, the reference is measured at that length and said so;
//!   speedup = t_ref / t(g), efficiency = speedup / g.
//!
//! **Timed region** (per GPU, CUDA events on its stream): `[local]` the
//! single-GPU kernel (reduce: `reduce_single_pass_i32`; scan: the look-back
//! control memset, `scan_decoupled_lookback_exclusive_i32`, then
//! `mg_shard_total`), `[combine]` the NCCL collective (`ncclAllReduce` /
//! `ncclAllGather` of one int64 per GPU), `[offset]` the scan's offset pass
//! on GPUs >= 1. A host barrier lines the GPUs up before each iteration; an
//! iteration's time is the slowest GPU's; the median over iterations is
//! reported. `combine` in the pipeline includes waiting for the slowest
//! peer, so the collective is also timed alone (after a barrier, nothing
//! else queued). Inputs are made on the device (`mg_fill_small_ints`,
//! values in [-9, 9]) and checked: every GPU's reduce total, and the scan at
//! the first, middle and last element of every shard, against the same
//! values summed on the host.

use super::cluster::{Cluster, RankEnv};
use super::helper_kernels::bench_value;
use super::nccl;
use super::shard::{partition, Shard, ShardError, ValueRange};
use super::sharded_reduce::ReduceRank;
use super::sharded_scan::ScanRank;
use super::topology::{resolve_on_this_machine, scaling_steps, GpuCount};
use crate::bench::BenchOptions;
use crate::receipts::{receipt_path, receipts_dir, Coverage, MachineInfo, Receipt, Tally};
use anyhow::{anyhow, Result};
use cudarc::driver::{sys::CUevent_flags, CudaEvent};
use rayon::prelude::*;
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

/// Elements per GPU of the weak-scaling runs.
pub const WEAK_PER_GPU: u64 = 1 << 30;
/// Elements in all of the strong-scaling runs.
pub const STRONG_TOTAL: u64 = 1 << 32;
/// The values the benchmark input holds ([-9, 9]): what bounds its int64 sums.
pub const BENCH_VALUES: ValueRange = ValueRange { min: -9, max: 9 };
/// Target of the issue: weak-scaling efficiency at 2, 4 and 8 GPUs.
pub const TARGET_WEAK_EFFICIENCY: f64 = 0.90;
/// Target of the issue: the combining step as a fraction of the 1-GPU time.
pub const TARGET_COMBINE_FRACTION: f64 = 0.10;
/// Device memory each GPU keeps free beyond what a run allocates.
const MEMORY_MARGIN: usize = 1 << 30;
/// Seed of the benchmark input.
const SEED: u64 = 0x5ca1_ab1e;

/// The receipt's file name under `receipts/`.
pub const RECEIPT_FILE: &str = "multigpu-bench.json";

/// What one configuration measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Workload {
    /// 2^30 per GPU.
    Weak,
    /// 2^32 in all.
    Strong,
}

/// Median milliseconds of one primitive in one configuration (per
/// iteration, the slowest GPU's).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Timing {
    /// Local + combine + offset.
    pub total_ms: f64,
    /// The single-GPU kernel(s).
    pub local_ms: f64,
    /// The NCCL collective in the pipeline (includes waiting for peers).
    pub combine_ms: f64,
    /// The offset pass (scan; 0 for reduce).
    pub offset_ms: f64,
    /// The NCCL collective alone.
    pub combine_alone_ms: f64,
    /// The offset pass alone (scan; run on every GPU, GPU 0 included, adding
    /// 0 there): what a GPU >= 1 pays on top of the local scan.
    pub offset_alone_ms: f64,
    /// Each GPU's median total, in rank order.
    pub per_gpu_total_ms: Vec<f64>,
}

/// One configuration's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct ConfigResult {
    /// Weak or strong.
    pub workload: Workload,
    /// GPUs.
    pub gpus: usize,
    /// Elements in all.
    pub n: u64,
    /// Elements per GPU (rank order).
    pub per_gpu: Vec<u64>,
    /// Reduce timing (None when skipped).
    pub reduce: Option<Timing>,
    /// Scan timing.
    pub scan: Option<Timing>,
    /// Whether every checked value matched.
    pub verified: Option<bool>,
    /// Mismatches, skips and substitutions, in words.
    pub notes: Vec<String>,
}

/// The host's view of the benchmark input: prefix sums of
/// [`bench_value`] over blocks of 2^20, to answer any prefix quickly.
struct PrefixOracle {
    block_prefix: Vec<i64>,
}

const ORACLE_BLOCK: u64 = 1 << 20;

impl PrefixOracle {
    fn new(n: u64) -> PrefixOracle {
        let blocks = n.div_ceil(ORACLE_BLOCK);
        let sums: Vec<i64> = (0..blocks)
            .into_par_iter()
            .map(|b| (b * ORACLE_BLOCK..((b + 1) * ORACLE_BLOCK).min(n)).map(|i| bench_value(SEED, i) as i64).sum())
            .collect();
        let mut block_prefix = Vec::with_capacity(sums.len() + 1);
        let mut running = 0i64;
        block_prefix.push(0);
        for s in sums {
            running += s;
            block_prefix.push(running);
        }
        PrefixOracle { block_prefix }
    }

    /// `x[0] + ... + x[i-1]`.
    fn prefix(&self, i: u64) -> i64 {
        let b = i / ORACLE_BLOCK;
        self.block_prefix[b as usize] + (b * ORACLE_BLOCK..i).map(|j| bench_value(SEED, j) as i64).sum::<i64>()
    }
}

/// What one rank measured.
struct RankBench {
    shard: Shard,
    reduce: Vec<[f64; 4]>,
    reduce_alone: Vec<f64>,
    scan: Vec<[f64; 4]>,
    scan_alone: Vec<f64>,
    offset_alone: Vec<f64>,
    reduce_total: i64,
    scan_samples: Vec<(u64, i64)>,
    gathered: Vec<i64>,
}

fn timing_event(env: &RankEnv) -> Result<CudaEvent> {
    Ok(env.gpu.context().new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?)
}

fn ms(a: &CudaEvent, b: &CudaEvent) -> Result<f64> {
    Ok(a.elapsed_ms(b)? as f64)
}

/// Device bytes one rank allocates for an m-element shard.
pub fn rank_bytes(m: usize, world: usize, sm_count: usize) -> usize {
    4 * m + 8 * m + ScanRank::scratch_bytes(m, world) + ReduceRank::scratch_bytes(sm_count)
}

fn bench_rank(env: &RankEnv, shard: Shard, warmup: usize, iterations: usize) -> Result<RankBench> {
    let m = shard.len;
    let setup = (|| -> Result<_> {
        if m == 0 {
            return Err(anyhow!("the benchmark needs a non-empty shard on every GPU"));
        }
        let need = rank_bytes(m, env.world, env.gpu.info().sm_count.max(1) as usize);
        let (free, _) = env.gpu.context().mem_get_info()?;
        if need + MEMORY_MARGIN > free {
            return Err(anyhow!(
                "a {m}-element shard needs {:.1} GiB (4 B input + 8 B scan output per element + scratch) \
                 and {:.1} GiB is free",
                need as f64 / (1u64 << 30) as f64,
                free as f64 / (1u64 << 30) as f64
            ));
        }
        let mut input = env.gpu.alloc_uninit::<i32>(m)?;
        env.helpers.fill_small_ints(&env.gpu, &mut input, shard.start as u64, SEED)?;
        let out = env.gpu.alloc_poisoned::<i64>(m)?;
        let reduce = ReduceRank::new(env, m)?;
        let scan = ScanRank::new(env, m)?;
        env.wait("filling the benchmark input")?;
        Ok((input, out, reduce, scan))
    })();
    let (input, mut out, mut reduce, mut scan) = env.agree_on(setup)?;
    let events = [timing_event(env)?, timing_event(env)?, timing_event(env)?, timing_event(env)?];
    let stream = env.gpu.stream().clone();

    let mut reduce_times = Vec::new();
    for it in 0..warmup + iterations {
        env.barrier()?;
        events[0].record(&stream)?;
        reduce.enqueue_local(env, Some(&input))?;
        events[1].record(&stream)?;
        reduce.enqueue_combine(env)?;
        events[2].record(&stream)?;
        events[3].record(&stream)?;
        env.wait("timed sharded reduce")?;
        if it >= warmup {
            reduce_times.push(times(&events)?);
        }
    }
    reduce.check_fault()?;
    let reduce_total = env.gpu.download(&reduce.total)?[0];
    let reduce_alone = combine_alone(env, iterations, &events, |env| reduce.enqueue_combine(env))?;

    let mut scan_times = Vec::new();
    for it in 0..warmup + iterations {
        env.barrier()?;
        events[0].record(&stream)?;
        scan.enqueue_local(env, Some(&input), Some(&mut out))?;
        events[1].record(&stream)?;
        scan.enqueue_combine(env)?;
        events[2].record(&stream)?;
        scan.enqueue_offset(env, Some(&mut out))?;
        events[3].record(&stream)?;
        env.wait("timed sharded scan")?;
        if it >= warmup {
            scan_times.push(times(&events)?);
        }
    }
    scan.check_fault()?;
    let mut scan_samples = Vec::new();
    for j in [0, m / 2, m - 1] {
        let value = stream.clone_dtoh(&out.slice(j..j + 1))?[0];
        scan_samples.push(((shard.start + j) as u64, value));
    }
    let gathered = env.gpu.download(&scan.gathered)?;
    let scan_alone = combine_alone(env, iterations, &events, |env| scan.enqueue_combine(env))?;
    // The offset pass alone, on every GPU: with rank 0 it adds the empty sum
    // (the values stay right) but streams the same 16 B per element.
    let mut offset_alone = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        env.barrier()?;
        events[0].record(&stream)?;
        env.helpers.add_offset(&env.gpu, &mut out, &scan.gathered, 0)?;
        events[1].record(&stream)?;
        env.wait("timed offset pass")?;
        offset_alone.push(ms(&events[0], &events[1])?);
    }
    Ok(RankBench {
        shard,
        reduce: reduce_times,
        reduce_alone,
        scan: scan_times,
        scan_alone,
        offset_alone,
        reduce_total,
        scan_samples,
        gathered,
    })
}

/// [local, combine, offset, total] of one iteration.
fn times(e: &[CudaEvent; 4]) -> Result<[f64; 4]> {
    Ok([ms(&e[0], &e[1])?, ms(&e[1], &e[2])?, ms(&e[2], &e[3])?, ms(&e[0], &e[3])?])
}

/// The collective alone: barrier, events around it, wait.
fn combine_alone(
    env: &RankEnv,
    iterations: usize,
    events: &[CudaEvent; 4],
    mut combine: impl FnMut(&RankEnv) -> Result<()>,
) -> Result<Vec<f64>> {
    let stream = env.gpu.stream().clone();
    let mut out = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        env.barrier()?;
        events[0].record(&stream)?;
        combine(env)?;
        events[1].record(&stream)?;
        env.wait("timed collective")?;
        out.push(ms(&events[0], &events[1])?);
    }
    Ok(out)
}

fn median(mut values: Vec<f64>) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(|a, b| a.total_cmp(b));
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}

/// Medians over iterations of the slowest rank's time per iteration.
fn summarise(per_rank: &[&Vec<[f64; 4]>], alone: &[&Vec<f64>], offset_alone: &[&Vec<f64>]) -> Timing {
    let iterations = per_rank.iter().map(|r| r.len()).min().unwrap_or(0);
    let slowest = |part: usize| {
        median((0..iterations).map(|i| per_rank.iter().map(|r| r[i][part]).fold(0.0, f64::max)).collect())
    };
    let slowest_alone = |runs: &[&Vec<f64>]| {
        let iterations = runs.iter().map(|r| r.len()).min().unwrap_or(0);
        if iterations == 0 {
            return 0.0;
        }
        median((0..iterations).map(|i| runs.iter().map(|r| r[i]).fold(0.0, f64::max)).collect())
    };
    Timing {
        local_ms: slowest(0),
        combine_ms: slowest(1),
        offset_ms: slowest(2),
        total_ms: slowest(3),
        combine_alone_ms: slowest_alone(alone),
        offset_alone_ms: slowest_alone(offset_alone),
        per_gpu_total_ms: per_rank.iter().map(|r| median(r.iter().map(|t| t[3]).collect())).collect(),
    }
}

fn verify(oracle: &PrefixOracle, n: u64, ranks: &[RankBench], notes: &mut Vec<String>) -> bool {
    let mut ok = true;
    let sum = oracle.prefix(n);
    let totals: Vec<i64> = ranks
        .iter()
        .map(|s| oracle.prefix(s.shard.start as u64 + s.shard.len as u64) - oracle.prefix(s.shard.start as u64))
        .collect();
    for (r, rank) in ranks.iter().enumerate() {
        if rank.reduce_total != sum {
            notes.push(format!("MISMATCH reduce: GPU {r} total {} expected {sum}", rank.reduce_total));
            ok = false;
        }
        for &(index, got) in &rank.scan_samples {
            let expected = oracle.prefix(index);
            if got != expected {
                notes.push(format!("MISMATCH scan: GPU {r} index {index}: got {got} expected {expected}"));
                ok = false;
            }
        }
        if rank.gathered != totals {
            notes.push(format!("MISMATCH scan: GPU {r} gathered {:?} expected {totals:?}", rank.gathered));
            ok = false;
        }
    }
    ok
}

/// Warm-up and timed iterations of every measurement.
#[derive(Debug, Clone, Copy)]
struct Iterations {
    warmup: usize,
    timed: usize,
}

fn measure(
    cluster: &Cluster,
    workload: Workload,
    n: u64,
    shards: Vec<Shard>,
    oracle: &PrefixOracle,
    iterations: Iterations,
    mut notes: Vec<String>,
) -> ConfigResult {
    let g = cluster.world();
    let per_gpu: Vec<u64> = shards.iter().map(|s| s.len as u64).collect();
    let mut result =
        ConfigResult { workload, gpus: g, n, per_gpu, reduce: None, scan: None, verified: None, notes: Vec::new() };
    let too_big: Vec<String> = cluster
        .devices()
        .iter()
        .zip(&shards)
        .filter(|(d, s)| rank_bytes(s.len, g, d.sm_count.max(1) as usize) + MEMORY_MARGIN > d.memory_bytes as usize)
        .map(|(d, s)| {
            format!(
                "GPU {}: a {}-element shard needs {:.1} GiB, the GPU has {:.1} GiB",
                d.ordinal,
                s.len,
                rank_bytes(s.len, g, d.sm_count.max(1) as usize) as f64 / (1u64 << 30) as f64,
                d.memory_bytes as f64 / (1u64 << 30) as f64
            )
        })
        .collect();
    if !too_big.is_empty() {
        notes.push(format!("skipped: does not fit: {}", too_big.join("; ")));
        result.notes = notes;
        return result;
    }
    let shards = Arc::new(shards);
    let outcome = cluster.run(move |env| bench_rank(env, shards[env.rank], iterations.warmup, iterations.timed));
    match outcome {
        Ok(ranks) => {
            result.reduce = Some(summarise(
                &ranks.iter().map(|r| &r.reduce).collect::<Vec<_>>(),
                &ranks.iter().map(|r| &r.reduce_alone).collect::<Vec<_>>(),
                &[],
            ));
            result.scan = Some(summarise(
                &ranks.iter().map(|r| &r.scan).collect::<Vec<_>>(),
                &ranks.iter().map(|r| &r.scan_alone).collect::<Vec<_>>(),
                &ranks.iter().map(|r| &r.offset_alone).collect::<Vec<_>>(),
            ));
            result.verified = Some(verify(oracle, n, &ranks, &mut notes));
        }
        Err(e) => match e.downcast_ref::<super::cluster::AgreedFailure>() {
            Some(a) => notes.push(format!("skipped: {a}")),
            None => {
                notes.push(format!("FAILED: {e:#}"));
                result.verified = Some(false);
            }
        },
    }
    result.notes = notes;
    result
}

/// Runs the scaling benchmark on `asked` GPUs; writes
/// `receipts/multigpu-bench.json`. Ok(false) if a result was wrong.
pub fn run(args: &BenchOptions, asked: GpuCount) -> Result<ScalingOutcome> {
    let env_notes = nccl::enforce_no_multicast_env();
    let k = resolve_on_this_machine(asked)?;
    let nccl_info = nccl::probe()?;
    let (warmup, iterations) = if args.quick { (2, 5) } else { (3, 20) };
    // A --quick run is partial: it never writes the gated receipt (receipts::receipt_path).
    let coverage = Coverage::from_reasons(if args.quick { vec!["--quick".to_string()] } else { vec![] });
    let path = receipt_path(args.receipt.as_deref(), &receipts_dir(), RECEIPT_FILE, &coverage)?;
    let started = Instant::now();
    for note in &env_notes {
        println!("bench: {note}");
    }
    println!(
        "bench --gpus {asked}: weak (2^30 int32 per GPU) and strong (2^32 in all) scaling of the sharded reduce and \
         scan over {:?} GPU(s); NCCL {} ({}); {iterations} timed iterations after {warmup} warm-up",
        scaling_steps(k),
        nccl_info.version,
        nccl_info.library.as_deref().unwrap_or("library path unknown")
    );
    let oracle_n = STRONG_TOTAL.max(WEAK_PER_GPU * k as u64);
    let oracle_started = Instant::now();
    let oracle = PrefixOracle::new(oracle_n);
    println!("bench: host reference sums of {oracle_n} values in {:.1} s", oracle_started.elapsed().as_secs_f64());

    let mut configs = Vec::new();
    let mut machine = MachineInfo::default();
    let mut devices = Vec::new();
    for g in scaling_steps(k) {
        let cluster = match Cluster::start(g, 0) {
            Ok(c) => c,
            Err(e) => {
                println!("bench: starting {g} GPU(s) failed: {e:#}");
                for workload in [Workload::Weak, Workload::Strong] {
                    configs.push(ConfigResult {
                        workload,
                        gpus: g,
                        n: 0,
                        per_gpu: vec![],
                        reduce: None,
                        scan: None,
                        verified: Some(false),
                        notes: vec![format!("FAILED: starting {g} GPU(s): {e:#}")],
                    });
                }
                continue;
            }
        };
        // The receipt names GPU 0 and every GPU of the largest cluster.
        machine = cluster.machine().clone();
        devices = cluster.devices().to_vec();
        for workload in [Workload::Weak, Workload::Strong] {
            let mut notes = Vec::new();
            let n = match workload {
                Workload::Weak => WEAK_PER_GPU * g as u64,
                Workload::Strong => STRONG_TOTAL,
            };
            let (n, shards) = match partition(n, g, BENCH_VALUES) {
                Ok(s) => (n, s),
                Err(e @ ShardError::ShardTooLong { .. }) if g == 1 => {
                    let reference = super::shard::max_shard_len() as u64;
                    notes.push(format!(
                        "1-GPU strong reference measured at n = {reference} (the single-GPU kernels' max_len) instead of {n}: {e}"
                    ));
                    match partition(reference, 1, BENCH_VALUES) {
                        Ok(s) => (reference, s),
                        Err(e) => return Err(anyhow!("{e}")),
                    }
                }
                Err(e) => {
                    notes.push(format!("skipped: {e}"));
                    configs.push(ConfigResult {
                        workload,
                        gpus: g,
                        n,
                        per_gpu: vec![],
                        reduce: None,
                        scan: None,
                        verified: None,
                        notes,
                    });
                    continue;
                }
            };
            println!("bench: {workload:?} scaling, {g} GPU(s), n = {n} ...");
            let result =
                measure(&cluster, workload, n, shards, &oracle, Iterations { warmup, timed: iterations }, notes);
            for note in &result.notes {
                println!("bench:   {note}");
            }
            configs.push(result);
        }
    }

    let analysis = analyse(&configs);
    let tally = Tally {
        passed: configs.iter().filter(|c| c.verified == Some(true)).count() as u64,
        failed: configs.iter().filter(|c| c.verified == Some(false)).count() as u64,
        skipped: configs.iter().filter(|c| c.verified.is_none()).count() as u64,
    };
    let details = serde_json::json!({
        "gpus": k,
        "devices": devices,
        "nccl": nccl_info,
        "no_multicast_env": nccl::NO_MULTICAST_ENV.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>(),
        "weak_per_gpu": WEAK_PER_GPU,
        "strong_total": STRONG_TOTAL,
        "values": "mg_fill_small_ints: mix64(seed ^ index) % 19 - 9, in [-9, 9]",
        "seed": format!("{SEED:#x}"),
        "warmup": warmup,
        "iterations": iterations,
        "reduce": format!("ReducePlan {} + ncclAllReduce(sum, int64)", super::sharded_reduce::VARIANT.name()),
        "scan": format!(
            "ScanPlan {} exclusive + mg_shard_total, ncclAllGather(int64), mg_add_offset on GPUs >= 1",
            super::sharded_scan::VARIANT.name()
        ),
        "timed_region": "per GPU, CUDA events on its stream: [local] single-GPU kernel(s), [combine] the NCCL \
            collective, [offset] the scan's offset pass; host barrier before each iteration; an iteration's time is \
            the slowest GPU's; medians over iterations. combine_alone: the collective alone after a barrier.",
        "logical_bytes": "reduce 4n, scan 12n (the offset pass's 16 B per element on GPUs >= 1 not counted)",
        "configs": configs,
        "analysis": analysis,
        "seconds": started.elapsed().as_secs_f64(),
    });
    Receipt::new("multigpu-bench", machine, tally, details).with_coverage(&coverage).save(&path)?;
    println!(
        "bench: {} verified, {} failed, {} skipped in {:.1} s; receipt {}",
        tally.passed,
        tally.failed,
        tally.skipped,
        started.elapsed().as_secs_f64(),
        path.display()
    );
    Ok(ScalingOutcome { passed: tally.failed == 0, configs, analysis })
}

/// What a finished scaling study leaves for the layers above (the command
/// prints its table, `scaling_report.rs`).
#[derive(Debug, Clone)]
pub struct ScalingOutcome {
    /// Every checked value matched.
    pub passed: bool,
    /// Each configuration's results.
    pub configs: Vec<ConfigResult>,
    /// The numbers derived from them.
    pub analysis: Vec<Derived>,
}

/// Derived numbers of one (workload, primitive, GPUs).
#[derive(Debug, Clone, Serialize)]
pub struct Derived {
    /// Weak or strong.
    pub workload: Workload,
    /// "reduce" or "scan".
    pub primitive: &'static str,
    /// GPUs.
    pub gpus: usize,
    /// Weak: t(1)/t(g); strong: t_ref/(g t(g)).
    pub efficiency: Option<f64>,
    /// Strong: t_ref / t(g).
    pub speedup: Option<f64>,
    /// The combine in the pipeline over the 1-GPU time (same workload).
    pub combine_fraction: Option<f64>,
    /// The combine alone over the 1-GPU time.
    pub combine_alone_fraction: Option<f64>,
    /// The offset pass over the 1-GPU time (scan).
    pub offset_fraction: Option<f64>,
    /// Per GPU: logical GB/s (reduce 4 B, scan 12 B per element of the largest shard).
    pub gbps_per_gpu: Option<f64>,
    /// On one GPU (weak, g = 1): t(1) / (local + collective alone + offset
    /// pass alone), the efficiency a GPU >= 1 would reach if the collective
    /// cost what it costs here: a projection, not a multi-GPU measurement.
    pub projected_efficiency: Option<f64>,
    /// "meets" / "misses" the weak-efficiency target (weak, g >= 2).
    pub weak_target: Option<&'static str>,
    /// "meets" / "misses" the combine target (weak, g >= 2).
    pub combine_target: Option<&'static str>,
}

pub fn analyse(configs: &[ConfigResult]) -> Vec<Derived> {
    let mut out = Vec::new();
    for workload in [Workload::Weak, Workload::Strong] {
        for primitive in ["reduce", "scan"] {
            let timing = |c: &ConfigResult| if primitive == "reduce" { c.reduce.clone() } else { c.scan.clone() };
            let base = configs.iter().find(|c| c.workload == workload && c.gpus == 1).and_then(&timing);
            for c in configs.iter().filter(|c| c.workload == workload) {
                let Some(t) = timing(c) else { continue };
                let base_ms = base.as_ref().map(|b| b.total_ms);
                let ratio = |x: f64| base_ms.map(|b| x / b);
                let (efficiency, speedup) = match (workload, base_ms) {
                    (Workload::Weak, Some(b)) => (Some(b / t.total_ms), None),
                    (Workload::Strong, Some(b)) => (Some(b / t.total_ms / c.gpus as f64), Some(b / t.total_ms)),
                    _ => (None, None),
                };
                let largest = c.per_gpu.iter().copied().max().unwrap_or(0) as f64;
                let bytes = if primitive == "reduce" { 4.0 } else { 12.0 } * largest;
                let combine_fraction = ratio(t.combine_ms);
                let judged = workload == Workload::Weak && c.gpus >= 2;
                let mark = |ok: bool| if ok { "meets" } else { "misses" };
                out.push(Derived {
                    workload,
                    primitive,
                    gpus: c.gpus,
                    efficiency,
                    speedup,
                    combine_fraction,
                    combine_alone_fraction: ratio(t.combine_alone_ms),
                    offset_fraction: if primitive == "scan" { ratio(t.offset_ms) } else { None },
                    gbps_per_gpu: Some(bytes / (t.total_ms * 1e-3) / 1e9),
                    projected_efficiency: (workload == Workload::Weak && c.gpus == 1)
                        .then(|| t.total_ms / (t.local_ms + t.combine_alone_ms + t.offset_alone_ms)),
                    weak_target: efficiency.filter(|_| judged).map(|e| mark(e >= TARGET_WEAK_EFFICIENCY)),
                    combine_target: combine_fraction.filter(|_| judged).map(|f| mark(f <= TARGET_COMBINE_FRACTION)),
                });
            }
        }
    }
    out
}

#[cfg(test)]
#[path = "scaling_bench_tests.rs"]
mod tests;

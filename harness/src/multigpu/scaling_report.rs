//! The results of `harness bench --gpus N` (one [`ConfigResult`] per
//! configuration, measured by `scaling_bench.rs`), the numbers derived from
//! them and the printed table: weak-scaling efficiency, strong-scaling
//! speedup, the combine and offset shares of the 1-GPU time, and whether the
//! targets are met. It reads results; it measures nothing.

use crate::table::Table;
use serde::Serialize;

/// Target of the issue: weak-scaling efficiency at 2, 4 and 8 GPUs.
pub const TARGET_WEAK_EFFICIENCY: f64 = 0.90;
/// Target of the issue: the combining step as a fraction of the 1-GPU time.
pub const TARGET_COMBINE_FRACTION: f64 = 0.10;

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

fn pct(x: Option<f64>) -> String {
    x.map(|v| format!("{:.1}%", 100.0 * v)).unwrap_or_else(|| "-".into())
}

pub fn print_report(configs: &[ConfigResult], analysis: &[Derived]) {
    let mut table = Table::new([
        "workload",
        "primitive",
        "GPUs",
        "n",
        "per GPU",
        "total ms",
        "local ms",
        "combine ms",
        "alone ms",
        "offset ms",
        "offset alone",
        "GB/s/GPU",
        "efficiency",
        "combine/t1",
        "offset/t1",
        "verified",
    ]);
    for c in configs {
        for (primitive, timing) in [("reduce", &c.reduce), ("scan", &c.scan)] {
            let d = analysis.iter().find(|d| d.workload == c.workload && d.primitive == primitive && d.gpus == c.gpus);
            let per_gpu = c.per_gpu.iter().copied().max().map(|m| m.to_string()).unwrap_or_else(|| "-".into());
            match timing {
                Some(t) => table.row([
                    format!("{:?}", c.workload).to_lowercase(),
                    primitive.to_string(),
                    c.gpus.to_string(),
                    c.n.to_string(),
                    per_gpu,
                    format!("{:.3}", t.total_ms),
                    format!("{:.3}", t.local_ms),
                    format!("{:.3}", t.combine_ms),
                    format!("{:.3}", t.combine_alone_ms),
                    format!("{:.3}", t.offset_ms),
                    format!("{:.3}", t.offset_alone_ms),
                    d.and_then(|d| d.gbps_per_gpu).map(|v| format!("{v:.0}")).unwrap_or_else(|| "-".into()),
                    pct(d.and_then(|d| d.efficiency)),
                    pct(d.and_then(|d| d.combine_fraction)),
                    pct(d.and_then(|d| d.offset_fraction)),
                    match c.verified {
                        Some(true) => "yes".to_string(),
                        Some(false) => "NO".to_string(),
                        None => "-".to_string(),
                    },
                ]),
                None => table.row([
                    format!("{:?}", c.workload).to_lowercase(),
                    primitive.to_string(),
                    c.gpus.to_string(),
                    c.n.to_string(),
                    per_gpu,
                    "skipped".to_string(),
                ]),
            }
        }
    }
    println!("\nmulti-GPU scaling (medians; an iteration's time is the slowest GPU's)\n{}", table.render());
    for d in analysis.iter().filter(|d| d.projected_efficiency.is_some()) {
        println!(
            "projection from 1 GPU, {}: a GPU >= 1 runs local + collective + {} = {} of the 1-GPU time              (weak efficiency about {} if the collective costs there what it costs here)",
            d.primitive,
            if d.primitive == "scan" { "offset pass" } else { "nothing more" },
            pct(d.projected_efficiency.map(|e| 1.0 / e)),
            pct(d.projected_efficiency)
        );
    }
    let judged: Vec<&Derived> = analysis.iter().filter(|d| d.weak_target.is_some()).collect();
    if judged.is_empty() {
        println!(
            "targets (weak efficiency >= {:.0}% and combine <= {:.0}% of the 1-GPU time, at 2, 4 and 8 GPUs): \
             not judged with one GPU",
            100.0 * TARGET_WEAK_EFFICIENCY,
            100.0 * TARGET_COMBINE_FRACTION
        );
    }
    for d in judged {
        println!(
            "target {} {} GPUs: weak efficiency {} ({}), combine {} of t(1 GPU) ({})",
            d.primitive,
            d.gpus,
            pct(d.efficiency),
            d.weak_target.unwrap_or("-"),
            pct(d.combine_fraction),
            d.combine_target.unwrap_or("-")
        );
    }
}

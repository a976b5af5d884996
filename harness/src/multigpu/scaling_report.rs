//! The printed table of `harness bench --gpus N`: each configuration's
//! times beside the numbers derived from them (weak-scaling efficiency,
//! strong-scaling speedup, the combine and offset shares of the 1-GPU time,
//! and whether the targets are met; `scaling_bench.rs` derives them, as the
//! receipt holds them). It reads results; it measures and derives nothing.

use super::scaling_bench::{ConfigResult, Derived, TARGET_COMBINE_FRACTION, TARGET_WEAK_EFFICIENCY};
use crate::table::Table;

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

fn pct(x: Option<f64>) -> String {
    x.map(|v| format!("{:.1}%", 100.0 * v)).unwrap_or_else(|| "-".into())
}

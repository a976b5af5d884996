//! The report's second lead: primlab's default entry against the faster of
//! CUB and PyTorch at every (op, size or shape) both were timed at, judged as
//! the targets are ([`super::targets`]): the ratio of medians (peer / ours:
//! above 1, primlab is faster), its bootstrap 95 % interval widened by the
//! run's program margin, and "ahead", "behind" or "within noise" as that
//! interval lies above 1, below it, or across it.

use super::entries::DEFAULT_VARIANT;
use super::record::us;
use super::record::{BenchRecord, BenchSize, TimingMode, IMPL_CUB, IMPL_PRIMLAB, IMPL_TORCH};
use super::stats::{ratio_interval, side, Interval, Side};
use super::targets::{fastest, program_margin, ProgramMargin};
use crate::table::Table;
use std::fmt::Write as _;

/// One (op, size) where primlab's default entry and a peer were both timed.
#[derive(Debug, Clone, PartialEq)]
pub struct PeerComparison {
    /// Shared op name.
    pub op: String,
    /// Size or shape.
    pub size: BenchSize,
    /// The schedule the default entry ran (`params.picked`), if recorded.
    pub picked: Option<String>,
    /// primlab's median, microseconds.
    pub ours_us: f64,
    /// The faster peer (`cub` or `torch`) and its median.
    pub peer: String,
    /// The peer's median, microseconds.
    pub peer_us: f64,
    /// `peer_us / ours_us`.
    pub ratio: f64,
    /// The interval the side is judged on: the bootstrap interval of the
    /// ratio, widened by `margin` (None: no samples).
    pub interval: Option<Interval>,
    /// The run's program margin at this size, if both programs timed the copy.
    pub margin: Option<ProgramMargin>,
    /// Ahead (above 1), behind (below 1) or within noise.
    pub side: Side,
}

/// Every comparison of `records`, in record order.
pub fn comparisons(records: &[BenchRecord]) -> Vec<PeerComparison> {
    records
        .iter()
        .filter(|r| {
            r.implementation == IMPL_PRIMLAB
                && r.variant == DEFAULT_VARIANT
                && r.timing_mode == TimingMode::Cold
                && r.timed_median().is_some()
        })
        .filter_map(|ours| {
            let size = ours.size();
            let peer =
                [IMPL_CUB, IMPL_TORCH].iter().filter_map(|p| fastest(records, p, &ours.op, size)).min_by(|a, b| {
                    a.timed_median().unwrap_or(f64::INFINITY).total_cmp(&b.timed_median().unwrap_or(f64::INFINITY))
                })?;
            let (ours_us, peer_us) = (ours.timed_median()?, peer.timed_median()?);
            let ratio = peer_us / ours_us;
            let margin = program_margin(records, size);
            let interval = ratio_interval(&peer.samples_us, &ours.samples_us).map(|i| margin.map_or(i, |m| m.widen(i)));
            Some(PeerComparison {
                op: ours.op.clone(),
                size,
                picked: ours.params.get("picked").and_then(|v| v.as_str()).map(str::to_string),
                ours_us,
                peer: peer.implementation.clone(),
                peer_us,
                ratio,
                interval,
                margin,
                side: side(ratio, interval, 1.0).0,
            })
        })
        .collect()
}

fn side_word(s: Side) -> &'static str {
    match s {
        Side::Above => "ahead",
        Side::Below => "**behind**",
        Side::WithinNoise => "within noise",
    }
}

/// The section: counts, then every pair not clearly ahead.
pub fn peers_section(md: &mut String, records: &[BenchRecord]) {
    let all = comparisons(records);
    let _ = writeln!(md, "## Against the faster peer at every size\n");
    if all.is_empty() {
        let _ = writeln!(md, "No (op, size) has both a default-entry record and a CUB or PyTorch record.\n");
        return;
    }
    let count = |s: Side| all.iter().filter(|c| c.side == s).count();
    let _ = writeln!(
        md,
        "primlab's default entry against the faster of CUB and PyTorch at each of the {} (op, size or shape) pairs \
         both timed: {} ahead, {} behind, {} within noise. Ratio = peer median / primlab median (above 1: primlab \
         is faster); judged on its 95 % interval widened by the run's program margin, as the targets are. The \
         pairs not clearly ahead:\n",
        all.len(),
        count(Side::Above),
        count(Side::Below),
        count(Side::WithinNoise)
    );
    let mut t =
        Table::new(["op", "size", "side", "ratio", "judged on (program margin)", "primlab (default entry)", "peer"]);
    for c in all.iter().filter(|c| c.side != Side::Above) {
        let judged = match (c.interval, c.margin) {
            (Some(i), Some(m)) => format!("{:.2}-{:.2}x ({:.1} %)", i.low, i.high, m.percent()),
            (Some(i), None) => format!("{:.2}-{:.2}x", i.low, i.high),
            (None, _) => "noise unknown".into(),
        };
        let picked = c.picked.as_deref().map(|p| format!(" ({p})")).unwrap_or_default();
        t.row([
            c.op.clone(),
            c.size.label(),
            side_word(c.side).to_string(),
            format!("{:.2}x", c.ratio),
            judged,
            format!("{}{picked}", us(c.ours_us)),
            format!("{} {}", c.peer, us(c.peer_us)),
        ]);
    }
    let _ = writeln!(md, "{}", t.render_markdown());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::entries::ceilings::COPY_OP;
    use crate::bench::record::IMPL_CEILING;

    fn record(implementation: &str, op: &str, variant: &str, n: usize, centre: f64, width: f64) -> BenchRecord {
        let samples = (0..41).map(|i| centre - width + 2.0 * width * i as f64 / 40.0).collect();
        BenchRecord { iters: 41, ..BenchRecord::synthetic(implementation, "x", op, variant, n, centre, 4 * n as u64) }
            .with_samples(samples)
    }

    #[test]
    fn each_default_entry_meets_its_faster_peer_and_is_sided_by_the_widened_interval() {
        let n = 1 << 20;
        let records = vec![
            record(IMPL_PRIMLAB, "a", DEFAULT_VARIANT, n, 10.0, 0.01),
            record(IMPL_CUB, "a", "cub_a", n, 12.0, 0.01),
            record(IMPL_TORCH, "a", "torch_a", n, 11.0, 0.01),
            record(IMPL_PRIMLAB, "b", DEFAULT_VARIANT, n, 10.0, 0.01),
            record(IMPL_CUB, "b", "cub_b", n, 9.5, 0.01),
            // A named variant is no default entry; an op with no peer is left out.
            record(IMPL_PRIMLAB, "b", "fast", n, 1.0, 0.01),
            record(IMPL_PRIMLAB, "c", DEFAULT_VARIANT, n, 10.0, 0.01),
        ];
        let all = comparisons(&records);
        assert_eq!(all.len(), 2);
        assert_eq!((all[0].peer.as_str(), all[0].side), ("torch", Side::Above));
        assert!((all[0].ratio - 1.1).abs() < 1e-9);
        assert_eq!((all[1].peer.as_str(), all[1].side), ("cub", Side::Below));
        // A 6 % copy disagreement between the programs puts 0.95x within noise, and leaves 1.1x ahead.
        let mut widened = records.clone();
        widened.push(record(IMPL_CEILING, COPY_OP, COPY_OP, n, 10.6, 0.01));
        widened.push(record(IMPL_CUB, COPY_OP, COPY_OP, n, 10.0, 0.01));
        let all = comparisons(&widened);
        assert_eq!(all[1].side, Side::WithinNoise, "{:?}", all[1]);
        let mut md = String::new();
        peers_section(&mut md, &widened);
        assert!(md.contains("2 (op, size or shape) pairs both timed: 1 ahead, 0 behind, 1 within noise"), "{md}");
        assert!(md.contains("| b | 2^20 | within noise | 0.95x |"), "{md}");
        assert!(!md.contains("| a | 2^20 |"), "{md}");
    }
}

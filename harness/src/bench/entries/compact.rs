//! Stream compaction `x > 0` of int32 in [-9, 9] (9 of 19 values kept),
//! every [`CompactVariant`], against CUB's `DeviceSelect::If` and torch's
//! `x[x > 0]`. Logical bytes 4n + 4 * count.

use super::{check, Described, EntryId, Registry};
use crate::bench::config::BenchConfig;
use crate::bench::record::BenchSize;
use kernels::compact::{three_phase_level_lens, SINGLE_PASS_TILE_ITEMS};
use kernels::{CompactPlan, CompactVariant, SelectorKind};
use rayon::prelude::*;

/// The op name shared with the baselines.
pub const OP: &str = "compact_positive_i32";

/// (timed region, launches, estimated DRAM bytes) of `variant` at `n` keeping `count`.
fn describe(variant: CompactVariant, n: usize, count: usize) -> (String, u32, u64) {
    let (n64, kept) = (n as u64, 4 * count as u64);
    match variant {
        CompactVariant::ThreePhase => {
            let levels = three_phase_level_lens(n);
            let top = levels.len() - 1;
            let scans = 1 + top as u32;
            let adds = top.saturating_sub(1) as u32;
            (
                format!(
                    "one CompactPlan::enqueue: compact_keep_flags_positive + {scans} compact_scan_tiles \
                     (scan levels of {levels:?} tiles) + {adds} compact_add_tile_offsets + compact_scatter \
                     (which writes the count); no memset"
                ),
                2 + scans + adds,
                // flags: read 4n, write 4n; scan: read 4n, write 4n positions;
                // scatter: read input, flags and positions (12n), write the kept items.
                28 * n64 + kept,
            )
        }
        CompactVariant::SinglePass => {
            let tiles = n.div_ceil(SINGLE_PASS_TILE_ITEMS);
            (
                format!(
                    "one CompactPlan::enqueue: memset of {} bytes of tile flags + memset of the 8-byte \
                     [tile counter, error word] + compact_single_pass_positive <<<{tiles}, 256>>> \
                     (which writes the count)",
                    4 * tiles
                ),
                3,
                4 * n64 + kept + 4 * tiles as u64 + 16 * tiles as u64,
            )
        }
    }
}

/// Registers every variant at every size.
pub fn register(config: &BenchConfig, registry: &mut Registry) {
    for n in config.sizes() {
        for variant in CompactVariant::ALL {
            let id = EntryId::primlab("compact", OP, variant.name(), BenchSize::Elements(n), "i32");
            registry.add(id, 13 * n as u64, move |ctx| {
                let gpu = ctx.gpu;
                let inputs = ctx.pool.ints(n)?;
                let mut plan = CompactPlan::new(gpu, variant, SelectorKind::Positive, n)?;
                let mut output = gpu.alloc_poisoned::<i32>(n)?;
                let mut count = gpu.alloc_poisoned::<u32>(1)?;
                plan.enqueue(inputs.device.next(), None, &mut output, &mut count)?;
                gpu.synchronize()?;
                plan.check_fault()?;
                let got_count = gpu.download(&count)?[0] as usize;
                let got = gpu.download(&output)?;
                let expected: Vec<i32> = inputs.host.par_iter().copied().filter(|&x| x > 0).collect();
                let (timed_region, launches, moved) = describe(variant, n, expected.len());
                let described = Described {
                    logical_bytes: plan.logical_bytes(expected.len()),
                    cache_policy: inputs.device.policy(),
                    timed_region,
                    bytes_moved_estimate: Some(moved),
                    launches: Some(launches),
                    params: serde_json::json!({ "count": expected.len(), "selector": "x > 0" }),
                };
                let what = "the count and every kept item, in order, equal the host's";
                if got_count != expected.len() {
                    return Ok(described.wrong(what, format!("count {got_count} != host count {}", expected.len())));
                }
                if let Err(mismatch) = check::exact_slices("kept items", &expected, &got[..got_count]) {
                    return Ok(described.wrong(what, mismatch));
                }
                drop((got, expected));
                let timing = ctx.measure(n, || plan.enqueue(inputs.device.next(), None, &mut output, &mut count))?;
                plan.check_fault()?;
                Ok(described.timed(what, timing))
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_phase_launches_follow_its_levels() {
        // 2^20 items: 512 tiles then 1: flags + 2 scans + 0 adds + scatter.
        assert_eq!(describe(CompactVariant::ThreePhase, 1 << 20, 0).1, 4);
        // 2^28: 131072, 64, 1 tiles: flags + 3 scans + 1 add + scatter.
        assert_eq!(describe(CompactVariant::ThreePhase, 1 << 28, 0).1, 6);
        assert_eq!(describe(CompactVariant::SinglePass, 1 << 28, 0).1, 3);
    }
}

//! int32 -> int64 prefix sums, exclusive and inclusive, every
//! [`ScanVariant`], against CUB's `DeviceScan::ExclusiveSum` /
//! `InclusiveSum` and `torch.cumsum` (inclusive). Logical bytes 12n.

use super::{check, Described, EntryId, Registry};
use crate::bench::config::BenchConfig;
use crate::bench::record::BenchSize;
use kernels::scan::{blelloch_level_sizes, LOOKBACK_TILE_ITEMS};
use kernels::{blelloch_levels, ScanKind, ScanPlan, ScanVariant};

/// The op name of a scan kind (shared with the baselines).
pub fn op(kind: ScanKind) -> &'static str {
    match kind {
        ScanKind::Exclusive => "exclusive_scan_i32_i64",
        ScanKind::Inclusive => "inclusive_scan_i32_i64",
    }
}

/// (timed region, launches, estimated DRAM bytes) of `variant` at `n`.
fn describe(variant: ScanVariant, kind: ScanKind, n: usize) -> (String, u32, u64) {
    let (k, n64) = (kind.name(), n as u64);
    match variant {
        ScanVariant::Serial => (format!("one ScanPlan::enqueue: scan_serial_{k}_i32 <<<1, 1>>>"), 1, 12 * n64),
        ScanVariant::Blelloch => {
            let levels = blelloch_levels(n) as u32;
            let sizes = blelloch_level_sizes(n);
            let totals: u64 = sizes.iter().map(|&m| 2 * 8 * m.div_ceil(512) as u64).sum();
            (
                format!(
                    "one ScanPlan::enqueue: {levels} block-scan launches (scan_blelloch_level_{k}_i32 over the input, \
                     scan_blelloch_level_inplace_i64 over the block totals; levels of {sizes:?} items) + {} offset \
                     launches (scan_blelloch_add_offsets*_i64); no memset",
                    levels - 1
                ),
                2 * levels - 1,
                // Level 0 reads 4n and writes 8n; adding the offsets back reads
                // and writes the 8n output once more (when there is more than one level).
                12 * n64 + if levels > 1 { 16 * n64 } else { 0 } + totals,
            )
        }
        ScanVariant::DecoupledLookback => {
            let tiles = n.div_ceil(LOOKBACK_TILE_ITEMS);
            let scratch = 8 * kernels::lookback::scratch_words(tiles, 8) as u64;
            (
                format!(
                    "one ScanPlan::enqueue: memset of {scratch} bytes (tile counter, error word, {tiles} tile \
                     descriptors) + scan_decoupled_lookback_{k}_i32 <<<{tiles}, 256>>>"
                ),
                2,
                12 * n64 + 2 * scratch,
            )
        }
    }
}

/// Registers both kinds of every variant at every size.
pub fn register(config: &BenchConfig, registry: &mut Registry) {
    for n in config.sizes() {
        for kind in ScanKind::ALL {
            for variant in ScanVariant::ALL {
                let id = EntryId::primlab("scan", op(kind), variant.name(), BenchSize::Elements(n), "i32->i64");
                if n > variant.max_len() {
                    registry
                        .skip(&id, format!("n = {n} exceeds {}'s max_len() = {}", variant.name(), variant.max_len()));
                    continue;
                }
                registry.add(id, 9 * n as u64, move |ctx| {
                    let gpu = ctx.gpu;
                    let inputs = ctx.pool.ints(n)?;
                    let mut plan = ScanPlan::<i32>::new(gpu, variant, kind, n)?;
                    let mut output = gpu.alloc_poisoned::<i64>(n)?;
                    plan.enqueue(inputs.device.next(), &mut output)?;
                    gpu.synchronize()?;
                    plan.check_fault()?;
                    let got = gpu.download(&output)?;
                    let (timed_region, launches, moved) = describe(variant, kind, n);
                    let described = Described {
                        logical_bytes: 12 * n as u64,
                        cache_policy: inputs.device.policy(),
                        timed_region,
                        bytes_moved_estimate: Some(moved),
                        launches: Some(launches),
                        params: serde_json::json!({ "kind": kind.name() }),
                    };
                    let what = "every int64 prefix equals the host scan";
                    if let Err(mismatch) = check::int_scan(&inputs.host, &got, kind == ScanKind::Inclusive) {
                        return Ok(described.wrong(what, mismatch));
                    }
                    drop(got);
                    let timing = ctx.measure(n, || plan.enqueue(inputs.device.next(), &mut output))?;
                    plan.check_fault()?;
                    Ok(described.timed(what, timing))
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookback_region_counts_its_memset() {
        let (region, launches, moved) = describe(ScanVariant::DecoupledLookback, ScanKind::Exclusive, 1 << 20);
        assert!(region.contains("memset of 1032 bytes"), "{region}");
        assert_eq!(launches, 2);
        assert!(moved > 12 << 20);
    }

    #[test]
    fn blelloch_launch_count_follows_its_levels() {
        assert_eq!(describe(ScanVariant::Blelloch, ScanKind::Exclusive, 512).1, 1);
        assert_eq!(describe(ScanVariant::Blelloch, ScanKind::Exclusive, 262_145).1, 5);
    }
}

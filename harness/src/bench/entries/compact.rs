//! Stream compaction `x > 0` of int32 in [-9, 9] (9 of 19 values kept),
//! every [`CompactVariant`], against CUB's `DeviceSelect::If` and torch's
//! `x[x > 0]`. Logical bytes 4n + 4 * count.

use super::{check, variants_and_default, Described, EntryId, Registry};
use crate::bench::config::BenchConfig;
use crate::bench::record::BenchSize;
use kernels::{CompactPlan, CompactVariant, SelectorKind};
use rayon::prelude::*;

/// The op name shared with the baselines.
pub const OP: &str = "compact_positive_i32";

/// Registers every variant at every size, then the default entry
/// ([`CompactVariant::best_for`]).
pub fn register(config: &BenchConfig, registry: &mut Registry) {
    for n in config.sizes() {
        for (variant, role) in variants_and_default(&CompactVariant::ALL, CompactVariant::best_for(n)) {
            let id = EntryId::primlab("compact", OP, variant.name(), BenchSize::Elements(n), "i32");
            registry.add_as(role, id, 13 * n as u64, move |ctx| {
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
                let params = serde_json::json!({ "count": expected.len(), "selector": "x > 0" });
                let logical = plan.logical_bytes(expected.len());
                let described =
                    Described::of_plan(&plan.describe(expected.len()), logical, inputs.device.policy(), params);
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

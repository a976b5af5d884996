//! int32 -> int64 prefix sums, exclusive and inclusive, every
//! [`ScanVariant`], against CUB's `DeviceScan::ExclusiveSum` /
//! `InclusiveSum` and `torch.cumsum` (inclusive). Logical bytes 12n.

use super::{check, variants_and_default, Described, EntryId, Registry};
use crate::bench::config::BenchConfig;
use crate::bench::record::BenchSize;
use kernels::{ScanKind, ScanPlan, ScanVariant};

/// The op name of a scan kind (shared with the baselines).
pub fn op(kind: ScanKind) -> &'static str {
    match kind {
        ScanKind::Exclusive => "exclusive_scan_i32_i64",
        ScanKind::Inclusive => "inclusive_scan_i32_i64",
    }
}

/// Registers both kinds of every variant at every size, then each kind's
/// default entry ([`ScanVariant::best_for`]).
pub fn register(config: &BenchConfig, registry: &mut Registry) {
    for n in config.sizes() {
        for kind in ScanKind::ALL {
            for (variant, role) in variants_and_default(&ScanVariant::ALL, ScanVariant::best_for(n, kind)) {
                let id = EntryId::primlab("scan", op(kind), variant.name(), BenchSize::Elements(n), "i32->i64");
                if n > variant.max_len() {
                    registry
                        .skip(&id, format!("n = {n} exceeds {}'s max_len() = {}", variant.name(), variant.max_len()));
                    continue;
                }
                registry.add_as(role, id, 9 * n as u64, move |ctx| {
                    let gpu = ctx.gpu;
                    let inputs = ctx.pool.ints(n)?;
                    let mut plan = ScanPlan::<i32>::new(gpu, variant, kind, n)?;
                    let mut output = gpu.alloc_poisoned::<i64>(n)?;
                    plan.enqueue(inputs.device.next(), &mut output)?;
                    gpu.synchronize()?;
                    plan.check_fault()?;
                    let got = gpu.download(&output)?;
                    let params = serde_json::json!({ "kind": kind.name() });
                    let described = Described::of_plan(&plan.describe(), 12 * n as u64, inputs.device.policy(), params);
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

//! Whole-array int32 -> int64 sum, every [`ReduceVariant`], against CUB's
//! `DeviceReduce::Sum` over a widening iterator and `torch.sum(dtype=int64)`.

use super::{variants_and_default, Described, EntryId, Registry};
use crate::bench::config::BenchConfig;
use crate::bench::record::BenchSize;
use kernels::{ReducePlan, ReduceVariant};

/// The op name shared with the baselines.
pub const OP: &str = "reduce_sum_i32_i64";

/// Registers every variant at every size (the serial one up to its
/// `max_len()`), then the default entry ([`ReduceVariant::best_for`]).
pub fn register(config: &BenchConfig, registry: &mut Registry) {
    for n in config.sizes() {
        for (variant, role) in variants_and_default(&ReduceVariant::ALL, ReduceVariant::best_for(n)) {
            let id = EntryId::primlab("reduce", OP, variant.name(), BenchSize::Elements(n), "i32->i64");
            if n > variant.max_len() {
                registry.skip(&id, format!("n = {n} exceeds {}'s max_len() = {}", variant.name(), variant.max_len()));
                continue;
            }
            registry.add_as(role, id, 8 * (n as u64 / 256 + 64), move |ctx| {
                let gpu = ctx.gpu;
                let inputs = ctx.pool.ints(n)?;
                let mut plan = ReducePlan::<i32>::new(gpu, variant, n)?;
                let mut output = gpu.alloc_poisoned::<i64>(1)?;
                plan.enqueue(inputs.device.next(), &mut output)?;
                gpu.synchronize()?;
                plan.check_fault()?;
                let got = gpu.download(&output)?[0];
                let described =
                    Described::of_plan(&plan.describe(), 4 * n as u64, inputs.device.policy(), serde_json::json!({}));
                let what = "the int64 sum equals the host sum";
                let expected = inputs.sum_i64();
                if got != expected {
                    return Ok(described.wrong(what, format!("sum {got} != host sum {expected}")));
                }
                let timing = ctx.measure(n, || plan.enqueue(inputs.device.next(), &mut output))?;
                plan.check_fault()?;
                Ok(described.timed(what, timing))
            });
        }
    }
}

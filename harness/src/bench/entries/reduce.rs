//! Whole-array int32 -> int64 sum, every [`ReduceVariant`], against CUB's
//! `DeviceReduce::Sum` over a widening iterator and `torch.sum(dtype=int64)`.

use super::{Described, EntryId, Registry};
use crate::bench::config::BenchConfig;
use crate::bench::record::BenchSize;
use kernels::launch::{persistent_grid, BLOCK_THREADS};
use kernels::{Gpu, KernelFamily, ReducePlan, ReduceVariant};

/// The op name shared with the baselines.
pub const OP: &str = "reduce_sum_i32_i64";

/// Items per block of the multipass kernel (reduce.rs: 256 threads x 2).
const MULTIPASS_BLOCK_ITEMS: usize = kernels::reduce::MULTIPASS_BLOCK_ITEMS;
/// int32 items per block of the block-atomic kernel and per single-pass tile.
const TILE_ITEMS: usize = 4096;

/// Item counts the multipass passes read: n, ceil(n/512), ..., down to one block.
fn multipass_levels(n: usize) -> Vec<usize> {
    let mut levels = vec![n];
    let mut m = n;
    loop {
        let next = m.div_ceil(MULTIPASS_BLOCK_ITEMS).max(1);
        if next == 1 {
            return levels;
        }
        levels.push(next);
        m = next;
    }
}

/// (timed region, launches, estimated DRAM bytes) of `variant` at `n`.
fn describe(gpu: &Gpu, variant: ReduceVariant, n: usize) -> (String, u32, u64) {
    let input = 4 * n as u64;
    match variant {
        ReduceVariant::Serial => {
            ("one ReducePlan::enqueue: reduce_serial_i32 <<<1, 1>>> (one thread folds left to right)".into(), 1, input)
        }
        ReduceVariant::Multipass => {
            let levels = multipass_levels(n);
            let partial_bytes: u64 = levels[1..].iter().map(|&m| 2 * 8 * m as u64).sum();
            (
                format!(
                    "one ReducePlan::enqueue: {} launches <<<ceil(m/512), 256>>> over m = {:?} items \
                     (reduce_multipass_i32, then reduce_multipass_i64 over int64 partials); no memset",
                    levels.len(),
                    levels
                ),
                levels.len() as u32,
                input + partial_bytes,
            )
        }
        ReduceVariant::BlockAtomic => (
            format!(
                "one ReducePlan::enqueue: memset of the 8-byte output to 0 + reduce_block_atomic_i32 \
                 <<<{}, 256>>> (one int64 atomicAdd per block)",
                n.div_ceil(TILE_ITEMS)
            ),
            2,
            input,
        ),
        ReduceVariant::SinglePass => {
            let grid = persistent_grid(gpu, KernelFamily::Reduce, "reduce_single_pass_i32", BLOCK_THREADS, 0)
                .map(|g| (n.div_ceil(TILE_ITEMS) as u32).min(g).max(1).to_string())
                .unwrap_or_else(|_| "min(SMs x resident blocks, ceil(n/4096))".into());
            (
                format!(
                    "one ReducePlan::enqueue: reduce_single_pass_i32 <<<{grid}, 256>>> (persistent grid, \
                     last-block-done fold of the partials); no memset"
                ),
                1,
                input,
            )
        }
    }
}

/// Registers every variant at every size (the serial one up to its `max_len()`).
pub fn register(config: &BenchConfig, registry: &mut Registry) {
    for n in config.sizes() {
        for variant in ReduceVariant::ALL {
            let id = EntryId::primlab("reduce", OP, variant.name(), BenchSize::Elements(n), "i32->i64");
            if n > variant.max_len() {
                registry.skip(&id, format!("n = {n} exceeds {}'s max_len() = {}", variant.name(), variant.max_len()));
                continue;
            }
            registry.add(id, 8 * (n as u64 / 256 + 64), move |ctx| {
                let gpu = ctx.gpu;
                let inputs = ctx.pool.ints(n)?;
                let mut plan = ReducePlan::<i32>::new(gpu, variant, n)?;
                let mut output = gpu.alloc_poisoned::<i64>(1)?;
                plan.enqueue(inputs.device.next(), &mut output)?;
                gpu.synchronize()?;
                plan.check_fault()?;
                let got = gpu.download(&output)?[0];
                let (timed_region, launches, moved) = describe(gpu, variant, n);
                let described = Described {
                    logical_bytes: 4 * n as u64,
                    cache_policy: inputs.device.policy(),
                    timed_region,
                    bytes_moved_estimate: Some(moved),
                    launches: Some(launches),
                    params: serde_json::json!({}),
                };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multipass_levels_match_the_plan_docs() {
        assert_eq!(multipass_levels(512), vec![512]);
        assert_eq!(multipass_levels(513), vec![513, 2]);
        assert_eq!(multipass_levels(1 << 28), vec![1 << 28, 1 << 19, 1024, 2]);
    }
}

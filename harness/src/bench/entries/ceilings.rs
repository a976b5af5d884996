//! The bandwidth ceilings, measured in the same run as everything else: a
//! device-to-device copy (8n logical bytes for 4n copied) and the read-only
//! kernel (4n), on the same int32 inputs and with the same rotation.

use super::{check, Described, EntryId, Registry};
use crate::bench::config::BenchConfig;
use crate::bench::record::{BenchSize, IMPL_CEILING};

/// Op of the copy ceiling (the baselines' name).
pub const COPY_OP: &str = "memcpy_d2d";
/// Op of the read ceiling (the baselines' name).
pub const READ_OP: &str = "read_ceiling_i32";

fn id(op: &str, n: usize) -> EntryId {
    EntryId {
        implementation: IMPL_CEILING,
        primitive: "ceilings",
        op: op.to_string(),
        variant: op.to_string(),
        size: BenchSize::Elements(n),
        dtype: "i32",
    }
}

/// Registers both ceilings at every size.
pub fn register(config: &BenchConfig, registry: &mut Registry) {
    for n in config.sizes() {
        registry.add(id(COPY_OP, n), 4 * n as u64, move |ctx| {
            let gpu = ctx.gpu;
            let inputs = ctx.pool.ints(n)?;
            let mut destination = gpu.alloc_poisoned::<i32>(n)?;
            gpu.enqueue_copy_ceiling(inputs.device.next(), &mut destination)?;
            let copied = gpu.download(&destination)?;
            let described = Described {
                logical_bytes: 8 * n as u64,
                cache_policy: inputs.device.policy(),
                timed_region: format!(
                    "one Gpu::enqueue_copy_ceiling: cuMemcpyDtoDAsync of {} bytes (logical bytes 8n: read + write)",
                    4 * n
                ),
                bytes_moved_estimate: Some(8 * n as u64),
                launches: Some(1),
                params: serde_json::json!({ "bytes_copied": 4 * n }),
            };
            let what = "destination equals the source, element for element";
            if let Err(mismatch) = check::exact_slices("copy", &inputs.host, &copied) {
                return Ok(described.wrong(what, mismatch));
            }
            drop(copied);
            let timing = ctx.measure(n, || gpu.enqueue_copy_ceiling(inputs.device.next(), &mut destination))?;
            Ok(described.timed(what, timing))
        });
        registry.add(id(READ_OP, n), 8, move |ctx| {
            let gpu = ctx.gpu;
            let inputs = ctx.pool.ints(n)?;
            let mut sink = gpu.alloc_zeroed::<i64>(1)?;
            gpu.enqueue_read_ceiling_i32(inputs.device.next(), &mut sink)?;
            let got = gpu.download(&sink)?[0];
            let described = Described {
                logical_bytes: 4 * n as u64,
                cache_policy: inputs.device.policy(),
                timed_region:
                    "one Gpu::enqueue_read_ceiling_i32: read_ceiling_i32 (grid-stride over a persistent grid, \
                               16-byte loads, one int64 atomicAdd per block; the sink is not reset between calls)"
                        .to_string(),
                bytes_moved_estimate: Some(4 * n as u64),
                launches: Some(1),
                params: serde_json::json!({}),
            };
            let what = "the atomics' int64 sum equals the host sum";
            let expected = inputs.sum_i64();
            if got != expected {
                return Ok(described.wrong(what, format!("read ceiling sum {got} != host sum {expected}")));
            }
            let timing = ctx.measure(n, || gpu.enqueue_read_ceiling_i32(inputs.device.next(), &mut sink))?;
            Ok(described.timed(what, timing))
        });
    }
}

//! Segmented sums over segments of L elements (`offsets[s] = min(s * L, n)`,
//! as the baselines lay them out): float32 at every configured L, int32 ->
//! int64 at L = 1024, every [`SegmentedVariant`], against CUB's
//! `DeviceSegmentedReduce::Sum` and torch's `x.view(-1, L).sum(-1)`.
//! Logical bytes 4n.

use super::{check, variants_and_default, Described, EntryId, Registry, Role};
use crate::bench::config::{BenchConfig, MAIN_SEGMENT_LEN};
use crate::bench::pool::FetchInput;
use crate::bench::record::BenchSize;
use kernels::segmented_reduce::{SegmentedOp, SegmentedSumF32, SegmentedSumI32};
use kernels::{SegmentedPlan, SegmentedVariant};
use rayon::prelude::*;

/// The op name of the float32 sum over segments of `len` (shared with the baselines).
pub fn op_f32(len: usize) -> String {
    format!("segmented_sum_f32_seg{len}")
}

/// The op name of the int32 -> int64 sum over segments of `len`.
pub fn op_i32(len: usize) -> String {
    format!("segmented_sum_i32_i64_seg{len}")
}

/// Offsets of `ceil(n / len)` segments of `len` (the last one partial).
pub fn offsets(n: usize, len: usize) -> Vec<usize> {
    let segments = n.div_ceil(len);
    (0..=segments).map(|s| (s * len).min(n)).collect()
}

/// The host's per-segment check of a float32 sum: the exact sum (float64 is
/// exact for these inputs) within the order-free bound of each segment.
fn check_f32(host: &[f32], offsets: &[usize], got: &[f32]) -> Result<(), String> {
    let first = (0..offsets.len() - 1)
        .into_par_iter()
        .filter_map(|s| {
            let segment = &host[offsets[s]..offsets[s + 1]];
            let exact: f64 = segment.iter().map(|&x| x as f64).sum();
            let sum_abs: f64 = segment.iter().map(|&x| (x as f64).abs()).sum();
            check::float_within(&format!("segment {s}"), exact, got[s], check::order_free_bound(segment.len(), sum_abs))
                .err()
                .map(|e| (s, e))
        })
        .min_by_key(|(s, _)| *s);
    match first {
        None => Ok(()),
        Some((_, e)) => Err(e),
    }
}

/// The exact int64 sums of every segment.
fn sums_i32(host: &[i32], offsets: &[usize]) -> Vec<i64> {
    (0..offsets.len() - 1)
        .into_par_iter()
        .map(|s| host[offsets[s]..offsets[s + 1]].iter().map(|&x| x as i64).sum())
        .collect()
}

/// Checks the downloaded per-segment results of operator `O` against the host input.
type Verify<O> = fn(&[<O as SegmentedOp>::Input], &[usize], &[<O as SegmentedOp>::Output]) -> Result<(), String>;

/// One segmented entry for operator `O`.
struct SegmentedEntry<O: SegmentedOp> {
    /// Elements.
    n: usize,
    /// Segment length.
    len: usize,
    /// The schedule.
    variant: SegmentedVariant,
    /// Fetches the shared input.
    input: FetchInput<O::Input>,
    /// Checks the results.
    verify: Verify<O>,
    /// What the check compares, for the record.
    what: &'static str,
}

impl<O> SegmentedEntry<O>
where
    O: SegmentedOp + 'static,
    O::Input: cudarc::driver::DeviceRepr + Copy + Send + Sync,
    O::Output: cudarc::driver::DeviceRepr + Copy,
{
    fn register(self, registry: &mut Registry, role: Role, id: EntryId) {
        let SegmentedEntry { n, len, variant, input, verify, what } = self;
        let segments = n.div_ceil(len);
        registry.add_as(role, id, 16 * segments as u64 + 8 * (n as u64 / 4096 + 64), move |ctx| {
            let gpu = ctx.gpu;
            let inputs = input(&mut ctx.pool, n)?;
            let offsets = offsets(n, len);
            let device_offsets = gpu.upload_segment_offsets(&offsets, n)?;
            let mut plan = SegmentedPlan::<O>::new(gpu, variant, n, segments)?;
            let mut output = gpu.alloc_poisoned::<O::Output>(segments)?;
            plan.enqueue(inputs.device.next(), &device_offsets, &mut output)?;
            let got = gpu.download(&output)?;
            let params = serde_json::json!({
                "seg_len": len,
                "num_segments": segments,
                "blocks_per_segment": plan.blocks_per_segment(),
            });
            let logical = plan.logical_bytes(&device_offsets);
            let described = Described::of_plan(&plan.describe(), logical, inputs.device.policy(), params);
            if let Err(mismatch) = verify(&inputs.host, &offsets, &got) {
                return Ok(described.wrong(what, mismatch));
            }
            let timing = ctx.measure(n, || plan.enqueue(inputs.device.next(), &device_offsets, &mut output))?;
            Ok(described.timed(what, timing))
        });
    }
}

/// Registers every variant at every size: float32 at each configured
/// segment length, int32 -> int64 at 1024; each op and size ends with its
/// default entry ([`SegmentedVariant::best_for`] of the segment length and count).
pub fn register(config: &BenchConfig, registry: &mut Registry) {
    for n in config.sizes() {
        for &len in &config.segment_lens {
            let picked = SegmentedVariant::best_for(len, n.div_ceil(len.max(1)));
            for (variant, role) in variants_and_default(&SegmentedVariant::ALL, picked) {
                let id =
                    EntryId::primlab("segmented_reduce", op_f32(len), variant.name(), BenchSize::Elements(n), "f32");
                SegmentedEntry::<SegmentedSumF32> {
                    n,
                    len,
                    variant,
                    input: |pool, n| pool.floats(n),
                    verify: check_f32,
                    what: "every segment's sum within (len - 1) u / (1 + u) * sum|x| of the exact sum",
                }
                .register(registry, role, id);
            }
        }
        let picked = SegmentedVariant::best_for(MAIN_SEGMENT_LEN, n.div_ceil(MAIN_SEGMENT_LEN));
        for (variant, role) in variants_and_default(&SegmentedVariant::ALL, picked) {
            let id = EntryId::primlab(
                "segmented_reduce",
                op_i32(MAIN_SEGMENT_LEN),
                variant.name(),
                BenchSize::Elements(n),
                "i32->i64",
            );
            SegmentedEntry::<SegmentedSumI32> {
                n,
                len: MAIN_SEGMENT_LEN,
                variant,
                input: |pool, n| pool.ints(n),
                verify: |host, offsets, got| check::exact_slices("segment sums", &sums_i32(host, offsets), got),
                what: "every segment's int64 sum equals the host's",
            }
            .register(registry, role, id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_end_with_a_partial_segment() {
        assert_eq!(offsets(2500, 1024), vec![0, 1024, 2048, 2500]);
        assert_eq!(offsets(1000, 1024), vec![0, 1000]);
        assert_eq!(offsets(2048, 1024), vec![0, 1024, 2048]);
    }

    #[test]
    fn float_segments_are_checked_against_the_bound() {
        let host = vec![0.25f32; 2048];
        let offs = offsets(2048, 1024);
        assert!(check_f32(&host, &offs, &[256.0, 256.0]).is_ok());
        assert!(check_f32(&host, &offs, &[256.0, 255.0]).unwrap_err().contains("segment 1"));
    }
}

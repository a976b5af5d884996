//! The correctly rounded segmented f32 sum (`segmented_correctly_rounded`)
//! timed beside the ordinary segmented f32 sums: same report group
//! (`segmented_reduce`), op names and segment layout (`offsets[s] = min(s *
//! L, n)` at every configured L), so each table puts it next to
//! [`kernels::SegmentedVariant`]'s schedules and CUB's
//! `DeviceSegmentedReduce::Sum`. Checked bit for bit against the model's
//! binned-limb sum of every segment (equal to the rug reference by the
//! model's tests). Logical bytes: 4n.

use super::segmented_reduce::{offsets, op_f32};
use super::{Described, EntryId, Registry};
use crate::bench::config::BenchConfig;
use crate::bench::record::BenchSize;
use kernels::exact_segmented_sum::SEGMENTED_VARIANT;
use kernels::{ExactSegmentedLaunch, ExactSegmentedSumPlan};
use model::exact::BinnedAccumulator;
use rayon::prelude::*;

/// The correctly rounded sum of one segment by the model's binned accumulator.
fn segment_sum(segment: &[f32]) -> f32 {
    let mut acc = BinnedAccumulator::new();
    segment.iter().for_each(|&v| acc.add(v));
    acc.round()
}

/// The first segment whose bits differ from the model's, described.
fn check(host: &[f32], offsets: &[usize], got: &[f32]) -> Result<(), String> {
    if got.len() + 1 != offsets.len() {
        return Err(format!("{} segments, {} results", offsets.len() - 1, got.len()));
    }
    let bad = (0..got.len())
        .into_par_iter()
        .find_first(|&s| segment_sum(&host[offsets[s]..offsets[s + 1]]).to_bits() != got[s].to_bits());
    match bad {
        None => Ok(()),
        Some(s) => {
            let expected = segment_sum(&host[offsets[s]..offsets[s + 1]]);
            Err(format!(
                "segment {s}: expected {expected:e} ({:#010x}), got {:e} ({:#010x})",
                expected.to_bits(),
                got[s],
                got[s].to_bits()
            ))
        }
    }
}

/// Registers `segmented_correctly_rounded` at every size and segment length.
pub fn register(config: &BenchConfig, registry: &mut Registry) {
    for n in config.sizes() {
        for &len in &config.segment_lens {
            let id =
                EntryId::primlab("segmented_reduce", op_f32(len), SEGMENTED_VARIANT, BenchSize::Elements(n), "f32");
            let segments = n.div_ceil(len);
            registry.add(id, 4 * (2 * segments as u64 + 1), move |ctx| {
                let gpu = ctx.gpu;
                let inputs = ctx.pool.floats(n)?;
                let offsets = offsets(n, len);
                let device_offsets = gpu.upload_segment_offsets(&offsets, n)?;
                let mut plan = ExactSegmentedSumPlan::<f32>::new(gpu, n, segments, ExactSegmentedLaunch::default())?;
                let mut output = gpu.alloc_poisoned::<f32>(segments)?;
                plan.enqueue(inputs.device.next(), &device_offsets, &mut output)?;
                let got = gpu.download(&output)?;
                let params = serde_json::json!({
                    "seg_len": len,
                    "num_segments": segments,
                    "schedule": plan.schedule().name(),
                    "grid": plan.grid(),
                });
                let logical = plan.logical_bytes(&device_offsets);
                let described = Described::of_plan(&plan.describe(), logical, inputs.device.policy(), params);
                let what = "every segment's bits equal to the model's correctly rounded sum (binned limbs = rug)";
                if let Err(mismatch) = check(&inputs.host, &offsets, &got) {
                    return Ok(described.wrong(what, mismatch));
                }
                let timing = ctx.measure(n, || plan.enqueue(inputs.device.next(), &device_offsets, &mut output))?;
                Ok(described.timed(what, timing))
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::inputs;

    #[test]
    fn segment_sums_match_the_rug_reference_and_a_wrong_bit_is_found() {
        let host = inputs::uniform_floats(1 << 12);
        let offs = offsets(host.len(), 32);
        let rug = model::exact::segmented_correctly_rounded_sum_f32(&host, &offs).expect("valid offsets");
        assert!(check(&host, &offs, &rug).is_ok());
        let mut wrong = rug.clone();
        wrong[77] = f32::from_bits(wrong[77].to_bits() ^ 1);
        assert!(check(&host, &offs, &wrong).unwrap_err().starts_with("segment 77:"));
        assert!(check(&host, &offs, &rug[1..]).is_err());
    }
}

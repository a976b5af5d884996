//! Even-bin histogram of int32 in [-9, 9]: 19 unit bins over [-9, 10), the
//! same definition as cub_bench's `HistogramEven` (bins of width 1 over
//! [-9, -9 + bins)), every [`HistogramVariant`], against CUB and
//! `torch.histc`. Logical bytes 4n.

use super::{check, variants_and_default, Described, EntryId, Registry};
use crate::bench::config::{BenchConfig, HISTOGRAM_BINS};
use crate::bench::record::BenchSize;
use kernels::{HistogramPlan, HistogramSpec, HistogramVariant};
use rayon::prelude::*;

/// The op name shared with the baselines.
pub fn op(bins: usize) -> String {
    format!("histogram_even_i32_bins{bins}")
}

/// Unit bins over [-9, -9 + bins).
pub fn spec(bins: usize) -> HistogramSpec<i32> {
    HistogramSpec { bins: bins as u32, lower: -9, upper: -9 + bins as i32 }
}

/// The host's counts of `host` in `spec`'s bins.
pub fn host_counts(host: &[i32], spec: &HistogramSpec<i32>) -> Vec<u32> {
    host.par_chunks(1 << 18)
        .map(|chunk| {
            let mut counts = vec![0u32; spec.bins as usize];
            for &x in chunk {
                if let Some(bin) = spec.bin_of(x) {
                    counts[bin] += 1;
                }
            }
            counts
        })
        .reduce(
            || vec![0u32; spec.bins as usize],
            |mut a, b| {
                a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                a
            },
        )
}

/// Registers every variant at every size, then the default entry
/// ([`HistogramVariant::best_for`]).
pub fn register(config: &BenchConfig, registry: &mut Registry) {
    let bins = HISTOGRAM_BINS;
    for n in config.sizes() {
        for (variant, role) in variants_and_default(&HistogramVariant::ALL, HistogramVariant::best_for(n, bins)) {
            let id = EntryId::primlab("histogram", op(bins), variant.name(), BenchSize::Elements(n), "i32");
            registry.add_as(role, id, 4 * bins as u64, move |ctx| {
                let gpu = ctx.gpu;
                let inputs = ctx.pool.ints(n)?;
                let spec = spec(bins);
                let mut plan = HistogramPlan::<i32>::new(gpu, variant, n, spec)?;
                let mut output = gpu.alloc_poisoned::<u32>(bins)?;
                plan.enqueue(inputs.device.next(), &mut output)?;
                let got = gpu.download(&output)?;
                let described = Described {
                    logical_bytes: plan.logical_bytes(),
                    cache_policy: inputs.device.policy(),
                    timed_region: format!(
                        "one HistogramPlan::enqueue: memset of the {} count bytes to 0 + histogram_{}_i32 \
                         (grid fills the GPU once, fewer blocks for small n)",
                        4 * bins,
                        plan.layout()
                    ),
                    bytes_moved_estimate: Some(4 * n as u64 + 4 * bins as u64),
                    launches: Some(2),
                    params: serde_json::json!({
                        "bins": bins, "lower": spec.lower, "upper": spec.upper, "layout": plan.layout(),
                    }),
                };
                let what = "every bin count equals the host's";
                if let Err(mismatch) = check::exact_slices("bin counts", &host_counts(&inputs.host, &spec), &got) {
                    return Ok(described.wrong(what, mismatch));
                }
                let timing = ctx.measure(n, || plan.enqueue(inputs.device.next(), &mut output))?;
                Ok(described.timed(what, timing))
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_bins_put_every_value_in_its_own_bin() {
        let spec = spec(19);
        assert_eq!((spec.lower, spec.upper), (-9, 10));
        let host: Vec<i32> = (-9..=9).chain([-10, 10]).collect();
        assert_eq!(host_counts(&host, &spec), vec![1; 19]);
    }
}

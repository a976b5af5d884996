//! The sampler's epilogue of `topk.cu` (`sample_and_write`), step for step: thread `t` of a
//! block owns the sorted survivors `[t * items, (t + 1) * items)`, sums their weights in
//! order, a warp scans the threads' sums (`shfl_up` by 1, 2, 4, 8, 16; the lanes before a
//! lane are the previous lane's inclusive sum), the warps' totals are added in warp order,
//! and the draw is the least survivor at which some thread's running sum first exceeds
//! `u * total` (the last survivor when none does). Checked against the
//! contract's draw ([`crate::topk_sample`]): it must pass [`RowDistribution::judge`] on every
//! row, which is what the GPU sweep then checks the kernels against.
//!
//! [`RowDistribution::judge`]: crate::topk_sample::RowDistribution::judge

use crate::ModelError;

/// Lanes of a warp.
const LANES: usize = 32;

/// The block's shape: threads and survivors a thread owns (`kTopkBlockThreads`,
/// `kSampleItems`).
#[derive(Debug, Clone, Copy)]
pub struct DrawShape {
    /// Threads of the block (whole warps).
    pub threads: usize,
    /// Survivors each thread owns.
    pub items: usize,
}

/// The survivor drawn for `u` from the survivors' weights (in top-k order), and its
/// probability as the kernel rounds it. Errors: no survivor, more than `threads * items`, or
/// a block that is not whole warps.
pub fn sample_draw(weights: &[f64], u: f32, shape: DrawShape) -> Result<(usize, f32), ModelError> {
    let DrawShape { threads, items } = shape;
    if threads % LANES != 0 || threads == 0 {
        let detail = "the block is whole warps".to_string();
        return Err(ModelError::InvalidWidth { primitive: "sample_draw", width: threads, detail });
    }
    if weights.is_empty() || weights.len() > threads * items {
        return Err(ModelError::TooLarge { primitive: "sample_draw", len: weights.len(), limit: threads * items });
    }
    let owned = |t: usize, j: usize| weights.get(t * items + j).copied().unwrap_or(0.0);
    let local: Vec<f64> = (0..threads).map(|t| (0..items).fold(0.0, |sum, j| sum + owned(t, j))).collect();
    let inclusive = warp_inclusive_scans(&local);
    let warp_totals: Vec<f64> = inclusive.chunks(LANES).map(|w| w[LANES - 1]).collect();
    let total = warp_totals.iter().fold(0.0, |sum, w| sum + w);
    let target = u as f64 * total;
    let mut pick = weights.len() - 1;
    for t in 0..threads {
        let warp = t / LANES;
        // The lanes before this one: the previous lane's inclusive sum (0 for lane 0).
        let lanes_before = if t % LANES == 0 { 0.0 } else { inclusive[t - 1] };
        let mut running = warp_totals[..warp].iter().fold(lanes_before, |sum, w| sum + w);
        for j in 0..items {
            running += owned(t, j);
            if t * items + j < weights.len() && target < running {
                pick = pick.min(t * items + j);
                break;
            }
        }
    }
    Ok((pick, (weights[pick] / total) as f32))
}

/// Each warp's inclusive scan of its lanes' values, as `__shfl_up_sync` by 1, 2, 4, 8 and 16
/// adds them (every lane reads its source's value before any lane adds).
fn warp_inclusive_scans(values: &[f64]) -> Vec<f64> {
    let mut out = values.to_vec();
    for warp in out.chunks_mut(LANES) {
        let mut d = 1;
        while d < LANES {
            let before = warp.to_vec();
            for lane in d..LANES {
                warp[lane] += before[lane - d];
            }
            d <<= 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generators::Rng;
    use crate::topk_sample::{distributions, SampleSpec};

    const BLOCK: DrawShape = DrawShape { threads: 512, items: 8 };

    #[test]
    fn equal_weights_split_the_unit_interval_evenly() {
        let weights = vec![1.0; 4096];
        for (u, want) in [(0.0f32, 0), (0.5, 2048), (0.999_999_94, 4095), (1.0 / 4096.0, 1)] {
            assert_eq!(sample_draw(&weights, u, BLOCK).expect("fits").0, want, "u = {u}");
        }
        // A tail of weight 0 is never drawn, however close to 1 the uniform is.
        let mut masked = vec![1.0; 3];
        masked.extend([0.0; 5]);
        assert_eq!(sample_draw(&masked, 0.999_999_94, BLOCK).expect("fits").0, 2);
        assert!(sample_draw(&[], 0.5, BLOCK).is_err());
        assert!(sample_draw(&[1.0; 4097], 0.5, BLOCK).is_err());
        assert!(sample_draw(&[1.0], 0.5, DrawShape { threads: 48, items: 8 }).is_err());
    }

    #[test]
    fn the_schedule_passes_the_contract_on_random_rows() {
        let mut rng = Rng::new(11);
        for case in 0..300 {
            let cols = 1 + rng.index(5000);
            let k = 1 + rng.index(cols.min(4096));
            let t = [0.05f32, 0.7, 1.0, 3.0][case % 4];
            let row: Vec<f32> = (0..cols)
                .map(|c| if c % 7 == 3 { f32::NEG_INFINITY } else { (rng.index(64) as f32 - 32.0) * 0.25 })
                .collect();
            let u = rng.unit_f64() as f32;
            let spec = SampleSpec { k, temperature: t };
            let d = match distributions(&row, (1, cols), spec, &[u]) {
                Ok(mut rows) => rows.remove(0),
                Err(e) => panic!("case {case}: {e}"),
            };
            let (j, p) = sample_draw(&d.weights, u, BLOCK).expect("fits");
            d.judge(u, d.columns[j], Some(p), crate::topk_sample::Precision::Double)
                .unwrap_or_else(|e| panic!("case {case} (cols {cols}, k {k}, T {t}): {e}"));
        }
    }
}

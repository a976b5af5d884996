//! The top-k sampler at the decoder's shapes (`[1, 8, 64, 256] x [32000, 128256, 256000]`,
//! k = 1, 50, 256, 2048, temperature 1) against PyTorch's recipe (`torch.topk`, softmax,
//! cumsum, searchsorted, gather: `torch_topk_sample_f32`). Logical bytes: the logits read once,
//! a uniform read and a column and probability written per row. Every row's draw is judged
//! against the model's exact distribution.

use super::topk::{unfit, TEMPERATURE};
use super::{variants_and_default, Described, EntryId, Registry};
use crate::bench::config::BenchConfig;
use crate::bench::record::BenchSize;
use anyhow::Result;
use kernels::{SampleSpec, TopkSamplePlan, TopkVariant};
use model::generators::Rng;
use model::topk_sample as sample_model;
use rayon::prelude::*;

/// The op name of a sampler of `dtype` at `k` (shared with the baselines).
pub fn op(dtype: &str, k: usize) -> String {
    format!("topk_sample_{dtype}_k{k}")
}

/// One uniform in [0, 1) per row, from a fixed seed.
fn uniforms(rows: usize) -> Vec<f32> {
    let mut rng = Rng::new(0x5a4d_504c);
    (0..rows).map(|_| (rng.unit_f64() as f32).min(0.999_999_94)).collect()
}

/// The first row whose draw the model refuses, as a message.
fn first_wrong_draw(
    host: &[f32],
    (rows, cols): (usize, usize),
    spec: SampleSpec,
    u: &[f32],
    got: (&[i64], &[f32]),
) -> Option<String> {
    let judged: Vec<Result<(), String>> = (0..rows)
        .into_par_iter()
        .map(|r| {
            let row = &host[r * cols..(r + 1) * cols];
            let d = sample_model::distributions(row, (1, cols), spec, &u[r..r + 1]).map_err(|e| e.to_string())?;
            d[0].judge(u[r], got.0[r], Some(got.1[r]), sample_model::Precision::Double)
        })
        .collect();
    judged.into_iter().enumerate().find_map(|(r, j)| j.err().map(|e| format!("row {r}: {e}")))
}

/// One entry: `variant` (as `role`) on `rows x cols` at `k`.
fn add(registry: &mut Registry, (rows, cols, k): (usize, usize, usize), (variant, role): (TopkVariant, super::Role)) {
    let id = EntryId::primlab("topk", op("f32", k), variant.name(), BenchSize::Rows { rows, cols }, "f32");
    if let Some(reason) = unfit(variant, cols, k) {
        registry.skip(&id, reason);
        return;
    }
    registry.add_as(role, id, (rows * 16) as u64 + 4096, move |ctx| {
        let gpu = ctx.gpu;
        let n = rows * cols;
        let inputs = ctx.pool.logits(rows, cols)?;
        let spec = SampleSpec { k, temperature: TEMPERATURE };
        let host_uniforms = uniforms(rows);
        let device_uniforms = gpu.upload(&host_uniforms)?;
        let mut plan = TopkSamplePlan::<f32>::new(gpu, variant, rows, cols, spec)?;
        let mut samples = gpu.alloc_poisoned::<i64>(rows)?;
        let mut probabilities = gpu.alloc_poisoned::<f32>(rows)?;
        plan.enqueue(inputs.device.next(), &device_uniforms, &mut samples, &mut probabilities)?;
        plan.finish()?;
        let got = (gpu.download(&samples)?, gpu.download(&probabilities)?);
        let params = serde_json::json!({ "rows": rows, "cols": cols, "k": k, "temperature": TEMPERATURE });
        let logical = (n * 4 + rows * 16) as u64;
        let described = Described::of_plan(&plan.describe(), logical, inputs.device.policy(), params);
        let what = "every row's draw lies in its CDF interval of the model's distribution (2^-32 slack) and its \
                    probability is the model's to one f32 rounding";
        let shape = (rows, cols);
        if let Some(wrong) = first_wrong_draw(&inputs.host, shape, spec, &host_uniforms, (&got.0, &got.1)) {
            return Ok(described.wrong(what, wrong));
        }
        let timing =
            ctx.measure(n, || plan.enqueue(inputs.device.next(), &device_uniforms, &mut samples, &mut probabilities))?;
        plan.finish()?;
        Ok(described.timed(what, timing))
    });
}

/// Registers every variant at every decoder shape and k, each followed by its default entry.
pub fn register(config: &BenchConfig, registry: &mut Registry) {
    let (shapes, ks) = (config.topk_shapes(), config.topk_ks());
    for (rows, cols) in shapes {
        for &k in ks {
            for entry in variants_and_default(&TopkVariant::ALL, TopkVariant::best_for(rows, cols)) {
                add(registry, (rows, cols, k), entry);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrong_draw_is_named_by_its_row() {
        // Row 0: [3, 1]; row 1: [0, 0]. Survivors of k = 2 at T = 1.
        let host = [3.0f32, 1.0, 0.0, 0.0];
        let spec = SampleSpec { k: 2, temperature: 1.0 };
        let u = [0.5f32, 0.75];
        let p0 = 1.0 / (1.0 + (-2.0f64).exp());
        let right: (&[i64], &[f32]) = (&[0, 1], &[p0 as f32, 0.5]);
        assert_eq!(first_wrong_draw(&host, (2, 2), spec, &u, right), None);
        let wrong: (&[i64], &[f32]) = (&[0, 0], &[p0 as f32, 0.5]);
        let message = first_wrong_draw(&host, (2, 2), spec, &u, wrong).expect("row 1 is wrong");
        assert!(message.starts_with("row 1:"), "{message}");
        assert!(uniforms(300).iter().all(|u| (0.0..1.0).contains(u)));
    }
}

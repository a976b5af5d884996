//! Top-k of float32 rows at the decoder's shapes (`[1, 8, 64, 256] x [32000, 128256,
//! 256000]`, k = 1, 50, 256, 2048) against `torch.topk`, and of whole arrays (one row) from
//! 2^20 against `torch.topk` and CUB's `DeviceTopK` (which returns the k items unordered; the
//! one-block schedule to 2^24, the grid schedule at every size).
//! Logical bytes: the input read once and the outputs written (value and int64 index).
//! Every output is checked against the CPU model (values bit for bit, indices exact).

use super::{variants_and_default, Described, EntryId, Registry};
use crate::bench::config::BenchConfig;
use crate::bench::pool::SharedInput;
use crate::bench::record::BenchSize;
use anyhow::Result;
use kernels::{TopkNan, TopkPlan, TopkSpec, TopkVariant};
use model::topk as topk_model;
use rayon::prelude::*;

/// Whole arrays from this size (smaller ones are the row shapes' business).
const ARRAY_MIN: usize = 1 << 20;
/// The largest whole array the one-block schedule selects in bench time (about 5 ms at 2^24,
/// its one block reading the array five times); the grid schedule takes every size.
const BLOCK_ARRAY_MAX: usize = 1 << 24;

/// The op name of a top-k of `dtype` at `k` (shared with the baselines).
pub fn op(dtype: &str, k: usize) -> String {
    format!("topk_{dtype}_k{k}")
}

/// The model's indices of every row's top k (rows in parallel).
fn expected_indices(host: &[f32], cols: usize, k: usize) -> Result<Vec<i64>, String> {
    let spec = TopkSpec { k, largest: true, nan: TopkNan::Reject };
    let rows: Result<Vec<Vec<i64>>, String> = host
        .par_chunks(cols)
        .map(|row| topk_model::topk_rows(row, 1, cols, spec).map(|o| o.indices).map_err(|e| e.to_string()))
        .collect();
    Ok(rows?.concat())
}

/// The first output that differs from the model's, as a message.
fn first_mismatch(expected: &[i64], got: &[i64], k: usize) -> Option<String> {
    if expected.len() != got.len() {
        return Some(format!("{} indices, expected {}", got.len(), expected.len()));
    }
    let i = (0..expected.len()).find(|&i| expected[i] != got[i])?;
    Some(format!("row {} rank {}: index {}, the model's {}", i / k, i % k, got[i], expected[i]))
}

/// Why `variant` takes no top-k of `k` over rows of `cols` columns, if it takes none: k above
/// its `max_k()`, or a `--shape` narrower than one of the run's k (the baseline leaves those
/// k out too). The sampler's entries skip the same ones.
pub(super) fn unfit(variant: TopkVariant, cols: usize, k: usize) -> Option<String> {
    if k > variant.max_k() {
        Some(format!("k = {k} exceeds {}'s max_k() = {}", variant.name(), variant.max_k()))
    } else if k > cols {
        Some(format!("k = {k} exceeds the {cols} columns of a row"))
    } else {
        None
    }
}

/// One entry: `variant` (as `role`) on `rows x cols` at `k`, its input fetched by `fetch`.
fn add(
    registry: &mut Registry,
    (rows, cols, k): (usize, usize, usize),
    size: BenchSize,
    (variant, role): (TopkVariant, super::Role),
    fetch: fn(&mut crate::bench::pool::InputPool<'_>, usize, usize) -> Result<SharedInput<f32>>,
) {
    let id = EntryId::primlab("topk", op("f32", k), variant.name(), size, "f32");
    if let Some(reason) = unfit(variant, cols, k) {
        registry.skip(&id, reason);
        return;
    }
    let outputs = (rows * k * 12) as u64;
    registry.add_as(role, id, outputs + 4096, move |ctx| {
        let gpu = ctx.gpu;
        let n = rows * cols;
        let inputs = fetch(&mut ctx.pool, rows, cols)?;
        let spec = TopkSpec { k, largest: true, nan: TopkNan::Reject };
        let mut plan = TopkPlan::<f32>::new(gpu, variant, rows, cols, spec)?;
        let mut values = gpu.alloc_poisoned::<f32>(rows * k)?;
        let mut indices = gpu.alloc_poisoned::<i64>(rows * k)?;
        plan.enqueue(inputs.device.next(), &mut values, &mut indices)?;
        plan.finish()?;
        let got = gpu.download(&indices)?;
        let params = serde_json::json!({ "rows": rows, "cols": cols, "k": k, "kernel": plan.kernel_name() });
        let logical = (n * 4 + rows * k * 12) as u64;
        let described = Described::of_plan(&plan.describe(), logical, inputs.device.policy(), params);
        let what = "every row's k indices equal the model's (value descending, index ascending among equals)";
        let expected = match expected_indices(&inputs.host, cols, k) {
            Ok(e) => e,
            Err(e) => return Ok(described.wrong(what, format!("the model refused the input: {e}"))),
        };
        if let Some(mismatch) = first_mismatch(&expected, &got, k) {
            return Ok(described.wrong(what, mismatch));
        }
        let timing = ctx.measure(n, || plan.enqueue(inputs.device.next(), &mut values, &mut indices))?;
        plan.finish()?;
        Ok(described.timed(what, timing))
    });
}

/// The sampler's temperature (the PyTorch baseline's, `SAMPLE_TEMPERATURE`).
pub(super) const TEMPERATURE: f32 = 1.0;

/// Registers every variant at every decoder shape and k, and on whole arrays from 2^20,
/// each followed by its default entry.
pub fn register(config: &BenchConfig, registry: &mut Registry) {
    // The run's shapes and k, the PyTorch baseline's too.
    let (shapes, ks) = (config.topk_shapes(), config.topk_ks());
    for (rows, cols) in shapes {
        for &k in ks {
            for entry in variants_and_default(&TopkVariant::ALL, TopkVariant::best_for(rows, cols)) {
                add(registry, (rows, cols, k), BenchSize::Rows { rows, cols }, entry, |pool, r, c| pool.logits(r, c));
            }
        }
    }
    for n in config.sizes().into_iter().filter(|&n| n >= ARRAY_MIN) {
        for &k in ks {
            for entry in variants_and_default(&TopkVariant::ALL, TopkVariant::best_for(1, n)) {
                if n > BLOCK_ARRAY_MAX && entry.0 == TopkVariant::BlockRadixSelect {
                    let id = EntryId::primlab("topk", op("f32", k), entry.0.name(), BenchSize::Elements(n), "f32");
                    let reason = format!("{n} items: one block would read the whole array five times");
                    registry.skip(&id, reason);
                    continue;
                }
                add(registry, (1, n, k), BenchSize::Elements(n), entry, |pool, _, c| pool.floats(c));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_check_names_the_first_wrong_rank() {
        let host = [1.0f32, 3.0, 3.0, -1.0, 0.5, 0.5, 2.0, 0.5];
        let expected = expected_indices(&host, 4, 2).expect("no NaN");
        assert_eq!(expected, vec![1, 2, 2, 0]);
        assert_eq!(first_mismatch(&expected, &expected, 2), None);
        let message = first_mismatch(&expected, &[1, 2, 2, 1], 2).expect("a mismatch");
        assert!(message.starts_with("row 1 rank 1"), "{message}");
    }
}

//! argmax of float32: whole-array at every size (uniform inputs in
//! [-0.5, 0.5), where the maximum repeats at large n, so the lowest-index
//! rule is exercised), against CUB's `DeviceReduce::ArgMax` and
//! `torch.argmax`; and per row on the softmax shapes, against
//! `torch.argmax(dim=-1)`. Logical bytes 4n.

use super::{check, variants_and_default, Described, EntryId, Registry};
use crate::bench::config::BenchConfig;
use crate::bench::record::BenchSize;
use kernels::arg_reduce::ARG_TWO_PASS_MAX_BLOCKS;
use kernels::{ArgReducePlan, ArgReduceVariant, ArgRowsPlan, ArgRowsVariant, Extremum};
use rayon::prelude::*;

/// The op name of the whole-array argmax (shared with the baselines).
pub const OP: &str = "argmax_f32";
/// The op name of the per-row argmax.
pub const OP_ROWS: &str = "argmax_rows_f32";

/// (maximum, lowest index holding it).
pub fn host_argmax(x: &[f32]) -> (f32, usize) {
    x.par_iter()
        .enumerate()
        .map(|(i, &v)| (v, i))
        .reduce(|| (f32::NEG_INFINITY, usize::MAX), |a, b| if b.0 > a.0 || (b.0 == a.0 && b.1 < a.1) { b } else { a })
}

/// Registers both whole-array variants at every size and both per-row
/// variants on every shape, each followed by its default entry
/// ([`ArgReduceVariant::best_for`], [`ArgRowsVariant::best_for`]).
pub fn register(config: &BenchConfig, registry: &mut Registry) {
    for n in config.sizes() {
        for (variant, role) in variants_and_default(&ArgReduceVariant::ALL, ArgReduceVariant::best_for(n)) {
            let id = EntryId::primlab("arg_reduce", OP, variant.name(), BenchSize::Elements(n), "f32");
            registry.add_as(role, id, 8 * ARG_TWO_PASS_MAX_BLOCKS as u64 * 2 + 4096, move |ctx| {
                let gpu = ctx.gpu;
                let inputs = ctx.pool.floats(n)?;
                let mut plan = ArgReducePlan::<f32>::new(gpu, variant, Extremum::Max, n)?;
                plan.enqueue(inputs.device.next())?;
                let got = plan.finish()?;
                let expected = host_argmax(&inputs.host);
                let params = serde_json::json!({ "grid": plan.grid() });
                let described = Described::of_plan(&plan.describe(), 4 * n as u64, inputs.device.policy(), params);
                let what = "(maximum, lowest index) equals the host's";
                if got != expected {
                    return Ok(described.wrong(what, format!("got {got:?}, host {expected:?}")));
                }
                let timing = ctx.measure(n, || plan.enqueue(inputs.device.next()))?;
                plan.finish()?;
                Ok(described.timed(what, timing))
            });
        }
    }
    for &(rows, cols) in &config.row_shapes {
        for (variant, role) in variants_and_default(&ArgRowsVariant::ALL, ArgRowsVariant::best_for(cols)) {
            let size = BenchSize::Rows { rows, cols };
            let id = EntryId::primlab("arg_reduce", OP_ROWS, variant.name(), size, "f32");
            registry.add_as(role, id, 8 * rows as u64 + 4096, move |ctx| {
                let gpu = ctx.gpu;
                let n = rows * cols;
                let inputs = ctx.pool.logits(rows, cols)?;
                let mut plan = ArgRowsPlan::<f32>::new(gpu, variant, Extremum::Max, rows, cols)?;
                plan.enqueue(inputs.device.next())?;
                let got = plan.finish()?;
                let expected: Vec<(f32, usize)> = inputs
                    .host
                    .par_chunks(cols)
                    .map(|row| {
                        row.iter()
                            .enumerate()
                            .fold((f32::NEG_INFINITY, usize::MAX), |a, (i, &v)| if v > a.0 { (v, i) } else { a })
                    })
                    .collect();
                let params = serde_json::json!({ "rows": rows, "cols": cols });
                let described = Described::of_plan(&plan.describe(), 4 * n as u64, inputs.device.policy(), params);
                let what = "every row's (maximum, lowest column) equals the host's";
                if let Err(mismatch) = check::exact_slices("row argmax", &expected, &got) {
                    return Ok(described.wrong(what, mismatch));
                }
                let timing = ctx.measure(n, || plan.enqueue(inputs.device.next()))?;
                plan.finish()?;
                Ok(described.timed(what, timing))
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lowest_index_wins_ties() {
        let x: Vec<f32> = (0..100_000).map(|i| if i % 7 == 3 { 1.0 } else { (i % 5) as f32 * 0.1 }).collect();
        assert_eq!(host_argmax(&x), (1.0, 3));
    }
}

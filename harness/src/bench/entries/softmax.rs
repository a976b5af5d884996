//! Row softmax, float32 and bf16 (f32 math), every [`SoftmaxVariant`] (the
//! row-in-registers one up to its `max_cols()`), on the baselines' shapes,
//! against `torch.softmax`. Logical bytes 2 x element size x rows x cols.
//! Every element is checked against the float64 softmax of the same
//! (cast) input within the kernels' declared tolerance.

use super::host_value::HostValue;
use super::{variants_and_default, Described, EntryId, Registry, Role};
use crate::bench::config::BenchConfig;
use crate::bench::pool::FetchRows;
use crate::bench::record::BenchSize;
use kernels::{softmax_tolerance, SoftmaxDtype, SoftmaxElement, SoftmaxPlan, SoftmaxVariant};
use rayon::prelude::*;

/// The op name of a dtype (shared with the torch baseline).
pub fn op(dtype: &str) -> String {
    format!("softmax_{dtype}")
}

/// The first element (row, column) outside the declared tolerance, as a message.
fn check_rows<T: HostValue>(
    input: &[T],
    got: &[T],
    cols: usize,
    tolerance: &kernels::SoftmaxTolerance,
) -> Result<(), String> {
    let bad = input
        .par_chunks(cols)
        .zip(got.par_chunks(cols))
        .enumerate()
        .filter_map(|(row, (x, y))| {
            let max = x.iter().map(|v| v.value()).fold(f64::NEG_INFINITY, f64::max);
            let d: f64 = x.iter().map(|v| (v.value() - max).exp()).sum();
            x.iter()
                .zip(y)
                .enumerate()
                .find_map(|(c, (xi, yi))| {
                    let shift = xi.value() - max;
                    let exact = shift.exp() / d;
                    let got = yi.value();
                    (!tolerance.allows(exact, shift, got)).then(|| {
                        format!(
                            "row {row} column {c}: got {got:e}, exact {exact:e}, bound {:e}",
                            tolerance.element_bound(exact, shift)
                        )
                    })
                })
                .map(|m| (row, m))
        })
        .min_by_key(|(row, _)| *row);
    match bad {
        None => Ok(()),
        Some((_, message)) => Err(message),
    }
}

fn add<T>(
    registry: &mut Registry,
    dtype: &'static str,
    (rows, cols): (usize, usize),
    (variant, role): (SoftmaxVariant, Role),
    input: FetchRows<T>,
) where
    T: SoftmaxElement + HostValue,
{
    let id = EntryId::primlab("softmax", op(dtype), variant.name(), BenchSize::Rows { rows, cols }, dtype);
    if cols > variant.max_cols() {
        registry.skip(&id, format!("{cols} columns exceed {}'s max_cols() = {}", variant.name(), variant.max_cols()));
        return;
    }
    let element = std::mem::size_of::<T>();
    registry.add_as(role, id, (rows * cols * element + rows) as u64, move |ctx| {
        let gpu = ctx.gpu;
        let n = rows * cols;
        let inputs = input(&mut ctx.pool, rows, cols)?;
        let mut plan = SoftmaxPlan::<T>::new(gpu, variant, rows, cols)?;
        let mut output = gpu.alloc_poisoned::<T>(n)?;
        plan.enqueue(inputs.device.next(), &mut output)?;
        plan.finish()?;
        let got = gpu.download(&output)?;
        let params = serde_json::json!({ "rows": rows, "cols": cols, "kernel": plan.kernel_name() });
        let logical = 2 * (n * element) as u64;
        let described = Described::of_plan(&plan.describe(), logical, inputs.device.policy(), params);
        let tolerance = softmax_tolerance(cols, variant, T::DTYPE);
        let what = "every element within softmax_tolerance of the float64 softmax of the same input";
        if let Err(mismatch) = check_rows(&inputs.host, &got, cols, &tolerance) {
            return Ok(described.wrong(what, mismatch));
        }
        drop(got);
        let timing = ctx.measure(n, || plan.enqueue(inputs.device.next(), &mut output))?;
        plan.finish()?;
        Ok(described.timed(what, timing))
    });
}

/// Registers every variant on every shape, float32 and bf16, each followed
/// by its default entry ([`SoftmaxVariant::best_for`]).
pub fn register(config: &BenchConfig, registry: &mut Registry) {
    for &shape in &config.row_shapes {
        let cols = shape.1;
        for entry in variants_and_default(&SoftmaxVariant::ALL, SoftmaxVariant::best_for(cols, SoftmaxDtype::F32)) {
            add::<f32>(registry, "f32", shape, entry, |pool, r, c| pool.logits(r, c));
        }
        for entry in variants_and_default(&SoftmaxVariant::ALL, SoftmaxVariant::best_for(cols, SoftmaxDtype::Bf16)) {
            add::<half::bf16>(registry, "bf16", shape, entry, |pool, r, c| pool.logits_bf16(r, c));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_check_accepts_the_exact_softmax_and_names_a_bad_element() {
        let cols = 5;
        let input: Vec<f32> = vec![-10000.0, 0.0, 10000.0, 1.0, 2.0, 0.5, 0.25, 0.0, -1.0, 3.0];
        let mut good = Vec::new();
        for row in input.chunks(cols) {
            let max = row.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b)) as f64;
            let d: f64 = row.iter().map(|&v| (v as f64 - max).exp()).sum();
            good.extend(row.iter().map(|&v| ((v as f64 - max).exp() / d) as f32));
        }
        let tolerance = softmax_tolerance(cols, SoftmaxVariant::OnlineBlock, SoftmaxDtype::F32);
        assert!(check_rows(&input, &good, cols, &tolerance).is_ok());
        let mut bad = good.clone();
        bad[7] *= 1.01;
        let message = check_rows(&input, &bad, cols, &tolerance).unwrap_err();
        assert!(message.starts_with("row 1 column 2"), "{message}");
    }
}

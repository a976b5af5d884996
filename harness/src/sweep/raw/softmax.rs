//! Raw cases of the f32 row softmax: the GPU catalogue's row blocks (same
//! widths, rows, mask policies and seeds) with the exact (192-bit) softmax
//! of each row rounded to float64. A masked logit (-inf) has probability
//! exactly 0; a row whose every logit is masked is written as zeros (the
//! model has no softmax of it; our kernels write zeros and report it).

use super::{variant, Array, Buffer, Contract, Dtype, Len, Param, RawCase, RawSpec, Rule, Value};
use crate::sweep::gpu::id;
use crate::sweep::gpu::softmax::{masks, rows_for, rows_seed, widths};
use crate::sweep::SweepPlan;
use model::generators::softmax_rows;
use model::softmax::softmax_exact_rows_f32;
use model::ModelError;

/// The softmax contract: each row of `out` is the softmax of that row of `in`.
pub const CONTRACTS: [Contract; 1] = [Contract {
    name: "rows.f32",
    summary: "row softmax: out[r*cols + c] = exp(in[r*cols + c] - max_r) / sum_c' exp(in[r*cols + c'] - max_r) \
              (f32 in and out, rows x cols row-major; -inf logits give exactly 0, an all-masked row all 0)",
    inputs: &[Buffer { role: "in", dtype: Dtype::Float32, len: Len::N }],
    params: &[Param { name: "rows", dtype: Dtype::Int32 }, Param { name: "cols", dtype: Dtype::Int32 }],
    outputs: &[Buffer { role: "out", dtype: Dtype::Float32, len: Len::N }],
    rule: Rule::SoftmaxRows,
    what: "softmax",
}];

/// The exact softmax of every row, zeros for the all-masked ones.
pub fn exact_rows(input: &[f32], rows: usize, cols: usize) -> Result<Vec<f64>, String> {
    match softmax_exact_rows_f32(input, rows, cols) {
        Err(ModelError::AllMasked { rows: masked }) => {
            // Any finite logits stand in for the masked rows; their output is then zeroed.
            let mut stand_in = input.to_vec();
            for &r in &masked {
                stand_in[r * cols..(r + 1) * cols].fill(0.0);
            }
            let mut exact = softmax_exact_rows_f32(&stand_in, rows, cols).map_err(|e| e.to_string())?;
            for &r in &masked {
                exact[r * cols..(r + 1) * cols].fill(0.0);
            }
            Ok(exact)
        }
        other => other.map_err(|e| e.to_string()),
    }
}

/// Appends the raw softmax cases of `contract`.
pub fn cases(plan: &SweepPlan, contract: &Contract, label: &str, out: &mut Vec<RawSpec>) {
    for (w, &cols) in widths(plan).iter().enumerate() {
        let rows = rows_for(cols);
        for &mask in masks(plan) {
            let seed = rows_seed(plan, w, cols, mask);
            let family = format!("softmax_rows_{}", mask.name());
            let case_id = id("softmax", variant(label, contract), format!("{rows}x{cols}"), rows * cols, &family, seed);
            out.push(RawSpec::new(case_id, move || {
                let input = softmax_rows(rows, cols, seed, mask).map_err(|e| e.to_string())?;
                let exact = exact_rows(&input, rows, cols)?;
                Ok(RawCase {
                    inputs: vec![Array::Float32(input)],
                    params: vec![Value::Int32(rows as i32), Value::Int32(cols as i32)],
                    expected: vec![Array::Float64(exact)],
                })
            }));
        }
    }
}

//! Test support: what a correct program writes for an exported case,
//! computed from the exported input files by the model's own functions (not
//! from the export's expected files), for every contract of the registry.

use crate::sweep::raw::{Array, Value};
use kernels::HistogramSpec;

fn int(params: &[Value], k: usize) -> i64 {
    params.get(k).and_then(|v| v.as_int()).expect("an integer parameter")
}

fn float(params: &[Value], k: usize) -> f32 {
    match params.get(k) {
        Some(Value::Float32(v)) => *v,
        other => panic!("a float parameter, found {other:?}"),
    }
}

fn i32s(a: &Array) -> &[i32] {
    match a {
        Array::Int32(v) => v,
        other => panic!("int32 input, found {}", other.dtype().name()),
    }
}

fn f32s(a: &Array) -> &[f32] {
    match a {
        Array::Float32(v) => v,
        other => panic!("float32 input, found {}", other.dtype().name()),
    }
}

fn counts(c: Vec<u64>) -> Array {
    Array::Int32(c.into_iter().map(|v| v as i32).collect())
}

/// A row softmax in f64 arithmetic rounded to f32 (far inside the
/// tolerance); masked logits and all-masked rows give 0.
fn softmax_f64(x: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut out = vec![0.0f32; x.len()];
    for r in 0..rows {
        let row = &x[r * cols..(r + 1) * cols];
        let m = row.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
        if m == f64::NEG_INFINITY {
            continue;
        }
        let d: f64 = row.iter().map(|&v| (v as f64 - m).exp()).sum();
        for (c, &v) in row.iter().enumerate() {
            out[r * cols + c] = ((v as f64 - m).exp() / d) as f32;
        }
    }
    out
}

/// The top-k values (the input's type, bit for bit) and indices of every row.
fn topk(input: &Array, rows: usize, cols: usize, spec: model::topk::TopkSpec) -> Vec<Array> {
    fn solve<T: model::topk::TopkValue>(
        x: &[T],
        shape: (usize, usize),
        spec: model::topk::TopkSpec,
    ) -> (Vec<T>, Array) {
        let out = model::topk::topk_rows(x, shape.0, shape.1, spec).unwrap_or_else(|e| panic!("model: {e}"));
        (out.values, Array::Int64(out.indices))
    }
    match input {
        Array::Float32(x) => {
            let (values, indices) = solve(x, (rows, cols), spec);
            vec![Array::Float32(values), indices]
        }
        Array::Bfloat16(bits) => {
            let x: Vec<half::bf16> = bits.iter().map(|&b| half::bf16::from_bits(b)).collect();
            let (values, indices) = solve(&x, (rows, cols), spec);
            vec![Array::Bfloat16(values.iter().map(|v| v.to_bits()).collect()), indices]
        }
        Array::Float16(bits) => {
            let x: Vec<half::f16> = bits.iter().map(|&b| half::f16::from_bits(b)).collect();
            let (values, indices) = solve(&x, (rows, cols), spec);
            vec![Array::Float16(values.iter().map(|v| v.to_bits()).collect()), indices]
        }
        other => panic!("a float input, found {}", other.dtype().name()),
    }
}

/// A float32 top-k sampler, as PyTorch's recipe computes it: the row's columns sorted by value
/// descending (stable: the lower index first among equals), the first k weighed
/// `exp((v - max) / t)` in f32, the first running sum above `u * total` drawn; its column
/// and probability per row.
fn topk_sample(x: &[f32], u: &[f32], (rows, cols): (usize, usize), k: usize, t: f32) -> (Vec<i64>, Vec<f32>) {
    let mut draws = (Vec::new(), Vec::new());
    for (r, row) in x.chunks(cols).enumerate().take(rows) {
        let mut order: Vec<usize> = (0..cols).collect();
        order.sort_by(|&a, &b| row[b].partial_cmp(&row[a]).expect("no NaN"));
        order.truncate(k);
        let w: Vec<f32> = order.iter().map(|&c| ((row[c] - row[order[0]]) / t).exp()).collect();
        let total: f32 = w.iter().sum();
        let mut running = 0.0f32;
        let j = w.iter().position(|&x| {
            running += x;
            u[r] * total < running
        });
        let j = j.unwrap_or(k - 1);
        draws.0.push(order[j] as i64);
        draws.1.push(w[j] / total);
    }
    draws
}

/// The outputs of `(primitive, contract)` on `inputs` and `params`.
pub fn answer(primitive: &str, contract: &str, inputs: &[Array], params: &[Value]) -> Vec<Array> {
    let model = |e: model::ModelError| -> ! { panic!("model: {e}") };
    match (primitive, contract) {
        ("topk", c) if c.starts_with("sample") => {
            let shape = (int(params, 0) as usize, int(params, 1) as usize);
            let (columns, p) =
                topk_sample(f32s(&inputs[0]), f32s(&inputs[1]), shape, int(params, 2) as usize, float(params, 3));
            let mut out = vec![Array::Int64(columns)];
            if c.starts_with("sample_with_probability") {
                out.push(Array::Float32(p));
            }
            out
        }
        ("scan", "exclusive.i32") => {
            vec![Array::Int64(model::scan::exclusive_scan_i64(i32s(&inputs[0])).unwrap_or_else(|e| model(e)))]
        }
        ("scan", "inclusive.i32") => {
            vec![Array::Int64(model::scan::inclusive_scan_i64(i32s(&inputs[0])).unwrap_or_else(|e| model(e)))]
        }
        ("reduce", "sum.i32") => {
            vec![Array::Int64(vec![model::reduce::reduce_i64(i32s(&inputs[0])).unwrap_or_else(|e| model(e))])]
        }
        ("arg_reduce", c) => {
            let x = f32s(&inputs[0]);
            let best =
                if c.starts_with("argmax") { model::arg_reduce::argmax(x) } else { model::arg_reduce::argmin(x) };
            vec![Array::Int64(vec![best.unwrap_or_else(|e| model(e)).1 as i64])]
        }
        ("compact", c) => {
            let x = i32s(&inputs[0]);
            let kept = if c.starts_with("flagged") {
                let Array::Uint8(flags) = &inputs[1] else { panic!("uint8 flags") };
                let binary: Vec<u8> = flags.iter().map(|&f| u8::from(f != 0)).collect();
                model::compact::compact_flags(x, &binary).unwrap_or_else(|e| model(e)).output
            } else {
                model::compact::compact_positive(x).output
            };
            let count = kept.len() as i64;
            vec![Array::Int32(kept), Array::Int64(vec![count])]
        }
        ("segmented_reduce", c) => {
            let Array::Int64(wide) = &inputs[1] else { panic!("int64 offsets") };
            let offsets: Vec<usize> = wide.iter().map(|&o| o as usize).collect();
            let x = i32s(&inputs[0]);
            let out = if c.starts_with("max") {
                model::segmented_reduce::segmented_max(x, &offsets)
            } else {
                model::segmented_reduce::segmented_sum(x, &offsets)
            };
            vec![Array::Int64(out.unwrap_or_else(|e| model(e)))]
        }
        ("histogram", "even.i32") => {
            let spec = HistogramSpec {
                bins: int(params, 0) as u32,
                lower: int(params, 1) as i32,
                upper: int(params, 2) as i32,
            };
            vec![counts(model::histogram::histogram_even(i32s(&inputs[0]), &spec).unwrap_or_else(|e| model(e)))]
        }
        ("histogram", "even.f32") => {
            let spec = HistogramSpec { bins: int(params, 0) as u32, lower: float(params, 1), upper: float(params, 2) };
            assert_eq!(model::histogram::f32_scale(&spec), float(params, 3), "the exported scale is the model's");
            vec![counts(model::histogram::histogram_even(f32s(&inputs[0]), &spec).unwrap_or_else(|e| model(e)))]
        }
        ("softmax", "rows.f32") => {
            vec![Array::Float32(softmax_f64(f32s(&inputs[0]), int(params, 0) as usize, int(params, 1) as usize))]
        }
        // A left-to-right f32 sum: one of the orders the bound allows.
        ("float_reduce", "sum.f32") => vec![Array::Float32(vec![f32s(&inputs[0]).iter().sum()])],
        ("exact_sum", "sum.f32") => {
            let mut acc = model::exact::BinnedAccumulator::new();
            f32s(&inputs[0]).iter().for_each(|&v| acc.add(v));
            vec![Array::Float32(vec![acc.round()])]
        }
        ("topk", c) => {
            let (rows, cols) = (int(params, 0) as usize, int(params, 1) as usize);
            let (k, largest) = (int(params, 2) as usize, !c.starts_with("smallest"));
            let spec = model::topk::TopkSpec { k, largest, nan: model::topk::TopkNan::Reject };
            topk(&inputs[0], rows, cols, spec)
        }
        other => panic!("no model answer for {other:?}"),
    }
}

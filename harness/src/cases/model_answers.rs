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

/// The outputs of `(primitive, contract)` on `inputs` and `params`.
pub fn answer(primitive: &str, contract: &str, inputs: &[Array], params: &[Value]) -> Vec<Array> {
    let model = |e: model::ModelError| -> ! { panic!("model: {e}") };
    match (primitive, contract) {
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
                model::segmented::segmented_max(x, &offsets)
            } else {
                model::segmented::segmented_sum(x, &offsets)
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
        other => panic!("no model answer for {other:?}"),
    }
}

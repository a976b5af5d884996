//! Raw cases of the even-bin histogram: the GPU catalogue's int32 shapes
//! and its f32 shape (same sizes, families, bins, ranges and seeds) with the
//! model's counts. The bin formulas are the model's (`model::histogram`):
//! int32 `bin = ((x - lower) * bins) / (upper - lower)` in 64-bit integers;
//! f32 `bin = min((int)((x - lower) * scale), bins - 1)`, two f32 roundings
//! and no fused arithmetic, `scale = (float)bins / (upper - lower)` in f32
//! (given as a parameter). Samples outside `[lower, upper)` are not counted.

use super::{variant, Array, Buffer, Contract, Dtype, Len, Param, RawCase, RawSpec, Rule, Value};
use crate::sweep::gpu::histogram::{int_input, int_shapes, visits_f32, F32_SPEC};
use crate::sweep::gpu::{case_seed, id};
use crate::sweep::SweepPlan;
use kernels::HistogramSpec;
use model::generators::{uniform_f32, DataFamily};
use model::histogram::{f32_scale, histogram_even};

const COUNTS: Buffer = Buffer { role: "counts", dtype: Dtype::Int32, len: Len::PerCase };
const BINS: Param = Param { name: "bins", dtype: Dtype::Int32 };

/// The histogram contracts: `counts[b]` is the number of samples in bin b.
pub const CONTRACTS: [Contract; 2] = [
    Contract {
        name: "even.i32",
        summary: "even-bin histogram: counts[b] = #{i : lower <= in[i] < upper, ((in[i] - lower) * bins) / \
                  (upper - lower) = b in 64-bit integers} (int32 in, int32 counts of bins entries)",
        inputs: &[Buffer { role: "in", dtype: Dtype::Int32, len: Len::N }],
        params: &[BINS, Param { name: "lower", dtype: Dtype::Int32 }, Param { name: "upper", dtype: Dtype::Int32 }],
        outputs: &[COUNTS],
        rule: Rule::Exact,
        what: "bin counts",
    },
    Contract {
        name: "even.f32",
        summary: "even-bin histogram: counts[b] = #{i : lower <= in[i] < upper, min((int)__fmul_rn(__fsub_rn(in[i], \
                  lower), scale), bins - 1) = b} (f32 in, NaN not counted, int32 counts of bins entries)",
        inputs: &[Buffer { role: "in", dtype: Dtype::Float32, len: Len::N }],
        params: &[
            BINS,
            Param { name: "lower", dtype: Dtype::Float32 },
            Param { name: "upper", dtype: Dtype::Float32 },
            Param { name: "scale", dtype: Dtype::Float32 },
        ],
        outputs: &[COUNTS],
        rule: Rule::Exact,
        what: "bin counts",
    },
];

/// The model's counts as int32 (every count is at most n).
fn counts(counts: Vec<u64>) -> Result<Array, String> {
    let narrow: Result<Vec<i32>, _> = counts.into_iter().map(i32::try_from).collect();
    narrow.map(Array::Int32).map_err(|_| "a bin count does not fit int32".to_string())
}

/// Appends the raw histogram cases of `contract`.
pub fn cases(plan: &SweepPlan, contract: &Contract, label: &str, out: &mut Vec<RawSpec>) {
    let float = contract.inputs[0].dtype == Dtype::Float32;
    for &n in &plan.sizes {
        if float {
            if !visits_f32(plan, n) {
                continue;
            }
            let seed = case_seed(plan.seed, "histogram.f32", n, 0);
            let family = format!("{}.bins100", DataFamily::UniformFloat.name());
            let case_id = id("histogram", variant(label, contract), n.to_string(), n, &family, seed);
            out.push(RawSpec::new(case_id, move || {
                let samples = uniform_f32(n, seed);
                let expected = counts(histogram_even(&samples, &F32_SPEC).map_err(|e| e.to_string())?)?;
                let s = F32_SPEC;
                Ok(RawCase {
                    inputs: vec![Array::Float32(samples)],
                    params: vec![
                        Value::Int32(s.bins as i32),
                        Value::Float32(s.lower),
                        Value::Float32(s.upper),
                        Value::Float32(f32_scale(&s)),
                    ],
                    expected: vec![expected],
                })
            }));
            continue;
        }
        for (s, &(shape, data, bins, lower, upper)) in int_shapes(plan, n).iter().enumerate() {
            let seed = case_seed(plan.seed, "histogram", n, s);
            let family = format!("{}.{shape}", data.name());
            let case_id = id("histogram", variant(label, contract), n.to_string(), n, &family, seed);
            out.push(RawSpec::new(case_id, move || {
                let samples = int_input(shape, data, n, seed)?;
                let spec = HistogramSpec { bins: bins as u32, lower, upper };
                let expected = counts(histogram_even(&samples, &spec).map_err(|e| e.to_string())?)?;
                Ok(RawCase {
                    inputs: vec![Array::Int32(samples)],
                    params: vec![Value::Int32(bins as i32), Value::Int32(lower), Value::Int32(upper)],
                    expected: vec![expected],
                })
            }));
        }
    }
}

//! The f32 contracts on the float edge families: argmax and argmin (finite values only, as
//! the contract requires), the f32 sum held to the order-free bound (`sum_edges`, which no
//! order overflows), the correctly rounded sum (every float family: its contract defines the
//! overflowing sum and the sign of a zero sum), the f32 histogram on its bin edges, and the
//! row softmax on edge logits. Expected outputs are the model's, as in the raw modules.

use super::bins::bin_edges_f32;
use super::int_cases::int32_counts;
use super::values::{alternating_extremes, float_edges, signed_zero_ties, softmax_edge_rows, sum_edges};
use crate::sweep::gpu::arg_reduce::FloatFamily;
use crate::sweep::gpu::{case_seed, id};
use crate::sweep::raw::{variant, Array, Contract, RawCase, RawSpec, Value};
use crate::sweep::SweepPlan;
use kernels::Extremum;

/// The families of argmax and argmin: finite, with ties at the extremum.
pub const ARG_FAMILIES: [FloatFamily; 3] = [
    ("float_edges", float_edges),
    ("signed_zero_ties", signed_zero_ties),
    ("alternating_extremes", alternating_extremes),
];

/// The families of the f32 sum held to the order-free bound: none that overflows in some order.
pub const SUM_FAMILIES: [FloatFamily; 1] = [("sum_edges", sum_edges)];

/// The families of the correctly rounded sum: all of them (by the model's contract an
/// overflowing exact sum is ±inf; an input of -0.0 terms only is avoided, see [`exact_sum`]).
pub const EXACT_SUM_FAMILIES: [FloatFamily; 4] = [
    ("float_edges", float_edges),
    ("sum_edges", sum_edges),
    ("alternating_extremes", alternating_extremes),
    ("signed_zero_ties", signed_zero_ties),
];

/// The lowest index of the maximum or minimum (`argmax.f32`, `argmin.f32`): family `f` at
/// `n` seeded `case_seed(plan.seed, "arg_reduce.f32", n, k + f)` where `k` is the number of
/// the catalogue's f32 families at `n`.
pub fn arg_reduce(plan: &SweepPlan, contract: &Contract, label: &str, out: &mut Vec<RawSpec>) {
    use crate::sweep::gpu::arg_reduce::{expected, float_families};
    let e = if contract.name.starts_with("argmin") { Extremum::Min } else { Extremum::Max };
    for n in super::sizes(plan) {
        let first = float_families(plan, n).len();
        for (f, &(family, make)) in ARG_FAMILIES.iter().enumerate() {
            let seed = case_seed(plan.seed, "arg_reduce.f32", n, first + f);
            let case_id = id("arg_reduce", variant(label, contract), n.to_string(), n, family, seed);
            out.push(RawSpec::new(case_id, move || {
                let data = make(n, seed);
                let (_, index) = expected(e, &data).map_err(|e| e.to_string())?;
                Ok(RawCase::new(vec![Array::Float32(data)], vec![Array::Int64(vec![index as i64])]))
            }));
        }
    }
}

/// Appends, at each edge size, one case per family of `families`, family `f` seeded
/// `case_seed(plan.seed, seed_label, n, f)`, the data made by `case_of(input)`.
fn per_family(
    plan: &SweepPlan,
    (primitive, seed_label): (&str, &str),
    contract: &Contract,
    label: &str,
    families: &'static [FloatFamily],
    case_of: fn(Vec<f32>) -> Result<RawCase, String>,
    out: &mut Vec<RawSpec>,
) {
    for n in super::sizes(plan) {
        for (f, &(family, make)) in families.iter().enumerate() {
            let seed = case_seed(plan.seed, seed_label, n, f);
            let case_id = id(primitive, variant(label, contract), n.to_string(), n, family, seed);
            out.push(RawSpec::new(case_id, move || case_of(make(n, seed))));
        }
    }
}

/// The exact sum rounded to float64, as the order-free bound's contract (`sum.f32`) records it.
fn exact_sum_case(x: Vec<f32>) -> Result<RawCase, String> {
    let wide: Vec<f64> = x.iter().map(|&v| v as f64).collect();
    let exact = model::exact::exact_sum_f64(&wide).map_err(|e| e.to_string())?.rounded_f64;
    Ok(RawCase::new(vec![Array::Float32(x)], vec![Array::Float64(vec![exact])]))
}

/// The f32 sum in any order (`float_reduce` `sum.f32`), seeded under `float_reduce.edges`.
pub fn float_sum(plan: &SweepPlan, contract: &Contract, label: &str, out: &mut Vec<RawSpec>) {
    per_family(plan, ("float_reduce", "float_reduce.edges"), contract, label, &SUM_FAMILIES, exact_sum_case, out);
}

/// The correctly rounded sum bit for bit (`exact_sum` `sum.f32`), seeded under `exact_sum.edges`.
pub fn exact_sum(plan: &SweepPlan, contract: &Contract, label: &str, out: &mut Vec<RawSpec>) {
    fn case_of(mut x: Vec<f32>) -> Result<RawCase, String> {
        // The sign of a zero sum whose every term is -0.0 is contested: IEEE 754 addition gives
        // -0.0, the model +0.0 (and the contract's own doc says -0.0). A correct kernel must not
        // fail on it, so such an input gets one +0.0, which makes +0.0 the answer either way.
        if x.iter().all(|v| *v == 0.0 && v.is_sign_negative()) {
            if let Some(first) = x.first_mut() {
                *first = 0.0;
            }
        }
        let sum = crate::sweep::gpu::exact_sum::expected_of(&x)?;
        Ok(RawCase::new(vec![Array::Float32(x)], vec![Array::Float32(vec![sum])]))
    }
    per_family(plan, ("exact_sum", "exact_sum.edges"), contract, label, &EXACT_SUM_FAMILIES, case_of, out);
}

/// The bin counts (`even.f32`) of the catalogue's f32 shape on its bin edges (`bin_edges`):
/// seeded `case_seed(plan.seed, "histogram.f32", n, 1)`, after the catalogue's one f32
/// family (position 0), named `bin_edges.bins100` as that one is `uniform_float.bins100`.
pub fn histogram(plan: &SweepPlan, contract: &Contract, label: &str, out: &mut Vec<RawSpec>) {
    use crate::sweep::gpu::histogram::F32_SPEC;
    for n in super::sizes(plan) {
        let seed = case_seed(plan.seed, "histogram.f32", n, 1);
        let case_id = id("histogram", variant(label, contract), n.to_string(), n, "bin_edges.bins100", seed);
        out.push(RawSpec::new(case_id, move || {
            let s = F32_SPEC;
            let samples = bin_edges_f32(&s, n, seed);
            let counts = model::histogram::histogram_even(&samples, &s).map_err(|e| e.to_string())?;
            Ok(RawCase {
                inputs: vec![Array::Float32(samples)],
                params: vec![
                    Value::Int32(s.bins as i32),
                    Value::Float32(s.lower),
                    Value::Float32(s.upper),
                    Value::Float32(model::histogram::f32_scale(&s)),
                ],
                expected: vec![int32_counts(counts)?],
            })
        }));
    }
}

/// The name of the softmax edge family.
pub const SOFTMAX_EDGES: &str = "softmax_edges";

/// The row softmax (`rows.f32`) on edge logits ([`softmax_edge_rows`]) at each of the
/// catalogue's row widths whose block of rows holds at most
/// [`EDGE_FAMILIES_MAX`](super::EDGE_FAMILIES_MAX) logits, none in a sanitizer plan. Width
/// `w` (of `cols` columns) is seeded `case_seed(plan.seed, "softmax", cols, 4w + 3)`: the
/// catalogue seeds its three mask policies at `4w` to `4w + 2`.
pub fn softmax(plan: &SweepPlan, contract: &Contract, label: &str, out: &mut Vec<RawSpec>) {
    use crate::sweep::gpu::softmax::{rows_for, widths};
    use crate::sweep::raw::softmax::exact_rows;
    if plan.one_family {
        return;
    }
    for (w, &cols) in widths(plan).iter().enumerate() {
        let rows = rows_for(cols);
        if rows * cols > super::EDGE_FAMILIES_MAX {
            continue;
        }
        let seed = case_seed(plan.seed, "softmax", cols, 4 * w + 3);
        let case_id =
            id("softmax", variant(label, contract), format!("{rows}x{cols}"), rows * cols, SOFTMAX_EDGES, seed);
        out.push(RawSpec::new(case_id, move || {
            let input = softmax_edge_rows(rows * cols, seed);
            let exact = exact_rows(&input, rows, cols)?;
            Ok(RawCase {
                inputs: vec![Array::Float32(input)],
                params: vec![Value::Int32(rows as i32), Value::Int32(cols as i32)],
                expected: vec![Array::Float64(exact)],
            })
        }));
    }
}

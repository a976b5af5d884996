//! The cases of a typed contract and their exact model: each size of the
//! plan with each of the contract's data families ([`super::families`]),
//! the expected output computed from the input as the kernel reads it.
//!
//! The model: integer sums wrap in the output type (two's complement, the
//! same in any order); min and max are exact (an empty reduce gives the
//! identity: +inf/-inf, or the type's largest/smallest integer); a float sum's
//! expected value is the exact sum of its terms rounded once to float64
//! ([`ExactSum`]); an arg reduction's index is the lowest index of the
//! extremum under the contract's NaN rule.

use super::exact::ExactSum;
use super::families::{self, float_values, int_values, Family};
use super::parts::{is_float, short, NanRule, Op, Parts, Shape};
use crate::sweep::gpu::{case_seed, id};
use crate::sweep::raw::{variant, Array, Contract, Dtype, RawCase, RawSpec};
use crate::sweep::SweepPlan;
use kernels::ScanKind;
use rayon::prelude::*;

/// From this size on a catalogue keeps its first two families (the rest
/// target comparisons, signs and runs, which the smaller sizes exercise in
/// every launch shape).
pub const FEW_FAMILIES_FROM: usize = 1 << 24;

/// The cases of `parts`' `contract` for `plan`, variants named `<label>.<contract>`.
pub fn cases(plan: &SweepPlan, parts: Parts, contract: &'static Contract, label: &str) -> Vec<RawSpec> {
    let families = families::all(&parts);
    let primitive = parts.primitive().name();
    let mut out = Vec::new();
    for &n in &plan.sizes {
        // An arg reduction of nothing has no index.
        if n == 0 && matches!(parts.shape, Shape::Arg { .. }) {
            continue;
        }
        let kept = match (plan.one_family, n >= FEW_FAMILIES_FROM) {
            (true, _) => 1,
            (false, true) => 2,
            (false, false) => families.len(),
        };
        for (f, &family) in families.iter().enumerate().take(kept) {
            let seed = case_seed(plan.seed, &format!("typed.{}", short(parts.dtype_in)), n, f);
            let case_id = id(primitive, variant(label, contract), n.to_string(), n, family.name(), seed);
            out.push(RawSpec::new(case_id, move || make(parts, family, n, seed)));
        }
    }
    out
}

/// One case: the input of `family` and the model's output.
pub fn make(parts: Parts, family: Family, n: usize, seed: u64) -> Result<RawCase, String> {
    let mut input = families::make(family, parts.dtype_in, n, seed);
    if let (NanRule::NanIgnored, Some(values)) = (parts.nan, float_values(&input)) {
        // The NaN-ignored rule defines no index for an input that is NaN only.
        if values.iter().all(|v| v.is_nan()) {
            let mut values = values;
            values[n - 1] = 0.0;
            input = families::float_array(parts.dtype_in, values);
        }
    }
    let expected = model(&parts, &input)?;
    Ok(RawCase::new(vec![input], vec![expected]))
}

/// The model's output for `input`.
pub fn model(parts: &Parts, input: &Array) -> Result<Array, String> {
    if let Shape::Arg { max } = parts.shape {
        let index = arg_index(input, max, parts.nan).ok_or("an input with no index (empty, or NaN only)")?;
        return Ok(Array::Int64(vec![index as i64]));
    }
    if parts.float_sum() {
        let values = float_values(input).ok_or("a float input")?;
        return Ok(Array::Float64(float_sums(&values, parts.shape)));
    }
    if is_float(parts.dtype_in) {
        let values = float_values(input).ok_or("a float input")?;
        let out = fold_shape(&values, parts.shape, float_identity(parts.op), |a, b| float_op(parts.op, a, b));
        return Ok(families::float_array(parts.dtype_out, out));
    }
    let values = int_values(input).ok_or("an integer input")?;
    let (out_type, op) = (parts.dtype_out, parts.op);
    let out = fold_shape(&values, parts.shape, int_identity(op, out_type), |a, b| int_op(op, out_type, a, b));
    Ok(match out_type {
        Dtype::Int32 => Array::Int32(out.into_iter().map(|v| v as i32).collect()),
        _ => Array::Int64(out),
    })
}

/// The identity of a float min or max (and sum).
pub fn float_identity(op: Op) -> f64 {
    match op {
        Op::Sum => 0.0,
        Op::Min => f64::INFINITY,
        Op::Max => f64::NEG_INFINITY,
    }
}

fn float_op(op: Op, a: f64, b: f64) -> f64 {
    match op {
        Op::Sum => a + b,
        Op::Min => a.min(b),
        Op::Max => a.max(b),
    }
}

/// The identity of an integer operator in `out`.
pub fn int_identity(op: Op, out: Dtype) -> i64 {
    match (op, out) {
        (Op::Sum, _) => 0,
        (Op::Min, Dtype::Int32) => i32::MAX.into(),
        (Op::Max, Dtype::Int32) => i32::MIN.into(),
        (Op::Min, _) => i64::MAX,
        (Op::Max, _) => i64::MIN,
    }
}

/// `op` in the output type: a sum wraps there.
fn int_op(op: Op, out: Dtype, a: i64, b: i64) -> i64 {
    match (op, out) {
        (Op::Sum, Dtype::Int32) => (a as i32).wrapping_add(b as i32) as i64,
        (Op::Sum, _) => a.wrapping_add(b),
        (Op::Min, _) => a.min(b),
        (Op::Max, _) => a.max(b),
    }
}

/// The reduce (one element) or scan of `values` by `op` from `identity`.
fn fold_shape<T: Copy>(values: &[T], shape: Shape, identity: T, op: impl Fn(T, T) -> T) -> Vec<T> {
    let mut acc = identity;
    match shape {
        Shape::Scan(ScanKind::Inclusive) => values
            .iter()
            .map(|&x| {
                acc = op(acc, x);
                acc
            })
            .collect(),
        Shape::Scan(_) => values
            .iter()
            .map(|&x| {
                let before = acc;
                acc = op(acc, x);
                before
            })
            .collect(),
        _ => vec![values.iter().fold(identity, |a, &x| op(a, x))],
    }
}

/// Elements per chunk of the exact prefix sums (each chunk on one core).
const SUM_CHUNK: usize = 1 << 16;

/// The exact sums before each chunk of `values` (the carry a chunk starts from).
pub fn chunk_carries(values: &[f64]) -> Vec<ExactSum> {
    let totals: Vec<ExactSum> = values
        .par_chunks(SUM_CHUNK)
        .map(|chunk| {
            let mut s = ExactSum::new();
            chunk.iter().for_each(|&x| s.add(x));
            s
        })
        .collect();
    let mut carry = ExactSum::new();
    totals
        .iter()
        .map(|t| {
            let before = carry.clone();
            carry.merge(t);
            before
        })
        .collect()
}

/// The exact sum (reduce) or exact prefix sums (scan) of `values`, each rounded once to f64.
pub fn float_sums(values: &[f64], shape: Shape) -> Vec<f64> {
    let Shape::Scan(kind) = shape else {
        let mut s = ExactSum::new();
        values.iter().for_each(|&x| s.add(x));
        return vec![s.to_f64()];
    };
    let carries = chunk_carries(values);
    values
        .par_chunks(SUM_CHUNK)
        .zip(carries)
        .flat_map_iter(|(chunk, mut s)| {
            chunk
                .iter()
                .map(|&x| {
                    if kind == ScanKind::Inclusive {
                        s.add(x);
                        s.to_f64()
                    } else {
                        let before = s.to_f64();
                        s.add(x);
                        before
                    }
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The index an arg reduction gives: under `nan_first` the first NaN if any;
/// else the lowest index of the maximum (or minimum) of the values that are
/// not NaN, -0.0 equal to 0.0. None when no value is left.
pub fn arg_index(input: &Array, max: bool, nan: NanRule) -> Option<usize> {
    if let Some(ints) = int_values(input) {
        return first_extremum(ints.iter().copied().enumerate(), max);
    }
    let values = float_values(input)?;
    if nan == NanRule::NanFirst {
        if let Some(i) = values.iter().position(|v| v.is_nan()) {
            return Some(i);
        }
    }
    first_extremum(values.iter().copied().enumerate().filter(|(_, v)| !v.is_nan()), max)
}

fn first_extremum<T: PartialOrd + Copy>(items: impl Iterator<Item = (usize, T)>, max: bool) -> Option<usize> {
    let mut best: Option<(usize, T)> = None;
    for (i, v) in items {
        let better = best.is_none_or(|(_, b)| if max { v > b } else { v < b });
        if better {
            best = Some((i, v));
        }
    }
    best.map(|(i, _)| i)
}

//! The cases of a typed contract and their exact model: each size of the
//! plan with each of the contract's data families ([`super::families`]),
//! the expected output computed from the input as the kernel reads it.
//!
//! The model: integer sums wrap in the output type (two's complement, the
//! same in any order); min and max are exact (an empty reduce gives the
//! identity: +inf/-inf, or the type's largest/smallest integer) under the
//! contract's NaN rule (nan_propagate: a NaN in the fold gives NaN;
//! nan_ignored: NaN is skipped, a fold of NaN only gives NaN); a float sum's
//! expected value is the exact sum of its terms rounded once to float64
//! ([`ExactSum`]); an arg reduction's index is the lowest index of the
//! extremum under the contract's NaN rule.

use super::exact::ExactSum;
use super::families::{self, float_values, int_values, Family};
use super::parts::{is_float, short, NanRule, Op, Parts, Shape};
use crate::sweep::gpu::{case_seed, id};
use crate::sweep::raw::{variant, Array, Contract, Dtype, RawCase, RawSpec, Value};
use crate::sweep::SweepPlan;
use kernels::ScanKind;
use rayon::prelude::*;

/// From this size on a catalogue keeps its first two families (the rest
/// target comparisons, signs and runs, which the smaller sizes exercise in
/// every launch shape).
pub const FEW_FAMILIES_FROM: usize = 1 << 24;

/// The cases of `parts`' `contract` for `plan`, variants named `<label>.<contract>`.
pub fn cases(plan: &SweepPlan, parts: Parts, contract: &'static Contract, label: &str) -> Vec<RawSpec> {
    if parts.shape == Shape::Segmented {
        return segmented_cases(plan, parts, contract, label);
    }
    if let Shape::Softmax { .. } = parts.shape {
        return softmax_cases(plan, parts, contract, label);
    }
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

/// The segmented cases: the registry catalogue's segment shapes at each size
/// (the long segment of 512^2 + 1 items included), named `<family>.<shape>`.
/// Below [`FEW_FAMILIES_FROM`] the families take turns over the shapes from
/// one size to the next (the `k`-th case of the plan takes family `k`,
/// cycling), so every family meets several shapes once the plan has as many
/// cases as families; from there on shape `s` takes family `s`.
fn segmented_cases(plan: &SweepPlan, parts: Parts, contract: &'static Contract, label: &str) -> Vec<RawSpec> {
    use crate::sweep::gpu::segmented_reduce::{shape_name, shapes, sizes};
    let families = families::all(&parts);
    let mut out = Vec::new();
    let mut turn = 0;
    for n in sizes(plan) {
        for (s, shape) in shapes(plan, n).into_iter().enumerate() {
            let k = if n >= FEW_FAMILIES_FROM { s } else { turn };
            turn += 1;
            let family = families[k % families.len()];
            let seed = case_seed(plan.seed, &format!("typed.segmented.{}", short(parts.dtype_in)), n, s);
            let name = format!("{}.{}", family.name(), shape_name(shape, n));
            let case_id = id("segmented_reduce", variant(label, contract), n.to_string(), n, &name, seed);
            out.push(RawSpec::new(case_id, move || {
                let values = input_of(&parts, family, n, seed)?;
                let offsets = crate::sweep::gpu::segmented_reduce::offsets(shape, n, seed);
                let offsets = Array::Int64(offsets.into_iter().map(|o| o as i64).collect());
                let inputs = vec![values, offsets];
                let expected = model(&parts, &inputs)?;
                let segments = Value::Int64(expected[0].count() as i64);
                Ok(RawCase { inputs, params: vec![segments], expected })
            }));
        }
    }
    out
}

/// The softmax cases: the registry catalogue's row blocks (same widths, rows,
/// mask policies and seeds), the logits rounded to the input type, with the
/// exact softmax of each row as the input holds it (float64; all-masked rows
/// 0, or NaN under the all_masked_nan rule).
fn softmax_cases(plan: &SweepPlan, parts: Parts, contract: &'static Contract, label: &str) -> Vec<RawSpec> {
    use crate::sweep::gpu::softmax::{masks, rows_for, rows_seed, widths};
    let mut out = Vec::new();
    for (w, &cols) in widths(plan).iter().enumerate() {
        let rows = rows_for(cols);
        for &mask in masks(plan) {
            let seed = rows_seed(plan, w, cols, mask);
            let family = format!("softmax_rows_{}", mask.name());
            let (size, n) = match parts.shape {
                Shape::Softmax { strided: true, .. } => {
                    (format!("{rows}x{cols}/{}", stride_of(cols)), rows * stride_of(cols))
                }
                _ => (format!("{rows}x{cols}"), rows * cols),
            };
            let case_id = id("softmax", variant(label, contract), size, n, &family, seed);
            out.push(RawSpec::new(case_id, move || {
                let logits = model::generators::softmax_rows(rows, cols, seed, mask).map_err(|e| e.to_string())?;
                let input = families::float_array(parts.dtype_in, logits.into_iter().map(f64::from).collect());
                // Exact in f32: bfloat16 and float32 logits widen without rounding.
                let held: Vec<f32> = float_values(&input).ok_or("float logits")?.iter().map(|&v| v as f32).collect();
                let mut exact = crate::sweep::raw::softmax::exact_rows(&held, rows, cols)?;
                if let Shape::Softmax { masked_nan: true, .. } = parts.shape {
                    // The rule's answer for an all-masked row: every element NaN.
                    for (logits, probabilities) in held.chunks(cols.max(1)).zip(exact.chunks_mut(cols.max(1))) {
                        if logits.iter().all(|&x| x == f32::NEG_INFINITY) {
                            probabilities.fill(f64::NAN);
                        }
                    }
                }
                let mut params = vec![Value::Int32(rows as i32), Value::Int32(cols as i32)];
                let input = match parts.shape {
                    Shape::Softmax { strided: true, .. } => {
                        params.push(Value::Int32(stride_of(cols) as i32));
                        strided(parts.dtype_in, &held, cols)
                    }
                    _ => input,
                };
                Ok(RawCase { inputs: vec![input], params, expected: vec![Array::Float64(exact)] })
            }));
        }
    }
    out
}

/// The row stride of a strided softmax case of `cols` columns: between 1
/// and 5 elements past the row, so rows start off any alignment a kernel
/// might assume.
pub fn stride_of(cols: usize) -> usize {
    cols + 1 + cols % 5
}

/// `logits` (rows of `cols`) laid out in rows of [`stride_of`] elements, the
/// elements past each row NaN (a kernel that reads them into a row's max or
/// sum writes NaN).
fn strided(dtype: Dtype, logits: &[f32], cols: usize) -> Array {
    let stride = stride_of(cols);
    let mut values = Vec::with_capacity(logits.len() / cols.max(1) * stride);
    for row in logits.chunks(cols.max(1)) {
        values.extend(row.iter().map(|&x| f64::from(x)));
        values.extend(std::iter::repeat_n(f64::NAN, stride - row.len()));
    }
    families::float_array(dtype, values)
}

/// One case: the input of `family` (with flags for a flagged compaction) and the model's output.
pub fn make(parts: Parts, family: Family, n: usize, seed: u64) -> Result<RawCase, String> {
    if let Shape::Histogram { closed } = parts.shape {
        return histogram_case(parts, family, n, seed, closed);
    }
    let mut input = input_of(&parts, family, n, seed)?;
    let arg_ignoring_nan = matches!(parts.shape, Shape::Arg { .. }) && parts.nan == NanRule::NanIgnored;
    if let (true, Some(values)) = (arg_ignoring_nan, float_values(&input)) {
        // The NaN-ignored arg rule defines no index for an input that is NaN
        // only (a min or max of NaN only is NaN: those inputs stay).
        if values.iter().all(|v| v.is_nan()) {
            let mut values = values;
            values[n - 1] = 0.0;
            input = families::float_array(parts.dtype_in, values);
        }
    }
    let mut inputs = vec![input];
    if parts.shape == (Shape::Compact { flagged: true }) {
        inputs.push(families::flags(n, seed));
    }
    let expected = model(&parts, &inputs)?;
    Ok(RawCase::new(inputs, expected))
}

/// The input of `family` for `parts`: a float16 sum's scaled into float16's range.
fn input_of(parts: &Parts, family: Family, n: usize, seed: u64) -> Result<Array, String> {
    let input = families::make(family, parts.dtype_in, n, seed);
    if parts.float_sum() && (parts.dtype_out == Dtype::Float16 || parts.accumulator == Dtype::Float16) {
        return within_float16(parts.dtype_in, input);
    }
    Ok(input)
}

/// `input` scaled by a power of two so that the sum of its magnitudes is at
/// most 2^14: then every partial sum, in any order, and every rounding of
/// one, stays below float16's largest finite value (65504), so a float16
/// accumulator or output never overflows (the model has no overflow rule:
/// a finite input has a finite sum). The family's pattern is kept; values
/// pushed below float16's subnormals round as the type rounds them.
fn within_float16(dtype: Dtype, input: Array) -> Result<Array, String> {
    let values = float_values(&input).ok_or("a float input")?;
    let magnitude: f64 = values.par_iter().map(|v| v.abs()).sum();
    if magnitude <= 2f64.powi(14) {
        return Ok(input);
    }
    let scale = 2f64.powi(14 - magnitude.log2().ceil() as i32);
    Ok(families::float_array(dtype, values.into_iter().map(|v| v * scale).collect()))
}

/// The bounds of a typed histogram's cases: float samples in 100 bins of
/// [-1, 1) (the families' ±1 sit on both edges; float64 samples with float64
/// bounds and scale); integers from `small_values`
/// in 64 bins of [-100, 100) (unsigned: of [0, 200); its extremes on both
/// edges), the others in 4096 bins of [i64::MIN, i64::MAX) (unsigned: of
/// [0, u32::MAX)), the type's largest value on the upper edge.
const FLOAT_BINS: (u32, f32, f32) = (100, -1.0, 1.0);
const NARROW_BINS: (u32, i64, i64) = (64, -100, 100);
const WIDE_BINS: (u32, i64, i64) = (4096, i64::MIN, i64::MAX);
const NARROW_UNSIGNED_BINS: (u32, i64, i64) = (64, 0, 200);
const WIDE_UNSIGNED_BINS: (u32, i64, i64) = (4096, 0, u32::MAX as i64);

/// A histogram case: the samples of `family`, the bounds as parameters, the model's counts.
fn histogram_case(parts: Parts, family: Family, n: usize, seed: u64, closed: bool) -> Result<RawCase, String> {
    let input = families::make(family, parts.dtype_in, n, seed);
    let (counts, params) = if let Array::Float64(values) = &input {
        let (bins, lower, upper) = FLOAT_BINS;
        let (lower, upper) = (f64::from(lower), f64::from(upper));
        let scale = f64_scale((bins, lower, upper));
        let mut counts = vec![0u64; bins as usize];
        for &x in values {
            if let Some(b) = f64_bin((bins, lower, upper), scale, x, closed) {
                counts[b] += 1;
            }
        }
        (counts, vec![Value::Int32(bins as i32), Value::Float64(lower), Value::Float64(upper), Value::Float64(scale)])
    } else if let Some(values) = float_values(&input) {
        let (bins, lower, upper) = FLOAT_BINS;
        let spec = kernels::HistogramSpec { bins, lower, upper };
        let samples: Vec<f32> = values.iter().map(|&v| v as f32).collect();
        let mut counts = model::histogram::histogram_even(&samples, &spec).map_err(|e| e.to_string())?;
        if closed {
            counts[bins as usize - 1] += samples.iter().filter(|&&v| v == upper).count() as u64;
        }
        let scale = model::histogram::f32_scale(&spec);
        let params =
            vec![Value::Int32(bins as i32), Value::Float32(lower), Value::Float32(upper), Value::Float32(scale)];
        (counts, params)
    } else {
        let values = int_values(&input).ok_or("integer samples")?;
        let (bins, lower, upper) = match (family.name() == "small_values", parts.dtype_in == Dtype::Uint32) {
            (true, false) => NARROW_BINS,
            (false, false) => WIDE_BINS,
            (true, true) => NARROW_UNSIGNED_BINS,
            (false, true) => WIDE_UNSIGNED_BINS,
        };
        let mut counts = vec![0u64; bins as usize];
        for &x in &values {
            if let Some(b) = int_bin((bins, lower, upper), x, closed) {
                counts[b] += 1;
            }
        }
        (counts, vec![Value::Int32(bins as i32), Value::Int64(lower), Value::Int64(upper)])
    };
    let counts = counts
        .into_iter()
        .map(|c| i32::try_from(c).map_err(|_| format!("a bin count ({c}) does not fit int32")))
        .collect::<Result<Vec<i32>, String>>()?;
    Ok(RawCase { inputs: vec![input], params, expected: vec![Array::Int32(counts)] })
}

/// A float64 histogram's scale: `bins / (upper - lower)`, both roundings in f64.
pub fn f64_scale((bins, lower, upper): (u32, f64, f64)) -> f64 {
    f64::from(bins) / (upper - lower)
}

/// The bin of a float64 sample `x`: `min(trunc((x - lower) * scale), bins - 1)`, each step
/// rounded to nearest in f64 (`__dsub_rn`, `__dmul_rn`), for `lower <= x < upper` (`<= upper`
/// when `closed`, the last bin then); NaN is in no bin.
pub fn f64_bin((bins, lower, upper): (u32, f64, f64), scale: f64, x: f64, closed: bool) -> Option<usize> {
    if closed && x == upper {
        return Some(bins as usize - 1);
    }
    let inside = lower <= x && x < upper;
    // `as` truncates toward zero; t >= 0 here.
    inside.then(|| (((x - lower) * scale) as usize).min(bins as usize - 1))
}

/// The bin of `x`: `min(((x - lower) * bins) / (upper - lower), bins - 1)` in
/// 128-bit integers for `lower <= x < upper` (`<= upper` when `closed`), else none.
pub fn int_bin((bins, lower, upper): (u32, i64, i64), x: i64, closed: bool) -> Option<usize> {
    let inside = lower <= x && (x < upper || (closed && x == upper));
    inside.then(|| {
        let b = (i128::from(x) - i128::from(lower)) * i128::from(bins) / (i128::from(upper) - i128::from(lower));
        b.min(i128::from(bins) - 1) as usize
    })
}

/// The model's outputs for `inputs` (in the contract's order).
pub fn model(parts: &Parts, inputs: &[Array]) -> Result<Vec<Array>, String> {
    let input = inputs.first().ok_or("an input")?;
    match parts.shape {
        Shape::Arg { max } => {
            let index = arg_index(input, max, parts.nan).ok_or("an input with no index (empty, or NaN only)")?;
            Ok(vec![Array::Int64(vec![index as i64])])
        }
        Shape::Compact { flagged } => {
            let keep: Vec<bool> = match (flagged, inputs.get(1)) {
                (true, Some(Array::Uint8(flags))) => flags.iter().map(|&f| f != 0).collect(),
                (true, _) => return Err("uint8 flags".into()),
                (false, _) => positive(input)?,
            };
            let kept = kept_items(input, &keep);
            let count = kept.count() as i64;
            Ok(vec![kept, Array::Int64(vec![count])])
        }
        Shape::Histogram { .. } | Shape::Softmax { .. } => {
            Err("a histogram's or softmax's case is made with its parameters (histogram_case, softmax_cases)".into())
        }
        Shape::Segmented => {
            let Some(Array::Int64(offsets)) = inputs.get(1) else { return Err("int64 offsets".into()) };
            let bounds: Vec<usize> = offsets.iter().map(|&o| o as usize).collect();
            let segments: Vec<Array> = bounds
                .windows(2)
                .map(|w| fold(parts, &slice(input, w[0]..w[1]), Shape::Reduce))
                .collect::<Result<_, _>>()?;
            Ok(vec![concat(parts, segments)])
        }
        shape => Ok(vec![fold(parts, input, shape)?]),
    }
}

/// The reduce (one element) or scan of `input` by `parts`' operator, in its output type.
fn fold(parts: &Parts, input: &Array, shape: Shape) -> Result<Array, String> {
    if parts.float_sum() {
        let values = float_values(input).ok_or("a float input")?;
        return Ok(Array::Float64(float_sums(&values, shape)));
    }
    if is_float(parts.dtype_in) {
        let values = float_values(input).ok_or("a float input")?;
        return Ok(families::float_array(parts.dtype_out, extremum_fold(parts, &values, shape)));
    }
    let values = int_values(input).ok_or("an integer input")?;
    let (out_type, op) = (parts.dtype_out, parts.op);
    let out = fold_shape(&values, shape, int_identity(op, out_type), |a, b| int_op(op, out_type, a, b));
    Ok(match out_type {
        Dtype::Int32 => Array::Int32(out.into_iter().map(|v| v as i32).collect()),
        Dtype::Uint32 => Array::Uint32(out.into_iter().map(|v| v as u32).collect()),
        _ => Array::Int64(out),
    })
}

/// Elements `range` of `array`.
pub fn slice(array: &Array, range: std::ops::Range<usize>) -> Array {
    match array {
        Array::Int32(v) => Array::Int32(v[range].to_vec()),
        Array::Int64(v) => Array::Int64(v[range].to_vec()),
        Array::Float32(v) => Array::Float32(v[range].to_vec()),
        Array::Float64(v) => Array::Float64(v[range].to_vec()),
        Array::Bfloat16(v) => Array::Bfloat16(v[range].to_vec()),
        Array::Uint8(v) => Array::Uint8(v[range].to_vec()),
        Array::Uint32(v) => Array::Uint32(v[range].to_vec()),
        Array::Float16(v) => Array::Float16(v[range].to_vec()),
    }
}

/// One-element arrays of one type, joined (an empty list gives an empty array of the model's type).
fn concat(parts: &Parts, arrays: Vec<Array>) -> Array {
    let empty = if parts.float_sum() { Array::Float64(vec![]) } else { families::zeros(parts.dtype_out, 0) };
    arrays.into_iter().fold(empty, |mut all, a| {
        match (&mut all, a) {
            (Array::Int32(v), Array::Int32(a)) => v.extend(a),
            (Array::Int64(v), Array::Int64(a)) => v.extend(a),
            (Array::Float32(v), Array::Float32(a)) => v.extend(a),
            (Array::Float64(v), Array::Float64(a)) => v.extend(a),
            (Array::Bfloat16(v), Array::Bfloat16(a)) => v.extend(a),
            (Array::Uint32(v), Array::Uint32(a)) => v.extend(a),
            (Array::Float16(v), Array::Float16(a)) => v.extend(a),
            _ => {}
        }
        all
    })
}

/// Whether each element is kept by `x > 0` (-0.0, +0.0 and NaN are not).
fn positive(input: &Array) -> Result<Vec<bool>, String> {
    if let Some(ints) = int_values(input) {
        return Ok(ints.iter().map(|&v| v > 0).collect());
    }
    Ok(float_values(input).ok_or("a numeric input")?.iter().map(|&v| v > 0.0).collect())
}

/// The elements of `input` whose `keep` is set, in order, bit for bit.
fn kept_items(input: &Array, keep: &[bool]) -> Array {
    fn pick<T: Copy>(v: &[T], keep: &[bool]) -> Vec<T> {
        v.iter().zip(keep).filter(|(_, &k)| k).map(|(&x, _)| x).collect()
    }
    match input {
        Array::Int32(v) => Array::Int32(pick(v, keep)),
        Array::Int64(v) => Array::Int64(pick(v, keep)),
        Array::Float32(v) => Array::Float32(pick(v, keep)),
        Array::Float64(v) => Array::Float64(pick(v, keep)),
        Array::Bfloat16(v) => Array::Bfloat16(pick(v, keep)),
        Array::Uint8(v) => Array::Uint8(pick(v, keep)),
        Array::Uint32(v) => Array::Uint32(pick(v, keep)),
        Array::Float16(v) => Array::Float16(pick(v, keep)),
    }
}

/// The identity of a float min or max (and sum).
pub fn float_identity(op: Op) -> f64 {
    match op {
        Op::Sum => 0.0,
        Op::Min => f64::INFINITY,
        Op::Max => f64::NEG_INFINITY,
    }
}

/// The float min or max (reduce or scan) of `values` under the contract's
/// NaN rule: an empty fold gives the identity; `nan_propagate` a NaN once a
/// NaN is in the fold; otherwise NaN is skipped (`f64::max` and `min` return
/// the other operand), so a fold of NaN only stays NaN (nan_ignored; the
/// default has no NaN).
fn extremum_fold(parts: &Parts, values: &[f64], shape: Shape) -> Vec<f64> {
    let (op, propagate) = (parts.op, parts.nan == NanRule::NanPropagate);
    let step = |acc: Option<f64>, x: f64| {
        Some(match acc {
            None => x,
            Some(a) if propagate && (a.is_nan() || x.is_nan()) => f64::NAN,
            Some(a) => float_op(op, a, x),
        })
    };
    fold_shape(values, shape, None, step).into_iter().map(|v| v.unwrap_or_else(|| float_identity(op))).collect()
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
        (Op::Min, Dtype::Uint32) => u32::MAX.into(),
        (Op::Max, Dtype::Uint32) => 0,
        (Op::Min, _) => i64::MAX,
        (Op::Max, _) => i64::MIN,
    }
}

/// `op` in the output type: a sum wraps there.
fn int_op(op: Op, out: Dtype, a: i64, b: i64) -> i64 {
    match (op, out) {
        (Op::Sum, Dtype::Int32) => (a as i32).wrapping_add(b as i32) as i64,
        (Op::Sum, Dtype::Uint32) => (a as u32).wrapping_add(b as u32) as i64,
        (Op::Sum, _) => a.wrapping_add(b),
        (Op::Min, _) => a.min(b),
        (Op::Max, _) => a.max(b),
    }
}

/// The reduce (one element) or scan of `values` by `op` from `identity`.
fn fold_shape<T: Copy, A: Copy>(values: &[T], shape: Shape, identity: A, op: impl Fn(A, T) -> A) -> Vec<A> {
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

//! The cases of a row contract: every row block of the registry's softmax
//! (the same widths, from 1 to 131,072 columns, and rows per width: a prime
//! number of rows up to 61, so row-per-warp and row-per-block schedules
//! meet a partial group) with each of the contract's data families
//! ([`super::families`]), the model's outputs computed from the input as
//! the kernel reads it ([`super::model`]).

use super::families::{self, LossFamily, NormFamily, IGNORE_INDEX};
use super::model::{outputs, Elem, RowsInput};
use super::parts::{RowKind, RowParts};
use crate::cases::typed::families::{float_array, float_values};
use crate::cases::typed::parts::short;
use crate::sweep::gpu::{case_seed, id};
use crate::sweep::raw::{variant, Array, Contract, RawCase, RawSpec, Value};
use crate::sweep::SweepPlan;
use model::generators::Rng;

/// The names of `kind`'s families, in catalogue order.
pub fn family_names(kind: RowKind) -> Vec<&'static str> {
    match kind {
        RowKind::CrossEntropy => families::LOSS.iter().map(|f| f.name).collect(),
        _ => families::NORM.iter().map(|f| f.name).collect(),
    }
}

/// The cases of `parts`' `contract` for `plan`, variants named `<label>.<contract>`,
/// ids under the kind's name (`layernorm/user.layernorm.f32.f32 n=61x33 ...`).
pub fn cases(plan: &SweepPlan, parts: RowParts, contract: &'static Contract, label: &str) -> Vec<RawSpec> {
    use crate::sweep::gpu::softmax::{rows_for, widths};
    let names = family_names(parts.kind);
    // The sanitizer runs take one family: memory and ordering do not depend on the values.
    let kept = if plan.one_family { 1 } else { names.len() };
    let stream = format!("rows.{}.{}", parts.kind.name(), short(parts.dtype_in));
    let mut out = Vec::new();
    for &cols in &widths(plan) {
        let rows = rows_for(cols);
        for (f, name) in names.iter().enumerate().take(kept) {
            let seed = case_seed(plan.seed, &stream, cols, f);
            let size = format!("{rows}x{cols}");
            let case_id = id(parts.kind.name(), variant(label, contract), size, rows * cols, name, seed);
            out.push(RawSpec::new(case_id, move || make(parts, f, (rows, cols), seed)));
        }
    }
    out
}

/// One case: family `family`'s input of `shape` (rows, cols) from `seed`, and the model's outputs.
pub fn make(parts: RowParts, family: usize, shape: (usize, usize), seed: u64) -> Result<RawCase, String> {
    let mut case = match parts.kind {
        RowKind::CrossEntropy => loss_input(&parts, families::LOSS[family], shape, seed),
        _ => norm_input(&parts, families::NORM[family], shape, seed),
    };
    case.expected = expected_elems(&parts, &case)?
        .into_iter()
        .map(|elems| Array::Float64(elems.iter().map(|e| e.exact).collect()))
        .collect();
    Ok(case)
}

/// `rows` rows of `values`, concatenated.
fn rows_of(rng: &mut Rng, values: families::Values, (rows, cols): (usize, usize), parts: &RowParts) -> Vec<f64> {
    (0..rows).flat_map(|r| values(rng, r, cols, parts.dtype_in)).collect()
}

fn norm_input(parts: &RowParts, family: NormFamily, shape: (usize, usize), seed: u64) -> RawCase {
    let mut rng = Rng::new(seed);
    let mut inputs = vec![float_array(parts.dtype_in, rows_of(&mut rng, family.values, shape, parts))];
    if parts.affine {
        let (gamma, beta) = families::affine(&mut Rng::new(seed ^ 0x00af_f1e5), shape.1);
        inputs.push(float_array(parts.dtype_in, gamma));
        if parts.kind == RowKind::LayerNorm {
            inputs.push(float_array(parts.dtype_in, beta));
        }
    }
    let params = vec![Value::Int32(shape.0 as i32), Value::Int32(shape.1 as i32), Value::Float32(parts.eps_value())];
    RawCase { inputs, params, expected: Vec::new() }
}

fn loss_input(parts: &RowParts, family: LossFamily, shape: (usize, usize), seed: u64) -> RawCase {
    let mut rng = Rng::new(seed);
    let mut x = rows_of(&mut rng, family.values, shape, parts);
    let targets = (family.targets)(&mut rng, shape.0, shape.1);
    (family.adjust)(&mut x, shape.1, &targets);
    let inputs = vec![float_array(parts.dtype_in, x), Array::Int64(targets)];
    let params = vec![Value::Int32(shape.0 as i32), Value::Int32(shape.1 as i32), Value::Int64(IGNORE_INDEX)];
    RawCase { inputs, params, expected: Vec::new() }
}

/// The expected elements of every output of `case` (its inputs and parameters as the contract orders them).
pub fn expected_elems(parts: &RowParts, case: &RawCase) -> Result<Vec<Vec<Elem>>, String> {
    let int = |k: usize| case.params.get(k).and_then(|v| v.as_int()).ok_or(format!("integer parameter {k}"));
    let (rows, cols) = (usize::try_from(int(0)?).unwrap_or(0), usize::try_from(int(1)?).unwrap_or(0));
    let x = case.inputs.first().and_then(float_values).ok_or("a float input")?;
    let buffer = |k: usize| case.inputs.get(k).and_then(float_values);
    if parts.kind == RowKind::CrossEntropy {
        let Some(Array::Int64(targets)) = case.inputs.get(1) else { return Err("int64 targets".into()) };
        let input =
            RowsInput { x: &x, shape: (rows, cols), affine: (None, None), eps: 0.0, targets: (targets, int(2)?) };
        return outputs(parts, &input);
    }
    let Some(Value::Float32(eps)) = case.params.get(2) else { return Err("a float32 eps".into()) };
    let (gamma, beta) = if parts.affine { (buffer(1), buffer(2)) } else { (None, None) };
    let affine = (gamma.as_deref(), beta.as_deref());
    outputs(parts, &RowsInput { x: &x, shape: (rows, cols), affine, eps: *eps, targets: (&[], 0) })
}

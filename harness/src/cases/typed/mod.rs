//! Typed contracts: reduce, scan, arg reduction, segmented reduction,
//! compaction, histogram and softmax over any of the contract element types
//! (int32, int64, uint32, bfloat16, float16, float32, float64), with the
//! operator (sum, min, max), the output type, for float sums the accumulator
//! and the tolerance, and for float arg reductions, min and max the NaN rule,
//! as the user states them. Each is checked against an exact model: integer
//! sums wrap in the output type (as two's complement hardware adds), min and
//! max are exact, and a float sum is judged by a bound computed from the
//! exact sum ([`exact::ExactSum`]).
//!
//! A typed contract is named by its parts, so that every case id and failure
//! line states the whole rule:
//!
//! | primitive | name | example |
//! | --- | --- | --- |
//! | reduce | `<op>.<in>.<out>[.acc_<t>][.rtol_<x>][.atol_<x>][.ulp_<k>]`; float min, max `[.nan_propagate or .nan_ignored]` | `sum.bf16.f32`, `max.i64.i64`, `max.f32.f32.nan_propagate` |
//! | scan | `<inclusive or exclusive>.<op>.<in>.<out>[...]` | `inclusive.sum.f32.f32.rtol_1e-5`, `inclusive.max.f16.f16.nan_ignored` |
//! | arg_reduce | `<argmax or argmin>.<in>[.nan_first or .nan_ignored]` | `argmax.bf16.nan_first` |
//! | segmented_reduce | `<op>.<in>.<out>[...]`, one output per segment of `offsets` | `sum.f32.f32`, `min.i64.i64`, `max.bf16.bf16.nan_propagate` |
//! | compact | `<flagged or positive>.<in>`: the kept items bit for bit, and their count | `flagged.f64` |
//! | softmax | `<rows or strided_rows>.<in>.<out>[.all_masked_nan]`, bfloat16 or float32 each | `strided_rows.bf16.f32` |
//! | histogram | `even.<in>[.last_bin_closed]`, int64 or bfloat16 samples, int32 counts | `even.bf16` |
//!
//! or composed from a manifest's (or `primlab.check`'s) fields `op`, `dtype_in`,
//! `dtype_out`, `accumulator`, `rtol`, `atol`, `ulp`, `nan_rule` ([`Request`]).
//! A request that names a registry contract (`sum.i32.i64` is `sum.i32`)
//! resolves to it.
//!
//! Every float contract states what NaN, ±inf and ±0.0 give ([`edges`], in
//! its summary), and a family of its catalogue holds each value it speaks of:
//!
//! | float contract | NaN | ±inf | ±0.0 |
//! | --- | --- | --- | --- |
//! | sums | no case holds it | no case holds them | ordinary terms |
//! | min, max | no case holds it; `.nan_propagate`: a NaN in the fold gives NaN (torch, numpy `max`); `.nan_ignored`: ignored, a fold of NaN only NaN or the identity (`fmaxf`, `numpy.nanmax`) | ordinary values | equal |
//! | arg reductions | none; `.nan_first` wins; `.nan_ignored` ignored | none; with a NaN rule ordinary | -0.0 ties +0.0 |
//! | `positive` compaction | not > 0 | +inf kept, -inf not | not > 0 |
//! | `flagged` compaction | moved bit for bit | moved | moved bit for bit |
//! | histograms | counted nowhere | counted nowhere | one sample value |
//!
//! A NaN expected by min or max matches any NaN (payload free), never a number.
//!
//! Rooms: the parts and their names ([`parts`]), the edge values each rule
//! states ([`edges`]), the data families ([`families`]), the model and cases
//! ([`catalogue`]), the comparison ([`compare`]), the exact float sum ([`exact`]);
//! the row contracts (layer norm, RMS norm, cross-entropy), named by their
//! kind, in [`rows`].

pub mod catalogue;
pub mod compare;
pub mod edges;
pub mod exact;
pub mod families;
pub mod parts;
pub mod rows;

#[cfg(test)]
#[path = "typed_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "rule_coverage_tests.rs"]
mod rule_coverage_tests;

#[cfg(test)]
#[path = "nan_rule_tests.rs"]
mod nan_rule_tests;

use crate::registry::Primitive;
use crate::sweep::raw::{Buffer, Contract, Dtype, Len, Param, Rule};
pub use parts::{NanRule, Parts, Request, Shape, Tolerance};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// A typed contract: its parts and the registry-shaped contract `check` and
/// `cases` launch and export.
#[derive(Debug)]
pub struct Typed {
    /// What it computes and how it is judged.
    pub parts: Parts,
    /// Its buffers, name and summary (the rule field only chooses the type of
    /// the exported expected values: float64 exact values for a float sum).
    pub contract: Contract,
    /// The comparison in words (receipts, `index.json`, summaries).
    pub rule_words: &'static str,
}

/// Every typed contract made so far in this process, by primitive and name
/// (each is made once and lives as long as the process: a check names one).
fn made() -> &'static Mutex<HashMap<(Primitive, String), &'static Typed>> {
    static MADE: OnceLock<Mutex<HashMap<(Primitive, String), &'static Typed>>> = OnceLock::new();
    MADE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The typed contract of `parts` (made on first use).
fn intern(parts: Parts) -> &'static Typed {
    let name = parts.name();
    let mut made = made().lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    made.entry((parts.primitive(), name.clone())).or_insert_with(|| Box::leak(Box::new(build(parts, name))))
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

fn build(parts: Parts, name: String) -> Typed {
    let input = Buffer { role: "in", dtype: parts.dtype_in, len: Len::N };
    let out = |len| Buffer { role: "out", dtype: parts.dtype_out, len };
    let (inputs, params, outputs, what): (Vec<Buffer>, Vec<Param>, Vec<Buffer>, &'static str) = match parts.shape {
        Shape::Reduce => (vec![input], vec![], vec![out(Len::One)], parts.op.name()),
        Shape::Scan(_) => (vec![input], vec![], vec![out(Len::N)], "prefix"),
        Shape::Arg { max } => (
            vec![input],
            vec![],
            vec![Buffer { role: "index", dtype: Dtype::Int64, len: Len::One }],
            if max { "argmax index" } else { "argmin index" },
        ),
        Shape::Segmented => (
            vec![input, Buffer { role: "offsets", dtype: Dtype::Int64, len: Len::PerCase }],
            vec![Param { name: "segments", dtype: Dtype::Int64 }],
            vec![out(Len::PerCase)],
            match parts.op {
                parts::Op::Sum => "segment sums",
                parts::Op::Min => "segment minima",
                parts::Op::Max => "segment maxima",
            },
        ),
        Shape::Histogram { .. } => {
            // Float64 samples take double bounds and scale; other floats float32 ones.
            let bound = match parts.dtype_in {
                Dtype::Float64 => Dtype::Float64,
                d if parts::is_float(d) => Dtype::Float32,
                _ => Dtype::Int64,
            };
            let mut params = vec![
                Param { name: "bins", dtype: Dtype::Int32 },
                Param { name: "lower", dtype: bound },
                Param { name: "upper", dtype: bound },
            ];
            if bound != Dtype::Int64 {
                params.push(Param { name: "scale", dtype: bound });
            }
            let counts = Buffer { role: "counts", dtype: Dtype::Int32, len: Len::PerCase };
            (vec![input], params, vec![counts], "bin counts")
        }
        Shape::Softmax { strided, .. } => {
            let mut params =
                vec![Param { name: "rows", dtype: Dtype::Int32 }, Param { name: "cols", dtype: Dtype::Int32 }];
            if strided {
                params.push(Param { name: "stride", dtype: Dtype::Int32 });
            }
            // Strided rows: n counts the input's elements, the output holds rows x cols.
            (vec![input], params, vec![out(if strided { Len::PerCase } else { Len::N })], "softmax")
        }
        Shape::Compact { flagged } => {
            let flags = Buffer { role: "flags", dtype: Dtype::Uint8, len: Len::N };
            (
                if flagged { vec![input, flags] } else { vec![input] },
                vec![],
                vec![out(Len::N), Buffer { role: "count", dtype: Dtype::Int64, len: Len::One }],
                "kept items, in order",
            )
        }
    };
    let rule = match parts.shape {
        Shape::Softmax { .. } => Rule::SoftmaxRows,
        _ if parts.float_sum() => Rule::FloatSumBound,
        _ => Rule::Exact,
    };
    let contract = Contract {
        name: leak(name),
        summary: leak(summary(&parts)),
        inputs: Vec::leak(inputs),
        params: Vec::leak(params),
        outputs: Vec::leak(outputs),
        rule,
        what,
    };
    Typed { rule_words: leak(parts.rule_words()), parts, contract }
}

/// The summary of `parts`' contract: the contract in one line, then what
/// its edge values give ([`edges`]: the statements the rule-coverage test walks).
pub fn summary(parts: &Parts) -> String {
    match edges::words(parts) {
        words if words.is_empty() => parts.summary(),
        words => format!("{}; edge values: {words}", parts.summary()),
    }
}

/// The typed contract `contract` is, if it is one (by name and buffers).
pub fn of(contract: &Contract) -> Option<&'static Typed> {
    let made = made().lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    made.values().copied().find(|t| t.contract.name == contract.name && t.contract.inputs == contract.inputs)
}

/// The typed contract of `parts` (made on first use). A caller resolves
/// [`Parts::registry_name`] first: parts that name a registry contract are that contract.
pub fn contract_of(parts: Parts) -> &'static Contract {
    &intern(parts).contract
}

/// A typed contract name of `primitive`, for messages (None: it has none).
pub fn example(primitive: Primitive) -> Option<&'static str> {
    match primitive {
        Primitive::Reduce => Some("sum.bf16.f32, max.i64.i64 or max.f32.f32.nan_propagate"),
        Primitive::Scan => Some("inclusive.sum.f32.f32 or exclusive.max.i32.i32"),
        Primitive::ArgReduce => Some("argmax.bf16, argmin.f64.nan_first or argmax.i32"),
        Primitive::SegmentedReduce => Some("sum.f32.f32 or min.i64.i64"),
        Primitive::Compact => Some("flagged.f32 or positive.i64"),
        Primitive::Softmax => Some("rows.bf16.bf16 or rows.bf16.f32.all_masked_nan"),
        Primitive::Histogram => Some("even.i64 or even.bf16.last_bin_closed"),
        _ => None,
    }
}

/// The typed contract `framework` states over `base` where it differs: a
/// float arg reduction whose inputs are finite becomes NaN-first for torch
/// and numpy (`torch.argmax`, `numpy.argmax`), a float min or max (reduce,
/// scan, segmented) NaN-propagating (`torch.amax`, `torch.cummax`,
/// `numpy.max`, `numpy.maximum.accumulate`), a softmax's all-masked rows
/// NaN for torch. None: no difference known.
pub fn framework_rule(base: &Contract, framework: &str) -> Option<&'static Contract> {
    let typed = of(base)?;
    let parts = typed.parts;
    if let (Shape::Softmax { masked_nan: false, strided }, "torch") = (parts.shape, framework) {
        return Some(&intern(Parts { shape: Shape::Softmax { masked_nan: true, strided }, ..parts }).contract);
    }
    if parts.shape == (Shape::Histogram { closed: false }) && matches!(framework, "torch" | "numpy") {
        return Some(&intern(Parts { shape: Shape::Histogram { closed: true }, ..parts }).contract);
    }
    let float_arg = matches!(parts.shape, Shape::Arg { .. }) && parts::is_float(parts.dtype_in);
    if float_arg && parts.nan == NanRule::Finite && matches!(framework, "torch" | "numpy") {
        return Some(&intern(Parts { nan: NanRule::NanFirst, ..parts }).contract);
    }
    let float_extremum = parts.shape.folds() && parts.op != parts::Op::Sum && parts::is_float(parts.dtype_in);
    if float_extremum && parts.nan == NanRule::Finite && matches!(framework, "torch" | "numpy") {
        return Some(&intern(Parts { nan: NanRule::NanPropagate, ..parts }).contract);
    }
    None
}

/// The comparison of `contract` in words: a typed contract's own, else the contract rule's.
pub fn rule_words(contract: &Contract) -> &'static str {
    of(contract).map(|t| t.rule_words).unwrap_or_else(|| contract.rule())
}

/// The short tolerance name of `contract` (`index.json`).
pub fn tolerance_name(contract: &Contract) -> &'static str {
    match of(contract) {
        Some(t) if t.parts.float_sum() => match t.parts.tolerance {
            Tolerance::OrderFree => "order_free_bound",
            Tolerance::User { .. } => "user_tolerance",
        },
        Some(_) => "exact",
        None => contract.rule.tolerance(),
    }
}

//! Row contracts: the row kernels people write most, layer norm, RMS norm
//! and cross-entropy, each over a `rows x cols` row-major input, checked
//! against an exact model ([`model`]) within PyTorch's tolerance for the
//! output type plus what the row's own magnitude allows ([`parts::Bound`]).
//!
//! | kind | name | buffers, parameters |
//! | --- | --- | --- |
//! | layer norm | `layernorm.<in>.<out>[.affine][.stats][.acc_<t>][.eps_<x>][.rtol_<x>.atol_<x>]` | `in[rows*cols]` (+ `gamma[cols]`, `beta[cols]`), `rows`, `cols`, float32 `eps` -> `out[rows*cols]` (+ float32 `mean[rows]`, `rstd[rows]`) |
//! | RMS norm | `rmsnorm.<in>.<out>[.affine][.stats][.acc_<t>][.eps_<x> or .eps_opmath][...]` | `in` (+ `gamma[cols]`), `rows`, `cols`, `eps` -> `out` (+ float32 `rstd[rows]`) |
//! | cross-entropy | `cross_entropy.<in>.<out>.<none, mean or sum>[.acc_<t>][...]` | logits `in[rows*cols]`, int64 `target[rows]`, `rows`, `cols`, int64 `ignore_index` (-100) -> `loss[rows]` (none) or `loss[1]` |
//!
//! Types: float32 (`f32`), bfloat16 (`bf16`), float16 (`f16`). `eps`
//! defaults to 1e-5 (`F.layer_norm`'s); `.eps_opmath` is the machine epsilon
//! of the type the norm computes in (float32's, 2^-23, for every row type),
//! `F.rms_norm`'s when eps is None.
//!
//! **The primitive.** A row contract rides on the registry's row-shaped
//! primitive, `softmax`: its cases are that primitive's row blocks (the
//! same widths and rows), so nothing in the registry (inside the verdict
//! hash) changes. A user may name the kind as the primitive (`primitive =
//! "layernorm"`, `--primitive cross_entropy`, `primlab.check(...,
//! primitive="rmsnorm")`), resolved here ([`Named`]) to that row shape; case
//! ids, failure lines, `index.json` and receipts name the kind
//! (`FAIL layernorm/user.layernorm.f32.f32 n=61x33 ...`), never softmax.
//!
//! Rooms: the parts and their names ([`parts`]), double-double arithmetic
//! ([`dd`]), the model ([`model`]), the families ([`families`]), the cases
//! ([`catalogue`]), the comparison ([`compare`]).

pub mod catalogue;
pub mod compare;
pub mod dd;
pub mod families;
pub mod model;
pub mod parts;

#[cfg(test)]
#[path = "rows_tests.rs"]
mod tests;

use crate::registry::Primitive;
use crate::sweep::raw::{Buffer, Contract, Dtype, Len, Param, Rule};
use parts::{Reduction, RowKind, RowParts};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// The registry primitive whose row blocks the row contracts' cases take.
pub const ROW_PRIMITIVE: Primitive = Primitive::Softmax;

/// A row contract: its parts and the contract `check` and `cases` launch and export.
#[derive(Debug)]
pub struct RowContract {
    /// What it computes and how it is judged.
    pub parts: RowParts,
    /// Its buffers, parameters, name and summary (its rule field only makes
    /// every exported expected value float64, the exact values).
    pub contract: Contract,
    /// The comparison in words (receipts, `index.json`, summaries).
    pub rule_words: &'static str,
}

/// Every row contract made so far in this process, by name (each lives as long as the process).
fn made() -> &'static Mutex<HashMap<String, &'static RowContract>> {
    static MADE: OnceLock<Mutex<HashMap<String, &'static RowContract>>> = OnceLock::new();
    MADE.get_or_init(|| Mutex::new(HashMap::new()))
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

fn intern(parts: RowParts) -> &'static RowContract {
    let name = parts.name();
    let mut made = made().lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    made.entry(name.clone()).or_insert_with(|| Box::leak(Box::new(build(parts, name))))
}

/// The buffers and parameters of `parts`: (inputs, params, outputs, the first output's check name).
type Layout = (Vec<Buffer>, Vec<Param>, Vec<Buffer>, &'static str);

fn layout(parts: &RowParts) -> Layout {
    let per_row = |role, dtype| Buffer { role, dtype, len: Len::PerCase };
    let input = Buffer { role: "in", dtype: parts.dtype_in, len: Len::N };
    let shape = [Param { name: "rows", dtype: Dtype::Int32 }, Param { name: "cols", dtype: Dtype::Int32 }];
    if parts.kind == RowKind::CrossEntropy {
        let target = per_row("target", Dtype::Int64);
        let params = [&shape[..], &[Param { name: "ignore_index", dtype: Dtype::Int64 }]].concat();
        let len = if parts.reduction == Reduction::None { Len::PerCase } else { Len::One };
        let loss = Buffer { role: "loss", dtype: parts.dtype_out, len };
        return (vec![input, target], params, vec![loss], "cross entropy loss");
    }
    let mut inputs = vec![input];
    if parts.affine {
        inputs.push(per_row("gamma", parts.dtype_in));
        if parts.kind == RowKind::LayerNorm {
            inputs.push(per_row("beta", parts.dtype_in));
        }
    }
    let mut outputs = vec![Buffer { role: "out", dtype: parts.dtype_out, len: Len::N }];
    if parts.stats && parts.kind == RowKind::LayerNorm {
        outputs.push(per_row("mean", Dtype::Float32));
    }
    if parts.stats {
        outputs.push(per_row("rstd", Dtype::Float32));
    }
    let params = [&shape[..], &[Param { name: "eps", dtype: Dtype::Float32 }]].concat();
    (inputs, params, outputs, parts.kind.name())
}

fn build(parts: RowParts, name: String) -> RowContract {
    let (inputs, params, outputs, what) = layout(&parts);
    let contract = Contract {
        name: leak(name),
        summary: leak(parts.summary()),
        inputs: Vec::leak(inputs),
        params: Vec::leak(params),
        outputs: Vec::leak(outputs),
        // Every expected output is a float64 exact value, as a softmax's.
        rule: Rule::SoftmaxRows,
        what,
    };
    RowContract { rule_words: leak(parts.rule_words()), parts, contract }
}

/// The row contract `contract` is, if it is one (by name and buffers).
pub fn of(contract: &Contract) -> Option<&'static RowContract> {
    let made = made().lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    made.get(contract.name).copied().filter(|r| r.contract.inputs == contract.inputs)
}

/// The contract of `parts` (made on first use).
pub fn contract_of(parts: RowParts) -> &'static Contract {
    &intern(parts).contract
}

/// The row contract `name` names, if it names a row kind (`layernorm...`):
/// the contract or why not; `primitive` must be the row shape's.
pub fn contract_named(primitive: Primitive, name: &str) -> Option<Result<&'static Contract, String>> {
    let parts = RowParts::parse(name)?;
    Some(parts.and_then(|parts| within(primitive, parts)))
}

/// The contract of `parts` when `primitive` is the row shape's, else why not.
pub fn within(primitive: Primitive, parts: RowParts) -> Result<&'static Contract, String> {
    if primitive != ROW_PRIMITIVE {
        return Err(format!(
            "{} is a contract of primitive {} (its cases are the {ROW_PRIMITIVE} row blocks), not of {primitive}",
            parts.name(),
            parts.kind.name()
        ));
    }
    Ok(contract_of(parts))
}

/// The row kind a contract kind names (`layernorm`, ...), for a request by parts.
pub fn kind_named(kind: Option<&str>) -> Option<RowKind> {
    kind.and_then(RowKind::from_name)
}

/// The row contract `framework` states over `base` where it differs:
/// torch's RMS norm takes the input type's machine epsilon
/// (`F.rms_norm(x, shape, weight)` with eps None). Layer norm (eps 1e-5)
/// and cross-entropy (ignore_index -100, the mean over the rows not
/// ignored, NaN when all are) are ours already. None: no difference.
pub fn framework_rule(base: &Contract, framework: &str) -> Option<&'static Contract> {
    let row = of(base)?;
    let parts = row.parts;
    let default_eps = parts.eps == parts::DEFAULT_EPS;
    (framework == "torch" && parts.kind == RowKind::RmsNorm && default_eps)
        .then(|| contract_of(RowParts { eps: parts::Eps::Opmath, ..parts }))
}

/// A primitive as a user names it: a registry primitive, or a row kind
/// (`layernorm`, `rmsnorm`, `cross_entropy`) resolved to the row-shaped one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Named {
    /// The registry primitive whose cases run.
    pub primitive: Primitive,
    /// The row kind named, if a row kind was.
    pub rows: Option<RowKind>,
}

impl Named {
    /// The primitive named `name`, if any.
    pub fn parse(name: &str) -> Option<Named> {
        if let Some(kind) = RowKind::from_name(name) {
            return Some(Named { primitive: ROW_PRIMITIVE, rows: Some(kind) });
        }
        Primitive::from_name(name).map(|primitive| Named { primitive, rows: None })
    }

    /// Every name a user may give: the registry's, then the row kinds.
    pub fn all() -> Vec<&'static str> {
        Primitive::ALL.iter().map(|p| p.name()).chain(RowKind::ALL.iter().map(|k| k.name())).collect()
    }

    /// Every name a user may give, comma-separated (for error messages).
    pub fn names() -> String {
        Named::all().join(", ")
    }

    /// The contract name (or kind) to resolve for a user's `contract`: a
    /// row kind's own contract, or the kind itself when none is given (the
    /// parts then compose it); another primitive's as given.
    pub fn contract(&self, contract: Option<&str>) -> Result<Option<String>, String> {
        let Some(kind) = self.rows else { return Ok(contract.map(str::to_string)) };
        match contract {
            None => Ok(Some(kind.name().to_string())),
            Some(c) if c.split('.').next() == Some(kind.name()) => Ok(Some(c.to_string())),
            Some(c) => Err(format!(
                "primitive {} has the contracts {}.<in>.<out>... (e.g. {}), not '{c}'",
                kind.name(),
                kind.name(),
                kind.examples()
            )),
        }
    }
}

impl std::str::FromStr for Named {
    type Err = String;

    fn from_str(name: &str) -> Result<Named, String> {
        Named::parse(name).ok_or_else(|| format!("unknown primitive '{name}': choose from {}", Named::names()))
    }
}

/// The primitive's name as a user should read it where `contracts` are
/// checked: the row kind when they are row contracts of one kind, else the
/// registry's name.
pub fn shown(primitive: Primitive, contracts: &[&Contract]) -> String {
    let kinds: Vec<RowKind> = contracts.iter().filter_map(|c| of(c)).map(|r| r.parts.kind).collect();
    match kinds.first() {
        Some(&kind) if kinds.len() == contracts.len() && kinds.iter().all(|&k| k == kind) => kind.name().into(),
        _ => primitive.name().into(),
    }
}

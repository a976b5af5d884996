//! The raw case catalogue: the GPU catalogue's cases (same sizes, data
//! families, seeds and model) as plain data, for kernels the harness does not
//! ship: each case's input arrays and the model's exact expected output, in
//! the buffer layout of a named contract. `harness check` launches a user's
//! kernel on them; `harness cases export` writes them as `.npy` files.
//!
//! Each primitive that has contracts lists them in its own module and builds
//! its cases from the same generators and model calls as its GPU cases.

pub mod arg_reduce;
pub mod array;
pub mod compact;
pub mod exact_sum;
pub mod float_reduce;
pub mod histogram;
pub mod mismatch;
pub mod param;
pub mod reduce;
pub mod rule;
pub mod scan;
pub mod segmented_reduce;
pub mod softmax;
pub mod topk;
pub mod topk_sample;
pub mod topk_sample_rule;

pub use array::{Array, Dtype};
pub use param::{Param, Value};
pub use rule::Rule;

use super::case::{CaseId, Verdict};
use super::SweepPlan;
use crate::registry::primitive::Primitive;

/// How many elements a contract's buffer holds for an input of n elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Len {
    /// n elements (an output may hold fewer meaningful ones: compaction
    /// writes the kept items first and must leave the rest untouched).
    N,
    /// One element (a scalar result).
    One,
    /// As many elements as the case gives: the model's output for an
    /// output (bins, segments), the case's array for an input (offsets).
    PerCase,
}

impl Len {
    /// Elements of a buffer at input size `n` whose model output has `model` elements.
    pub fn elements(self, n: usize, model: usize) -> usize {
        match self {
            Len::N => n,
            Len::One => 1,
            Len::PerCase => model,
        }
    }
}

/// One buffer of a contract: its role name (a kernel argument names it), type and length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Buffer {
    /// Role: `in`, `out`, ...
    pub role: &'static str,
    /// Element type.
    pub dtype: Dtype,
    /// Length as a function of n.
    pub len: Len,
}

/// A contract: the buffers a kernel of one primitive reads and writes, the
/// scalars it is given, and how its outputs are compared with the model's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Contract {
    /// Name, the suffix our variants carry: `exclusive.i32`, `sum.i32`.
    pub name: &'static str,
    /// One line for people.
    pub summary: &'static str,
    /// Inputs, in the order of [`RawCase::inputs`].
    pub inputs: &'static [Buffer],
    /// Scalar parameters, in the order of [`RawCase::params`].
    pub params: &'static [Param],
    /// Outputs, in the order of [`RawCase::expected`].
    pub outputs: &'static [Buffer],
    /// The comparison rule.
    pub rule: Rule,
    /// The check name of the first output in failure lines (`prefix`,
    /// `sum`), as the sweep prints it; later outputs are named by their role.
    pub what: &'static str,
}

impl Contract {
    /// A contract without parameters whose outputs are compared exactly.
    pub const fn exact(
        name: &'static str,
        summary: &'static str,
        inputs: &'static [Buffer],
        outputs: &'static [Buffer],
        what: &'static str,
    ) -> Contract {
        Contract { name, summary, inputs, params: &[], outputs, rule: Rule::Exact, what }
    }

    /// Every buffer role, inputs then outputs.
    pub fn roles(&self) -> Vec<&'static str> {
        self.inputs.iter().chain(self.outputs).map(|b| b.role).collect()
    }

    /// The comparison rule in words (for `index.json` and receipts).
    pub fn rule(&self) -> &'static str {
        self.rule.words()
    }

    /// The check name of output `k` in failure lines.
    pub fn what_of(&self, k: usize) -> &'static str {
        if k == 0 {
            self.what
        } else {
            self.outputs.get(k).map(|b| b.role).unwrap_or(self.what)
        }
    }

    /// The element type of the model's output `k` (the exact value where the
    /// rule is a tolerance: float64).
    pub fn expected_dtype(&self, k: usize) -> Dtype {
        match self.rule {
            Rule::Exact => self.outputs.get(k).map(|b| b.dtype).unwrap_or(Dtype::Int64),
            Rule::SoftmaxRows | Rule::FloatSumBound => Dtype::Float64,
            // The model's own draws, then their exact probabilities.
            Rule::TopkSample if k == 0 => Dtype::Int64,
            Rule::TopkSample => Dtype::Float64,
        }
    }

    /// The verdict on the outputs `got` of `case`, by this contract's rule.
    pub fn compare(&self, case: &RawCase, got: &[Array]) -> Verdict {
        rule::compare(self, case, got)
    }
}

/// One case's data: the inputs and parameters in contract order and the model's outputs.
#[derive(Debug, Clone, PartialEq)]
pub struct RawCase {
    /// Inputs, in the order of [`Contract::inputs`].
    pub inputs: Vec<Array>,
    /// Parameter values, in the order of [`Contract::params`].
    pub params: Vec<Value>,
    /// The model's outputs, in the order of [`Contract::outputs`] (the
    /// exact values where the rule is a tolerance).
    pub expected: Vec<Array>,
}

impl RawCase {
    /// A case without parameters.
    pub fn new(inputs: Vec<Array>, expected: Vec<Array>) -> RawCase {
        RawCase { inputs, params: Vec::new(), expected }
    }

    /// Elements of output `k` of the model (0 when it has none).
    pub fn model_len(&self, k: usize) -> usize {
        self.expected.get(k).map(Array::count).unwrap_or(0)
    }
}

/// A case of the raw catalogue: its id and the generator of its data.
pub struct RawSpec {
    /// The id: the primitive, `<label>.<contract>` as variant, and the
    /// sweep's size, family and input seed.
    pub id: CaseId,
    /// Generates the input and the model's output (no GPU).
    pub make: Box<dyn Fn() -> Result<RawCase, String> + Send + Sync>,
}

impl RawSpec {
    /// The case `id` whose data `make` generates.
    pub fn new(id: CaseId, make: impl Fn() -> Result<RawCase, String> + Send + Sync + 'static) -> RawSpec {
        RawSpec { id, make: Box::new(make) }
    }
}

/// The variant of a raw case: `<label>.<contract>`.
pub fn variant(label: &str, contract: &Contract) -> String {
    format!("{label}.{}", contract.name)
}

/// Appends the raw cases of `contract` over the GPU catalogue's integer
/// inputs: one per size of `plan` and member of its integer families, with
/// the same seeds as the GPU cases of `primitive`
/// ([`case_seed`](crate::sweep::gpu::case_seed) by family position), the
/// data made by `make(family, n, seed)`.
pub fn int_cases<F>(
    plan: &SweepPlan,
    primitive: &str,
    contract: &Contract,
    label: &str,
    out: &mut Vec<RawSpec>,
    make: F,
) where
    F: Fn(model::generators::DataFamily, usize, u64) -> Result<RawCase, String> + Clone + Send + Sync + 'static,
{
    use crate::sweep::gpu::{case_seed, id, int_families};
    for &n in &plan.sizes {
        for (f, family) in int_families(plan, n).into_iter().enumerate() {
            let seed = case_seed(plan.seed, primitive, n, f);
            let case_id = id(primitive, variant(label, contract), n.to_string(), n, &family.name(), seed);
            let make = make.clone();
            out.push(RawSpec::new(case_id, move || make(family, n, seed)));
        }
    }
}

/// Appends one primitive's raw cases of `contract` for `plan`, variants named `<label>.<contract>`.
pub type RawBuilder = fn(&SweepPlan, &Contract, &str, &mut Vec<RawSpec>);

/// Every contract of `primitive` (empty when it has none yet).
pub fn contracts(primitive: Primitive) -> &'static [Contract] {
    primitive.raw_cases().map(|(contracts, _)| contracts).unwrap_or(&[])
}

/// The contract `name` of `primitive`, or a message naming the valid ones.
pub fn contract(primitive: Primitive, name: &str) -> Result<&'static Contract, String> {
    let all = contracts(primitive);
    if all.is_empty() {
        let with: Vec<&str> =
            Primitive::ALL.into_iter().filter(|p| !contracts(*p).is_empty()).map(Primitive::name).collect();
        return Err(format!(
            "primitive {primitive} has no contract for user kernels yet (primitives with contracts: {})",
            with.join(", ")
        ));
    }
    all.iter().find(|c| c.name == name).ok_or_else(|| {
        format!(
            "unknown contract '{name}' for primitive {primitive}: choose from {}",
            all.iter().map(|c| c.name).collect::<Vec<_>>().join(", ")
        )
    })
}

/// The input sizes the raw cases of `primitive`'s `contract` have for the
/// plan sizes `sizes` (some catalogues add fixed sizes or, like softmax,
/// visit shapes of their own): the sizes a manifest's geometry must fit.
pub fn case_sizes(primitive: Primitive, contract: &Contract, sizes: &[usize]) -> Vec<usize> {
    let plan = SweepPlan::of_primitive(primitive, sizes, 0);
    let mut all: Vec<usize> = catalogue(&plan, primitive, contract, "sizes").into_iter().map(|s| s.id.n).collect();
    all.sort_unstable();
    all.dedup();
    all
}

/// The raw cases of `primitive`'s `contract` for `plan`, in the GPU catalogue's order.
pub fn catalogue(plan: &SweepPlan, primitive: Primitive, contract: &Contract, label: &str) -> Vec<RawSpec> {
    let mut out = Vec::new();
    if let Some((_, build)) = primitive.raw_cases() {
        build(plan, contract, label, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_contracts_and_primitives_without_contracts_are_named() {
        let e = contract(Primitive::Scan, "exclusive.f32").unwrap_err();
        assert_eq!(e, "unknown contract 'exclusive.f32' for primitive scan: choose from exclusive.i32, inclusive.i32");
        let e = contract(Primitive::Histogram, "x").unwrap_err();
        assert_eq!(e, "unknown contract 'x' for primitive histogram: choose from even.i32, even.f32");
        assert_eq!(contract(Primitive::Reduce, "sum.i32").map(|c| c.outputs[0].len), Ok(Len::One));
    }

    #[test]
    fn the_comparison_names_the_first_wrong_element_and_a_type_mismatch() {
        let c = contract(Primitive::Scan, "exclusive.i32").expect("exists");
        let case = |expected: Vec<i64>| RawCase::new(vec![], vec![Array::Int64(expected)]);
        assert!(c.compare(&case(vec![0, 1]), &[Array::Int64(vec![0, 1])]).passed());
        assert_eq!(
            c.compare(&case(vec![0, 1, 3]), &[Array::Int64(vec![0, 1, 4])]),
            Verdict::fail_at(2, "3", "4", "prefix")
        );
        assert!(!c.compare(&case(vec![0]), &[Array::Int32(vec![0])]).passed());
    }
}

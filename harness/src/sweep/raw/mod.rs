//! The raw case catalogue: the GPU catalogue's cases (same sizes, data
//! families, seeds and model) as plain data, for kernels the harness does not
//! ship: each case's input arrays and the model's exact expected output, in
//! the buffer layout of a named contract. `harness check` launches a user's
//! kernel on them; `harness cases export` writes them as `.npy` files.
//!
//! Each primitive that has contracts lists them in its own module and builds
//! its cases from the same generators and model calls as its GPU cases.

pub mod array;
pub mod reduce;
pub mod scan;

pub use array::{Array, Dtype};

use super::case::{CaseId, Verdict};
use super::SweepPlan;
use crate::registry::Primitive;

/// How many elements a contract's buffer holds for an input of n elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Len {
    /// n elements.
    N,
    /// One element (a scalar result).
    One,
}

impl Len {
    /// Elements at input size `n`.
    pub fn elements(self, n: usize) -> usize {
        match self {
            Len::N => n,
            Len::One => 1,
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

/// A contract: the buffers a kernel of one primitive reads and writes, and
/// how its output is compared with the model's (every contract so far is exact).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Contract {
    /// Name, the suffix our variants carry: `exclusive.i32`, `sum.i32`.
    pub name: &'static str,
    /// One line for people.
    pub summary: &'static str,
    /// Inputs, in the order of [`RawCase::inputs`].
    pub inputs: &'static [Buffer],
    /// The output.
    pub output: Buffer,
    /// The check name in failure lines (`prefix`, `sum`), as the sweep prints it.
    pub what: &'static str,
}

impl Contract {
    /// Every buffer role, inputs then output.
    pub fn roles(&self) -> Vec<&'static str> {
        self.inputs.iter().chain([&self.output]).map(|b| b.role).collect()
    }

    /// The comparison rule in words (for `index.json` and receipts).
    pub fn rule(&self) -> &'static str {
        "exact: every element equal to the model's, and the same element count"
    }

    /// The verdict on `got` against `expected` (the model's), by this contract's rule.
    pub fn compare(&self, expected: &Array, got: &Array) -> Verdict {
        use super::compare::exact;
        match (expected, got) {
            (Array::Int32(e), Array::Int32(g)) => exact(e, g, self.what),
            (Array::Int64(e), Array::Int64(g)) => exact(e, g, self.what),
            (Array::Bfloat16(e), Array::Bfloat16(g)) => exact(e, g, self.what),
            (Array::Float32(e), Array::Float32(g)) => exact(
                &e.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                &g.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                self.what,
            ),
            (Array::Float64(e), Array::Float64(g)) => exact(
                &e.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                &g.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                self.what,
            ),
            _ => Verdict::fail(
                format!("{} elements", expected.dtype().name()),
                format!("{} elements", got.dtype().name()),
                "output type",
            ),
        }
    }
}

/// One case's data: the inputs in contract order and the model's output.
#[derive(Debug, Clone, PartialEq)]
pub struct RawCase {
    /// Inputs, in the order of [`Contract::inputs`].
    pub inputs: Vec<Array>,
    /// The exact expected output.
    pub expected: Array,
}

/// A case of the raw catalogue: its id and the generator of its data.
pub struct RawSpec {
    /// The id: the primitive, `<label>.<contract>` as variant, and the
    /// sweep's size, family and input seed.
    pub id: CaseId,
    /// Generates the input and the model's output (no GPU).
    pub make: Box<dyn Fn() -> Result<RawCase, String> + Send + Sync>,
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
        assert!(e.starts_with("primitive histogram has no contract for user kernels yet"), "{e}");
        assert_eq!(contract(Primitive::Reduce, "sum.i32").map(|c| c.output.len), Ok(Len::One));
    }

    #[test]
    fn the_comparison_names_the_first_wrong_element_and_a_type_mismatch() {
        let c = contract(Primitive::Scan, "exclusive.i32").expect("exists");
        assert!(c.compare(&Array::Int64(vec![0, 1]), &Array::Int64(vec![0, 1])).passed());
        assert_eq!(
            c.compare(&Array::Int64(vec![0, 1, 3]), &Array::Int64(vec![0, 1, 4])),
            Verdict::fail_at(2, "3", "4", "prefix")
        );
        assert!(!c.compare(&Array::Int64(vec![0]), &Array::Int32(vec![0])).passed());
    }
}

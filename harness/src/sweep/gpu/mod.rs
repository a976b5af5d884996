//! The GPU case catalogue: every kernel variant x size x data family, each
//! case a closure that generates its input from a seed, runs the kernel on
//! poisoned outputs, and compares every element with the model.

pub mod arg_reduce;
pub mod compact;
pub mod exact_segmented_sum;
pub mod exact_sum;
pub mod float_reduce;
pub mod histogram;
mod memo;
pub mod reduce;
pub mod scan;
pub mod segmented_reduce;
pub mod softmax;

pub use memo::{Input, Inputs};

use super::case::{CaseId, Verdict};
use super::digest::CaseDigest;
use super::SweepPlan;
use crate::registry::Primitive;
use model::generators::DataFamily;

/// One GPU check: its id, its reference (CPU) and the closure that runs it.
pub struct GpuCase {
    /// What it checks.
    pub id: CaseId,
    /// Generates the input and the model's expectation (no GPU) and returns
    /// their digests; an error is the generator's or the model's.
    pub reference: Box<dyn Fn() -> Result<CaseDigest, String> + Send + Sync>,
    /// Generates the input, runs the kernel on poisoned outputs, compares with the model.
    pub run: Box<dyn Fn(&kernels::Gpu) -> Verdict + Send + Sync>,
}

/// Every case `plan` selects, in a fixed order (by primitive, then size and
/// family, then variant, so one generated input serves every variant).
pub fn catalogue(plan: &SweepPlan) -> Vec<GpuCase> {
    let mut cases = Vec::new();
    for primitive in Primitive::ALL {
        if plan.wants(primitive) {
            (primitive.gpu_cases())(plan, &mut cases);
        }
    }
    cases.retain(|c| plan.wants_variant(&c.id.variant));
    cases
}

/// The seed of one (primitive, size, family) input: every variant of a
/// primitive sees the same input at the same size and family.
pub fn case_seed(plan_seed: u64, primitive: &str, size: usize, family: usize) -> u64 {
    let mut h = plan_seed ^ 0x243f_6a88_85a3_08d3;
    for byte in primitive.bytes() {
        h = (h ^ byte as u64).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h ^= (size as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    h ^= (family as u64).wrapping_mul(0xc2b2_ae3d_27d4_eb4f);
    h ^ (h >> 29)
}

/// The integer families visited at `size`: all five for small sizes, the two
/// cheap ones at 2^24 and above (sorting 2^28 values would dominate the
/// sweep), the first only for sanitizer runs.
pub fn int_families(plan: &SweepPlan, size: usize) -> Vec<DataFamily> {
    if plan.one_family {
        vec![DataFamily::SmallInts]
    } else if size >= 1 << 24 {
        vec![DataFamily::SmallInts, DataFamily::FullRangeI32]
    } else {
        DataFamily::INT_FAMILIES.to_vec()
    }
}

/// The inputs of `primitive` at size `n`, one per member of [`int_families`], each with its
/// family's name and its seed ([`case_seed`] by the family's position): made by
/// `make(family, n, seed)`, digested by `digest`, keyed by size, family and seed.
pub fn int_family_inputs<P: Send + Sync + 'static>(
    plan: &SweepPlan,
    primitive: &str,
    n: usize,
    inputs: &Inputs<P>,
    make: fn(DataFamily, usize, u64) -> Result<P, String>,
    digest: fn(&P) -> String,
) -> Vec<(String, u64, Input<P>)> {
    let families = int_families(plan, n).into_iter().enumerate();
    families
        .map(|(f, family)| {
            let seed = case_seed(plan.seed, primitive, n, f);
            let name = family.name();
            let input = inputs.input(format!("{n}/{name}/{seed}"), move || make(family, n, seed), digest);
            (name, seed, input)
        })
        .collect()
}

/// The largest affine-map input.
pub const AFFINE_MAX: usize = 1 << 24;

/// Whether the affine-map cases run at `n`. The non-commutative operator proves the order of
/// each schedule; at 2^24 every schedule already runs all its passes but the last recursion
/// level, which the int32 cases at 2^28 check, and affine maps of 2^28 (4 GB, three times over
/// with the expected maps) would not fit a CI machine's memory for the receipt gate's
/// reference.
pub fn affine_cases_at(plan: &SweepPlan, n: usize) -> bool {
    n <= AFFINE_MAX && !(plan.one_family && n > 1 << 20)
}

/// The affine-map input of `primitive` (e.g. `"scan.affine"`) at size `n` with its seed, made by
/// `make(n, seed)` and digested by `digest`; `None` where [`affine_cases_at`] says no.
pub fn affine_input<P: Send + Sync + 'static>(
    plan: &SweepPlan,
    primitive: &str,
    n: usize,
    inputs: &Inputs<P>,
    make: fn(usize, u64) -> Result<P, String>,
    digest: fn(&P) -> String,
) -> Option<(u64, Input<P>)> {
    if !affine_cases_at(plan, n) {
        return None;
    }
    let seed = case_seed(plan.seed, primitive, n, 0);
    Some((seed, inputs.input(format!("{n}/affine/{seed}"), move || make(n, seed), digest)))
}

/// A case id.
pub fn id(primitive: &str, variant: String, size: String, n: usize, family: &str, seed: u64) -> CaseId {
    CaseId { primitive: primitive.into(), variant, size, n, family: family.into(), seed }
}

/// A case id whose size label is `n` itself.
pub fn sized_id(primitive: &str, variant: String, n: usize, family: &str, seed: u64) -> CaseId {
    id(primitive, variant, n.to_string(), n, family, seed)
}

/// A GPU call that should have succeeded but returned an error.
pub fn gpu_error(e: &kernels::GpuError) -> Verdict {
    Verdict::fail("a result", format!("error: {e}").replace('\n', " "), "gpu call")
}

/// The model rejected an input the catalogue generated (a harness bug).
pub fn model_error(e: &model::ModelError) -> Verdict {
    Verdict::fail("a model result", format!("model error: {e}"), "model")
}

/// Sizes at which the model's hardware-scope algorithm is also compared
/// (it replays every combine, so it is kept off the largest sizes).
pub const HARDWARE_MODEL_MAX: usize = 1 << 20;

/// A case on fixed data written in the catalogue (the seed examples and the
/// rejection rules): `input` and `expected` describe that data and the
/// required answer or error, and their digests cover those descriptions.
pub fn contract_case(
    id: CaseId,
    input: String,
    expected: String,
    run: impl Fn(&kernels::Gpu) -> Verdict + Send + Sync + 'static,
) -> GpuCase {
    let input_digest = super::digest::Fingerprint::new().text(&input).finish();
    let expected_digest = super::digest::Fingerprint::new().text(&expected).finish();
    GpuCase {
        id,
        reference: Box::new(move || {
            Ok(CaseDigest { input_digest: input_digest.clone(), expected_digest: expected_digest.clone() })
        }),
        run: Box::new(run),
    }
}

/// Test check of a catalogue slice: the case ids are unique and the
/// reference of every case that `wanted` selects computes (its model
/// agrees with itself where it cross-checks), else a panic naming the case.
#[cfg(test)]
pub(crate) fn assert_unique_ids_and_references(cases: &[GpuCase], wanted: impl Fn(&GpuCase) -> bool) {
    let mut keys: Vec<String> = cases.iter().map(|c| c.id.marker()).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), cases.len(), "case ids are unique");
    for case in cases.iter().filter(|c| wanted(c)) {
        if let Err(e) = (case.reference)() {
            panic!("{}: {e}", case.id.marker());
        }
    }
}

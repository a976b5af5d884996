//! The GPU case catalogue: every kernel variant x size x data family, each
//! case a closure that generates its input from a seed, runs the kernel on
//! poisoned outputs, and compares every element with the model.

pub(crate) mod arg_pairs;
pub mod arg_reduce;
mod arg_reduce_streamed;
pub mod compact;
mod compact_streamed;
pub mod exact_segmented_sum;
pub mod exact_sum;
pub mod float_reduce;
pub mod histogram;
mod histogram_streamed;
mod memo;
pub mod pieces;
pub mod reduce;
pub mod scan;
pub mod segmented_reduce;
mod segmented_reduce_streamed;
pub mod softmax;
mod softmax_streamed;
mod sparse_sum;
pub mod streamed;
pub mod topk;
pub mod topk_sample;

pub use memo::{groups, FixedInput, Input, InputSource, Inputs, Keep, Pieced, PreparedInput, INPUT_PART};

use super::case::{CaseId, Verdict};
use super::digest::CaseDigest;
use super::SweepPlan;
use crate::registry::primitive::Primitive;
use kernels::AffineMap;
use model::generators::DataFamily;

/// One GPU check: its id, the input it reads, its reference (CPU) and the
/// closure that runs it. Cases are run and digested on a [`PreparedInput`]
/// (its [`GpuCase::prepare`]): consecutive cases of one input share it.
pub struct GpuCase {
    /// What it checks.
    pub id: CaseId,
    input: std::sync::Arc<dyn InputSource>,
    /// The name of the model's answer it is compared with (cases of one
    /// input with the same part share the answer and its digest).
    expected_part: String,
    /// The digests of the input and of the model's expectation (no GPU); an
    /// error is the generator's or the model's.
    reference: ReferenceFn,
    /// Runs the kernel on poisoned outputs and compares with the model.
    run: RunFn,
}

/// A case's reference on its prepared input.
type ReferenceFn = Box<dyn Fn(&PreparedInput) -> Result<CaseDigest, String> + Send + Sync>;
/// A case's run on a GPU with its prepared input.
type RunFn = Box<dyn Fn(&kernels::Gpu, &PreparedInput) -> Verdict + Send + Sync>;

impl GpuCase {
    /// The key of the input it reads (equal keys: one input).
    pub fn input_key(&self) -> &str {
        self.input.key()
    }

    /// Generates its input.
    pub fn prepare(&self) -> PreparedInput {
        self.input.prepare()
    }

    /// The digests of its input and of the model's answer, on `input` (this
    /// case's [`GpuCase::prepare`], or a case's of the same input key).
    pub fn reference(&self, input: &PreparedInput) -> Result<CaseDigest, String> {
        (self.reference)(input)
    }

    /// Runs it on `gpu` with `input` (as for [`GpuCase::reference`]).
    pub fn run(&self, gpu: &kernels::Gpu, input: &PreparedInput) -> Verdict {
        (self.run)(gpu, input)
    }

    /// Its reference from the digests of a pieced input
    /// ([`InputSource::digests_only`]).
    pub fn reference_from(&self, digests: &std::collections::BTreeMap<String, String>) -> Result<CaseDigest, String> {
        let part = |name: &str| {
            digests.get(name).cloned().ok_or_else(|| format!("no digest of part '{name}' (a catalogue bug)"))
        };
        Ok(CaseDigest { input_digest: part(INPUT_PART)?, expected_digest: part(&self.expected_part)? })
    }

    /// Whether its input is made a piece at a time ([`GpuCase::digests_only`] gives its digests).
    pub fn pieced(&self) -> bool {
        self.input.pieced()
    }

    /// The digests of its input in pieces, if it is made so.
    pub fn digests_only(&self) -> Option<Result<std::collections::BTreeMap<String, String>, String>> {
        self.input.digests_only()
    }

    /// Its reference on an input prepared for it alone.
    #[cfg(test)]
    pub fn standalone_reference(&self) -> Result<CaseDigest, String> {
        self.reference(&self.prepare())
    }
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

/// The reference of every case, in order, each input prepared once (as the
/// sweep's runs compute them).
#[cfg(test)]
pub fn references(cases: &[GpuCase]) -> Vec<Result<CaseDigest, String>> {
    let mut out = Vec::with_capacity(cases.len());
    for range in groups(cases) {
        let input = cases[range.start].prepare();
        out.extend(cases[range].iter().map(|case| case.reference(&input)));
    }
    out
}

/// The references of every case, in order, holding as little as the
/// receipt gate can: an input made a piece at a time gives its digests from
/// its pieces without keeping them, any other is prepared once for its cases.
pub fn digest_references(cases: &[GpuCase]) -> Vec<Result<CaseDigest, String>> {
    let mut out = Vec::with_capacity(cases.len());
    for range in groups(cases) {
        match cases[range.start].digests_only() {
            Some(Ok(digests)) => out.extend(cases[range].iter().map(|case| case.reference_from(&digests))),
            Some(Err(e)) => out.extend(cases[range].iter().map(|_| Err(e.clone()))),
            None => {
                let input = cases[range.start].prepare();
                out.extend(cases[range].iter().map(|case| case.reference(&input)));
            }
        }
    }
    out
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
/// family's name and its seed ([`case_seed`] by the family's position): made a piece at a
/// time by `make(family, n, seed, keep)`, keyed by size, family and seed.
pub fn int_family_inputs<P: Send + Sync + 'static>(
    plan: &SweepPlan,
    primitive: &str,
    n: usize,
    inputs: &Inputs<P>,
    make: fn(DataFamily, usize, u64, Keep) -> Result<Pieced<P>, String>,
) -> Vec<(String, u64, Input<P>)> {
    let families = int_families(plan, n).into_iter().enumerate();
    families
        .map(|(f, family)| {
            let seed = case_seed(plan.seed, primitive, n, f);
            let name = family.name();
            let input = inputs.pieced(format!("{n}/{name}/{seed}"), move |keep| make(family, n, seed, keep));
            (name, seed, input)
        })
        .collect()
}

/// The int32 value of an element `gpu` poisoned (every byte its
/// [`kernels::Gpu::poison_byte`]: the first run's or the second's).
pub(crate) fn poison_i32(gpu: &kernels::Gpu) -> i32 {
    i32::from_ne_bytes([gpu.poison_byte(); 4])
}

/// The window of the twins that run a path built for inputs past 2^32 items in windows (the
/// histogram's `.windows`, the compaction's `.c64`) at `n` items: the smallest multiple of 4
/// (the windows' alignment rule) that splits `n` into at most three windows (the last one
/// shorter unless 4 divides it), so from 9 items on a twin runs three windows and crosses two
/// window edges at every size the sweep and the sanitizers visit.
pub(crate) fn wide_window(n: usize) -> usize {
    n.div_ceil(3).next_multiple_of(4).max(4)
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

/// The affine-map input of `primitive` (e.g. `"scan.affine"`) at size `n` with its seed, made a
/// piece at a time by `make(n, seed, keep)`; `None` where [`affine_cases_at`] says no.
pub fn affine_input<P: Send + Sync + 'static>(
    plan: &SweepPlan,
    primitive: &str,
    n: usize,
    inputs: &Inputs<P>,
    make: fn(usize, u64, Keep) -> Result<Pieced<P>, String>,
) -> Option<(u64, Input<P>)> {
    if !affine_cases_at(plan, n) {
        return None;
    }
    let seed = case_seed(plan.seed, primitive, n, 0);
    Some((seed, inputs.pieced(format!("{n}/affine/{seed}"), move |keep| make(n, seed, keep))))
}

/// The (a, b) words of affine maps in order: how their digests read them.
pub fn affine_words(maps: &[AffineMap]) -> Vec<u64> {
    maps.iter().flat_map(|m| [m.a, m.b]).collect()
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
        input: std::sync::Arc::new(FixedInput::of(&id)),
        expected_part: String::new(),
        id,
        reference: Box::new(move |_| {
            Ok(CaseDigest { input_digest: input_digest.clone(), expected_digest: expected_digest.clone() })
        }),
        run: Box::new(move |gpu, _| run(gpu)),
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
    for range in groups(cases) {
        let mut prepared = None;
        for case in cases[range].iter().filter(|c| wanted(c)) {
            let input = prepared.get_or_insert_with(|| case.prepare());
            if let Err(e) = case.reference(input) {
                panic!("{}: {e}", case.id.marker());
            }
        }
    }
}

#[cfg(test)]
mod pieced_tests {
    use super::*;

    /// The receipt gate's digests (pieced inputs from their pieces, held one
    /// piece at a time) are the sweep's (every input kept), at sizes on both
    /// sides of a piece boundary.
    #[test]
    fn the_gate_s_digests_are_the_sweep_s() {
        let piece = model::generators::PIECE;
        for primitive in [
            Primitive::Reduce,
            Primitive::Scan,
            Primitive::ArgReduce,
            Primitive::Compact,
            Primitive::Histogram,
            Primitive::SegmentedReduce,
            Primitive::ExactSum,
        ] {
            let plan = SweepPlan {
                seed: 3,
                sizes: vec![1, 33, piece, piece + 7],
                quick: false,
                primitives: vec![primitive],
                variants: vec![],
                one_family: false,
            };
            let cases = catalogue(&plan);
            assert!(cases.iter().any(|c| c.pieced()), "{primitive} has pieced inputs");
            let kept = references(&cases);
            let digested = digest_references(&cases);
            for ((case, a), b) in cases.iter().zip(&kept).zip(&digested) {
                assert_eq!(a, b, "{}", case.id.marker());
                assert!(a.is_ok(), "{}: {a:?}", case.id.marker());
            }
        }
    }
}

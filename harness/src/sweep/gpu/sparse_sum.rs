//! The float sums past 2^32 items (`float_reduce`, `exact_sum`): inputs of the
//! sparse small-integer family ([`DataFamily::SparseSmallInts`]) streamed to
//! the device as f32 or bf16 ([`super::streamed`]). Their `sum |x|` stays
//! below 2^24, and every integer of magnitude up to 2^24 is an f32, so every
//! partial sum any schedule forms (any subset, in any order, atomics
//! included) is exact: a correct kernel returns the exact sum bit for bit,
//! whatever its tree. An item dropped, read twice or read from the wrong
//! place past 2^31 or 2^32 moves the sum (the family keeps dense windows
//! around those boundaries and the end), so the comparison is exact equality,
//! not an error bound, which at these sizes could not see a few hundred items.

use super::streamed::{fits_beside_input, skip_or_fail, streamed_case, OnDevice, PartDigests, StreamedInts};
use super::streamed::{StreamedModel, STREAMED_FROM};
use super::{case_seed, sized_id, GpuCase};
use crate::sweep::case::Verdict;
use crate::sweep::digest::Fingerprint;
use crate::sweep::SweepPlan;
use half::bf16;
use kernels::cudarc::driver::DeviceRepr;
use kernels::{Gpu, GpuError};
use model::generators::DataFamily;
use std::borrow::Cow;
use std::marker::PhantomData;
use std::sync::Arc;

/// The largest magnitude below which every integer is an f32 (its 24-bit significand).
const F32_EXACT_INTEGERS: u64 = 1 << 24;

/// A float element the sums read: a small integer widened to it exactly.
pub(crate) trait SparseElement: DeviceRepr + Copy + Send + Sync + 'static {
    /// `f32` or `bf16` (case ids, keys, messages).
    const NAME: &'static str;
    /// `v` (|v| <= 9) as this element, exactly.
    fn from_small_int(v: i32) -> Self;
}

impl SparseElement for f32 {
    const NAME: &'static str = "f32";
    fn from_small_int(v: i32) -> f32 {
        v as f32
    }
}

impl SparseElement for bf16 {
    const NAME: &'static str = "bf16";
    fn from_small_int(v: i32) -> bf16 {
        bf16::from_f32(v as f32)
    }
}

/// Which primitive a streamed sum feeds (keys and messages).
pub(crate) trait SumPrimitive: Send + Sync + 'static {
    /// The primitive's name.
    const NAME: &'static str;
}

/// The float reductions (`float_reduce`).
pub(crate) struct FloatReduceSum;
impl SumPrimitive for FloatReduceSum {
    const NAME: &'static str = "float_reduce";
}

/// The correctly rounded sum (`exact_sum`).
pub(crate) struct ExactSumSum;
impl SumPrimitive for ExactSumSum {
    const NAME: &'static str = "exact_sum";
}

/// The model of a streamed sparse input: its exact integer sum and `sum |x|`,
/// refused (a generator failure) when `sum |x|` reaches 2^24, where the
/// exactness the cases rely on ends.
pub(crate) struct SparseSum<P, E> {
    sum: i64,
    abs: u64,
    kind: PhantomData<fn() -> (P, E)>,
}

impl<P: SumPrimitive, E: SparseElement> StreamedModel for SparseSum<P, E> {
    type Answer = f32;
    type Device = E;
    const PRIMITIVE: &'static str = P::NAME;
    const DEVICE_TYPE: &'static str = E::NAME;

    fn to_device(items: &[i32]) -> Cow<'_, [E]> {
        Cow::Owned(items.iter().map(|&v| E::from_small_int(v)).collect())
    }

    fn new(_n: usize) -> Self {
        SparseSum { sum: 0, abs: 0, kind: PhantomData }
    }

    fn piece(&mut self, items: &[i32]) -> Result<(), Verdict> {
        for &v in items {
            self.sum += v as i64;
            self.abs += v.unsigned_abs() as u64;
        }
        Ok(())
    }

    fn finish(self) -> Result<(f32, PartDigests), Verdict> {
        if self.abs >= F32_EXACT_INTEGERS {
            let want = format!("sum |x| below 2^24 (every partial sum exact in f32); got {}", self.abs);
            return Err(Verdict::fail(want, self.abs, "generator"));
        }
        // Exact: |sum| <= sum |x| < 2^24.
        let sum = self.sum as f32;
        Ok((sum, vec![("sum".to_string(), Fingerprint::new().f32s(&[sum]).finish())]))
    }
}

/// Compares a float sum with the exact one: equal (either zero's sign), else a
/// failure naming why nothing but equality is correct here.
pub(crate) fn judge(exact: f32, got: f32) -> Verdict {
    if got == exact {
        Verdict::Pass
    } else {
        let want = format!("{exact:e} (the exact sum: every partial sum of this input is an f32 integer)");
        Verdict::fail(want, format!("{got:e}"), "sum")
    }
}

/// A variant's run on a streamed input already on the device: its f32 result.
pub(crate) type SparseRun<E> = Arc<dyn Fn(&Gpu, &OnDevice<f32, E>) -> Result<f32, GpuError> + Send + Sync>;

/// One streamed sparse sum: the recipe of (n, seed) as `E`, one case per
/// (variant name, runner), each run on the input once it is on the device.
/// `beside(n)` is the largest plan's scratch and result in bytes.
pub(crate) fn sparse_cases<P: SumPrimitive, E: SparseElement>(
    plan: &SweepPlan,
    n: usize,
    variants: Vec<(&'static str, SparseRun<E>)>,
    beside: fn(usize) -> u64,
    out: &mut Vec<GpuCase>,
) {
    debug_assert!(n >= STREAMED_FROM);
    let family = DataFamily::SparseSmallInts;
    let seed = case_seed(plan.seed, P::NAME, n, 0);
    let recipe = Arc::new(StreamedInts::<SparseSum<P, E>>::new(family, n, seed));
    for (variant, run) in variants {
        let id = sized_id(P::NAME, format!("{variant}.{}", E::NAME), n, &family.name(), seed);
        let bytes = beside(n);
        let scratch = move |_: &Gpu| Ok((bytes, "the largest plan's scratch and result".to_string()));
        out.push(streamed_case(id, &recipe, "sum", scratch, move |gpu, input| {
            let checked = fits_beside_input(gpu, P::NAME, variant, n, bytes).and_then(|()| run(gpu, input));
            match checked {
                Ok(got) => judge(input.answer, got),
                Err(e) => skip_or_fail(&e),
            }
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::gpu::streamed::stream_pieces;
    use model::generators::{int_pieces, sparse_abs_bound};

    type F32Sum = SparseSum<FloatReduceSum, f32>;

    /// The streamed model's sum is the pieces' exact sum, as an f32; what
    /// goes to the device is each item widened exactly.
    #[test]
    fn the_model_sums_the_sparse_pieces_exactly() {
        for n in [1usize, 4097, 3 * model::generators::PIECE + 17] {
            let recipe = StreamedInts::<F32Sum>::new(DataFamily::SparseSmallInts, n, 11);
            let mut written: Vec<f32> = Vec::new();
            let (sum, digests) = stream_pieces(&recipe, |_, piece| {
                written.extend(F32Sum::to_device(piece).iter());
                Ok(())
            })
            .unwrap_or_else(|v| panic!("{v:?}"));
            let whole = int_pieces(DataFamily::SparseSmallInts, n, 11).unwrap().collect_all();
            let exact: i64 = whole.iter().map(|&v| v as i64).sum();
            assert_eq!(sum, exact as f32);
            assert_eq!(sum as i64, exact, "exact in f32");
            assert_eq!(written, whole.iter().map(|&v| v as f32).collect::<Vec<_>>());
            assert!(digests.contains_key("sum") && digests.contains_key(crate::sweep::gpu::INPUT_PART));
            let narrow = SparseSum::<ExactSumSum, bf16>::to_device(&whole);
            assert!(narrow.iter().zip(&whole).all(|(b, &v)| b.to_f32() == v as f32));
        }
    }

    /// A sum |x| at 2^24 is refused: past it a correct schedule could round.
    #[test]
    fn a_sum_past_the_exact_integers_is_refused() {
        let mut model = F32Sum::new(3);
        model.piece(&[1 << 23, 1 << 23]).unwrap_or_else(|v| panic!("{v:?}"));
        assert!(matches!(model.finish(), Err(Verdict::Fail(_))));
        let mut model = F32Sum::new(2);
        model.piece(&[(1 << 23) - 1, 1 << 23]).unwrap_or_else(|v| panic!("{v:?}"));
        assert_eq!(model.finish().map(|(s, _)| s).ok(), Some(((1 << 24) - 1) as f32));
    }

    /// Only equality passes; the zero's sign does not matter; the failure says why.
    #[test]
    fn judge_wants_the_exact_sum() {
        assert!(matches!(judge(5.0, 5.0), Verdict::Pass));
        assert!(matches!(judge(0.0, -0.0), Verdict::Pass));
        for got in [5.000_001f32, 4.0, f32::NAN, f32::INFINITY] {
            match judge(5.0, got) {
                Verdict::Fail(m) => assert!(format!("{m:?}").contains("every partial sum"), "{m:?}"),
                other => panic!("{got}: {other:?}"),
            }
        }
    }

    /// Both large-offset sizes, and every size the float sums' descriptor
    /// admits, are within the family's exact range.
    #[test]
    fn the_sizes_the_sweep_admits_stay_exact() {
        use crate::registry::primitive::Primitive;
        for n in crate::sweep::sizes::LARGE_OFFSET_SIZES {
            assert!(sparse_abs_bound(n) < F32_EXACT_INTEGERS, "n={n}: bound {}", sparse_abs_bound(n));
        }
        for primitive in [Primitive::FloatReduce, Primitive::ExactSum] {
            let n = primitive.max_len();
            assert!(sparse_abs_bound(n) < F32_EXACT_INTEGERS, "{}: n={n}", primitive.name());
            let past = crate::sweep::out_of_reach(primitive, n + 1, usize::MAX).unwrap_or_default();
            assert!(past.contains("no longer exact in f32"), "{past}");
        }
    }

    /// Past 2^32 the float sums' catalogues hold the streamed sparse cases:
    /// every float_reduce variant and the correctly rounded sum, f32 and
    /// bf16, each input made a piece at a time, shared by its variants.
    #[test]
    fn large_offset_sizes_have_sparse_cases() {
        use crate::registry::primitive::Primitive;
        use crate::sweep::gpu::streamed::test_plan;
        let sizes = crate::sweep::sizes::LARGE_OFFSET_SIZES.to_vec();
        for (primitive, variants) in [(Primitive::FloatReduce, 5), (Primitive::ExactSum, 1)] {
            let mut cases = Vec::new();
            let plan = test_plan(primitive, sizes.clone());
            match primitive {
                Primitive::FloatReduce => crate::sweep::gpu::float_reduce::cases(&plan, &mut cases),
                _ => crate::sweep::gpu::exact_sum::cases(&plan, &mut cases),
            }
            for &n in &sizes {
                let at: Vec<&GpuCase> = cases.iter().filter(|c| c.id.n == n).collect();
                assert_eq!(at.len(), 2 * variants, "{} n={n}", primitive.name());
                for element in ["f32", "bf16"] {
                    let of: Vec<_> = at.iter().filter(|c| c.id.variant.ends_with(&format!(".{element}"))).collect();
                    assert_eq!(of.len(), variants, "{} n={n} {element}", primitive.name());
                    assert!(of.iter().all(|c| c.input_key() == of[0].input_key()), "one input per element");
                }
                for case in &at {
                    assert!(case.pieced(), "{}", case.id.marker());
                    assert_eq!(case.id.family, "sparse_small_ints");
                    assert_eq!(case.id.seed, case_seed(0x5eed, primitive.name(), n, 0));
                    // No digest before a case ran (the gate digests the pieces itself).
                    assert!(case.reference(&case.prepare()).is_err());
                }
            }
        }
    }
}

//! The compaction past 2^32 items ([`STREAMED_FROM`]), where a u32 count or
//! destination wraps: the plans of `kernels::compact::CompactPlan::new_wide`
//! (a u64 count; three-phase in windows of 2^30 items, the single pass
//! through its `_c64` kernel). Two inputs, streamed to the device as the
//! model's generator makes them, their kept items digested and counted by
//! the model's piece-wise compaction on the way ([`StreamedKept`]); each run
//! by both variants with both selectors:
//! * `mixed`: small integers (x > 0 keeps about half) and flags drawn from
//!   each item's index (about half nonzero): every window keeps and rejects
//!   items, and every item past 2^32 is read through a window's offset;
//! * `dense`: full-range integers made positive but for `i32::MIN` (x > 0
//!   keeps all but about one), flags nonzero but for 64-item runs at the
//!   start, across 2^31, just below 2^32 and at the end: the count passes
//!   u32::MAX, so the last kept items land past 2^32 (a u32 count or
//!   destination wraps there) and a window's base passes 2^32 too.
//!
//! A case reads back its u64 count, then its kept items a chunk at a time
//! into one BLAKE3 digest, compared with the digest the model made of its
//! kept items on the way to the device (the same part, fed the same bytes:
//! equal exactly when every kept item is, in order); only when they differ
//! is the input made again, a piece at a time beside the output, to name the
//! first wrong item. Then the rest of the output (past the count) is read to
//! check that the poison survived: host memory a chunk of 64 MB whatever n. (Making
//! the input again for every case took the first case past 300 s at
//! 2^32 + 333 on the H100; the flags, a hash of each index, are made on
//! every core.) Device memory: the
//! int32 input (4 bytes an item) for all the cases of an input, and per
//! case a poisoned output (4 bytes an item), the selector flags (1 byte an
//! item, flagged cases) and the plan's scratch (three-phase: 8.6 GB for one
//! window of 2^30 items; single pass: 16 bytes per 5120 items): at most
//! 9 bytes an item and 8.6 GB, 47.3 GB at 2^32 + 333 (an H100 runs it),
//! 86 GB at 2^33 + 555 (an H200 only; an H100 skips those cases for
//! memory, with the numbers).

use super::poison_i32;
use super::streamed::{fits_beside_input, skip_or_fail, streamed_case, OnDevice, PartDigests, StreamedInts};
use super::streamed::{StreamedModel, STREAMED_FROM};
use super::{case_seed, gpu_error, model_error, sized_id, GpuCase, Keep};
use crate::sweep::case::Verdict;
use crate::sweep::gpu::pieces::{Part, UnsizedPart};
use crate::sweep::SweepPlan;
use kernels::compact::wide_scratch_bytes;
use kernels::cudarc::driver::CudaSlice;
use kernels::{CompactPlan, CompactVariant, Gpu, GpuError, SelectorKind};
use model::generators::{DataFamily, PIECE};
use model::pieces::compact_piece;
use rayon::prelude::*;
use std::borrow::Cow;
use std::marker::PhantomData;
use std::sync::Arc;

/// The values and selector flags of a streamed input (one marker type a
/// shape, so the model knows them).
pub(crate) trait KeepShape: Send + Sync + 'static {
    /// The case-id part of the shape.
    const NAME: &'static str;
    /// The generator family of the items.
    const FAMILY: DataFamily;
    /// The device value of a generated item (exact, the same for the model).
    fn value(x: i32) -> i32;
    /// The selector flag of item `i` of `n`.
    fn flag(i: usize, n: usize) -> u8;
}

/// Small integers as they are; flags drawn from each item's index.
pub(crate) struct Mixed;
impl KeepShape for Mixed {
    const NAME: &'static str = "mixed";
    const FAMILY: DataFamily = DataFamily::SmallInts;
    fn value(x: i32) -> i32 {
        x
    }
    /// 0 (reject) half the time, else 1, 7 or 255 (any nonzero byte keeps),
    /// from a mix of the index (splitmix64's finaliser), so that the model
    /// and the upload make them a piece at a time without a generator's state.
    fn flag(i: usize, _n: usize) -> u8 {
        let mut h = (i as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
        h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        h ^= h >> 31;
        match h % 4 {
            0 | 1 => 0,
            2 => 1,
            _ if h & 4 == 0 => 7,
            _ => 255,
        }
    }
}

/// Items each side of which a `dense` input rejects by flag.
const DENSE_RUN: usize = 32;

/// Full-range integers made positive but for `i32::MIN`; flags nonzero but
/// for [`Dense::rejected_by_flag`].
pub(crate) struct Dense;
impl Dense {
    /// The 256 items the flags reject at `n` past 2^32: the first 64, 64
    /// across 2^31, the 64 just below 2^32 and the last 64 (fewer than the
    /// 333 items past 2^32 of the smaller large size, so the count passes
    /// u32::MAX).
    fn rejected_by_flag(i: usize, n: usize) -> bool {
        let around = |at: usize| i + DENSE_RUN >= at && i < at + DENSE_RUN;
        i < 2 * DENSE_RUN || around(1 << 31) || around((1 << 32) - DENSE_RUN) || i + 2 * DENSE_RUN >= n
    }
}
impl KeepShape for Dense {
    const NAME: &'static str = "dense";
    const FAMILY: DataFamily = DataFamily::FullRangeI32;
    /// `i32::MIN` stays (rejected by x > 0); any other item loses its sign
    /// bit and gains bit 0, so it is positive (kept) and still random.
    fn value(x: i32) -> i32 {
        if x == i32::MIN {
            x
        } else {
            (x & i32::MAX) | 1
        }
    }
    fn flag(i: usize, n: usize) -> u8 {
        u8::from(!Dense::rejected_by_flag(i, n))
    }
}

/// The values, the flags and the kept items (x > 0, flagged) of the piece
/// of `items` at `at` of a streamed input of `n` items of shape `S`.
struct KeptPiece {
    flags: Vec<u8>,
    positive: Vec<i32>,
    flagged: Vec<i32>,
}

fn kept_piece<S: KeepShape>(at: usize, n: usize, items: &[i32]) -> Result<KeptPiece, Verdict> {
    let values: Vec<i32> = items.iter().map(|&x| S::value(x)).collect();
    let flags = make_flags::<S>(at, at + items.len(), n);
    let (positive, flagged) = compact_piece(&values, &flags).map_err(|e| model_error(&e))?;
    Ok(KeptPiece { flags, positive, flagged })
}

/// The selector flags of items `start..end` of `n`, made on every core (a
/// hash of each index: the slowest part of a piece made one item at a time).
fn make_flags<S: KeepShape>(start: usize, end: usize, n: usize) -> Vec<u8> {
    (start..end).into_par_iter().map(|i| S::flag(i, n)).collect()
}

/// The model's counts of a streamed input: (x > 0, flagged).
pub(crate) type Counts = (u64, u64);

/// The model of a streamed input of shape `S`: the count of kept items of
/// both selectors, and the digests of the kept items (the parts of the
/// whole path's cases) and of the flags, made a piece at a time (the kept
/// items of the whole are the pieces' kept items in order).
pub(crate) struct StreamedKept<S> {
    n: usize,
    at: usize,
    counts: Counts,
    flags: Part<u8>,
    positive: UnsizedPart<i32>,
    flagged: UnsizedPart<i32>,
    shape: PhantomData<fn() -> S>,
}

impl<S: KeepShape> StreamedModel for StreamedKept<S> {
    type Answer = Counts;
    type Device = i32;
    const PRIMITIVE: &'static str = "compact";
    const DEVICE_TYPE: &'static str = "int32";

    fn to_device(items: &[i32]) -> Cow<'_, [i32]> {
        Cow::Owned(items.iter().map(|&x| S::value(x)).collect())
    }

    fn new(n: usize) -> Self {
        StreamedKept {
            n,
            at: 0,
            counts: (0, 0),
            flags: Part::new(Keep::DigestsOnly, n),
            positive: UnsizedPart::new(Keep::DigestsOnly),
            flagged: UnsizedPart::new(Keep::DigestsOnly),
            shape: PhantomData,
        }
    }

    fn piece(&mut self, items: &[i32]) -> Result<(), Verdict> {
        let piece = kept_piece::<S>(self.at, self.n, items)?;
        self.at += items.len();
        self.counts.0 += piece.positive.len() as u64;
        self.counts.1 += piece.flagged.len() as u64;
        self.flags.push(&piece.flags);
        self.positive.push(&piece.positive);
        self.flagged.push(&piece.flagged);
        Ok(())
    }

    fn finish(self) -> Result<(Counts, PartDigests), Verdict> {
        let (flags, _) = self.flags.finish().map_err(|e| Verdict::fail("the flags", e, "model"))?;
        let parts = vec![
            (SelectorKind::Positive.name().to_string(), self.positive.finish().0),
            (SelectorKind::Flags.name().to_string(), self.flagged.finish().0),
            ("flags".to_string(), flags),
        ];
        Ok((self.counts, parts))
    }
}

/// Device bytes a case of `variant` and `selector` needs beside its input:
/// its output and count, its selector flags and its plan's scratch.
fn beside_bytes(variant: CompactVariant, selector: SelectorKind, n: usize) -> u64 {
    let flags = if selector == SelectorKind::Flags { n as u64 } else { 0 };
    4 * n as u64 + 8 + flags + wide_scratch_bytes(variant, n)
}

/// The selector flags of shape `S` at `n` items on the device, written a
/// piece at a time.
fn upload_flags<S: KeepShape>(gpu: &Gpu, n: usize) -> Result<CudaSlice<u8>, GpuError> {
    let mut flags = gpu.alloc_uninit::<u8>(n)?;
    for at in (0..n).step_by(PIECE) {
        let end = n.min(at + PIECE);
        let piece = make_flags::<S>(at, end, n);
        let mut view = flags.slice_mut(at..end);
        gpu.stream().memcpy_htod(&piece, &mut view).map_err(|source| GpuError::Driver {
            context: format!("compact n={n}: writing flags {at}..{end}"),
            source,
        })?;
    }
    Ok(flags)
}

/// Reads `output[range]` back, naming the range in an error.
fn read_back(gpu: &Gpu, output: &CudaSlice<i32>, start: usize, end: usize) -> Result<Vec<i32>, Verdict> {
    gpu.stream().clone_dtoh(&output.slice(start..end)).map_err(|source| {
        let context = format!("compact n={}: reading outputs {start}..{end}", output.len());
        gpu_error(&GpuError::Driver { context, source })
    })
}

/// Items read back at a time when digesting an output (64 MB of int32).
const READ_CHUNK: usize = 1 << 24;

/// The output of a wide run compared with the model: its first `count`
/// items digested as the model's kept items were ([`UnsizedPart`]) and the
/// digest compared with the model's `expected` one; when they differ,
/// [`first_wrong_item`] names the item. Then the poison past the count.
fn check_output<S: KeepShape>(
    gpu: &Gpu,
    recipe: &StreamedInts<StreamedKept<S>>,
    selector: SelectorKind,
    output: &CudaSlice<i32>,
    count: usize,
    expected: &str,
) -> Verdict {
    let n = output.len();
    let mut kept = UnsizedPart::<i32>::new(Keep::DigestsOnly);
    for start in (0..count).step_by(READ_CHUNK) {
        match read_back(gpu, output, start, count.min(start + READ_CHUNK)) {
            Ok(got) => kept.push(&got),
            Err(verdict) => return verdict,
        }
    }
    let (digest, _) = kept.finish();
    if digest != expected {
        return first_wrong_item(gpu, recipe, selector, output, (digest, expected));
    }
    let poison = poison_i32(gpu);
    for start in (count..n).step_by(READ_CHUNK) {
        let got = match read_back(gpu, output, start, n.min(start + READ_CHUNK)) {
            Ok(got) => got,
            Err(verdict) => return verdict,
        };
        if let Some(k) = got.iter().position(|&g| g != poison) {
            return Verdict::fail_at(start + k, poison, got[k], "poison past the count (a rejected item wrote)");
        }
    }
    Verdict::Pass
}

/// The failure of an output whose kept items' digest (`digests`: got,
/// expected) is not the model's: the input made again a piece at a time,
/// each piece's kept items compared with the output's next places, to name
/// the first wrong item.
fn first_wrong_item<S: KeepShape>(
    gpu: &Gpu,
    recipe: &StreamedInts<StreamedKept<S>>,
    selector: SelectorKind,
    output: &CudaSlice<i32>,
    digests: (String, &str),
) -> Verdict {
    let n = output.len();
    let pieces = match recipe.pieces() {
        Ok(p) => p,
        Err(verdict) => return verdict,
    };
    let mut written = 0;
    for (at, items) in pieces {
        let piece = match kept_piece::<S>(at, n, &items) {
            Ok(p) => p,
            Err(verdict) => return verdict,
        };
        let want = if selector == SelectorKind::Positive { piece.positive } else { piece.flagged };
        let got = match read_back(gpu, output, written, written + want.len()) {
            Ok(got) => got,
            Err(verdict) => return verdict,
        };
        if let Some(k) = want.iter().zip(&got).position(|(w, g)| w != g) {
            return Verdict::fail_at(written + k, want[k], got[k], "kept item, in order (output index)");
        }
        written += want.len();
    }
    let (got, expected) = digests;
    Verdict::fail(
        expected,
        got,
        "digest of the kept items (no item differed when read again: a nondeterministic output)",
    )
}

/// One (variant, selector) run on a streamed input already on the device: a
/// fresh wide plan into a poisoned output and a poisoned u64 count, the
/// count compared with the model's, then the output ([`check_output`]).
fn run_on_device<S: KeepShape>(
    gpu: &Gpu,
    recipe: &StreamedInts<StreamedKept<S>>,
    variant: CompactVariant,
    selector: SelectorKind,
    input: &OnDevice<Counts>,
) -> Verdict {
    let n = input.buffer.len();
    let run = || -> Result<(CudaSlice<i32>, u64), GpuError> {
        fits_beside_input(gpu, "compact", variant.name(), n, beside_bytes(variant, selector, n))?;
        let flags = match selector {
            SelectorKind::Flags => Some(upload_flags::<S>(gpu, n)?),
            SelectorKind::Positive => None,
        };
        let mut plan = CompactPlan::new_wide(gpu, variant, selector, n)?;
        let mut output = gpu.alloc_poisoned::<i32>(n)?;
        let mut count = gpu.alloc_poisoned::<u64>(1)?;
        plan.enqueue_wide(&input.buffer, flags.as_ref(), &mut output, &mut count)?;
        gpu.synchronize()?;
        plan.check_fault()?;
        Ok((output, gpu.download(&count)?[0]))
    };
    let (output, count) = match run() {
        Ok(got) => got,
        Err(e) => return skip_or_fail(&e),
    };
    let want = if selector == SelectorKind::Positive { input.answer.0 } else { input.answer.1 };
    if count != want {
        return Verdict::fail(want, count, "count (u64)");
    }
    let Some(expected) = input.digests.get(selector.name()) else {
        return Verdict::fail(
            selector.name(),
            "no such part",
            "the model's digest of the kept items (a catalogue bug)",
        );
    };
    check_output(gpu, recipe, selector, &output, count as usize, expected)
}

/// Every variant's and selector's case on the input of shape `S` (the
/// `index`th streamed shape, for its seed) at `n`.
fn cases_of<S: KeepShape>(plan: &SweepPlan, n: usize, index: usize, out: &mut Vec<GpuCase>) {
    let seed = case_seed(plan.seed, "compact.streamed", n, index);
    let recipe = Arc::new(StreamedInts::<StreamedKept<S>>::new(S::FAMILY, n, seed));
    let most = CompactVariant::ALL.iter().map(|&v| beside_bytes(v, SelectorKind::Flags, n)).max().unwrap_or(0);
    for variant in CompactVariant::ALL {
        for selector in [SelectorKind::Positive, SelectorKind::Flags] {
            let name = format!("{}.{}.{}.c64", variant.name(), selector.name(), S::NAME);
            let id = sized_id("compact", name, n, &S::FAMILY.name(), seed);
            let beside = move |_: &Gpu| Ok((most, "the largest case's output, flags and scratch".to_string()));
            let again = recipe.clone();
            let run =
                move |gpu: &Gpu, input: &OnDevice<Counts>| run_on_device::<S>(gpu, &again, variant, selector, input);
            out.push(streamed_case(id, &recipe, selector.name(), beside, run));
        }
    }
}

/// Appends the streamed cases at `n` (past [`STREAMED_FROM`]).
pub(crate) fn cases(plan: &SweepPlan, n: usize, out: &mut Vec<GpuCase>) {
    debug_assert!(n >= STREAMED_FROM);
    cases_of::<Mixed>(plan, n, 0, out);
    cases_of::<Dense>(plan, n, 1, out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::primitive::Primitive;
    use crate::sweep::gpu::streamed::{large_offset_cases, stream_pieces};
    use model::generators::ints;

    /// Past 2^32 the catalogue holds the streamed cases only: two inputs,
    /// both variants and selectors, unique ids, made a piece at a time, all
    /// on the wide path (`.c64`).
    #[test]
    fn large_offset_sizes_have_streamed_cases() {
        for (n, at) in large_offset_cases(Primitive::Compact) {
            assert_eq!(at.len(), 2 * 2 * CompactVariant::ALL.len(), "n={n}");
            assert!(at.iter().all(|c| c.pieced() && c.id.variant.ends_with(".c64")), "n={n}");
        }
    }

    /// The model's counts and digests on a streamed input are the whole
    /// input's, at sizes around a piece, for both shapes; the kept items are
    /// the model's compaction of the whole.
    #[test]
    fn streamed_counts_are_the_whole_inputs() {
        fn check<S: KeepShape>(n: usize) -> Counts {
            let recipe = StreamedInts::<StreamedKept<S>>::new(S::FAMILY, n, 7);
            let mut written = Vec::new();
            let (counts, digests) = stream_pieces(&recipe, |_, p| {
                written.extend_from_slice(&StreamedKept::<S>::to_device(p));
                Ok(())
            })
            .unwrap_or_else(|v| panic!("{v:?}"));
            let whole: Vec<i32> = ints(S::FAMILY, n, 7).unwrap().into_iter().map(S::value).collect();
            assert_eq!(written, whole);
            let flags: Vec<u8> = (0..n).map(|i| S::flag(i, n)).collect();
            let (positive, flagged) = compact_piece(&whole, &flags).unwrap();
            assert_eq!(counts, (positive.len() as u64, flagged.len() as u64), "{} n={n}", S::NAME);
            for part in ["positive", "flagged", "flags", "input"] {
                assert!(digests.contains_key(part), "{part}: {digests:?}");
            }
            counts
        }
        let piece = PIECE;
        for n in [1, 33, piece + 7, 2 * piece + 333] {
            let (positive, flagged) = check::<Mixed>(n);
            assert!(positive <= n as u64 && flagged <= n as u64, "n={n}");
            let (positive, flagged) = check::<Dense>(n);
            assert!(positive + 2 >= n as u64, "n={n}: x > 0 keeps all but the i32::MIN items");
            assert!(flagged <= n as u64, "n={n}");
        }
    }

    /// The output check's digest of the kept items, fed in chunks of any
    /// size, is the model's digest of that part (made a piece at a time on
    /// the way to the device), for both shapes and selectors, and differs
    /// when one item does: a right output passes and a wrong one fails.
    #[test]
    fn kept_items_digested_in_chunks_are_the_models() {
        fn check<S: KeepShape>(n: usize) {
            let recipe = StreamedInts::<StreamedKept<S>>::new(S::FAMILY, n, 11);
            let (_, digests) = stream_pieces(&recipe, |_, _| Ok(())).unwrap_or_else(|v| panic!("{v:?}"));
            let whole: Vec<i32> = ints(S::FAMILY, n, 11).unwrap().into_iter().map(S::value).collect();
            let flags: Vec<u8> = (0..n).map(|i| S::flag(i, n)).collect();
            let (positive, flagged) = compact_piece(&whole, &flags).unwrap();
            for (selector, mut kept) in [(SelectorKind::Positive, positive), (SelectorKind::Flags, flagged)] {
                let digest = |items: &[i32], chunk: usize| {
                    let mut part = UnsizedPart::<i32>::new(Keep::DigestsOnly);
                    items.chunks(chunk).for_each(|c| part.push(c));
                    part.finish().0
                };
                let expected = &digests[selector.name()];
                for chunk in [1, 7, 1000, PIECE + 3] {
                    assert_eq!(&digest(&kept, chunk), expected, "{} {} n={n} chunk={chunk}", S::NAME, selector.name());
                }
                if let Some(last) = kept.last_mut() {
                    *last ^= 1;
                    assert_ne!(&digest(&kept, 1000), expected, "{} {} n={n}", S::NAME, selector.name());
                }
            }
        }
        for n in [1, 33, PIECE + 7, 2 * PIECE + 333] {
            check::<Mixed>(n);
            check::<Dense>(n);
        }
    }

    /// The dense flags reject 256 items at the large sizes, around 2^31 and
    /// just below 2^32 among them, so the flagged count passes u32::MAX and
    /// kept items land past 2^32; the mixed flags reject about half.
    #[test]
    fn dense_flags_count_past_u32_max() {
        for n in crate::sweep::sizes::LARGE_OFFSET_SIZES {
            let mut rejected: Vec<usize> = (0..1 << 7).collect();
            rejected.extend(((1 << 31) - 64)..((1 << 31) + 64));
            rejected.extend(((1 << 32) - 128)..(1 << 32));
            rejected.extend((n - 128)..n);
            let by_flag: Vec<usize> = rejected.into_iter().filter(|&i| Dense::flag(i, n) == 0).collect();
            assert_eq!(by_flag.len(), 256, "n={n}");
            assert!(by_flag.contains(&(1 << 31)) && by_flag.contains(&((1 << 32) - 1)), "n={n}");
            assert_eq!(Dense::flag(1 << 32, n), 1, "n={n}: the item at 2^32 is kept");
            assert!(n - 256 > u32::MAX as usize, "n={n}: the flagged count passes u32::MAX");
        }
        let kept = (0..1 << 16).filter(|&i| Mixed::flag(i, 0) != 0).count();
        assert!((30_000..35_000).contains(&kept), "{kept} of 65536 kept");
        let values: Vec<u8> = (0..1000).map(|i| Mixed::flag(i, 0)).collect();
        assert!([0, 1, 7, 255].iter().all(|f| values.contains(f)), "every flag value occurs");
    }

    /// The values of the dense shape: every item but `i32::MIN` positive.
    #[test]
    fn dense_values_are_positive_but_for_the_minimum() {
        for x in [i32::MIN + 1, -1, 0, 1, 2, i32::MAX, -2_000_000_000] {
            assert!(Dense::value(x) > 0, "{x}");
        }
        assert_eq!(Dense::value(i32::MIN), i32::MIN);
        assert_eq!(Mixed::value(-3), -3);
    }

    /// A case needs at most 9 bytes an item beside its input and one
    /// window's scratch: 47.3 GB in all at 2^32 + 333.
    #[test]
    fn device_memory_is_nine_bytes_an_item_and_a_window() {
        let n = (1usize << 32) + 333;
        let three = beside_bytes(CompactVariant::ThreePhase, SelectorKind::Flags, n);
        assert!(three > 5 * n as u64 && three < 5 * n as u64 + (9 << 30), "{three}");
        assert!((47_000_000_000..47_500_000_000).contains(&(three + 4 * n as u64)), "{}", three + 4 * n as u64);
        let single = beside_bytes(CompactVariant::SinglePass, SelectorKind::Positive, n);
        assert!(single < 4 * n as u64 + (20 << 20), "{single}");
    }
}

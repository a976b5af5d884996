//! GPU cases of stream compaction: by predicate (x > 0) and by flag array,
//! every variant; the whole poisoned output buffer is downloaded so that a
//! rejected item that writes anything past the kept count is caught. Every
//! case has a `.c64` twin run through the wide path (a u64 count; the
//! three-phase schedule in three windows, [`wide_window`]), the path an
//! input past 2^32 items takes (`compact_streamed`), so the windows' edges,
//! their bases and the u64 count are proved at every size the sweep and the
//! sanitizers visit.

use super::pieces::{pieced, Part, UnsizedPart};
use super::poison_i32;
use super::streamed::STREAMED_FROM;
use super::{gpu_error, int_family_inputs, sized_id, wide_window, GpuCase, Inputs, Keep, Pieced};
use crate::sweep::case::Verdict;
use crate::sweep::compare;
use crate::sweep::digest::Fingerprint;
use crate::sweep::SweepPlan;
use kernels::{CompactVariant, Selector, SelectorKind};
use model::generators::{compaction_flag_pieces, int_pieces, DataFamily};
use model::pieces::compact_piece;

/// One compaction input and the model's kept items under both selectors.
pub(crate) struct CompactCase {
    pub(crate) input: Vec<i32>,
    /// Random flags: 0 (reject) or a nonzero byte (keep; 1, 7 or 255).
    pub(crate) flags: Vec<u8>,
    pub(crate) kept_positive: Vec<i32>,
    pub(crate) kept_flagged: Vec<i32>,
}

/// The input of one (family, size, seed) with its flags and the model's kept items.
pub(crate) fn make(family: DataFamily, n: usize, seed: u64) -> Result<CompactCase, String> {
    pieced_case(family, n, seed, Keep::Data)?.data.ok_or_else(|| "no data kept".to_string())
}

/// [`make`] a piece at a time, in one pass: the input's digest is the
/// digest of its two parts' digests (the values, then the flags, each fed
/// as its pieces come), and the kept items, whose counts are known only at
/// the end, are unsized parts.
fn pieced_case(family: DataFamily, n: usize, seed: u64, keep: Keep) -> Result<Pieced<CompactCase>, String> {
    let (mut input, mut flags) = (Part::<i32>::new(keep, n), Part::<u8>::new(keep, n));
    let (mut positive, mut flagged) = (UnsizedPart::<i32>::new(keep), UnsizedPart::<i32>::new(keep));
    let ints = int_pieces(family, n, seed).map_err(|e| e.to_string())?;
    for (piece, piece_flags) in ints.zip(compaction_flag_pieces(n, seed)) {
        let kept = compact_piece(&piece, &piece_flags).map_err(|e| e.to_string())?;
        positive.push(&kept.0);
        flagged.push(&kept.1);
        input.push(&piece);
        flags.push(&piece_flags);
    }
    let (values_digest, input) = input.finish()?;
    let (flags_digest, flags) = flags.finish()?;
    let digest = Fingerprint::new().text("values, flags").text(&values_digest).text(&flags_digest).finish();
    let (positive_digest, kept_positive) = positive.finish();
    let (flagged_digest, kept_flagged) = flagged.finish();
    let answers = vec![(SelectorKind::Positive.name(), positive_digest), (SelectorKind::Flags.name(), flagged_digest)];
    Ok(pieced(digest, answers, || {
        Some(CompactCase { input: input?, flags: flags?, kept_positive: kept_positive?, kept_flagged: kept_flagged? })
    }))
}

/// The case-id suffixes: the u32 path, then its `.c64` twin, the path an
/// input past 2^32 items takes (`compact_streamed`): a u64 count, the
/// three-phase schedule in three windows of [`wide_window`] items (each
/// window's destinations offset by the earlier windows' count), the single
/// pass through its `_c64` kernel.
const PATHS: [(bool, &str); 2] = [(false, ""), (true, ".c64")];

/// Appends every compaction case of `plan`: on host-held inputs below 2^32
/// items, streamed to the device past it (`compact_streamed`).
pub fn cases(plan: &SweepPlan, out: &mut Vec<GpuCase>) {
    let inputs: Inputs<CompactCase> = Inputs::default();
    for &n in &plan.sizes {
        if n >= STREAMED_FROM {
            super::compact_streamed::cases(plan, n, out);
            continue;
        }
        for (family_name, seed, input) in int_family_inputs(plan, "compact", n, &inputs, pieced_case) {
            for variant in CompactVariant::ALL {
                for selector in [SelectorKind::Positive, SelectorKind::Flags] {
                    for (wide, suffix) in PATHS {
                        let name = format!("{}.{}{suffix}", variant.name(), selector.name());
                        let case_id = sized_id("compact", name, n, &family_name, seed);
                        out.push(input.case(
                            case_id,
                            selector.name(),
                            move |c| Fingerprint::new().i32s(kept(c, selector)).finish(),
                            move |gpu, case| run(gpu, variant, selector, wide, case),
                        ));
                    }
                }
            }
        }
    }
}

/// Runs one case on the u32 path or, `wide`, on its `.c64` twin, and
/// compares the whole output buffer with the model's kept items.
fn run(gpu: &kernels::Gpu, variant: CompactVariant, selector: SelectorKind, wide: bool, case: &CompactCase) -> Verdict {
    let chosen = match selector {
        SelectorKind::Positive => Selector::Positive,
        SelectorKind::Flags => Selector::Flags(&case.flags),
    };
    let n = case.input.len();
    let got = if wide {
        gpu.compact_i32_wide_raw(variant, chosen, &case.input, Some(wide_window(n)))
    } else {
        gpu.compact_i32_raw(variant, chosen, &case.input)
    };
    match got {
        Ok((buffer, count)) => check(kept(case, selector), &buffer, count, n, poison_i32(gpu)),
        Err(e) => gpu_error(&e),
    }
}

/// The count, the kept items in order, and the `poison` past the count in
/// a whole output `buffer` of `n` elements.
fn check(expected: &[i32], buffer: &[i32], count: usize, n: usize, poison: i32) -> Verdict {
    if count != expected.len() {
        return Verdict::fail(expected.len(), count, "count");
    }
    if buffer.len() != n {
        return Verdict::fail(n, buffer.len(), "output buffer length");
    }
    compare::all([
        compare::exact(expected, &buffer[..count], "kept items, in order"),
        // Nothing may be written past the count: the poison survives.
        compare::each(
            n - count,
            "poison past the count (a rejected item wrote)",
            |i| buffer[count + i] == poison,
            |i| (format!("poison {poison} at {}", count + i), buffer[count + i].to_string()),
        ),
    ])
}

/// The model's kept items for `selector`.
fn kept(case: &CompactCase, selector: SelectorKind) -> &[i32] {
    match selector {
        SelectorKind::Positive => &case.kept_positive,
        SelectorKind::Flags => &case.kept_flagged,
    }
}

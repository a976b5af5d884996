//! GPU cases of stream compaction: by predicate (x > 0) and by flag array,
//! every variant; the whole poisoned output buffer is downloaded so that a
//! rejected item that writes anything past the kept count is caught.

use super::{gpu_error, int_family_inputs, sized_id, GpuCase, Inputs};
use crate::sweep::case::Verdict;
use crate::sweep::compare;
use crate::sweep::digest::Fingerprint;
use crate::sweep::SweepPlan;
use kernels::{CompactVariant, Selector, SelectorKind, POISON_BYTE};
use model::generators::{ints, Rng};

/// The int32 value of a poisoned element.
const POISON_I32: i32 = i32::from_ne_bytes([POISON_BYTE; 4]);

/// One compaction input and the model's kept items under both selectors.
pub(crate) struct CompactCase {
    pub(crate) input: Vec<i32>,
    /// Random flags: 0 (reject) or a nonzero byte (keep; 1, 7 or 255).
    pub(crate) flags: Vec<u8>,
    pub(crate) kept_positive: Vec<i32>,
    pub(crate) kept_flagged: Vec<i32>,
}

/// The input of one (family, size, seed) with its flags and the model's kept items.
pub(crate) fn make(family: model::generators::DataFamily, n: usize, seed: u64) -> Result<CompactCase, String> {
    let input = ints(family, n, seed).map_err(|e| e.to_string())?;
    let mut rng = Rng::new(seed ^ 0x0f1a_6500);
    let flags: Vec<u8> = (0..n)
        .map(|_| match rng.below(4) {
            0 | 1 => 0,
            2 => 1,
            _ => [7u8, 255][rng.below(2) as usize],
        })
        .collect();
    let binary: Vec<u8> = flags.iter().map(|&f| u8::from(f != 0)).collect();
    let kept_positive = model::compact::compact_positive(&input).output;
    let kept_flagged = model::compact::compact_flags(&input, &binary).map_err(|e| e.to_string())?.output;
    Ok(CompactCase { input, flags, kept_positive, kept_flagged })
}

/// Appends every compaction case of `plan`.
pub fn cases(plan: &SweepPlan, out: &mut Vec<GpuCase>) {
    let inputs: Inputs<CompactCase> = Inputs::default();
    for &n in &plan.sizes {
        let digest = |c: &CompactCase| Fingerprint::new().i32s(&c.input).bytes(&c.flags).finish();
        for (family_name, seed, input) in int_family_inputs(plan, "compact", n, &inputs, make, digest) {
            for variant in CompactVariant::ALL {
                for selector in [SelectorKind::Positive, SelectorKind::Flags] {
                    let case_id =
                        sized_id("compact", format!("{}.{}", variant.name(), selector.name()), n, &family_name, seed);
                    out.push(input.case(
                        case_id,
                        selector.name(),
                        move |c| Fingerprint::new().i32s(kept(c, selector)).finish(),
                        move |gpu, case| {
                            let chosen = match selector {
                                SelectorKind::Positive => Selector::Positive,
                                SelectorKind::Flags => Selector::Flags(&case.flags),
                            };
                            let expected = kept(case, selector);
                            let (buffer, count) = match gpu.compact_i32_raw(variant, chosen, &case.input) {
                                Ok(v) => v,
                                Err(e) => return gpu_error(&e),
                            };
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
                                    |i| buffer[count + i] == POISON_I32,
                                    |i| {
                                        (format!("poison {POISON_I32} at {}", count + i), buffer[count + i].to_string())
                                    },
                                ),
                            ])
                        },
                    ));
                }
            }
        }
    }
}

/// The model's kept items for `selector`.
fn kept(case: &CompactCase, selector: SelectorKind) -> &[i32] {
    match selector {
        SelectorKind::Positive => &case.kept_positive,
        SelectorKind::Flags => &case.kept_flagged,
    }
}

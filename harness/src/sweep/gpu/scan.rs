//! GPU cases of the integer scans (int32 -> int64, exclusive and inclusive)
//! and of the affine-map scans (the non-commutative operator).
//!
//! Past 2^32 items ([`STREAMED_FROM`], where a 32-bit count wraps) an int32 input is streamed
//! to the device as the reduce's is ([`super::streamed`]), both prefix scans
//! digested on the way; each case then reads its output back a piece at a
//! time beside the model's prefixes, made again from the generator, so the
//! host holds one piece whatever n. The device holds the input (4 bytes an
//! item), the output (8) and the plan's scratch (Blelloch at most 8 bytes
//! per 512 items, the look-back 16 bytes per 4480-item tile).

use super::pieces::{pieced, Part};
use super::reduce::affine_digest;
use super::streamed::{
    fits_beside_input, skip_or_fail, streamed_case, OnDevice, PartDigests, StreamedInts, StreamedModel, STREAMED_FROM,
};
use super::HARDWARE_MODEL_MAX;
use super::{
    affine_input, affine_words, gpu_error, int_family_inputs, model_error, sized_id, GpuCase, Inputs, Keep, Pieced,
};
use super::{case_seed, int_families};
use crate::sweep::case::Verdict;
use crate::sweep::compare;
use crate::sweep::digest::Fingerprint;
use crate::sweep::SweepPlan;
use kernels::{AffineMap, Gpu, GpuError, ScanKind, ScanPlan, ScanVariant};
use model::generators::{affine_map_pieces, int_pieces, DataFamily};
use model::hardware::device_scan::{device_scan, GPU_SCAN_WIDTH};
use model::operator::{Affine, SumI64};
use model::pieces::SumScansI32;
use model::scan::PieceScan;
use std::sync::Arc;

/// Input, exclusive and inclusive scans of one (size, family).
pub(crate) struct IntCase {
    pub(crate) input: Vec<i32>,
    pub(crate) exclusive: Vec<i64>,
    pub(crate) inclusive: Vec<i64>,
}

struct AffineCase {
    input: Vec<AffineMap>,
    exclusive: Vec<AffineMap>,
    inclusive: Vec<AffineMap>,
}

/// The generated input of one (size, family) with the model's scans of it.
pub(crate) fn int_case(family: DataFamily, n: usize, seed: u64) -> Result<IntCase, String> {
    int_pieced(family, n, seed, Keep::Data)?.data.ok_or_else(|| "no data kept".to_string())
}

/// [`int_case`] a piece at a time: the input and both scans digested as they are made.
fn int_pieced(family: DataFamily, n: usize, seed: u64, keep: Keep) -> Result<Pieced<IntCase>, String> {
    let mut input = Part::<i32>::new(keep, n);
    let (mut exclusive, mut inclusive) = (Part::<i64>::new(keep, n), Part::<i64>::new(keep, n));
    let mut scans = SumScansI32::new(n);
    for piece in int_pieces(family, n, seed).map_err(|e| e.to_string())? {
        let (e, i) = scans.piece(&piece).map_err(|e| e.to_string())?;
        exclusive.push(&e);
        inclusive.push(&i);
        input.push(&piece);
    }
    let (digest, input) = input.finish()?;
    let (exclusive_digest, exclusive) = exclusive.finish()?;
    let (inclusive_digest, inclusive) = inclusive.finish()?;
    let answers = vec![(ScanKind::Exclusive.name(), exclusive_digest), (ScanKind::Inclusive.name(), inclusive_digest)];
    Ok(pieced(digest, answers, || Some(IntCase { input: input?, exclusive: exclusive?, inclusive: inclusive? })))
}

/// The affine maps of (n, seed) and both scans of them, a piece at a time.
fn affine_case(n: usize, seed: u64, keep: Keep) -> Result<Pieced<AffineCase>, String> {
    let words = |maps: &[AffineMap]| affine_words(maps);
    let mut input = Part::<u64>::new(Keep::DigestsOnly, 2 * n);
    let (mut exclusive, mut inclusive) =
        (Part::<u64>::new(Keep::DigestsOnly, 2 * n), Part::<u64>::new(Keep::DigestsOnly, 2 * n));
    let (mut ex, mut inc) = (PieceScan::exclusive(&Affine, n), PieceScan::inclusive(&Affine, n));
    let mut kept = (keep == Keep::Data).then(|| AffineCase { input: vec![], exclusive: vec![], inclusive: vec![] });
    for piece in affine_map_pieces(n, seed) {
        let (e, i) = (ex.piece(&piece).map_err(|e| e.to_string())?, inc.piece(&piece).map_err(|e| e.to_string())?);
        input.push(&words(&piece));
        exclusive.push(&words(&e));
        inclusive.push(&words(&i));
        if let Some(k) = &mut kept {
            k.input.extend_from_slice(&piece);
            k.exclusive.extend(e);
            k.inclusive.extend(i);
        }
    }
    let answers =
        vec![(ScanKind::Exclusive.name(), exclusive.finish()?.0), (ScanKind::Inclusive.name(), inclusive.finish()?.0)];
    Ok(pieced(input.finish()?.0, answers, || kept))
}

/// Appends every scan case of `plan`.
pub fn cases(plan: &SweepPlan, out: &mut Vec<GpuCase>) {
    let int_inputs: Inputs<IntCase> = Inputs::default();
    let affine_inputs: Inputs<AffineCase> = Inputs::default();
    for &n in &plan.sizes {
        if n >= STREAMED_FROM {
            streamed_cases(plan, n, out);
            continue;
        }
        for (family_name, seed, input) in int_family_inputs(plan, "scan", n, &int_inputs, int_pieced) {
            for variant in ScanVariant::ALL.into_iter().filter(|v| n <= v.max_len()) {
                for kind in ScanKind::ALL {
                    let case_id =
                        sized_id("scan", format!("{}.{}.i32", variant.name(), kind.name()), n, &family_name, seed);
                    out.push(input.case(
                        case_id,
                        kind.name(),
                        move |c| Fingerprint::new().i64s(int_expected(c, kind)).finish(),
                        move |gpu, case| {
                            let got = match gpu.scan_i32(variant, kind, &case.input) {
                                Ok(v) => v,
                                Err(e) => return gpu_error(&e),
                            };
                            let verdict = compare::exact(int_expected(case, kind), &got, "prefix");
                            if !verdict.passed() {
                                return verdict;
                            }
                            // The recursive 512-item device-scan model (the Blelloch
                            // schedule, combine for combine) must agree as well.
                            if variant == ScanVariant::Blelloch
                                && kind == ScanKind::Exclusive
                                && n <= HARDWARE_MODEL_MAX
                            {
                                let wide: Vec<i64> = case.input.iter().map(|&v| v as i64).collect();
                                return match device_scan(&SumI64, &wide, GPU_SCAN_WIDTH) {
                                    Ok(tree) => compare::exact(&tree, &got, "hardware-scope device_scan model"),
                                    Err(e) => model_error(&e),
                                };
                            }
                            Verdict::Pass
                        },
                    ));
                }
            }
        }
        let Some((seed, input)) = affine_input(plan, "scan.affine", n, &affine_inputs, affine_case) else {
            continue;
        };
        for variant in ScanVariant::ALL.into_iter().filter(|v| n <= v.max_len()) {
            for kind in ScanKind::ALL {
                let variant_name = format!("{}.{}.affine", variant.name(), kind.name());
                let case_id = sized_id("scan", variant_name, n, &DataFamily::AffineMaps.name(), seed);
                out.push(input.case(
                    case_id,
                    kind.name(),
                    move |c| affine_digest(affine_expected(c, kind)),
                    move |gpu, case| match gpu.scan_affine(variant, kind, &case.input) {
                        Ok(got) => compare::exact(affine_expected(case, kind), &got, "composed prefix"),
                        Err(e) => gpu_error(&e),
                    },
                ));
            }
        }
    }
}

fn int_expected(case: &IntCase, kind: ScanKind) -> &[i64] {
    match kind {
        ScanKind::Exclusive => &case.exclusive,
        ScanKind::Inclusive => &case.inclusive,
    }
}

fn affine_expected(case: &AffineCase, kind: ScanKind) -> &[AffineMap] {
    match kind {
        ScanKind::Exclusive => &case.exclusive,
        ScanKind::Inclusive => &case.inclusive,
    }
}

/// The variants that run at `n` (every one but the serial baseline past its limit).
fn variants_at(n: usize) -> impl Iterator<Item = ScanVariant> {
    ScanVariant::ALL.into_iter().filter(move |v| n <= v.max_len())
}

/// The scans' model of a streamed input: both prefix scans digested as they
/// are made (the parts of [`int_pieced`]); a case makes the prefixes again
/// beside its output ([`run_streamed`]), so nothing is kept.
pub(crate) struct StreamedScans {
    scans: SumScansI32,
    exclusive: Part<i64>,
    inclusive: Part<i64>,
}

impl StreamedModel for StreamedScans {
    type Answer = ();
    const PRIMITIVE: &'static str = "scan";
    type Device = i32;
    const DEVICE_TYPE: &'static str = "int32";

    fn to_device(items: &[i32]) -> std::borrow::Cow<'_, [i32]> {
        std::borrow::Cow::Borrowed(items)
    }

    fn new(n: usize) -> Self {
        let part = || Part::<i64>::new(Keep::DigestsOnly, n);
        StreamedScans { scans: SumScansI32::new(n), exclusive: part(), inclusive: part() }
    }

    fn piece(&mut self, items: &[i32]) -> Result<(), Verdict> {
        let (e, i) = self.scans.piece(items).map_err(|e| model_error(&e))?;
        self.exclusive.push(&e);
        self.inclusive.push(&i);
        Ok(())
    }

    fn finish(self) -> Result<((), PartDigests), Verdict> {
        let digest = |part: Part<i64>| part.finish().map(|(d, _)| d).map_err(|e| Verdict::fail("a scan", e, "model"));
        let parts = vec![
            (ScanKind::Exclusive.name().to_string(), digest(self.exclusive)?),
            (ScanKind::Inclusive.name().to_string(), digest(self.inclusive)?),
        ];
        Ok(((), parts))
    }
}

/// Device bytes beside the input of the largest plan at `n`: its int64
/// output and scratch.
fn largest_beside(n: usize) -> Result<(u64, String), GpuError> {
    let mut most = 0;
    for variant in variants_at(n) {
        most = most.max(ScanPlan::<i32>::device_bytes(variant, n)?.1);
    }
    Ok((most, "the largest plan's int64 output and scratch".into()))
}

/// One (variant, kind) run on a streamed input already on the device: a
/// fresh plan into a poisoned output, then the output read back a piece at
/// a time and compared with the model's prefixes of the same piece (made
/// again from `recipe`), the first mismatch by its index in the whole.
fn run_streamed(
    gpu: &Gpu,
    recipe: &StreamedInts<StreamedScans>,
    variant: ScanVariant,
    kind: ScanKind,
    input: &OnDevice<()>,
) -> Verdict {
    let n = input.buffer.len();
    let run = || -> Result<_, GpuError> {
        let (_, other) = ScanPlan::<i32>::device_bytes(variant, n)?;
        fits_beside_input(gpu, "scan", variant.name(), n, other)?;
        let mut output = gpu.alloc_poisoned::<i64>(n)?;
        let mut plan = ScanPlan::<i32>::new(gpu, variant, kind, n)?;
        plan.enqueue(&input.buffer, &mut output)?;
        gpu.synchronize()?;
        plan.check_fault()?;
        Ok(output)
    };
    let output = match run() {
        Ok(output) => output,
        Err(e) => return skip_or_fail(&e),
    };
    let pieces = match recipe.pieces() {
        Ok(p) => p,
        Err(verdict) => return verdict,
    };
    let mut scans = SumScansI32::new(n);
    for (at, piece) in pieces {
        let want = match scans.piece(&piece) {
            Ok((e, i)) => match kind {
                ScanKind::Exclusive => e,
                ScanKind::Inclusive => i,
            },
            Err(e) => return model_error(&e),
        };
        let got = match gpu.stream().clone_dtoh(&output.slice(at..at + piece.len())) {
            Ok(got) => got,
            Err(source) => {
                let context = format!("scan n={n}: reading outputs {at}..{}", at + piece.len());
                return gpu_error(&GpuError::Driver { context, source });
            }
        };
        if let Some(k) = want.iter().zip(&got).position(|(w, g)| w != g) {
            return Verdict::fail_at(at + k, want[k], got[k], "prefix");
        }
    }
    Verdict::Pass
}

/// The int32 cases at a size past [`STREAMED_FROM`]: the families of
/// [`int_families`] (the seeds of [`int_family_inputs`]), every variant but
/// the serial baseline, both kinds, each input streamed to the device once
/// for all of its cases. No affine-map case runs here (`affine_cases_at`).
fn streamed_cases(plan: &SweepPlan, n: usize, out: &mut Vec<GpuCase>) {
    for (f, family) in int_families(plan, n).into_iter().enumerate() {
        let seed = case_seed(plan.seed, "scan", n, f);
        let recipe = Arc::new(StreamedInts::<StreamedScans>::new(family, n, seed));
        for variant in variants_at(n) {
            for kind in ScanKind::ALL {
                let variant_name = format!("{}.{}.i32", variant.name(), kind.name());
                let id = sized_id("scan", variant_name, n, &family.name(), seed);
                let again = recipe.clone();
                let run = move |gpu: &Gpu, input: &OnDevice<()>| run_streamed(gpu, &again, variant, kind, input);
                out.push(streamed_case(id, &recipe, kind.name(), move |_: &Gpu| largest_beside(n), run));
            }
        }
    }
}

#[cfg(test)]
mod streamed_tests {
    use super::*;
    use crate::registry::primitive::Primitive;
    use crate::sweep::gpu::streamed::stream_pieces;
    use crate::sweep::gpu::InputSource;
    use std::collections::BTreeMap;

    fn plan(sizes: Vec<usize>) -> SweepPlan {
        crate::sweep::gpu::streamed::test_plan(Primitive::Scan, sizes)
    }

    /// Past 2^32 the catalogue holds the streamed scan cases: both
    /// large-size families, Blelloch and the look-back, both kinds, no
    /// affine case, each input made a piece at a time, with the seeds of
    /// the whole path; no digest before a case ran.
    #[test]
    fn large_offset_sizes_have_streamed_cases() {
        let sizes = crate::sweep::sizes::LARGE_OFFSET_SIZES.to_vec();
        let cases = super::super::catalogue(&plan(sizes.clone()));
        let mut ids: Vec<String> = cases.iter().map(|c| format!("{} {}", c.id.marker(), c.id.family)).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), cases.len(), "unique ids");
        for n in sizes {
            let at: Vec<&GpuCase> = cases.iter().filter(|c| c.id.n == n).collect();
            assert_eq!(at.len(), 2 * 2 * 2, "n={n}: {ids:?}");
            for case in &at {
                assert!(case.pieced(), "{}", case.id.marker());
                assert!(case.id.variant.ends_with(".i32") && !case.id.variant.starts_with("serial"));
                assert_eq!(case.id.size, n.to_string());
            }
            for (f, family) in [DataFamily::SmallInts, DataFamily::FullRangeI32].into_iter().enumerate() {
                let seed = case_seed(0x5eed, "scan", n, f);
                let of_family: Vec<_> =
                    at.iter().filter(|c| c.id.family == family.name() && c.id.seed == seed).collect();
                assert_eq!(of_family.len(), 4);
                // One input per family, shared by its four cases.
                assert!(of_family.iter().all(|c| c.input_key() == of_family[0].input_key()));
            }
            for variant in ["blelloch", "decoupled_lookback"] {
                for kind in ["exclusive", "inclusive"] {
                    let name = format!("{variant}.{kind}.i32");
                    assert_eq!(at.iter().filter(|c| c.id.variant == name).count(), 2, "{name}");
                }
            }
            assert!(at[0].reference(&at[0].prepare()).is_err());
        }
        // Just below 2^32 the whole path is unchanged.
        let whole = super::super::catalogue(&plan(vec![u32::MAX as usize - 6]));
        assert!(whole.iter().all(|c| c.id.n == u32::MAX as usize - 6 && !c.input_key().contains("streamed")));
        assert!(whole.iter().any(|c| c.id.variant == "decoupled_lookback.exclusive.i32"));
    }

    /// The streamed path writes the very values of the whole input, in
    /// order, and makes the same digests (input, exclusive, inclusive), at
    /// sizes around a piece; the prefixes a case makes again piece by piece
    /// are the whole path's.
    #[test]
    fn streamed_pieces_are_the_whole_input_and_scans() {
        let piece = model::generators::PIECE;
        for family in [DataFamily::SmallInts, DataFamily::FullRangeI32] {
            for n in [1, 33, piece - 1, piece + 7, 2 * piece + 333] {
                let recipe = StreamedInts::<StreamedScans>::new(family, n, 99);
                let mut written = vec![0i32; n];
                let mut next = 0;
                let ((), digests) = stream_pieces(&recipe, |at, p| {
                    assert_eq!(at, next, "pieces in order");
                    written[at..at + p.len()].copy_from_slice(p);
                    next = at + p.len();
                    Ok(())
                })
                .unwrap_or_else(|v| panic!("{v:?}"));
                assert_eq!(next, n);
                let whole = int_case(family, n, 99).unwrap();
                assert_eq!(written, whole.input, "{family:?} n={n}");
                let pieced = int_pieced(family, n, 99, Keep::DigestsOnly).unwrap();
                assert_eq!(digests, pieced.digests.into_iter().collect::<BTreeMap<_, _>>());
                assert_eq!(recipe.digests_only().unwrap().unwrap(), digests);
                let mut scans = SumScansI32::new(n);
                let (mut ex, mut inc) = (vec![], vec![]);
                for (at, p) in recipe.pieces().unwrap() {
                    assert_eq!(at, ex.len());
                    let (e, i) = scans.piece(&p).unwrap();
                    ex.extend(e);
                    inc.extend(i);
                }
                assert_eq!((ex, inc), (whole.exclusive, whole.inclusive), "{family:?} n={n}");
            }
        }
    }
}

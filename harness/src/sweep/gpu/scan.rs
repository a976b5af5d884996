//! GPU cases of the integer scans (int32 -> int64, exclusive and inclusive)
//! and of the affine-map scans (the non-commutative operator).

use super::pieces::{pieced, Part};
use super::reduce::affine_digest;
use super::HARDWARE_MODEL_MAX;
use super::{
    affine_input, affine_words, gpu_error, int_family_inputs, model_error, sized_id, GpuCase, Inputs, Keep, Pieced,
};
use crate::sweep::case::Verdict;
use crate::sweep::compare;
use crate::sweep::digest::Fingerprint;
use crate::sweep::SweepPlan;
use kernels::{AffineMap, ScanKind, ScanVariant};
use model::generators::{affine_map_pieces, int_pieces, DataFamily};
use model::hardware::device_scan::{device_scan, GPU_SCAN_WIDTH};
use model::operator::{Affine, SumI64};
use model::pieces::SumScansI32;
use model::scan::PieceScan;

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

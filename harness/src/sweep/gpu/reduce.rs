//! GPU cases of the integer reduce (int32 -> int64) and of the affine-map
//! reduce (the non-commutative operator, proving each schedule keeps order).

use super::pieces::{pieced, Part};
use super::GpuCase;
use super::HARDWARE_MODEL_MAX;
use super::{affine_input, affine_words, gpu_error, int_family_inputs, model_error, sized_id, Inputs, Keep, Pieced};
use crate::sweep::case::Verdict;
use crate::sweep::digest::Fingerprint;
use crate::sweep::SweepPlan;
use kernels::{AffineMap, ReduceVariant};
use model::generators::{affine_map_pieces, int_pieces, DataFamily};
use model::hardware::block_reduce::BlockLayout;
use model::hardware::multipass_reduce::multipass_reduce;
use model::operator::{Affine, SumI64};
use model::pieces::SumI32;
use model::reduce::PieceReduce;

/// An int32 input and its exact sum.
pub(crate) struct IntInput {
    pub(crate) x: Vec<i32>,
    pub(crate) sum: i64,
}

/// The generated input of one (size, family) with the model's sum of it.
pub(crate) fn int_input(family: DataFamily, n: usize, seed: u64) -> Result<IntInput, String> {
    int_pieced(family, n, seed, Keep::Data)?.data.ok_or_else(|| "no data kept".to_string())
}

/// [`int_input`] a piece at a time: the input digested and summed as it is made.
fn int_pieced(family: DataFamily, n: usize, seed: u64, keep: Keep) -> Result<Pieced<IntInput>, String> {
    let mut input = Part::<i32>::new(keep, n);
    let mut sum = SumI32::new(n);
    for piece in int_pieces(family, n, seed).map_err(|e| e.to_string())? {
        sum.piece(&piece).map_err(|e| e.to_string())?;
        input.push(&piece);
    }
    let (digest, x) = input.finish()?;
    let sum = sum.value();
    Ok(pieced(digest, vec![("sum", sum_digest(sum))], || Some(IntInput { x: x?, sum })))
}

fn sum_digest(sum: i64) -> String {
    Fingerprint::new().i64s(&[sum]).finish()
}

/// Affine maps and their left-to-right composition.
struct AffineInput {
    x: Vec<AffineMap>,
    composed: AffineMap,
}

/// The digest of affine maps (a, b pairs in order).
pub fn affine_digest(maps: &[AffineMap]) -> String {
    Fingerprint::new().u64s(affine_words(maps).into_iter()).finish()
}

/// The affine maps of (n, seed) and their composition, a piece at a time.
fn affine_case(n: usize, seed: u64, keep: Keep) -> Result<Pieced<AffineInput>, String> {
    let mut words = Part::<u64>::new(Keep::DigestsOnly, 2 * n);
    let mut maps = (keep == Keep::Data).then(|| Vec::with_capacity(n));
    let mut composed = PieceReduce::new(&Affine);
    for piece in affine_map_pieces(n, seed) {
        composed.piece(&piece).map_err(|e| e.to_string())?;
        words.push(&affine_words(&piece));
        if let Some(maps) = &mut maps {
            maps.extend_from_slice(&piece);
        }
    }
    let composed = *composed.value();
    let (digest, _) = words.finish()?;
    Ok(pieced(digest, vec![("composed", affine_digest(&[composed]))], || Some(AffineInput { x: maps?, composed })))
}

/// Appends every reduce case of `plan`.
pub fn cases(plan: &SweepPlan, out: &mut Vec<GpuCase>) {
    let int_inputs: Inputs<IntInput> = Inputs::default();
    let affine_inputs: Inputs<AffineInput> = Inputs::default();
    for &n in &plan.sizes {
        for (family_name, seed, input) in int_family_inputs(plan, "reduce", n, &int_inputs, int_pieced) {
            for variant in ReduceVariant::ALL.into_iter().filter(|v| n <= v.max_len()) {
                let case_id = sized_id("reduce", format!("{}.i32", variant.name()), n, &family_name, seed);
                out.push(input.case(
                    case_id,
                    "sum",
                    |p| sum_digest(p.sum),
                    move |gpu, p| {
                        let got = match gpu.reduce_i32(variant, &p.x) {
                            Ok(v) => v,
                            Err(e) => return gpu_error(&e),
                        };
                        if got != p.sum {
                            return Verdict::fail(p.sum, got, "sum");
                        }
                        // The hardware-scope model of the multi-pass tree must agree too.
                        if variant == ReduceVariant::Multipass && n <= HARDWARE_MODEL_MAX {
                            let wide: Vec<i64> = p.x.iter().map(|&v| v as i64).collect();
                            match multipass_reduce(&SumI64, &wide, BlockLayout::Adjacent) {
                                Ok((tree, _)) if tree == got => {}
                                Ok((tree, _)) => return Verdict::fail(tree, got, "hardware-scope multipass model"),
                                Err(e) => return model_error(&e),
                            }
                        }
                        Verdict::Pass
                    },
                ));
            }
        }
        // The non-commutative operator through every schedule.
        let Some((seed, input)) = affine_input(plan, "reduce.affine", n, &affine_inputs, affine_case) else {
            continue;
        };
        for variant in ReduceVariant::ALL.into_iter().filter(|v| n <= v.max_len()) {
            let case_id =
                sized_id("reduce", format!("{}.affine", variant.name()), n, &DataFamily::AffineMaps.name(), seed);
            out.push(input.case(
                case_id,
                "composed",
                |p| affine_digest(&[p.composed]),
                move |gpu, p| match gpu.reduce_affine(variant, &p.x) {
                    Ok(got) if got == p.composed => Verdict::Pass,
                    Ok(got) => Verdict::fail(format!("{:?}", p.composed), format!("{got:?}"), "composed map"),
                    Err(e) => gpu_error(&e),
                },
            ));
        }
    }
}

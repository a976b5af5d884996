//! GPU cases of the integer reduce (int32 -> int64) and of the affine-map
//! reduce (the non-commutative operator, proving each schedule keeps order).

use super::GpuCase;
use super::HARDWARE_MODEL_MAX;
use super::{affine_input, gpu_error, int_family_inputs, model_error, sized_id, Inputs};
use crate::sweep::case::Verdict;
use crate::sweep::digest::Fingerprint;
use crate::sweep::SweepPlan;
use kernels::{AffineMap, ReduceVariant};
use model::generators::{affine_maps, ints, DataFamily};
use model::hardware::block_reduce::BlockLayout;
use model::hardware::multipass_reduce::multipass_reduce;
use model::operator::{Affine, SumI64};

/// An int32 input and its exact sum.
pub(crate) struct IntInput {
    pub(crate) x: Vec<i32>,
    pub(crate) sum: i64,
}

/// The generated input of one (size, family) with the model's sum of it.
pub(crate) fn int_input(family: DataFamily, n: usize, seed: u64) -> Result<IntInput, String> {
    let x = ints(family, n, seed).map_err(|e| e.to_string())?;
    let sum = model::reduce::reduce_i64(&x).map_err(|e| e.to_string())?;
    Ok(IntInput { x, sum })
}

/// Affine maps and their left-to-right composition.
struct AffineInput {
    x: Vec<AffineMap>,
    composed: AffineMap,
}

/// The digest of affine maps (a, b pairs in order).
pub fn affine_digest(maps: &[AffineMap]) -> String {
    Fingerprint::new().u64s(maps.iter().flat_map(|m| [m.a, m.b]).collect::<Vec<_>>().into_iter()).finish()
}

fn affine_case(n: usize, seed: u64) -> Result<AffineInput, String> {
    let maps = affine_maps(n, seed);
    let composed = model::reduce::reduce(&Affine, &maps).map_err(|e| e.to_string())?;
    Ok(AffineInput { x: maps, composed })
}

/// Appends every reduce case of `plan`.
pub fn cases(plan: &SweepPlan, out: &mut Vec<GpuCase>) {
    let int_inputs: Inputs<IntInput> = Inputs::default();
    let affine_inputs: Inputs<AffineInput> = Inputs::default();
    for &n in &plan.sizes {
        let digest = |p: &IntInput| Fingerprint::new().i32s(&p.x).finish();
        for (family_name, seed, input) in int_family_inputs(plan, "reduce", n, &int_inputs, int_input, digest) {
            for variant in ReduceVariant::ALL.into_iter().filter(|v| n <= v.max_len()) {
                let case_id = sized_id("reduce", format!("{}.i32", variant.name()), n, &family_name, seed);
                out.push(input.case(
                    case_id,
                    "sum",
                    |p| Fingerprint::new().i64s(&[p.sum]).finish(),
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
        let digest = |p: &AffineInput| affine_digest(&p.x);
        let Some((seed, input)) = affine_input(plan, "reduce.affine", n, &affine_inputs, affine_case, digest) else {
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

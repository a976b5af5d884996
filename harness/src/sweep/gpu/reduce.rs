//! GPU cases of the integer reduce (int32 -> int64) and of the affine-map
//! reduce (the non-commutative operator, proving each schedule keeps order).

use super::{case_seed, gpu_error, id, int_families, model_error, GpuCase, Memo, SharedMemo, HARDWARE_MODEL_MAX};
use crate::sweep::case::Verdict;
use crate::sweep::SweepPlan;
use kernels::{AffineMap, ReduceVariant};
use model::generators::{affine_maps, ints, Family};
use model::hardware::block_reduce::BlockLayout;
use model::hardware::multipass_reduce::multipass_reduce;
use model::operator::{Affine, SumI64};
use std::sync::Arc;

type IntInput = (Vec<i32>, i64);
type AffineInput = (Vec<AffineMap>, AffineMap);

fn to_kernel(m: model::operator::AffineMap) -> AffineMap {
    AffineMap { a: m.a, b: m.b }
}

/// Appends every reduce case of `plan`.
pub fn cases(plan: &SweepPlan, out: &mut Vec<GpuCase>) {
    let ints_memo: SharedMemo<IntInput> = Arc::default();
    let affine_memo: Arc<Memo<(usize, u64), Result<AffineInput, String>>> = Arc::default();
    for &n in &plan.sizes {
        for (f, family) in int_families(plan, n).into_iter().enumerate() {
            let seed = case_seed(plan.seed, "reduce", n, f);
            for variant in ReduceVariant::ALL.into_iter().filter(|v| n <= v.max_len()) {
                let memo = ints_memo.clone();
                let family_name = family.name();
                let key = (n, family_name.clone(), seed);
                out.push(GpuCase {
                    id: id("reduce", format!("{}.i32", variant.name()), n.to_string(), n, &family_name, seed),
                    run: Box::new(move |gpu| {
                        let input = memo.get(&key, || {
                            let x = ints(family, n, seed).map_err(|e| e.to_string())?;
                            let expected = model::reduce::reduce_i64(&x).map_err(|e| e.to_string())?;
                            Ok((x, expected))
                        });
                        let (x, expected) = match input.as_ref() {
                            Ok(v) => v,
                            Err(e) => return Verdict::fail("an input", e, "generator"),
                        };
                        let got = match gpu.reduce_i32(variant, x) {
                            Ok(v) => v,
                            Err(e) => return gpu_error(&e),
                        };
                        if got != *expected {
                            return Verdict::fail(expected, got, "sum");
                        }
                        // The hardware-scope model of the multi-pass tree must agree too.
                        if variant == ReduceVariant::Multipass && n <= HARDWARE_MODEL_MAX {
                            let wide: Vec<i64> = x.iter().map(|&v| v as i64).collect();
                            match multipass_reduce(&SumI64, &wide, BlockLayout::Adjacent) {
                                Ok((tree, _)) if tree == got => {}
                                Ok((tree, _)) => return Verdict::fail(tree, got, "hardware-scope multipass model"),
                                Err(e) => return model_error(&e),
                            }
                        }
                        Verdict::Pass
                    }),
                });
            }
        }
        if plan.one_family && n > 1 << 20 {
            continue;
        }
        // The non-commutative operator through every schedule.
        let seed = case_seed(plan.seed, "reduce.affine", n, 0);
        for variant in ReduceVariant::ALL.into_iter().filter(|v| n <= v.max_len()) {
            let memo = affine_memo.clone();
            out.push(GpuCase {
                id: id(
                    "reduce",
                    format!("{}.affine", variant.name()),
                    n.to_string(),
                    n,
                    &Family::AffineMaps.name(),
                    seed,
                ),
                run: Box::new(move |gpu| {
                    let input = memo.get(&(n, seed), || {
                        let maps = affine_maps(n, seed);
                        let expected = model::reduce::reduce(&Affine, &maps).map_err(|e| e.to_string())?;
                        Ok((maps.into_iter().map(to_kernel).collect(), to_kernel(expected)))
                    });
                    let (x, expected) = match input.as_ref() {
                        Ok(v) => v,
                        Err(e) => return Verdict::fail("an input", e, "generator"),
                    };
                    match gpu.reduce_affine(variant, x) {
                        Ok(got) if got == *expected => Verdict::Pass,
                        Ok(got) => Verdict::fail(format!("{expected:?}"), format!("{got:?}"), "composed map"),
                        Err(e) => gpu_error(&e),
                    }
                }),
            });
        }
    }
}

//! GPU cases of argmax / argmin over f32 and int32, whole-array and per row:
//! every variant, ties (lowest index wins), and the contract errors (empty
//! input; NaN or ±inf naming the first offending index).

use super::arg_pairs::{extremum_name, pair_digest_f32, pair_digest_i32};
use super::pieces::{pieced, Part};
use super::streamed::STREAMED_FROM;
use super::{case_seed, contract_case, gpu_error, id, int_families, sized_id, GpuCase, Inputs, Keep, Pieced};
use crate::sweep::case::Verdict;
use crate::sweep::compare;
use crate::sweep::digest::Fingerprint;
use crate::sweep::SweepPlan;
use kernels::{ArgReduceVariant, ArgRowsVariant, Extremum, GpuError};
use model::generators::{int_pieces, ints, uniform_f32, uniform_f32_pieces, DataFamily};
use model::pieces::{ArgsF32, ArgsI32};

/// A named float input generator.
pub(crate) type FloatFamily = (&'static str, fn(usize, u64) -> Vec<f32>);

/// The whole-array sizes of `plan` whose inputs are made on the host (up to
/// 2^32; past it they stream to the device, `arg_reduce_streamed`).
fn whole_sizes(plan: &SweepPlan) -> impl Iterator<Item = usize> + '_ {
    plan.sizes.iter().copied().filter(|&n| n < STREAMED_FROM)
}

/// The f32 families of the whole-array cases at `n`, in order; family `f`'s
/// seed is `case_seed(plan.seed, "arg_reduce.f32", n, f)`.
/// From 2^24 on, the one family is `uniform_float`, made a piece at a time
/// (`uniform_f32_pieces`, which collected is `uniform_f32`).
pub(crate) fn float_families(plan: &SweepPlan, n: usize) -> &'static [FloatFamily] {
    if plan.one_family {
        &[("many_ties_f32", tied_floats)]
    } else if n >= 1 << 24 {
        &[("uniform_float", uniform_f32)]
    } else {
        &[("uniform_float", uniform_f32), ("many_ties_f32", tied_floats)]
    }
}

/// Float data with many exact ties: small integers as f32.
fn tied_floats(n: usize, seed: u64) -> Vec<f32> {
    ints(DataFamily::ManyTies, n, seed).unwrap_or_default().into_iter().map(|v| v as f32).collect()
}

pub(crate) fn expected<T: model::scalar::Scalar>(e: Extremum, data: &[T]) -> Result<(T, usize), model::ModelError> {
    match e {
        Extremum::Max => model::arg_reduce::argmax(data),
        Extremum::Min => model::arg_reduce::argmin(data),
    }
}

fn expected_rows<T: model::scalar::Scalar>(
    e: Extremum,
    data: &[T],
    rows: usize,
    cols: usize,
) -> Result<Vec<(T, usize)>, model::ModelError> {
    match e {
        Extremum::Max => model::arg_reduce::argmax_rows(data, rows, cols),
        Extremum::Min => model::arg_reduce::argmin_rows(data, rows, cols),
    }
}

/// An input and its (value, index) under both extrema.
struct WholeCase<T> {
    data: Vec<T>,
    max: (T, usize),
    min: (T, usize),
}

impl<T: Copy> WholeCase<T> {
    fn expected(&self, e: Extremum) -> (T, usize) {
        match e {
            Extremum::Max => self.max,
            Extremum::Min => self.min,
        }
    }
}

/// The (max, min) (value, index) pairs of pieces, folded by the model.
type ArgFold<'a, T> = (&'a mut dyn FnMut(&[T]) -> Result<(), model::ModelError>, ArgFinish<'a, T>);
type ArgFinish<'a, T> = &'a dyn Fn() -> Result<model::pieces::Extremes<T>, model::ModelError>;

/// A whole-array input of `n` values from `pieces`, digested and reduced
/// to its (value, index) under both extrema by `fold` as it is made.
fn whole_pieced<T>(
    pieces: impl Iterator<Item = Vec<T>>,
    n: usize,
    keep: Keep,
    fold: ArgFold<'_, T>,
    pair_digest: fn(&[(T, usize)]) -> String,
) -> Result<Pieced<WholeCase<T>>, String>
where
    T: model::digest::DigestElement,
{
    let mut input = Part::<T>::new(keep, n);
    for piece in pieces {
        (fold.0)(&piece).map_err(|e| e.to_string())?;
        input.push(&piece);
    }
    let (max, min) = (fold.1)().map_err(|e| e.to_string())?;
    let (digest, data) = input.finish()?;
    let answers =
        vec![(extremum_name(Extremum::Max), pair_digest(&[max])), (extremum_name(Extremum::Min), pair_digest(&[min]))];
    Ok(pieced(digest, answers, || Some(WholeCase { data: data?, max, min })))
}

/// [`whole_pieced`] of int32 pieces.
fn int_whole(pieces: impl Iterator<Item = Vec<i32>>, n: usize, keep: Keep) -> Result<Pieced<WholeCase<i32>>, String> {
    let args = std::cell::RefCell::new(ArgsI32::default());
    let mut fold = |x: &[i32]| args.borrow_mut().piece(x);
    whole_pieced(pieces, n, keep, (&mut fold, &|| args.borrow().finish()), pair_digest_i32)
}

/// [`whole_pieced`] of f32 pieces.
fn float_whole(pieces: impl Iterator<Item = Vec<f32>>, n: usize, keep: Keep) -> Result<Pieced<WholeCase<f32>>, String> {
    let args = std::cell::RefCell::new(ArgsF32::default());
    let mut fold = |x: &[f32]| args.borrow_mut().piece(x);
    whole_pieced(pieces, n, keep, (&mut fold, &|| args.borrow().finish()), pair_digest_f32)
}

/// The f32 values of `family` at (n, seed) a piece at a time: the large
/// sizes' one family ([`float_families`]) from its piece generator, the
/// small sizes' families whole, as one piece.
fn float_pieces(family: &FloatFamily, n: usize, seed: u64) -> Box<dyn Iterator<Item = Vec<f32>> + Send> {
    if n >= 1 << 24 && family.0 == "uniform_float" {
        Box::new(uniform_f32_pieces(n, seed))
    } else {
        Box::new(std::iter::once((family.1)(n, seed)).filter(|v| !v.is_empty()))
    }
}

fn whole<T>(gpu: &kernels::Gpu, variant: ArgReduceVariant, e: Extremum, case: &WholeCase<T>) -> Verdict
where
    T: model::scalar::Scalar + kernels::ArgElement + PartialEq + std::fmt::Debug + Copy,
{
    let want = case.expected(e);
    match gpu.arg_reduce(variant, e, &case.data) {
        Ok(got) if want == got => Verdict::Pass,
        Ok(got) => Verdict::fail(format!("{want:?}"), format!("{got:?}"), "(value, index)"),
        Err(g) => gpu_error(&g),
    }
}

/// Rows and their per-row (value, column) under both extrema.
struct RowsCase<T> {
    data: Vec<T>,
    max: Vec<(T, usize)>,
    min: Vec<(T, usize)>,
}

fn rows_case<T: model::scalar::Scalar>(data: Vec<T>, r: usize, c: usize) -> Result<RowsCase<T>, String> {
    let max = expected_rows(Extremum::Max, &data, r, c).map_err(|e| e.to_string())?;
    let min = expected_rows(Extremum::Min, &data, r, c).map_err(|e| e.to_string())?;
    Ok(RowsCase { data, max, min })
}

fn rows<T>(gpu: &kernels::Gpu, variant: ArgRowsVariant, e: Extremum, case: &RowsCase<T>, r: usize, c: usize) -> Verdict
where
    T: model::scalar::Scalar + kernels::ArgElement + PartialEq + std::fmt::Debug + Sync,
{
    let want = match e {
        Extremum::Max => &case.max,
        Extremum::Min => &case.min,
    };
    match gpu.arg_reduce_rows(variant, e, &case.data, r, c) {
        Ok(got) => compare::exact(want, &got, "per-row (value, column)"),
        Err(g) => gpu_error(&g),
    }
}

/// Row shapes: every boundary width, a few rows each, plus many short rows.
const ROW_SHAPES: [(usize, usize); 14] = [
    (3, 1),
    (3, 31),
    (3, 32),
    (3, 33),
    (3, 255),
    (3, 256),
    (3, 257),
    (3, 511),
    (3, 512),
    (3, 513),
    (3, 4099),
    (2, 262_145),
    (1000, 32),
    (4097, 7),
];

/// Appends every arg-reduction case of `plan`.
pub fn cases(plan: &SweepPlan, out: &mut Vec<GpuCase>) {
    let extrema = [Extremum::Max, Extremum::Min];
    let int_inputs: Inputs<WholeCase<i32>> = Inputs::default();
    let float_inputs: Inputs<WholeCase<f32>> = Inputs::default();
    for &n in plan.sizes.iter().filter(|&&n| n >= STREAMED_FROM) {
        super::arg_reduce_streamed::cases(plan, n, out);
    }
    for n in whole_sizes(plan) {
        for (f, family) in int_families(plan, n).into_iter().enumerate() {
            let seed = case_seed(plan.seed, "arg_reduce", n, f);
            let input = int_inputs.pieced(format!("{n}/{}/{seed}", family.name()), move |keep| {
                int_whole(int_pieces(family, n, seed).map_err(|e| e.to_string())?, n, keep)
            });
            for variant in ArgReduceVariant::ALL {
                for e in extrema {
                    let case_id = sized_id(
                        "arg_reduce",
                        format!("{}.{}.i32", variant.name(), extremum_name(e)),
                        n,
                        &family.name(),
                        seed,
                    );
                    out.push(input.case(
                        case_id,
                        extremum_name(e),
                        move |c| pair_digest_i32(&[c.expected(e)]),
                        move |gpu, c| whole(gpu, variant, e, c),
                    ));
                }
            }
        }
        for (f, generator) in float_families(plan, n).iter().enumerate() {
            let seed = case_seed(plan.seed, "arg_reduce.f32", n, f);
            let (family, generator) = (generator.0, *generator);
            let input = float_inputs.pieced(format!("{n}/{family}/{seed}"), move |keep| {
                float_whole(float_pieces(&generator, n, seed), n, keep)
            });
            for variant in ArgReduceVariant::ALL {
                for e in extrema {
                    let case_id =
                        sized_id("arg_reduce", format!("{}.{}.f32", variant.name(), extremum_name(e)), n, family, seed);
                    out.push(input.case(
                        case_id,
                        extremum_name(e),
                        move |c| pair_digest_f32(&[c.expected(e)]),
                        move |gpu, c| whole(gpu, variant, e, c),
                    ));
                }
            }
        }
    }
    let float_rows: Inputs<RowsCase<f32>> = Inputs::default();
    let int_rows: Inputs<RowsCase<i32>> = Inputs::default();
    for (s, &(r, c)) in ROW_SHAPES.iter().enumerate() {
        if plan.one_family && r * c > 300_000 {
            continue;
        }
        let seed = case_seed(plan.seed, "arg_reduce.rows", r * c, s);
        let size = format!("{r}x{c}");
        let shape = format!("rows={r} cols={c}");
        let floats =
            float_rows.input(format!("{size}/f32/{seed}"), move || rows_case(tied_floats(r * c, seed), r, c), {
                let shape = shape.clone();
                move |p| Fingerprint::new().f32s(&p.data).text(&shape).finish()
            });
        let integers = int_rows.input(
            format!("{size}/i32/{seed}"),
            move || rows_case(ints(DataFamily::FullRangeI32, r * c, seed).map_err(|e| e.to_string())?, r, c),
            move |p| Fingerprint::new().i32s(&p.data).text(&shape).finish(),
        );
        for variant in ArgRowsVariant::ALL {
            for e in extrema {
                let rows_id = |dtype: &str, family: &str| {
                    let variant = format!("rows_{}.{}.{dtype}", variant.name(), extremum_name(e));
                    id("arg_reduce", variant, size.clone(), r * c, family, seed)
                };
                out.push(floats.case(
                    rows_id("f32", "many_ties_f32"),
                    extremum_name(e),
                    move |p| pair_digest_f32(if e == Extremum::Max { &p.max } else { &p.min }),
                    move |gpu, p| rows(gpu, variant, e, p, r, c),
                ));
                out.push(integers.case(
                    rows_id("i32", "full_range_i32"),
                    extremum_name(e),
                    move |p| pair_digest_i32(if e == Extremum::Max { &p.max } else { &p.min }),
                    move |gpu, p| rows(gpu, variant, e, p, r, c),
                ));
            }
        }
    }
    contract_cases(out);
}

/// The seed examples and the rejection rules.
fn contract_cases(out: &mut Vec<GpuCase>) {
    for variant in ArgReduceVariant::ALL {
        let v = variant.name();
        out.push(contract_case(
            id("arg_reduce", format!("{v}.seed_examples"), "8".into(), 8, "seed_x", 0),
            "argmax_i32 [3, -1, 4, 1, 5, -9, 2, 6]; argmax_i32 [6, -1, 6]".into(),
            "(6, 7); (6, 0)".into(),
            move |gpu| {
                let x = [3i32, -1, 4, 1, 5, -9, 2, 6];
                let checks = [(gpu.argmax_i32(variant, &x), (6, 7)), (gpu.argmax_i32(variant, &[6, -1, 6]), (6, 0))];
                for (got, want) in checks {
                    match got {
                        Ok(g) if g == want => {}
                        Ok(g) => return Verdict::fail(format!("{want:?}"), format!("{g:?}"), "seed argmax"),
                        Err(e) => return gpu_error(&e),
                    }
                }
                Verdict::Pass
            },
        ));
        // NaN at 5 and +inf at 9: the first offending index is 5. Then -inf alone.
        for (what, data, first) in [
            (
                "nan_then_inf",
                {
                    let mut d = vec![1.0f32; 4099];
                    d[5] = f32::NAN;
                    d[9] = f32::INFINITY;
                    d
                },
                5usize,
            ),
            (
                "neg_inf_last",
                {
                    let mut d = vec![1.0f32; 513];
                    d[512] = f32::NEG_INFINITY;
                    d
                },
                512usize,
            ),
        ] {
            out.push(contract_case(
                id("arg_reduce", format!("{v}.rejects_{what}"), data.len().to_string(), data.len(), "nonfinite", 0),
                format!("argmax_f32 {data:?}"),
                format!("NonFinite at {first}"),
                move |gpu| match gpu.argmax_f32(variant, &data) {
                    Err(GpuError::NonFinite { index, .. }) if index == first => Verdict::Pass,
                    Err(e) => Verdict::fail(format!("NonFinite at {first}"), e.to_string(), "nonfinite rejection"),
                    Ok(g) => Verdict::fail(format!("NonFinite at {first}"), format!("{g:?}"), "nonfinite rejection"),
                },
            ));
        }
        // One plan, three launches: the control words must reset themselves
        // (one block, and a grid with a last block and a tail).
        for n in [1000usize, (1 << 20) + 3] {
            out.push(contract_case(
                id("arg_reduce", format!("{v}.plan_reuse"), n.to_string(), n, "reuse", 0),
                format!("one argmax_f32 plan of {n}: uniform data, then NaN at {}, then other uniform data", n / 3),
                "each answer as the model's; NonFinite at n/3 for the second only".into(),
                move |gpu| plan_reuse(gpu, variant, n),
            ));
        }
        out.push(contract_case(
            id("arg_reduce", format!("{v}.rejects_empty"), "0".into(), 0, "empty", 0),
            "argmax_f32 []".into(),
            "InvalidInput".into(),
            move |gpu| match gpu.argmax_f32(variant, &[]) {
                Err(GpuError::InvalidInput { .. }) => Verdict::Pass,
                Err(e) => Verdict::fail("InvalidInput", e.to_string(), "empty input"),
                Ok(g) => Verdict::fail("InvalidInput", format!("{g:?}"), "empty input"),
            },
        ));
    }
    for variant in ArgRowsVariant::ALL {
        out.push(contract_case(
            id("arg_reduce", format!("rows_{}.rejects_nan", variant.name()), "4x33".into(), 132, "nonfinite", 0),
            "argmax_rows_f32 4x33 of 0.5, NaN at row 2 column 7".into(),
            "NonFinite at 73".into(),
            move |gpu| {
                let mut d = vec![0.5f32; 4 * 33];
                d[2 * 33 + 7] = f32::NAN;
                match gpu.argmax_rows_f32(variant, &d, 4, 33) {
                    Err(GpuError::NonFinite { index, .. }) if index == 2 * 33 + 7 => Verdict::Pass,
                    Err(e) => Verdict::fail("NonFinite at 73", e.to_string(), "nonfinite rejection"),
                    Ok(g) => Verdict::fail("NonFinite at 73", format!("{:?}", &g[..2]), "nonfinite rejection"),
                }
            },
        ));
    }
}

/// Runs one [`kernels::ArgReducePlan`] three times: finite data, the same data
/// with a NaN at `n / 3`, then other finite data. Each launch must answer as a
/// fresh plan would (the model's pair; NonFinite at `n / 3` for the second),
/// which holds only if every launch leaves the control words reset.
fn plan_reuse(gpu: &kernels::Gpu, variant: ArgReduceVariant, n: usize) -> Verdict {
    let first = uniform_f32(n, 0x5eed_0001);
    let mut poisoned = first.clone();
    poisoned[n / 3] = f32::NAN;
    let third = uniform_f32(n, 0x5eed_0003);
    let mut plan = match kernels::ArgReducePlan::<f32>::new(gpu, variant, Extremum::Max, n) {
        Ok(p) => p,
        Err(e) => return gpu_error(&e),
    };
    for (launch, data) in [&first, &poisoned, &third].into_iter().enumerate() {
        let want = if launch == 1 {
            Err(n / 3)
        } else {
            match expected(Extremum::Max, data) {
                Ok(pair) => Ok(pair),
                Err(e) => return Verdict::fail("a model answer", e.to_string(), "model"),
            }
        };
        // The input lives until finish has synchronised.
        let got = gpu.upload(data).and_then(|input| {
            plan.enqueue(&input)?;
            plan.finish()
        });
        let ok = match (&want, &got) {
            (Ok(w), Ok(g)) => w == g,
            (Err(at), Err(GpuError::NonFinite { index, .. })) => at == index,
            _ => false,
        };
        if !ok {
            let got = match got {
                Ok(g) => format!("{g:?}"),
                Err(e) => e.to_string(),
            };
            return Verdict::fail(format!("launch {launch}: {want:?}"), got, "plan reuse");
        }
    }
    Verdict::Pass
}

//! GPU cases of the top-k sampler: f32, bf16 and f16 logits in rows of 1 to 131,072 columns
//! (and whole arrays to 2^20), k at 1, 2, 33, 256, 2048 and the whole row (to `max_k`),
//! temperatures 1, 0.25 and 4, a uniform per row (0 and the largest f32 below 1 among them);
//! spread, tied, equal, decreasing and masked (mostly `-inf`) rows. Each row's draw and
//! probability are judged against the model's exact distribution
//! ([`model::topk_sample::RowDistribution::judge`]). Contract cases: a worked example,
//! NaN and `+inf` refused with their flat index, a row with nothing to draw, bad uniforms,
//! and bad parameters.

use super::topk::{array_sizes, narrow, rows_for, Dtype};
use super::{case_seed, contract_case, gpu_error, id, GpuCase, Inputs};
use crate::sweep::case::Verdict;
use crate::sweep::digest::Fingerprint;
use crate::sweep::SweepPlan;
use half::{bf16, f16};
use kernels::{GpuError, SampleSpec, TopkElement, TopkVariant};
use model::generators::{topk_rows, Rng, TopkFamily};
use model::topk::TopkValue;
use model::topk_sample::{self as sample_model, Precision, RowDistribution};

/// Row widths: one column, a partial warp, past a block, past the largest k, vocabularies.
const WIDTHS: [usize; 7] = [1, 2, 33, 257, 4097, 32_000, 131_072];

/// The k each case draws with (those that fit its row and variant), and the whole row.
const KS: [usize; 5] = [1, 2, 33, 256, 2048];

/// Temperatures: the plain softmax, a sharp one and a flat one.
const TEMPERATURES: [f32; 3] = [1.0, 0.25, 4.0];

/// The largest whole array sampled (one row: the row schedules' code at every length).
const ARRAY_MAX: usize = 1 << 20;

/// The largest f32 below 1.
const BELOW_ONE: f32 = 0.999_999_94;

/// Logits of a block of rows (f32; the 16-bit cases round them) and a uniform per row.
struct SampleInput {
    logits: Vec<f32>,
    uniforms: Vec<f32>,
    rows: usize,
    cols: usize,
}

/// One draw setting of a case.
#[derive(Debug, Clone, Copy)]
struct Draw {
    k: usize,
    temperature: f32,
}

/// The model's distributions for every draw setting.
type Answers = Result<Vec<(Draw, Vec<RowDistribution>)>, String>;

fn answers<T: TopkValue>(logits: &[T], input: &SampleInput, draws: &[Draw]) -> Answers {
    draws
        .iter()
        .map(|&d| {
            let spec = SampleSpec { k: d.k, temperature: d.temperature };
            sample_model::distributions(logits, (input.rows, input.cols), spec, &input.uniforms)
                .map(|rows| (d, rows))
                .map_err(|e| e.to_string())
        })
        .collect()
}

fn answers_for(input: &SampleInput, dtype: Dtype, draws: &[Draw]) -> Answers {
    match dtype {
        Dtype::F32 => answers(&input.logits, input, draws),
        Dtype::Bf16 => answers(&narrow::<bf16>(&input.logits, bf16::from_f32), input, draws),
        Dtype::F16 => answers(&narrow::<f16>(&input.logits, f16::from_f32), input, draws),
    }
}

/// The model's own draws (column, probability bits) of every setting and row.
fn answers_digest(answers: &Answers, uniforms: &[f32]) -> String {
    match answers {
        Ok(all) => {
            let mut f = Fingerprint::new();
            for (d, rows) in all {
                let draws = rows.iter().zip(uniforms).map(|(row, &u)| row.draw(u));
                let picked: Vec<(i64, f64)> =
                    rows.iter().zip(draws).map(|(r, j)| (r.columns[j], r.probability(j))).collect();
                f = f
                    .text(&format!("k={} t={}", d.k, d.temperature))
                    .i64s(&picked.iter().map(|p| p.0).collect::<Vec<_>>())
                    .u64s(picked.iter().map(|p| p.1.to_bits()));
            }
            f.finish()
        }
        Err(e) => Fingerprint::new().text(&format!("model error: {e}")).finish(),
    }
}

/// Runs every draw setting on the logits (as T) and judges each row.
fn run_typed<T: TopkElement>(
    gpu: &kernels::Gpu,
    variant: TopkVariant,
    logits: &[T],
    input: &SampleInput,
    expected: &Answers,
) -> Verdict {
    let expected = match expected {
        Ok(e) => e,
        Err(e) => return Verdict::fail("a model result", format!("model error: {e}"), "model"),
    };
    let shape = (input.rows, input.cols);
    for (d, rows) in expected {
        let at = format!("k={} T={}", d.k, d.temperature);
        let spec = SampleSpec { k: d.k, temperature: d.temperature };
        let (columns, probabilities) = match gpu.topk_sample(variant, logits, shape, spec, &input.uniforms) {
            Ok(v) => v,
            Err(e) => {
                return Verdict::fail("a draw", format!("error: {e}").replace('\n', " "), &format!("gpu call at {at}"))
            }
        };
        if columns.len() != rows.len() || probabilities.len() != rows.len() {
            return Verdict::fail(rows.len(), columns.len(), &format!("draws at {at}"));
        }
        for (r, row) in rows.iter().enumerate() {
            let u = input.uniforms[r];
            if let Err(why) = row.judge(u, columns[r], Some(probabilities[r]), Precision::Double) {
                let want = row.columns[row.draw(u)];
                return Verdict::fail_at(r, want, columns[r], &format!("draw of row {r} at {at} (u = {u:e}): {why}"));
            }
        }
    }
    Verdict::Pass
}

fn run(gpu: &kernels::Gpu, variant: TopkVariant, dtype: Dtype, input: &SampleInput, e: &Answers) -> Verdict {
    match dtype {
        Dtype::F32 => run_typed(gpu, variant, &input.logits, input, e),
        Dtype::Bf16 => run_typed(gpu, variant, &narrow::<bf16>(&input.logits, bf16::from_f32), input, e),
        Dtype::F16 => run_typed(gpu, variant, &narrow::<f16>(&input.logits, f16::from_f32), input, e),
    }
}

/// The draw settings of a row `cols` wide under `variant`: every k that fits, each at every
/// temperature; for a sanitizer plan (`few`) one k and the whole row (to `max_k`) at one
/// temperature (the tools replay every shared access of each launch).
fn draws_for(cols: usize, variant: TopkVariant, few: bool) -> Vec<Draw> {
    let fits = |k: &usize| *k <= cols && *k <= variant.max_k();
    let (listed, temperatures): (&[usize], &[f32]) =
        if few { (&[1], &TEMPERATURES[1..2]) } else { (&KS, &TEMPERATURES) };
    let mut ks: Vec<usize> = listed.iter().copied().chain([cols.min(variant.max_k())]).filter(fits).collect();
    ks.sort_unstable();
    ks.dedup();
    ks.iter().flat_map(|&k| temperatures.iter().map(move |&temperature| Draw { k, temperature })).collect()
}

/// A uniform per row from `seed`: 0 in row 0, the largest f32 below 1 in row 1, the rest
/// drawn in [0, 1).
fn uniforms(rows: usize, seed: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed ^ 0x5a4d_504c_4521);
    (0..rows)
        .map(|r| match r {
            0 => 0.0,
            1 => BELOW_ONE,
            // f32 of a uniform f64 may round up to 1: keep it below.
            _ => (rng.unit_f64() as f32).min(BELOW_ONE),
        })
        .collect()
}

/// The families (a sanitizer plan: the tied rows alone).
fn families(plan: &SweepPlan) -> &'static [TopkFamily] {
    const ALL: [TopkFamily; 5] =
        [TopkFamily::Spread, TopkFamily::Ties, TopkFamily::AllEqual, TopkFamily::Descending, TopkFamily::Masked];
    if plan.one_family {
        &[TopkFamily::Ties]
    } else {
        &ALL
    }
}

/// One block of rows and its cases: every variant x dtype, each over all its draw settings.
fn push_shape(plan: &SweepPlan, (rows, cols): (usize, usize), whole: bool, out: &mut Vec<GpuCase>) {
    let inputs: Inputs<SampleInput> = Inputs::default();
    let size = if whole { cols.to_string() } else { format!("{rows}x{cols}") };
    for (f, &family) in families(plan).iter().enumerate() {
        let seed = case_seed(plan.seed, if whole { "topk_sample.array" } else { "topk_sample" }, cols, f);
        let input = inputs.input(
            format!("{size}/{}/{seed}", family.name()),
            move || {
                let logits = topk_rows(family, rows, cols, seed).map_err(|e| e.to_string())?;
                Ok(SampleInput { logits, uniforms: uniforms(rows, seed), rows, cols })
            },
            move |c| Fingerprint::new().f32s(&c.logits).f32s(&c.uniforms).text(&format!("{rows}x{cols}")).finish(),
        );
        for variant in TopkVariant::ALL {
            for dtype in Dtype::ALL {
                let draws = draws_for(cols, variant, plan.one_family);
                let short = family.name().trim_start_matches("topk_");
                let v = format!("{}.sample.{}.{short}", variant.name(), dtype.name());
                let case_id = id("topk", v, size.clone(), rows * cols, family.name(), seed);
                let part = format!("sample.{}.{draws:?}", dtype.name());
                let for_answer = draws.clone();
                out.push(input.case_with(
                    case_id,
                    &part,
                    move |c| (answers_for(c, dtype, &for_answer), c.uniforms.clone()),
                    |(answers, uniforms)| answers_digest(answers, uniforms),
                    move |gpu, c, (e, _)| run(gpu, variant, dtype, c, e),
                ));
            }
        }
    }
}

/// Appends every sampler case of `plan`.
pub fn cases(plan: &SweepPlan, out: &mut Vec<GpuCase>) {
    let widths: Vec<usize> = if plan.one_family { vec![1, 33, 4097, 8193] } else { WIDTHS.to_vec() };
    for cols in widths {
        push_shape(plan, (rows_for(cols), cols), false, out);
    }
    for n in array_sizes(plan).into_iter().filter(|&n| n <= ARRAY_MAX) {
        push_shape(plan, (1, n), true, out);
    }
    for variant in TopkVariant::ALL {
        contract_cases(variant, out);
    }
}

/// The worked example and the refusals of `variant`.
fn contract_cases(variant: TopkVariant, out: &mut Vec<GpuCase>) {
    let v = variant.name();
    out.push(contract_case(
        id("topk", format!("{v}.sample.worked_example"), "6x5".into(), 30, "seed", 0),
        "six rows of f32 [0, ln 2, ln 2, -inf, 0], k = 3, T = 1, u = 0, 0.39, 0.41, 0.79, 0.81, 1 - 2^-24".into(),
        "columns [1, 1, 2, 2, 0, 0], probabilities 0.4, 0.4, 0.4, 0.4, 0.2, 0.2 (to 1e-6)".into(),
        move |gpu| worked_example(gpu, variant),
    ));
    out.push(contract_case(
        id("topk", format!("{v}.sample.rejects_nonfinite"), "3x33".into(), 99, "nonfinite", 0),
        "3x33 of 0.25: +inf at 20 and NaN at 25 in row 0, NaN at 40; then +inf at 70 alone".into(),
        "NonFinite at 25 (the row's NaN counts first), then at 70".into(),
        move |gpu| rejects_nonfinite(gpu, variant),
    ));
    out.push(contract_case(
        id("topk", format!("{v}.sample.rejects_bad_rows"), "3x33".into(), 99, "masked", 0),
        "3x33 of 0.25: row 1 all -inf; then uniforms [0.5, 1.0, 0.2] and [0.5, NaN, 0.2]".into(),
        "InvalidInput naming row 1 each time".into(),
        move |gpu| rejects_bad_rows(gpu, variant),
    ));
    out.push(contract_case(
        id("topk", format!("{v}.sample.rejects_bad_parameters"), "2x33".into(), 66, "k", 0),
        "2x33 of 1.0: k = 0, k = 34, T = 0, -1, inf, NaN".into(),
        "InvalidInput for each".into(),
        move |gpu| rejects_bad_parameters(gpu, variant),
    ));
}

fn worked_example(gpu: &kernels::Gpu, variant: TopkVariant) -> Verdict {
    let ln2 = std::f32::consts::LN_2;
    let row = [0.0f32, ln2, ln2, f32::NEG_INFINITY, 0.0];
    let logits: Vec<f32> = row.iter().copied().cycle().take(30).collect();
    let u = [0.0f32, 0.39, 0.41, 0.79, 0.81, BELOW_ONE];
    let spec = SampleSpec { k: 3, temperature: 1.0 };
    match gpu.topk_sample(variant, &logits, (6, 5), spec, &u) {
        Ok((columns, p)) => {
            let want_p = [0.4, 0.4, 0.4, 0.4, 0.2, 0.2];
            if columns != [1, 1, 2, 2, 0, 0] {
                return Verdict::fail("[1, 1, 2, 2, 0, 0]", format!("{columns:?}"), "worked example columns");
            }
            match (0..6).find(|&r| (p[r] as f64 - want_p[r]).abs() > 1e-6) {
                Some(r) => Verdict::fail_at(r, want_p[r], p[r], "worked example probability"),
                None => Verdict::Pass,
            }
        }
        Err(e) => gpu_error(&e),
    }
}

/// `Ok` when `result` is the error `is` accepts, else a failing verdict naming `what`.
fn refused<T>(
    result: Result<T, GpuError>,
    is: impl Fn(&GpuError) -> bool,
    want: &str,
    what: &str,
) -> Result<(), Verdict> {
    match result {
        Err(e) if is(&e) => Ok(()),
        Err(e) => Err(Verdict::fail(want, e.to_string(), what)),
        Ok(_) => Err(Verdict::fail(want, "Ok", what)),
    }
}

fn rejects_nonfinite(gpu: &kernels::Gpu, variant: TopkVariant) -> Verdict {
    let spec = SampleSpec { k: 5, temperature: 1.0 };
    let u = [0.5f32; 3];
    let mut x = vec![0.25f32; 99];
    x[20] = f32::INFINITY;
    x[25] = f32::NAN;
    x[40] = f32::NAN;
    let at = |index: usize| move |e: &GpuError| matches!(e, GpuError::NonFinite { index: i, .. } if *i == index);
    let first = refused(gpu.topk_sample(variant, &x, (3, 33), spec, &u), at(25), "NonFinite at 25", "NaN after +inf");
    let mut y = vec![0.25f32; 99];
    y[70] = f32::INFINITY;
    let second = refused(gpu.topk_sample(variant, &y, (3, 33), spec, &u), at(70), "NonFinite at 70", "+inf largest");
    first.and(second).err().unwrap_or(Verdict::Pass)
}

fn rejects_bad_rows(gpu: &kernels::Gpu, variant: TopkVariant) -> Verdict {
    let spec = SampleSpec { k: 2, temperature: 1.0 };
    let names_row_1 = |e: &GpuError| matches!(e, GpuError::InvalidInput { reason, .. } if reason.contains("row 1 "));
    let mut masked = vec![0.25f32; 99];
    masked[33..66].fill(f32::NEG_INFINITY);
    let want = "InvalidInput naming row 1";
    let checks = [
        (masked.as_slice(), [0.5f32, 0.5, 0.5], "a row of -inf"),
        (&[0.25f32; 99][..], [0.5, 1.0, 0.2], "a uniform of 1"),
        (&[0.25f32; 99][..], [0.5, f32::NAN, 0.2], "a NaN uniform"),
    ];
    for (logits, u, what) in checks {
        if let Err(v) = refused(gpu.topk_sample(variant, logits, (3, 33), spec, &u), names_row_1, want, what) {
            return v;
        }
    }
    Verdict::Pass
}

fn rejects_bad_parameters(gpu: &kernels::Gpu, variant: TopkVariant) -> Verdict {
    let x = [1.0f32; 66];
    let invalid = |e: &GpuError| matches!(e, GpuError::InvalidInput { .. });
    let settings = [(0, 1.0f32), (34, 1.0), (2, 0.0), (2, -1.0), (2, f32::INFINITY), (2, f32::NAN)];
    for (k, temperature) in settings {
        let what = format!("k = {k}, T = {temperature}");
        let result = gpu.topk_sample(variant, &x, (2, 33), SampleSpec { k, temperature }, &[0.5, 0.5]);
        if let Err(v) = refused(result, invalid, "InvalidInput", &what) {
            return v;
        }
    }
    Verdict::Pass
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_cover_the_ks_that_fit_at_every_temperature() {
        let v = TopkVariant::BlockRadixSelect;
        let ks = |cols, few| {
            let mut ks: Vec<usize> = draws_for(cols, v, few).iter().map(|d| d.k).collect();
            ks.dedup();
            ks
        };
        assert_eq!(ks(1, false), vec![1]);
        assert_eq!(ks(33, false), vec![1, 2, 33]);
        assert_eq!(ks(131_072, false), vec![1, 2, 33, 256, 2048, 4096]);
        assert_eq!(draws_for(33, v, false).len(), 9);
        assert_eq!(ks(8193, true), vec![1, 4096]);
        assert_eq!(draws_for(8193, v, true).len(), 2);
    }

    #[test]
    fn uniforms_hold_both_ends_and_stay_below_one() {
        let u = uniforms(61, 3);
        assert_eq!((u[0], u[1]), (0.0, BELOW_ONE));
        assert!(u.iter().all(|&x| (0.0..1.0).contains(&x)));
    }

    #[test]
    fn the_catalogue_has_unique_ids_and_computable_references() {
        let plan = SweepPlan::of_primitive(crate::registry::primitive::Primitive::Topk, &[1, 33, 4099], 5);
        let mut cases = Vec::new();
        super::cases(&plan, &mut cases);
        cases.retain(|c| c.id.n <= 61 * 4097);
        assert!(cases.iter().any(|c| c.id.family == "topk_masked"));
        super::super::assert_unique_ids_and_references(&cases, |_| true);
    }
}

//! GPU cases of top-k: f32, bf16 and f16 rows at every warp, block and radix boundary up to
//! 262,144 columns, and whole arrays (one row); top-k and bottom-k; k at 0, 1, 2, 31, 32,
//! 33, 256, 2048, n - 1 and n (up to the variant's `max_k`), all of them in one case of one
//! input; ties straddling the k-th value, signed zeros, equal, sorted and reversed rows, and
//! NaN ordered above every number. Values (bit for bit) and indices are compared element by
//! element with the model on poisoned outputs. Contract cases: NaN refused with its flat
//! index, `k > cols` and `k > max_k` refused, the seed example.

use super::{case_seed, contract_case, gpu_error, id, GpuCase, Inputs};
use crate::sweep::case::Verdict;
use crate::sweep::digest::Fingerprint;
use crate::sweep::SweepPlan;
use half::{bf16, f16};
use kernels::{GpuError, TopkElement, TopkNan, TopkSpec, TopkVariant};
use model::generators::{topk_rows, TopkFamily};
use model::topk::{self as topk_model, TopkValue};

/// Row widths: 1, the warp and block boundaries, past the largest k, a vocabulary, the widest.
const WIDTHS: [usize; 12] = [1, 2, 31, 32, 33, 255, 256, 257, 4097, 32_000, 131_072, 262_144];

/// The k the contract names; each case runs those that fit its row and its variant.
const KS: [usize; 8] = [0, 1, 2, 31, 32, 33, 256, 2048];

/// The largest whole array of the sweep: the catalogue's largest size, 2^28 (a block per row
/// and the grid schedule alike; the model keeps k ranks in one pass, not n).
pub(crate) const WHOLE_ARRAY_MAX: usize = 1 << 28;

/// The largest whole array of a sanitizer plan.
const SANITIZE_ARRAY_MAX: usize = 4099;

/// From this size a whole array runs k = 1 and 2048 only, of the spread and tied families
/// (the model's selection of every k would dominate the sweep and the receipt gate).
const LARGE_ARRAY: usize = 1 << 20;

/// Up to this size a large whole array runs every element type; past it f32 alone. From
/// `TOPK.grid_narrow_min_cols` (2^20) the grid schedule narrows a row over several levels
/// and reads lists after the first: the 16-bit keys' two levels need cases of their own.
const LARGE_ARRAY_ALL_DTYPES_MAX: usize = 1 << 24;

/// The rows of a block `cols` wide: at most 61 (a prime), fewer for wide rows.
pub(crate) fn rows_for(cols: usize) -> usize {
    (300_000 / cols).clamp(2, 61)
}

/// The element types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Dtype {
    F32,
    Bf16,
    F16,
}

impl Dtype {
    pub(super) const ALL: [Dtype; 3] = [Dtype::F32, Dtype::Bf16, Dtype::F16];

    pub(super) fn name(self) -> &'static str {
        match self {
            Dtype::F32 => "f32",
            Dtype::Bf16 => "bf16",
            Dtype::F16 => "f16",
        }
    }
}

/// One generated block of rows (f32; the 16-bit cases round it to their type).
struct TopkInput {
    values: Vec<f32>,
    rows: usize,
    cols: usize,
}

/// What one case selects: its k list, direction and NaN rule.
#[derive(Debug, Clone)]
struct Selection {
    ks: Vec<usize>,
    largest: bool,
    nan: TopkNan,
}

/// The model's answer for every k: (k, value bits, indices).
type Answers = Result<Vec<(usize, Vec<u32>, Vec<i64>)>, String>;

fn answers<T: TopkValue>(input: &[T], shape: (usize, usize), sel: &Selection) -> Answers {
    sel.ks
        .iter()
        .map(|&k| {
            let spec = TopkSpec { k, largest: sel.largest, nan: sel.nan };
            let out = topk_model::topk_rows(input, shape.0, shape.1, spec).map_err(|e| e.to_string())?;
            Ok((k, out.values.iter().map(|v| v.bits()).collect(), out.indices))
        })
        .collect()
}

fn answers_digest(answers: &Answers) -> String {
    match answers {
        Ok(all) => {
            let mut f = Fingerprint::new();
            for (k, bits, indices) in all {
                f = f.text(&format!("k={k}")).u64s(bits.iter().map(|&b| b as u64)).i64s(indices);
            }
            f.finish()
        }
        Err(e) => Fingerprint::new().text(&format!("model error: {e}")).finish(),
    }
}

/// The input as `dtype` would see it, and the model's answers on it.
fn answers_for(input: &TopkInput, dtype: Dtype, sel: &Selection) -> Answers {
    let shape = (input.rows, input.cols);
    match dtype {
        Dtype::F32 => answers(&input.values, shape, sel),
        Dtype::Bf16 => answers(&narrow::<bf16>(&input.values, bf16::from_f32), shape, sel),
        Dtype::F16 => answers(&narrow::<f16>(&input.values, f16::from_f32), shape, sel),
    }
}

pub(super) fn narrow<T>(values: &[f32], from: fn(f32) -> T) -> Vec<T> {
    values.iter().map(|&v| from(v)).collect()
}

/// Runs every k of `sel` on `input` (as T) and compares values bit for bit and indices.
fn run_typed<T: TopkElement + TopkValue>(
    gpu: &kernels::Gpu,
    variant: TopkVariant,
    input: &[T],
    shape: (usize, usize),
    sel: &Selection,
    expected: &Answers,
) -> Verdict {
    let expected = match expected {
        Ok(e) => e,
        Err(e) => return Verdict::fail("a model result", format!("model error: {e}"), "model"),
    };
    for (k, bits, indices) in expected {
        let spec = TopkSpec { k: *k, largest: sel.largest, nan: sel.nan };
        let (got_values, got_indices) = match gpu.topk(variant, input, shape, spec) {
            Ok(v) => v,
            Err(e) => {
                return Verdict::fail(
                    "a result",
                    format!("error: {e}").replace('\n', " "),
                    &format!("gpu call at k={k}"),
                )
            }
        };
        if got_indices.len() != indices.len() || got_values.len() != bits.len() {
            return Verdict::fail(indices.len(), got_indices.len(), &format!("output length at k={k}"));
        }
        if let Some(i) = (0..indices.len()).find(|&i| got_indices[i] != indices[i]) {
            let (r, t) = (i / (*k).max(1), i % (*k).max(1));
            let what = format!("index of rank {t} in row {r} at k={k}");
            return Verdict::fail_at(i, indices[i], got_indices[i], &what);
        }
        if let Some(i) = (0..bits.len()).find(|&i| got_values[i].bits() != bits[i]) {
            let what = format!("value bits of rank {} in row {} at k={k}", i % (*k).max(1), i / (*k).max(1));
            return Verdict::fail_at(i, format!("{:#x}", bits[i]), format!("{:#x}", got_values[i].bits()), &what);
        }
    }
    Verdict::Pass
}

fn run(gpu: &kernels::Gpu, variant: TopkVariant, dtype: Dtype, c: &TopkInput, sel: &Selection, e: &Answers) -> Verdict {
    let shape = (c.rows, c.cols);
    match dtype {
        Dtype::F32 => run_typed(gpu, variant, &c.values, shape, sel, e),
        Dtype::Bf16 => run_typed(gpu, variant, &narrow::<bf16>(&c.values, bf16::from_f32), shape, sel, e),
        Dtype::F16 => run_typed(gpu, variant, &narrow::<f16>(&c.values, f16::from_f32), shape, sel, e),
    }
}

/// The k of a row `cols` wide that `variant` runs: the contract's list, then n - 1 and n.
fn ks_for(cols: usize, variant: TopkVariant, large: bool) -> Vec<usize> {
    let mut ks: Vec<usize> = if large { vec![1, 2048] } else { KS.iter().copied().chain([cols - 1, cols]).collect() };
    ks.retain(|&k| k <= cols && k <= variant.max_k());
    ks.sort_unstable();
    ks.dedup();
    ks
}

/// The families of `plan` at `rows x cols`.
pub(crate) fn families(plan: &SweepPlan, cols: usize, whole: bool) -> &'static [TopkFamily] {
    const LARGE: [TopkFamily; 2] = [TopkFamily::Spread, TopkFamily::Ties];
    if plan.one_family {
        &[TopkFamily::Ties]
    } else if whole && cols >= LARGE_ARRAY {
        &LARGE
    } else {
        &TopkFamily::ALL
    }
}

/// The row widths of `plan` (the sanitizer runs': a partial warp, past a block, past max_k,
/// and two blocks of the grid schedule a row).
pub(crate) fn widths(plan: &SweepPlan) -> Vec<usize> {
    if plan.one_family {
        vec![1, 33, 4097, 8193]
    } else {
        WIDTHS.to_vec()
    }
}

/// The seed of the `f`-th family's rows `cols` wide (or of a whole array of `cols` items):
/// keyed by the width, so a one-size rerun makes the same input.
pub(crate) fn input_seed(plan: &SweepPlan, cols: usize, whole: bool, f: usize) -> u64 {
    case_seed(plan.seed, if whole { "topk.array" } else { "topk" }, cols, f)
}

/// The whole-array sizes of `plan` (one row each).
pub(crate) fn array_sizes(plan: &SweepPlan) -> Vec<usize> {
    // A sanitizer plan keeps to arrays of a few blocks' worth of columns: the
    // tools replay every shared access, and the schedule is one block per row
    // at every size.
    let largest = if plan.one_family { SANITIZE_ARRAY_MAX } else { WHOLE_ARRAY_MAX };
    plan.sizes.iter().copied().filter(|&n| (1..=largest).contains(&n)).collect()
}

/// One block of rows and its cases: every variant x dtype x direction, each over all its k.
fn push_shape(plan: &SweepPlan, (rows, cols): (usize, usize), whole: bool, out: &mut Vec<GpuCase>) {
    let inputs: Inputs<TopkInput> = Inputs::default();
    let size = if whole { cols.to_string() } else { format!("{rows}x{cols}") };
    let large = whole && cols >= LARGE_ARRAY;
    for (f, &family) in families(plan, cols, whole).iter().enumerate() {
        let seed = input_seed(plan, cols, whole, f);
        let input = inputs.input(
            format!("{size}/{}/{seed}", family.name()),
            move || {
                Ok(TopkInput { values: topk_rows(family, rows, cols, seed).map_err(|e| e.to_string())?, rows, cols })
            },
            move |c| Fingerprint::new().f32s(&c.values).text(&format!("{rows}x{cols}")).finish(),
        );
        let nan = if family.has_nan() { TopkNan::AboveAll } else { TopkNan::Reject };
        let dtypes: &[Dtype] = if large && cols > LARGE_ARRAY_ALL_DTYPES_MAX { &[Dtype::F32] } else { &Dtype::ALL };
        for variant in TopkVariant::ALL {
            for &dtype in dtypes {
                for largest in [true, false] {
                    let sel = Selection { ks: ks_for(cols, variant, large), largest, nan };
                    let direction = if largest { "largest" } else { "smallest" };
                    let short = family.name().trim_start_matches("topk_");
                    let v = format!("{}.{}.{direction}.{short}", variant.name(), dtype.name());
                    let case_id = id("topk", v, size.clone(), rows * cols, family.name(), seed);
                    let part = format!("{}.{direction}.{:?}", dtype.name(), sel.ks);
                    let for_answer = sel.clone();
                    out.push(input.case_with(
                        case_id,
                        &part,
                        move |c| answers_for(c, dtype, &for_answer),
                        answers_digest,
                        move |gpu, c, e| run(gpu, variant, dtype, c, &sel, e),
                    ));
                }
            }
        }
    }
}

/// Appends every top-k case of `plan`.
pub fn cases(plan: &SweepPlan, out: &mut Vec<GpuCase>) {
    for cols in widths(plan) {
        push_shape(plan, (rows_for(cols), cols), false, out);
    }
    for n in array_sizes(plan) {
        push_shape(plan, (1, n), true, out);
    }
    contract_cases(out);
}

/// The refusals and the seed example, per variant.
fn contract_cases(out: &mut Vec<GpuCase>) {
    for variant in TopkVariant::ALL {
        let v = variant.name();
        out.push(contract_case(
            id("topk", format!("{v}.seed_example"), "1x7".into(), 7, "seed", 0),
            "f32 [1, -0.0, 3, 3, 0.0, -2, 3]: top 5 and bottom 3".into(),
            "indices [2, 3, 6, 0, 1] and [5, 1, 4], -0.0 kept bit for bit".into(),
            move |gpu| {
                let x = [1.0f32, -0.0, 3.0, 3.0, 0.0, -2.0, 3.0];
                let top = TopkSpec { k: 5, largest: true, nan: TopkNan::Reject };
                let bottom = TopkSpec { k: 3, largest: false, nan: TopkNan::Reject };
                match (gpu.topk(variant, &x, (1, 7), top), gpu.topk(variant, &x, (1, 7), bottom)) {
                    (Ok((_, ti)), Ok((bv, bi))) if ti == [2, 3, 6, 0, 1] && bi == [5, 1, 4] => {
                        if bv[1].to_bits() == (-0.0f32).to_bits() {
                            Verdict::Pass
                        } else {
                            Verdict::fail("-0.0", bv[1], "the value at index 1, bit for bit")
                        }
                    }
                    (Ok((_, ti)), Ok((_, bi))) => {
                        Verdict::fail("[2, 3, 6, 0, 1] / [5, 1, 4]", format!("{ti:?} / {bi:?}"), "seed example")
                    }
                    (Err(e), _) | (_, Err(e)) => gpu_error(&e),
                }
            },
        ));
        out.push(contract_case(
            id("topk", format!("{v}.rejects_nan"), "3x33".into(), 99, "nonfinite", 0),
            "3x33 of 0.25, NaN at 40 and 70, k = 0 and k = 5".into(),
            "NonFinite at 40 for both k".into(),
            move |gpu| {
                let mut x = vec![0.25f32; 99];
                x[40] = f32::NAN;
                x[70] = f32::NAN;
                for k in [0, 5] {
                    match gpu.topk(variant, &x, (3, 33), TopkSpec { k, largest: true, nan: TopkNan::Reject }) {
                        Err(GpuError::NonFinite { index: 40, .. }) => {}
                        Err(e) => {
                            return Verdict::fail("NonFinite at 40", e.to_string(), &format!("NaN refusal at k={k}"))
                        }
                        Ok(_) => return Verdict::fail("NonFinite at 40", "Ok", &format!("NaN refusal at k={k}")),
                    }
                }
                Verdict::Pass
            },
        ));
        out.push(contract_case(
            id("topk", format!("{v}.rejects_bad_k"), "2x33".into(), 66, "k", 0),
            format!("2x33 of 1.0 with k = 34 and k = {}", variant.max_k() + 1),
            "InvalidInput for both".into(),
            move |gpu| {
                let wide = vec![1.0f32; 2 * (variant.max_k() + 1)];
                let narrow_rows = vec![1.0f32; 66];
                let refused = |r: Result<_, GpuError>| matches!(r, Err(GpuError::InvalidInput { .. }));
                let spec = |k| TopkSpec { k, largest: true, nan: TopkNan::Reject };
                if !refused(gpu.topk(variant, &narrow_rows, (2, 33), spec(34))) {
                    return Verdict::fail("InvalidInput", "no refusal", "k above the columns");
                }
                if !refused(gpu.topk(variant, &wide, (2, variant.max_k() + 1), spec(variant.max_k() + 1))) {
                    return Verdict::fail("InvalidInput", "no refusal", "k above the variant's max_k");
                }
                Verdict::Pass
            },
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ks_cover_the_boundaries_that_fit() {
        let v = TopkVariant::BlockRadixSelect;
        assert_eq!(ks_for(1, v, false), vec![0, 1]);
        assert_eq!(ks_for(33, v, false), vec![0, 1, 2, 31, 32, 33]);
        assert_eq!(ks_for(4097, v, false), vec![0, 1, 2, 31, 32, 33, 256, 2048, 4096]);
        assert_eq!(ks_for(1 << 24, v, true), vec![1, 2048]);
    }

    #[test]
    fn the_catalogue_has_unique_ids_and_computable_references() {
        let plan = SweepPlan::of_primitive(crate::registry::primitive::Primitive::Topk, &[1, 33, 4099], 5);
        let mut cases = Vec::new();
        cases_without_widest(&plan, &mut cases);
        assert!(cases.iter().any(|c| c.id.family == "topk_specials"));
        super::super::assert_unique_ids_and_references(&cases, |_| true);
    }

    /// The catalogue without the widest rows (their references take seconds in a debug build).
    fn cases_without_widest(plan: &SweepPlan, out: &mut Vec<GpuCase>) {
        cases(plan, out);
        out.retain(|c| c.id.n <= 61 * 4097);
    }
}

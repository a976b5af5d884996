//! GPU cases of the row softmax: f32 and bf16, every variant at every
//! boundary width up to 131,072 columns, masked rows (-inf -> exactly 0),
//! extreme logits; each element within the variant's declared tolerance of
//! the exact (192-bit) softmax, each row summing to 1 within its bound;
//! all-masked rows (an error listing them, no NaN written), +inf/NaN
//! rejection, shift invariance and the fixed examples ([-10000, 0, 10000] ->
//! [0, 0, 1] exactly, a lone unmasked logit -> probability 1).

use super::{case_seed, contract_case, gpu_error, id, model_error, GpuCase, Inputs};
use crate::sweep::case::Verdict;
use crate::sweep::digest::Fingerprint;
use crate::sweep::SweepPlan;
use half::bf16;
use kernels::{softmax_tolerance, GpuError, SoftmaxDtype, SoftmaxPlan, SoftmaxVariant};
use model::generators::{softmax_rows, MaskPolicy};
use model::softmax::softmax_exact_rows_f32;
use std::sync::OnceLock;

/// Row widths: warp, block and vector boundaries, a vocabulary-sized row, the longest.
const WIDTHS: [usize; 14] = [1, 31, 32, 33, 255, 256, 257, 511, 512, 513, 1024, 4097, 32_000, 131_072];

/// The rows of the block of rows `cols` wide: at most 61, a prime, so that
/// schedules that take several rows per warp or block also meet a partial
/// group at the end.
pub(crate) fn rows_for(cols: usize) -> usize {
    (300_000 / cols).clamp(2, 61)
}

/// Checks `got` (as f64) against the exact softmax of `input` row by row.
fn check_rows(
    input: &[f32],
    exact: &[f64],
    got: &[f64],
    shape: (usize, usize),
    variant: SoftmaxVariant,
    dtype: SoftmaxDtype,
) -> Verdict {
    let (rows, cols) = shape;
    if got.len() != exact.len() {
        return Verdict::fail(exact.len(), got.len(), "output length");
    }
    let tol = softmax_tolerance(cols, variant, dtype);
    for r in 0..rows {
        let row = &input[r * cols..(r + 1) * cols];
        let m = row.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
        let mut sum = 0.0f64;
        for (c, &x) in row.iter().enumerate() {
            let i = r * cols + c;
            if x == f32::NEG_INFINITY {
                if got[i] != 0.0 {
                    return Verdict::fail_at(i, "0 (masked)", got[i], "masked logit");
                }
                continue;
            }
            if !tol.allows(exact[i], x as f64 - m, got[i]) {
                return Verdict::fail_at(
                    i,
                    format!("{:e} +- {:e}", exact[i], tol.element_bound(exact[i], x as f64 - m)),
                    format!("{:e}", got[i]),
                    "probability within the declared tolerance",
                );
            }
            sum += got[i];
        }
        if (sum - 1.0).abs() > tol.row_sum {
            return Verdict::fail_at(r, format!("1 +- {:e}", tol.row_sum), format!("{sum:.12}"), "row sum");
        }
    }
    Verdict::Pass
}

/// The bf16 kernels' view of a block of rows: the bf16 logits, their exact
/// f32 widening, and the exact softmax of those.
type Bf16Reference = (Vec<bf16>, Vec<f32>, Vec<f64>);

/// One generated block of rows, and the exact softmax of what each dtype
/// sees (the bf16 kernels get the bf16 rounding of the logits), computed
/// when first asked for.
struct SoftmaxCase {
    input: Vec<f32>,
    rows: usize,
    cols: usize,
    exact_f32: OnceLock<Result<Vec<f64>, String>>,
    exact_bf16: OnceLock<Result<Bf16Reference, String>>,
}

impl SoftmaxCase {
    fn new(input: Vec<f32>, rows: usize, cols: usize) -> SoftmaxCase {
        SoftmaxCase { input, rows, cols, exact_f32: OnceLock::new(), exact_bf16: OnceLock::new() }
    }

    fn exact_f32(&self) -> &Result<Vec<f64>, String> {
        self.exact_f32
            .get_or_init(|| softmax_exact_rows_f32(&self.input, self.rows, self.cols).map_err(|e| e.to_string()))
    }

    /// (bf16 logits, their f32 widening, the exact softmax of those).
    fn exact_bf16(&self) -> &Result<Bf16Reference, String> {
        self.exact_bf16.get_or_init(|| {
            let narrow: Vec<bf16> = self.input.iter().map(|&v| bf16::from_f32(v)).collect();
            let widened: Vec<f32> = narrow.iter().map(|v| v.to_f32()).collect();
            let exact = softmax_exact_rows_f32(&widened, self.rows, self.cols).map_err(|e| e.to_string())?;
            Ok((narrow, widened, exact))
        })
    }

    /// The digest of the reference `dtype` is judged against (for rows
    /// that must fail: the model's list of all-masked rows).
    fn expected_digest(&self, dtype: SoftmaxDtype, all_masked: bool) -> String {
        if all_masked {
            return match softmax_exact_rows_f32(&self.input, self.rows, self.cols) {
                Err(model::ModelError::AllMasked { rows }) => {
                    Fingerprint::new().text("all masked").u64s(rows.iter().map(|&r| r as u64)).finish()
                }
                other => Fingerprint::new().text(&format!("unexpected model answer: {:?}", other.err())).finish(),
            };
        }
        let exact = match dtype {
            SoftmaxDtype::F32 => self.exact_f32().as_ref().map(|e| e.as_slice()),
            SoftmaxDtype::Bf16 => self.exact_bf16().as_ref().map(|(_, _, e)| e.as_slice()),
        };
        match exact {
            Ok(e) => Fingerprint::new().f64s(e).finish(),
            Err(e) => Fingerprint::new().text(&format!("model error: {e}")).finish(),
        }
    }
}

fn run_f32(gpu: &kernels::Gpu, variant: SoftmaxVariant, case: &SoftmaxCase) -> Verdict {
    let exact = match case.exact_f32() {
        Ok(e) => e,
        Err(e) => return Verdict::fail("a model result", format!("model error: {e}"), "model"),
    };
    match gpu.softmax_f32(variant, &case.input, case.rows, case.cols) {
        Ok(out) => {
            let wide: Vec<f64> = out.iter().map(|&v| v as f64).collect();
            check_rows(&case.input, exact, &wide, (case.rows, case.cols), variant, SoftmaxDtype::F32)
        }
        Err(e) => gpu_error(&e),
    }
}

fn run_bf16(gpu: &kernels::Gpu, variant: SoftmaxVariant, case: &SoftmaxCase) -> Verdict {
    let (narrow, widened, exact) = match case.exact_bf16() {
        Ok(v) => v,
        Err(e) => return Verdict::fail("a model result", format!("model error: {e}"), "model"),
    };
    // The exact reference is the softmax of the bf16 values actually given.
    match gpu.softmax_bf16(variant, narrow, case.rows, case.cols) {
        Ok(out) => {
            let wide: Vec<f64> = out.iter().map(|v| v.to_f64()).collect();
            check_rows(widened, exact, &wide, (case.rows, case.cols), variant, SoftmaxDtype::Bf16)
        }
        Err(e) => gpu_error(&e),
    }
}

/// All-masked rows: the error lists exactly the model's rows, and the
/// poisoned output holds no NaN anywhere (masked rows are written as 0).
fn run_all_masked(gpu: &kernels::Gpu, variant: SoftmaxVariant, input: &[f32], rows: usize, cols: usize) -> Verdict {
    let expected_rows = match softmax_exact_rows_f32(input, rows, cols) {
        Err(model::ModelError::AllMasked { rows }) => rows,
        Err(e) => return model_error(&e),
        Ok(_) => return Verdict::fail("an all-masked row in the input", "none", "generator"),
    };
    let run = || -> Result<(Vec<f32>, Result<(), GpuError>), GpuError> {
        let mut plan = SoftmaxPlan::<f32>::new(gpu, variant, rows, cols)?;
        let device_in = gpu.upload(input)?;
        let mut device_out = gpu.alloc_poisoned::<f32>(input.len())?;
        plan.enqueue(&device_in, &mut device_out)?;
        let outcome = plan.finish();
        Ok((gpu.download(&device_out)?, outcome))
    };
    let (out, outcome) = match run() {
        Ok(v) => v,
        Err(e) => return gpu_error(&e),
    };
    match outcome {
        Err(GpuError::AllMasked { masked_rows, .. }) if masked_rows == expected_rows => {}
        Err(e) => return Verdict::fail(format!("AllMasked {expected_rows:?}"), e.to_string(), "all-masked error"),
        Ok(()) => return Verdict::fail(format!("AllMasked {expected_rows:?}"), "Ok", "all-masked error"),
    }
    if let Some(i) = out.iter().position(|v| v.is_nan()) {
        return Verdict::fail_at(i, "no NaN anywhere", "NaN", "all-masked output");
    }
    if let Some(&r) = expected_rows.iter().find(|&&r| out[r * cols..(r + 1) * cols].iter().any(|&v| v != 0.0)) {
        return Verdict::fail_at(r, "a row of zeros", "nonzero", "all-masked row output");
    }
    Verdict::Pass
}

/// The row widths of `plan` (the sanitizer runs': those its gate names).
pub(crate) fn widths(plan: &SweepPlan) -> Vec<usize> {
    if plan.one_family {
        vec![1, 33, 1024, 4097]
    } else {
        WIDTHS.to_vec()
    }
}

/// The mask policies of `plan`.
pub(crate) fn masks(plan: &SweepPlan) -> &'static [MaskPolicy] {
    if plan.one_family {
        &[MaskPolicy::RandomMasks]
    } else {
        &[MaskPolicy::Unmasked, MaskPolicy::RandomMasks, MaskPolicy::WithAllMaskedRows]
    }
}

/// The seed of the rows of width `cols` (the `w`-th width) under `mask`.
pub(crate) fn rows_seed(plan: &SweepPlan, w: usize, cols: usize, mask: MaskPolicy) -> u64 {
    case_seed(plan.seed, "softmax", cols, w * 4 + mask as usize)
}

/// Appends every softmax case of `plan`: the row blocks of every width, and
/// at each size of `plan` past 2^32 the large rows (`softmax_streamed`).
pub fn cases(plan: &SweepPlan, out: &mut Vec<GpuCase>) {
    for &n in plan.sizes.iter().filter(|&&n| n >= super::streamed::STREAMED_FROM) {
        super::softmax_streamed::cases(plan, n, out);
    }
    let inputs: Inputs<SoftmaxCase> = Inputs::default();
    for (w, &cols) in widths(plan).iter().enumerate() {
        let rows = rows_for(cols);
        let size = format!("{rows}x{cols}");
        for &mask in masks(plan) {
            let seed = rows_seed(plan, w, cols, mask);
            let family = format!("softmax_rows_{}", mask.name());
            let input = inputs.input(
                format!("{size}/{family}/{seed}"),
                move || {
                    Ok(SoftmaxCase::new(softmax_rows(rows, cols, seed, mask).map_err(|e| e.to_string())?, rows, cols))
                },
                move |c| Fingerprint::new().f32s(&c.input).text(&format!("{rows}x{cols}")).finish(),
            );
            let all_masked = mask == MaskPolicy::WithAllMaskedRows;
            for variant in SoftmaxVariant::ALL.into_iter().filter(|v| cols <= v.max_cols()) {
                let dtypes: &[SoftmaxDtype] =
                    if all_masked { &[SoftmaxDtype::F32] } else { &[SoftmaxDtype::F32, SoftmaxDtype::Bf16] };
                for &dtype in dtypes {
                    let label = if all_masked { "all_masked_rows" } else { "rows" };
                    let case_id = id(
                        "softmax",
                        format!("{}.{}.{label}", variant.name(), dtype.name()),
                        size.clone(),
                        rows * cols,
                        &family,
                        seed,
                    );
                    out.push(input.case(
                        case_id,
                        &format!("{}.{label}", dtype.name()),
                        move |c| c.expected_digest(dtype, all_masked),
                        move |gpu, c| match (all_masked, dtype) {
                            (true, _) => run_all_masked(gpu, variant, &c.input, rows, cols),
                            (_, SoftmaxDtype::F32) => run_f32(gpu, variant, c),
                            (_, SoftmaxDtype::Bf16) => run_bf16(gpu, variant, c),
                        },
                    ));
                }
            }
        }
    }
    contract_cases(out);
}

/// The seed's examples, shift invariance and the nonfinite rejection.
fn contract_cases(out: &mut Vec<GpuCase>) {
    for variant in SoftmaxVariant::ALL {
        let v = variant.name();
        out.push(contract_case(
            id("softmax", format!("{v}.seed_examples"), "1x3".into(), 3, "seed", 0),
            "f32 and bf16 rows [-10000, 0, 10000] and [-inf, 5, -inf]".into(),
            "[0, 0, 1] and [0, 1, 0] exactly".into(),
            move |gpu| {
                let examples: [([f32; 3], [f32; 3]); 2] = [
                    ([-10000.0, 0.0, 10000.0], [0.0, 0.0, 1.0]),
                    ([f32::NEG_INFINITY, 5.0, f32::NEG_INFINITY], [0.0, 1.0, 0.0]),
                ];
                for (input, want) in examples {
                    match gpu.softmax_f32(variant, &input, 1, 3) {
                        Ok(got) if got == want => {}
                        Ok(got) => {
                            return Verdict::fail(format!("{want:?}"), format!("{got:?}"), "seed example (exact)")
                        }
                        Err(e) => return gpu_error(&e),
                    }
                    let narrow: Vec<bf16> = input.iter().map(|&x| bf16::from_f32(x)).collect();
                    match gpu.softmax_bf16(variant, &narrow, 1, 3) {
                        Ok(got) if got.iter().map(|x| x.to_f32()).eq(want) => {}
                        Ok(got) => {
                            return Verdict::fail(format!("{want:?}"), format!("{got:?}"), "seed example bf16 (exact)")
                        }
                        Err(e) => return gpu_error(&e),
                    }
                }
                Verdict::Pass
            },
        ));
        // Shift invariance: dyadic logits k/8 and the shift 1024 are exact in
        // f32, so x and x + 1024 are the same softmax; both outputs must lie
        // within the tolerance of the one exact answer.
        let (rows, cols) = (4, 257);
        let dyadic: Inputs<SoftmaxCase> = Inputs::default();
        let input = dyadic.input(
            format!("{v}/shift"),
            move || {
                let x: Vec<f32> = (0..rows * cols).map(|i| ((i * 7919) % 1601) as f32 / 8.0 - 100.0).collect();
                Ok(SoftmaxCase::new(x, rows, cols))
            },
            |c| Fingerprint::new().f32s(&c.input).text("4x257, shifted by 1024").finish(),
        );
        out.push(input.case(
            id("softmax", format!("{v}.shift_invariance"), "4x257".into(), 4 * 257, "dyadic", 0),
            "f32",
            |c| c.expected_digest(SoftmaxDtype::F32, false),
            move |gpu, case| {
                let base = run_f32(gpu, variant, case);
                if !base.passed() {
                    return base;
                }
                let exact = match case.exact_f32() {
                    Ok(e) => e,
                    Err(e) => return Verdict::fail("a model result", format!("model error: {e}"), "model"),
                };
                let shifted: Vec<f32> = case.input.iter().map(|&v| v + 1024.0).collect();
                match gpu.softmax_f32(variant, &shifted, rows, cols) {
                    Ok(out) => {
                        let wide: Vec<f64> = out.iter().map(|&v| v as f64).collect();
                        // The exact reference of the unshifted rows (identical in exact arithmetic).
                        check_rows(&case.input, exact, &wide, (rows, cols), variant, SoftmaxDtype::F32)
                    }
                    Err(e) => gpu_error(&e),
                }
            },
        ));
        out.push(contract_case(
            id("softmax", format!("{v}.rejects_inf_and_nan"), "3x33".into(), 99, "nonfinite", 0),
            "3x33 of 0.25, +inf at 40, NaN at 70".into(),
            "NonFinite at 40".into(),
            move |gpu| {
                let mut x = vec![0.25f32; 99];
                x[40] = f32::INFINITY;
                x[70] = f32::NAN;
                match gpu.softmax_f32(variant, &x, 3, 33) {
                    Err(GpuError::NonFinite { index: 40, .. }) => Verdict::Pass,
                    Err(e) => Verdict::fail("NonFinite at 40", e.to_string(), "nonfinite rejection"),
                    Ok(_) => Verdict::fail("NonFinite at 40", "Ok", "nonfinite rejection"),
                }
            },
        ));
    }
}

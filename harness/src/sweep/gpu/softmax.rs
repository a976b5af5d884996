//! GPU cases of the row softmax: f32 and bf16, every variant at every
//! boundary width up to 131,072 columns, masked rows (-inf -> exactly 0),
//! extreme logits; each element within the variant's declared tolerance of
//! the exact (192-bit) softmax, each row summing to 1 within its bound;
//! all-masked rows (an error listing them, no NaN written), +inf/NaN
//! rejection, shift invariance and the seed's examples.

use super::{case_seed, gpu_error, id, model_error, GpuCase};
use crate::sweep::case::Verdict;
use crate::sweep::SweepPlan;
use half::bf16;
use kernels::{softmax_tolerance, GpuError, SoftmaxDtype, SoftmaxPlan, SoftmaxVariant};
use model::generators::{softmax_rows, MaskPolicy};
use model::softmax::softmax_exact_rows_f32;

/// Row widths: warp, block and vector boundaries, a vocabulary-sized row, the longest.
const WIDTHS: [usize; 14] = [1, 31, 32, 33, 255, 256, 257, 511, 512, 513, 1024, 4097, 32_000, 131_072];

fn rows_for(cols: usize) -> usize {
    (300_000 / cols).clamp(2, 64)
}

/// Checks `got` (as f64) against the exact softmax of `input` row by row.
fn check_rows(
    input: &[f32],
    got: &[f64],
    rows: usize,
    cols: usize,
    variant: SoftmaxVariant,
    dtype: SoftmaxDtype,
) -> Verdict {
    let exact = match softmax_exact_rows_f32(input, rows, cols) {
        Ok(e) => e,
        Err(e) => return model_error(&e),
    };
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

fn run_f32(gpu: &kernels::Gpu, variant: SoftmaxVariant, input: &[f32], rows: usize, cols: usize) -> Verdict {
    match gpu.softmax_f32(variant, input, rows, cols) {
        Ok(out) => {
            let wide: Vec<f64> = out.iter().map(|&v| v as f64).collect();
            check_rows(input, &wide, rows, cols, variant, SoftmaxDtype::F32)
        }
        Err(e) => gpu_error(&e),
    }
}

fn run_bf16(gpu: &kernels::Gpu, variant: SoftmaxVariant, input: &[f32], rows: usize, cols: usize) -> Verdict {
    let narrow: Vec<bf16> = input.iter().map(|&v| bf16::from_f32(v)).collect();
    // The exact reference is the softmax of the bf16 values actually given.
    let widened: Vec<f32> = narrow.iter().map(|v| v.to_f32()).collect();
    match gpu.softmax_bf16(variant, &narrow, rows, cols) {
        Ok(out) => {
            let wide: Vec<f64> = out.iter().map(|v| v.to_f64()).collect();
            check_rows(&widened, &wide, rows, cols, variant, SoftmaxDtype::Bf16)
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

/// Appends every softmax case of `plan`.
pub fn cases(plan: &SweepPlan, out: &mut Vec<GpuCase>) {
    let widths: Vec<usize> = if plan.one_family {
        // Sanitizer runs: the widths named by the sanitizer gate.
        vec![1, 33, 1024, 4097]
    } else {
        WIDTHS.to_vec()
    };
    for (w, &cols) in widths.iter().enumerate() {
        let rows = rows_for(cols);
        let size = format!("{rows}x{cols}");
        let masks: &[MaskPolicy] = if plan.one_family {
            &[MaskPolicy::RandomMasks]
        } else {
            &[MaskPolicy::Unmasked, MaskPolicy::RandomMasks, MaskPolicy::WithAllMaskedRows]
        };
        for &mask in masks {
            let seed = case_seed(plan.seed, "softmax", cols, w * 4 + mask as usize);
            let family = format!("softmax_rows_{}", mask.name());
            for variant in SoftmaxVariant::ALL.into_iter().filter(|v| cols <= v.max_cols()) {
                let dtypes: &[SoftmaxDtype] = if mask == MaskPolicy::WithAllMaskedRows {
                    &[SoftmaxDtype::F32]
                } else {
                    &[SoftmaxDtype::F32, SoftmaxDtype::Bf16]
                };
                for &dtype in dtypes {
                    let label = if mask == MaskPolicy::WithAllMaskedRows { "all_masked_rows" } else { "rows" };
                    out.push(GpuCase {
                        id: id(
                            "softmax",
                            format!("{}.{}.{label}", variant.name(), dtype.name()),
                            size.clone(),
                            rows * cols,
                            &family,
                            seed,
                        ),
                        run: Box::new(move |gpu| {
                            let input = match softmax_rows(rows, cols, seed, mask) {
                                Ok(v) => v,
                                Err(e) => return model_error(&e),
                            };
                            match (mask, dtype) {
                                (MaskPolicy::WithAllMaskedRows, _) => run_all_masked(gpu, variant, &input, rows, cols),
                                (_, SoftmaxDtype::F32) => run_f32(gpu, variant, &input, rows, cols),
                                (_, SoftmaxDtype::Bf16) => run_bf16(gpu, variant, &input, rows, cols),
                            }
                        }),
                    });
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
        out.push(GpuCase {
            id: id("softmax", format!("{v}.seed_examples"), "1x3".into(), 3, "seed", 0),
            run: Box::new(move |gpu| {
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
            }),
        });
        // Shift invariance: dyadic logits k/8 and the shift 1024 are exact in
        // f32, so x and x + 1024 are the same softmax; both outputs must lie
        // within the tolerance of the one exact answer.
        out.push(GpuCase {
            id: id("softmax", format!("{v}.shift_invariance"), "4x257".into(), 4 * 257, "dyadic", 0),
            run: Box::new(move |gpu| {
                let (rows, cols) = (4, 257);
                let x: Vec<f32> = (0..rows * cols).map(|i| ((i * 7919) % 1601) as f32 / 8.0 - 100.0).collect();
                let shifted: Vec<f32> = x.iter().map(|&v| v + 1024.0).collect();
                let base = run_f32(gpu, variant, &x, rows, cols);
                if !base.passed() {
                    return base;
                }
                match gpu.softmax_f32(variant, &shifted, rows, cols) {
                    Ok(out) => {
                        let wide: Vec<f64> = out.iter().map(|&v| v as f64).collect();
                        // The exact reference of the unshifted rows (identical in exact arithmetic).
                        check_rows(&x, &wide, rows, cols, variant, SoftmaxDtype::F32)
                    }
                    Err(e) => gpu_error(&e),
                }
            }),
        });
        out.push(GpuCase {
            id: id("softmax", format!("{v}.rejects_inf_and_nan"), "3x33".into(), 99, "nonfinite", 0),
            run: Box::new(move |gpu| {
                let mut x = vec![0.25f32; 99];
                x[40] = f32::INFINITY;
                x[70] = f32::NAN;
                match gpu.softmax_f32(variant, &x, 3, 33) {
                    Err(GpuError::NonFinite { index: 40, .. }) => Verdict::Pass,
                    Err(e) => Verdict::fail("NonFinite at 40", e.to_string(), "nonfinite rejection"),
                    Ok(_) => Verdict::fail("NonFinite at 40", "Ok", "nonfinite rejection"),
                }
            }),
        });
    }
}

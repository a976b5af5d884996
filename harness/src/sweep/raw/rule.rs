//! How a contract's outputs are compared with the model's: exactly (bit for
//! bit for floats), or within the tolerance the sweep holds our own
//! variants to (softmax rows; float sums against the exact sum).

use super::topk_sample_rule;
use super::{Array, Contract, RawCase, Value};
use crate::sweep::case::Verdict;
use crate::sweep::compare::exact;
use crate::sweep::float_check::{error_of, order_free_bound};
use kernels::{softmax_tolerance, SoftmaxDtype, SoftmaxTolerance, SoftmaxVariant};

/// A comparison rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Every output element equal to the model's (floats bit for bit, NaN
    /// payloads included), and the same element count.
    Exact,
    /// Row softmax: the model's output is the exact probability (float64;
    /// 0 for a masked logit and for every element of an all-masked row).
    /// Each element within the loosest tolerance any of our variants
    /// declares at that row width, masked elements exactly 0, and each
    /// unmasked row summing to 1 within that tolerance's row bound.
    SoftmaxRows,
    /// A float sum: the model's output is the exact sum rounded to float64;
    /// the error of the result, computed exactly from the input, within the
    /// order-free bound (n-1) u/(1+u) sum|x| (u = 2^-24: any summation order,
    /// atomics included).
    FloatSumBound,
    /// A top-k sampler: each row's draw judged against the model's exact distribution of
    /// that row at float32 precision ([`topk_sample_rule`]); the model's outputs are its own
    /// draws (int64) and their exact probabilities (float64).
    TopkSample,
}

impl Rule {
    /// The rule in words (for `index.json`, receipts and summaries).
    pub fn words(self) -> &'static str {
        match self {
            Rule::Exact => "exact: every element equal to the model's (floats bit for bit), and the same element count",
            Rule::SoftmaxRows => {
                "softmax tolerance: each probability within the loosest tolerance our softmax variants declare at \
                 the row width (relative + per-shift * |x - max| + absolute) of the exact value in expected \
                 (float64), masked logits exactly 0, all-masked rows all 0, each row summing to 1 within the \
                 row bound"
            }
            Rule::FloatSumBound => {
                "order-free bound: |result - exact sum| <= (n-1) u/(1+u) sum|x| with u = 2^-24, the error computed \
                 exactly from the input (expected holds the exact sum rounded to float64)"
            }
            Rule::TopkSample => {
                "sampler draws: each row's column among its top k (value descending, index ascending) with a nonzero \
                 probability exp((v - max) / T) / sum, u within (2k + 8) 2^-24 of that column's interval of the exact \
                 CDF, and its probability (where written) within (2|x| + 2k + 8) 2^-24 relative, x = (v - max) / T \
                 (expected holds the model's own draws and exact probabilities)"
            }
        }
    }

    /// The short tolerance name in `index.json`.
    pub fn tolerance(self) -> &'static str {
        match self {
            Rule::Exact => "exact",
            Rule::SoftmaxRows => "softmax_variant_bound",
            Rule::FloatSumBound => "order_free_bound",
            Rule::TopkSample => "sample_float32_bound",
        }
    }
}

/// The verdict on `got` against `case` by `contract`'s rule.
pub fn compare(contract: &Contract, case: &RawCase, got: &[Array]) -> Verdict {
    if got.len() != case.expected.len() {
        return Verdict::fail(
            format!("{} outputs", case.expected.len()),
            format!("{} outputs", got.len()),
            "output count",
        );
    }
    match contract.rule {
        Rule::Exact => {
            for (k, (e, g)) in case.expected.iter().zip(got).enumerate() {
                let verdict = exact_arrays(e, g, contract.what_of(k));
                if !verdict.passed() {
                    return verdict;
                }
            }
            Verdict::Pass
        }
        Rule::SoftmaxRows => softmax_rows(contract, case, got),
        Rule::FloatSumBound => float_sum(contract, case, got),
        Rule::TopkSample => topk_sample_rule::compare(contract, case, got),
    }
}

fn bits32(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn bits64(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn exact_arrays(expected: &Array, got: &Array, what: &str) -> Verdict {
    match (expected, got) {
        (Array::Int32(e), Array::Int32(g)) => exact(e, g, what),
        (Array::Int64(e), Array::Int64(g)) => exact(e, g, what),
        (Array::Bfloat16(e), Array::Bfloat16(g)) => exact(e, g, what),
        (Array::Uint8(e), Array::Uint8(g)) => exact(e, g, what),
        (Array::Uint32(e), Array::Uint32(g)) => exact(e, g, what),
        (Array::Float16(e), Array::Float16(g)) => exact(e, g, what),
        (Array::Float32(e), Array::Float32(g)) => match exact(&bits32(e), &bits32(g), what) {
            // Name the values, not only their bits.
            Verdict::Fail(mut m) => {
                if let Some(i) = m.index {
                    m.expected = format!("{:e} ({:#010x})", e[i], e[i].to_bits());
                    m.got = format!("{:e} ({:#010x})", g[i], g[i].to_bits());
                }
                Verdict::Fail(m)
            }
            pass => pass,
        },
        (Array::Float64(e), Array::Float64(g)) => exact(&bits64(e), &bits64(g), what),
        _ => type_mismatch(expected, got),
    }
}

fn type_mismatch(expected: &Array, got: &Array) -> Verdict {
    Verdict::fail(
        format!("{} elements", expected.dtype().name()),
        format!("{} elements", got.dtype().name()),
        "output type",
    )
}

/// The tolerance a user's f32 softmax is held to at `cols` columns: the
/// loosest, field by field, of the tolerances our variants that take rows
/// this wide declare (each is what the sweep holds that variant to).
pub fn softmax_user_tolerance(cols: usize) -> SoftmaxTolerance {
    let declared = SoftmaxVariant::ALL
        .into_iter()
        .filter(|v| cols <= v.max_cols())
        .map(|v| softmax_tolerance(cols, v, SoftmaxDtype::F32));
    declared
        .reduce(|a, b| SoftmaxTolerance {
            relative: a.relative.max(b.relative),
            per_shift: a.per_shift.max(b.per_shift),
            absolute: a.absolute.max(b.absolute),
            row_sum: a.row_sum.max(b.row_sum),
        })
        .unwrap_or_else(|| softmax_tolerance(cols, SoftmaxVariant::ThreePass, SoftmaxDtype::F32))
}

/// The integer parameter `name` of `case` (the contract lists it).
fn int_param(contract: &Contract, case: &RawCase, name: &str) -> Option<usize> {
    let at = contract.params.iter().position(|p| p.name == name)?;
    case.params.get(at).copied().and_then(Value::as_int).and_then(|v| usize::try_from(v).ok())
}

fn softmax_rows(contract: &Contract, case: &RawCase, got: &[Array]) -> Verdict {
    let (Some(Array::Float32(input)), Some(Array::Float64(exact)), Some(Array::Float32(out))) =
        (case.inputs.first(), case.expected.first(), got.first())
    else {
        return match (case.expected.first(), got.first()) {
            (Some(e), Some(g)) if e.dtype() != g.dtype() && !matches!(g, Array::Float32(_)) => type_mismatch(e, g),
            _ => Verdict::fail("float32 logits, float64 exact values, float32 output", "other types", "case data"),
        };
    };
    let (Some(rows), Some(cols)) = (int_param(contract, case, "rows"), int_param(contract, case, "cols")) else {
        return Verdict::fail("parameters rows and cols", "missing", "case data");
    };
    if rows.checked_mul(cols) != Some(input.len()) || exact.len() != input.len() {
        return Verdict::fail(format!("{rows}x{cols} logits and exact values"), input.len(), "case data");
    }
    if out.len() != exact.len() {
        return Verdict::fail(format!("{} elements", exact.len()), format!("{} elements", out.len()), contract.what);
    }
    let tol = softmax_user_tolerance(cols);
    for r in 0..rows {
        let row = r * cols..(r + 1) * cols;
        let m = input[row.clone()].iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
        let mut sum = 0.0f64;
        for i in row {
            let (x, g) = (input[i], out[i] as f64);
            if x == f32::NEG_INFINITY {
                // As the sweep: +0 or -0.
                if g != 0.0 {
                    return Verdict::fail_at(i, "0 (masked logit)", format!("{g:e}"), "masked logit");
                }
                continue;
            }
            if !tol.allows(exact[i], x as f64 - m, g) {
                return Verdict::fail_at(
                    i,
                    format!("{:e} +- {:e}", exact[i], tol.element_bound(exact[i], x as f64 - m)),
                    format!("{g:e}"),
                    "probability within the declared tolerance",
                );
            }
            sum += g;
        }
        // An all-masked row has no sum to check (every element was 0).
        if m > f64::NEG_INFINITY && (sum - 1.0).abs() > tol.row_sum {
            return Verdict::fail_at(r, format!("1 +- {:e}", tol.row_sum), format!("{sum:.12}"), "row sum");
        }
    }
    Verdict::Pass
}

fn float_sum(contract: &Contract, case: &RawCase, got: &[Array]) -> Verdict {
    let (Some(Array::Float32(input)), Some(Array::Float32(out))) = (case.inputs.first(), got.first()) else {
        return match (case.expected.first(), got.first()) {
            (Some(e), Some(g)) if !matches!(g, Array::Float32(_)) => type_mismatch(e, g),
            _ => Verdict::fail("float32 input and output", "other types", "case data"),
        };
    };
    let [result] = out.as_slice() else {
        return Verdict::fail("1 elements", format!("{} elements", out.len()), contract.what);
    };
    if !result.is_finite() {
        return Verdict::fail("a finite sum (the input is finite)", format!("{result:e}"), contract.what);
    }
    let (error, sum_abs) = match error_of(input.iter().map(|&x| x as f64), *result) {
        Ok(v) => v,
        Err(e) => return Verdict::fail("an exact sum", e, "model"),
    };
    let bound = order_free_bound(input.len(), sum_abs);
    if error.abs() <= bound {
        return Verdict::Pass;
    }
    let exact_sum = case.expected.first().and_then(|e| match e {
        Array::Float64(v) => v.first().copied(),
        _ => None,
    });
    Verdict::fail(
        format!(
            "{} with |error| <= {bound:e} (order-free bound, n {}, sum|x| {sum_abs:e})",
            exact_sum.map(|s| format!("{s:e}")).unwrap_or_else(|| "the exact sum".into()),
            input.len()
        ),
        format!("{result:e} (error {error:e})"),
        contract.what,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::primitive::Primitive;
    use crate::sweep::raw::contract;

    #[test]
    fn the_user_tolerance_is_at_least_every_variants_at_that_width() {
        for cols in [1, 33, 4097, 131_072] {
            let user = softmax_user_tolerance(cols);
            for v in SoftmaxVariant::ALL.into_iter().filter(|v| cols <= v.max_cols()) {
                let t = softmax_tolerance(cols, v, SoftmaxDtype::F32);
                assert!(user.relative >= t.relative && user.per_shift >= t.per_shift, "{cols} {}", v.name());
                assert!(user.absolute >= t.absolute && user.row_sum >= t.row_sum, "{cols} {}", v.name());
            }
        }
    }

    fn softmax_case(x: Vec<f32>, exact: Vec<f64>, rows: i32, cols: i32) -> RawCase {
        RawCase {
            inputs: vec![Array::Float32(x)],
            params: vec![Value::Int32(rows), Value::Int32(cols)],
            expected: vec![Array::Float64(exact)],
        }
    }

    #[test]
    fn an_all_masked_row_must_be_zeros_and_a_masked_logit_exactly_zero() {
        let c = contract(Primitive::Softmax, "rows.f32").expect("contract");
        let ninf = f32::NEG_INFINITY;
        let case = softmax_case(vec![ninf, ninf, 0.0, ninf], vec![0.0, 0.0, 1.0, 0.0], 2, 2);
        assert!(c.compare(&case, &[Array::Float32(vec![0.0, -0.0, 1.0, 0.0])]).passed());
        let v = c.compare(&case, &[Array::Float32(vec![0.0, f32::NAN, 1.0, 0.0])]);
        assert_eq!(v, Verdict::fail_at(1, "0 (masked logit)", "NaN", "masked logit"));
        let Verdict::Fail(m) = c.compare(&case, &[Array::Float32(vec![0.0, 0.0, 0.99, 0.0])]) else {
            panic!("a probability 1 % off passed")
        };
        assert_eq!((m.index, m.what.as_str()), (Some(2), "probability within the declared tolerance"));
    }

    #[test]
    fn a_float_sum_outside_the_bound_or_not_finite_fails() {
        let c = contract(Primitive::FloatReduce, "sum.f32").expect("contract");
        let case = RawCase::new(vec![Array::Float32(vec![1e8, 1.0, -1e8])], vec![Array::Float64(vec![1.0])]);
        // (1e8 + 1) - 1e8 = 0 in f32: inside (n-1) u/(1+u) sum|x| = 2u (2e8 + 1).
        assert!(c.compare(&case, &[Array::Float32(vec![0.0])]).passed());
        assert!(c.compare(&case, &[Array::Float32(vec![1.0])]).passed());
        assert!(!c.compare(&case, &[Array::Float32(vec![100.0])]).passed());
        assert!(!c.compare(&case, &[Array::Float32(vec![f32::NAN])]).passed());
        assert!(!c.compare(&case, &[Array::Float32(vec![0.0, 0.0])]).passed());
    }
}

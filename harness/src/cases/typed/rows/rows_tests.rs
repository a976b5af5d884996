//! Row contracts: names, resolution, the models against an independent
//! float64 reference, the families' intent, and the comparison of kernels
//! simulated on the host: correct ones pass every case, planted bugs fail
//! on the family made for them.

use super::catalogue::{family_names, make};
use super::families::{offset_of, CONSTANTS, IGNORE_INDEX};
use super::model::{loss_row, norm_row, reduce, RowLoss};
use super::parts::{Reduction, RowKind};
use super::*;
use crate::cases::rules;
use crate::cases::typed::families::{float_array, float_values};
use crate::cases::typed::Request;
use crate::sweep::case::Verdict;
use crate::sweep::raw::{Array, RawCase, RawSpec, Value};
use crate::sweep::SweepPlan;

fn contract(name: &str) -> &'static Contract {
    rules::contract(ROW_PRIMITIVE, name).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn row(name: &str) -> &'static RowContract {
    of(contract(name)).unwrap_or_else(|| panic!("{name} is a row contract"))
}

fn roles(buffers: &[Buffer]) -> Vec<&str> {
    buffers.iter().map(|b| b.role).collect()
}

#[test]
fn names_state_every_part_round_trip_and_lay_out_the_buffers() {
    for name in [
        "layernorm.f32.f32",
        "layernorm.bf16.bf16.affine.stats",
        "layernorm.f16.f32.acc_f64.eps_1e-6",
        "rmsnorm.bf16.bf16.affine.eps_opmath",
        "rmsnorm.f32.f32.stats.rtol_1e-4.atol_0e0",
        "cross_entropy.f32.f32.mean",
        "cross_entropy.bf16.f32.none",
        "cross_entropy.f16.f16.sum.acc_f16",
    ] {
        let r = row(name);
        assert_eq!((r.contract.name, r.parts.name()), (name, name.to_string()));
        assert!(!r.contract.summary.is_empty() && r.rule_words.contains("atol"));
    }
    let ln = &row("layernorm.bf16.bf16.affine.stats").contract;
    assert_eq!((roles(ln.inputs), roles(ln.outputs)), (vec!["in", "gamma", "beta"], vec!["out", "mean", "rstd"]));
    assert_eq!(ln.params.iter().map(|p| (p.name, p.dtype)).collect::<Vec<_>>().last(), Some(&("eps", Dtype::Float32)));
    assert_eq!(ln.outputs[1].dtype, Dtype::Float32, "statistics are float32");
    let rms = &row("rmsnorm.f32.f32.affine.stats").contract;
    assert_eq!((roles(rms.inputs), roles(rms.outputs)), (vec!["in", "gamma"], vec!["out", "rstd"]));
    let ce = &row("cross_entropy.bf16.f32.none").contract;
    assert_eq!((roles(ce.inputs), roles(ce.outputs)), (vec!["in", "target"], vec!["loss"]));
    assert_eq!(
        (ce.inputs[1].dtype, ce.params[2].name, ce.params[2].dtype),
        (Dtype::Int64, "ignore_index", Dtype::Int64)
    );
    assert_eq!(row("cross_entropy.f32.f32.mean").contract.outputs[0].len, Len::One);
    assert_eq!(ce.outputs[0].len, Len::PerCase);
}

#[test]
fn bad_names_are_refused_with_what_to_write() {
    let refused = |name: &str| rules::contract(ROW_PRIMITIVE, name).expect_err(name);
    assert!(refused("layernorm.float32.f32").contains("write layernorm.f32.f32"));
    assert!(refused("layernorm.f32.f32.stats.affine").contains("write layernorm.f32.f32.affine.stats"));
    assert!(refused("layernorm.f32.f32.eps_1e-5").contains("write layernorm.f32.f32"));
    assert!(refused("layernorm.i32.f32").contains("float32, bfloat16 or float16"));
    assert!(refused("layernorm").contains("names its types"));
    assert!(refused("cross_entropy.f32.f32").contains("its reduction"));
    assert!(refused("cross_entropy.f32.f32.avg").contains("unknown reduction 'avg'"));
    assert!(refused("cross_entropy.f32.f32.mean.affine").contains("no affine"));
    assert!(refused("layernorm.f32.f32.mean").contains("unknown part 'mean'"));
    assert!(refused("rmsnorm.f32.f32.eps_0e0").contains("positive"));
    let elsewhere = rules::contract(Primitive::Scan, "layernorm.f32.f32").expect_err("not a scan's");
    assert!(elsewhere.contains("a contract of primitive layernorm"), "{elsewhere}");
}

#[test]
fn a_row_kind_is_a_primitive_users_name_and_a_request_composes_its_contract() {
    let named = Named::parse("layernorm").expect("a row kind");
    assert_eq!((named.primitive, named.rows), (Primitive::Softmax, Some(RowKind::LayerNorm)));
    assert_eq!(Named::parse("scan").map(|n| n.rows), Some(None));
    assert!(Named::parse("layer_norm").is_none() && Named::names().contains("cross_entropy"));
    assert_eq!(named.contract(None), Ok(Some("layernorm".into())));
    assert_eq!(named.contract(Some("layernorm.f32.f32")), Ok(Some("layernorm.f32.f32".into())));
    assert!(named.contract(Some("rows.f32")).expect_err("softmax's").contains("not 'rows.f32'"));
    let request = |dtype: &str| Request { dtype_in: Some(dtype.into()), ..Request::default() };
    let composed = |kind: &str, dtype: &str, framework: Option<&str>| {
        rules::contract_requested(ROW_PRIMITIVE, Some(kind), Some(&request(dtype)), framework).expect(kind)
    };
    assert_eq!(composed("rmsnorm", "bfloat16", None).0.name, "rmsnorm.bf16.bf16");
    assert_eq!(composed("cross_entropy", "float16", None).0.name, "cross_entropy.f16.f16.mean");
    // torch's RMS norm takes float32's epsilon (its opmath type), for bfloat16 too: not
    // finfo(bfloat16).eps = 2^-7, which failed PyTorch's own bf16 RMS norm on the H100.
    // Its layer norm and cross-entropy are ours.
    let (torch, note) = composed("rmsnorm", "bfloat16", Some("torch"));
    assert_eq!(torch.name, "rmsnorm.bf16.bf16.eps_opmath");
    assert!(note.expect("a note").contains("torch's rule"));
    assert_eq!(row(torch.name).parts.eps_value(), 2f32.powi(-23));
    let (same, note) = composed("layernorm", "float32", Some("torch"));
    assert_eq!(same.name, "layernorm.f32.f32");
    assert!(note.expect("a note").contains("no named rule"));
    let wrong = Request { op: Some("sum".into()), ..request("float32") };
    assert!(rules::contract_requested(ROW_PRIMITIVE, Some("layernorm"), Some(&wrong), None).is_err());
}

// ---- the models against a float64 reference written apart ------------------------------------

/// Layer norm in plain f64, two passes.
fn layernorm_f64(x: &[f64], gamma: &[f64], beta: &[f64], eps: f64) -> (Vec<f64>, f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    let rstd = 1.0 / (var + eps).sqrt();
    let y = x.iter().enumerate().map(|(c, v)| (v - mean) * rstd * gamma[c] + beta[c]).collect();
    (y, mean, rstd)
}

/// RMS norm in plain f64.
fn rmsnorm_f64(x: &[f64], gamma: &[f64], eps: f64) -> Vec<f64> {
    let ms = x.iter().map(|v| v * v).sum::<f64>() / x.len() as f64;
    x.iter().enumerate().map(|(c, v)| v / (ms + eps).sqrt() * gamma[c]).collect()
}

/// Cross-entropy of one row in plain f64, shifted by the maximum.
fn loss_f64(x: &[f64], t: usize) -> f64 {
    let m = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let s: f64 = x.iter().map(|v| (v - m).exp()).sum();
    s.ln() - (x[t] - m)
}

fn close(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() <= 1e-12 * (1.0 + b.abs()), "{what}: model {a:e}, reference {b:e}");
}

#[test]
fn the_norm_models_agree_with_a_float64_reference_on_small_rows() {
    let rows: [&[f64]; 4] = [&[1.0, 2.0, 4.0], &[-0.5, 0.25, 3.0, -7.0, 0.125], &[2.5], &[3.0, -1.0]];
    for x in rows {
        let gamma: Vec<f64> = (0..x.len()).map(|c| 0.5 + c as f64).collect();
        let beta: Vec<f64> = (0..x.len()).map(|c| c as f64 - 1.0).collect();
        let eps = 1e-5f32;
        let model = norm_row(RowKind::LayerNorm, x, (Some(&gamma[..]), Some(&beta[..])), eps);
        let (y, mean, rstd) = layernorm_f64(x, &gamma, &beta, f64::from(eps));
        model.out.iter().zip(&y).for_each(|(m, r)| close(m.exact, *r, "layernorm"));
        close(model.mean.exact, mean, "mean");
        close(model.rstd.exact, rstd, "rstd");
        let rms = norm_row(RowKind::RmsNorm, x, (Some(&gamma[..]), None), eps);
        rms.out.iter().zip(rmsnorm_f64(x, &gamma, f64::from(eps))).for_each(|(m, r)| close(m.exact, r, "rmsnorm"));
    }
    // A row of one element: variance 0, the output is beta.
    let one = norm_row(RowKind::LayerNorm, &[7.0], (Some(&[2.0][..]), Some(&[0.5][..])), 1e-5);
    assert_eq!((one.out[0].exact, one.mean.exact), (0.5, 7.0));
}

#[test]
fn the_cross_entropy_model_agrees_with_a_float64_reference_and_states_its_rules() {
    let x = [0.5, -1.25, 3.0, 2.0];
    for t in 0..4 {
        let got = loss_row(&x, t as i64, IGNORE_INDEX).expect("valid").loss.expect("counted").to_f64();
        close(got, loss_f64(&x, t), "loss");
    }
    assert_eq!(loss_row(&x, IGNORE_INDEX, IGNORE_INDEX).expect("valid").loss, None);
    assert!(loss_row(&x, 4, IGNORE_INDEX).is_err() && loss_row(&x, -1, IGNORE_INDEX).is_err());
    let masked = [f64::NEG_INFINITY, 1.0, 2.0];
    assert_eq!(loss_row(&masked, 0, IGNORE_INDEX).expect("valid").loss.map(|l| l.hi), Some(f64::INFINITY));
    close(
        loss_row(&masked, 2, IGNORE_INDEX).expect("valid").loss.expect("counted").to_f64(),
        loss_f64(&[1.0, 2.0], 1),
        "masked",
    );
    // Extreme logits: the model shifts exactly.
    close(
        loss_row(&[1e4, 1e4 - 3.0], 1, -100).expect("valid").loss.expect("counted").to_f64(),
        loss_f64(&[0.0, -3.0], 1),
        "1e4",
    );
    // The normaliser agrees with the softmax model's 192-bit one.
    for row in [vec![0.5f32, -1.25, 3.0, 2.0], vec![1e4, 1e4 - 3.0, -1e4, 9999.5], vec![1e-40, -2e-39, 0.0]] {
        let exact = ::model::softmax::normaliser_exact_f32(&row).expect("finite");
        let x: Vec<f64> = row.iter().map(|&v| f64::from(v)).collect();
        let got = loss_row(&x, 1, IGNORE_INDEX).expect("valid").loss.expect("counted").to_f64();
        let want = (exact.m - x[1]) + exact.d.ln();
        assert!((got - want).abs() <= 1e-14 * (1.0 + want.abs()), "{row:?}: {got:e} vs {want:e}");
    }
    let losses: Vec<RowLoss> = [(0, 1.0), (IGNORE_INDEX, 2.0), (1, 5.0)]
        .iter()
        .map(|&(t, v)| loss_row(&[v, 0.0], t, IGNORE_INDEX).expect("valid"))
        .collect();
    let counted = [loss_f64(&[1.0, 0.0], 0), loss_f64(&[5.0, 0.0], 1)];
    close(reduce(&losses, Reduction::Mean)[0].exact, (counted[0] + counted[1]) / 2.0, "mean over the counted rows");
    close(reduce(&losses, Reduction::Sum)[0].exact, counted[0] + counted[1], "sum");
    let none = reduce(&losses, Reduction::None);
    assert!(none[1].zero && !none[0].zero && none.len() == 3);
    let ignored = vec![loss_row(&[1.0], IGNORE_INDEX, IGNORE_INDEX).expect("valid"); 3];
    assert!(reduce(&ignored, Reduction::Mean)[0].exact.is_nan());
    assert_eq!(reduce(&ignored, Reduction::Sum)[0].exact, 0.0);
}

#[test]
fn an_offset_row_keeps_its_digits_in_the_model() {
    // 1e4 + k: float64 two-pass is exact here (small integers), so the model must match it exactly.
    let x: Vec<f64> = (0..33).map(|i| 1e4 + ((i * 7) % 19) as f64 - 9.0).collect();
    let ones = vec![1.0; x.len()];
    let zeros = vec![0.0; x.len()];
    let model = norm_row(RowKind::LayerNorm, &x, (Some(&ones[..]), Some(&zeros[..])), 1e-5);
    let (y, _, rstd) = layernorm_f64(&x, &ones, &zeros, f64::from(1e-5f32));
    close(model.rstd.exact, rstd, "rstd");
    model.out.iter().zip(&y).for_each(|(m, r)| close(m.exact, *r, "offset"));
}

// ---- the families' intent ----------------------------------------------------------------------

fn plan() -> SweepPlan {
    SweepPlan::of_primitive(ROW_PRIMITIVE, &[], 0x5eed)
}

fn cases_of(name: &str) -> Vec<RawSpec> {
    rules::with_catalogue(&plan(), ROW_PRIMITIVE, contract(name), "user")
}

fn family(name: &str, family: &str) -> Vec<(RawSpec, RawCase)> {
    let specs = cases_of(name).into_iter().filter(|s| s.id.family == family);
    specs
        .map(|s| {
            let case = (s.make)().expect("made");
            (s, case)
        })
        .collect()
}

fn shape(case: &RawCase) -> (usize, usize) {
    let int = |k: usize| case.params[k].as_int().expect("int") as usize;
    (int(0), int(1))
}

#[test]
fn every_case_is_a_softmax_row_block_named_by_its_kind() {
    let specs = cases_of("layernorm.f32.f32.affine.stats");
    assert_eq!(specs.len(), 14 * family_names(RowKind::LayerNorm).len());
    let first = &specs[0].id;
    assert_eq!(
        (first.primitive.as_str(), first.variant.as_str()),
        ("layernorm", "user.layernorm.f32.f32.affine.stats")
    );
    assert_eq!((first.size.as_str(), first.n), ("61x1", 61));
    assert!(specs.iter().any(|s| s.id.size == "2x131072"));
    let sanitizer = SweepPlan::sanitizer(ROW_PRIMITIVE, &[], 1, &[]);
    let one = rules::with_catalogue(&sanitizer, ROW_PRIMITIVE, contract("cross_entropy.f32.f32.none"), "u");
    assert!(one.len() == 4 && one.iter().all(|s| s.id.family == "uniform_logits"));
    assert_eq!(rules::case_sizes(ROW_PRIMITIVE, contract("rmsnorm.f32.f32"), &[]).len(), 14);
}

#[test]
fn constant_rows_have_variance_zero_in_float32_in_any_order() {
    for (spec, case) in family("layernorm.f32.f32", "constant") {
        let (rows, cols) = shape(&case);
        let Array::Float32(x) = &case.inputs[0] else { panic!("f32") };
        for r in 0..rows {
            let row = &x[r * cols..(r + 1) * cols];
            assert!(CONSTANTS.contains(&f64::from(row[0])) && row.iter().all(|&v| v == row[0]), "{}", spec.id.key());
            // Forward, backward and pairwise float32 sums are all exactly cols * c, so the mean is c.
            let forward: f32 = row.iter().sum();
            let backward: f32 = row.iter().rev().sum();
            assert_eq!(
                (forward, backward, pairwise(row)),
                (row[0] * cols as f32, row[0] * cols as f32, row[0] * cols as f32)
            );
            assert_eq!(forward / cols as f32, row[0]);
        }
        let Array::Float64(y) = &case.expected[0] else { panic!("f64") };
        assert!(y.iter().all(|&v| v == 0.0), "a constant row normalises to 0 (no affine)");
    }
}

fn pairwise(x: &[f32]) -> f32 {
    if x.len() <= 8 {
        return x.iter().sum();
    }
    let (a, b) = x.split_at(x.len() / 2);
    pairwise(a) + pairwise(b)
}

/// E[x^2] - E[x]^2 of a row in float32 (pairwise sums, as NumPy's).
fn one_pass_var(row: &[f32]) -> f32 {
    let n = row.len() as f32;
    let squares: Vec<f32> = row.iter().map(|v| v * v).collect();
    let mean = pairwise(row) / n;
    pairwise(&squares) / n - mean * mean
}

#[test]
fn offset_rows_cancel_every_digit_of_a_one_pass_float32_variance() {
    let (c, _) = offset_of(Dtype::Float32);
    assert_eq!(c, 1e4);
    let r = row("layernorm.f32.f32");
    for (spec, case) in family("layernorm.f32.f32", "offset").into_iter().filter(|(s, _)| s.id.n >= 33 * 61) {
        let (rows, cols) = shape(&case);
        let Array::Float32(x) = &case.inputs[0] else { panic!("f32") };
        let elems = super::catalogue::expected_elems(&r.parts, &case).expect("elems");
        // The one-pass variance is off by more than the whole tolerance of some output of the row.
        let bound = r.parts.bound();
        let wrong_rows = (0..rows)
            .filter(|&row| {
                let slice = &x[row * cols..(row + 1) * cols];
                let values: Vec<f64> = slice.iter().map(|&v| f64::from(v)).collect();
                let exact = norm_row(RowKind::LayerNorm, &values, (None, None), 1e-5);
                let var = one_pass_var(slice);
                let rstd = 1.0 / (f64::from(var) + f64::from(1e-5f32)).max(0.0).sqrt();
                let ratio = rstd / exact.rstd.exact - 1.0;
                // Some output of the row moves past its whole tolerance with that rstd.
                let moved = elems[0][row * cols..(row + 1) * cols].iter().any(|e| {
                    let moved = (ratio * e.exact).abs();
                    moved.is_nan() || moved > bound.allowed(e.exact, e.scale)
                });
                var < 0.0 || moved
            })
            .count();
        assert!(wrong_rows > rows / 2, "{}: only {wrong_rows} of {rows} rows cancel", spec.id.key());
    }
}

#[test]
fn every_family_makes_finite_inputs_except_where_a_rule_defines_them() {
    for name in ["layernorm.bf16.bf16.affine", "rmsnorm.f16.f16", "cross_entropy.f32.f32.none"] {
        for spec in cases_of(name) {
            let case = (spec.make)().expect("made");
            let values = float_values(&case.inputs[0]).expect("float");
            let neg_inf = values.iter().filter(|v| **v == f64::NEG_INFINITY).count();
            assert!(values.iter().all(|v| !v.is_nan() && *v != f64::INFINITY), "{}", spec.id.key());
            let allowed = ["masked_logits", "target_neg_inf"].contains(&spec.id.family.as_str());
            assert!(neg_inf == 0 || allowed, "{}: -inf in a family without a rule for it", spec.id.key());
            let expected = float_values(&case.expected[0]).expect("f64");
            let rule = ["target_neg_inf", "all_ignored"].contains(&spec.id.family.as_str());
            assert!(expected.iter().all(|v| v.is_finite()) || rule, "{}", spec.id.key());
        }
    }
    // The target -inf family gives +inf losses, the all-ignored one a NaN mean.
    let inf = family("cross_entropy.f32.f32.none", "target_neg_inf");
    assert!(inf.iter().any(|(_, c)| float_values(&c.expected[0]).expect("f64").contains(&f64::INFINITY)));
    let nan = family("cross_entropy.f32.f32.mean", "all_ignored");
    assert!(nan.iter().all(|(_, c)| float_values(&c.expected[0]).expect("f64")[0].is_nan()));
    // Ignored rows: some, never all, and row 0 always counted.
    for (_, case) in family("cross_entropy.f32.f32.mean", "ignored_rows") {
        let Array::Int64(t) = &case.inputs[1] else { panic!("int64") };
        assert!(t[0] != IGNORE_INDEX && t.len() > 1 && t[t.len() - 1] == IGNORE_INDEX);
        assert_eq!(case.params[2], Value::Int64(IGNORE_INDEX));
    }
}

// ---- kernels simulated on the host ---------------------------------------------------------------

/// A block-style float32 sum: 256 lanes each summing a strided slice in order, then a pairwise tree.
fn block_sum(values: impl Fn(usize) -> f32, n: usize) -> f32 {
    let mut lanes = [0f32; 256];
    for (lane, acc) in lanes.iter_mut().enumerate() {
        let mut i = lane;
        while i < n {
            *acc += values(i);
            i += 256;
        }
    }
    pairwise(&lanes)
}

/// The output type's rounding of a float32 result.
fn rounded(dtype: Dtype, values: Vec<f32>) -> Array {
    float_array(dtype, values.into_iter().map(f64::from).collect())
}

fn f32s(a: &Array) -> Vec<f32> {
    float_values(a).expect("float").into_iter().map(|v| v as f32).collect()
}

/// What a norm kernel writes for a case.
type NormKernel = fn(&[f32], Option<&[f32]>, Option<&[f32]>, f32) -> (Vec<f32>, f32, f32);

/// A correct two-pass layer norm in float32.
fn layernorm_two_pass(x: &[f32], g: Option<&[f32]>, b: Option<&[f32]>, eps: f32) -> (Vec<f32>, f32, f32) {
    let n = x.len();
    let mean = block_sum(|i| x[i], n) / n as f32;
    let var = block_sum(|i| (x[i] - mean) * (x[i] - mean), n) / n as f32;
    let rstd = 1.0 / (var + eps).sqrt();
    let y = (0..n).map(|c| (x[c] - mean) * rstd * g.map_or(1.0, |g| g[c]) + b.map_or(0.0, |b| b[c])).collect();
    (y, mean, rstd)
}

/// The one-pass layer norm: var = E[x^2] - E[x]^2 in float32 (clamped at 0 as some kernels do).
fn layernorm_one_pass(x: &[f32], g: Option<&[f32]>, b: Option<&[f32]>, eps: f32) -> (Vec<f32>, f32, f32) {
    let n = x.len();
    let mean = block_sum(|i| x[i], n) / n as f32;
    let var = (block_sum(|i| x[i] * x[i], n) / n as f32 - mean * mean).max(0.0);
    let rstd = 1.0 / (var + eps).sqrt();
    let y = (0..n).map(|c| (x[c] - mean) * rstd * g.map_or(1.0, |g| g[c]) + b.map_or(0.0, |b| b[c])).collect();
    (y, mean, rstd)
}

/// The layer norm without eps: rsqrt(var).
fn layernorm_no_eps(x: &[f32], g: Option<&[f32]>, b: Option<&[f32]>, _: f32) -> (Vec<f32>, f32, f32) {
    layernorm_two_pass(x, g, b, 0.0)
}

/// A layer norm whose mean accumulates in bfloat16 (each partial sum rounded to bfloat16).
fn layernorm_bf16_mean(x: &[f32], g: Option<&[f32]>, b: Option<&[f32]>, eps: f32) -> (Vec<f32>, f32, f32) {
    let bf16 = |v: f32| half::bf16::from_f32(v).to_f32();
    let n = x.len();
    let mean = bf16(x.iter().fold(0f32, |s, &v| bf16(s + v)) / n as f32);
    let var = block_sum(|i| (x[i] - mean) * (x[i] - mean), n) / n as f32;
    let rstd = 1.0 / (var + eps).sqrt();
    let y = (0..n).map(|c| (x[c] - mean) * rstd * g.map_or(1.0, |g| g[c]) + b.map_or(0.0, |b| b[c])).collect();
    (y, mean, rstd)
}

/// A correct RMS norm in float32.
fn rmsnorm_f32(x: &[f32], g: Option<&[f32]>, _: Option<&[f32]>, eps: f32) -> (Vec<f32>, f32, f32) {
    let n = x.len();
    let rstd = 1.0 / (block_sum(|i| x[i] * x[i], n) / n as f32 + eps).sqrt();
    (x.iter().enumerate().map(|(c, v)| v * rstd * g.map_or(1.0, |g| g[c])).collect(), f32::NAN, rstd)
}

/// Runs a norm kernel on every row of `case` as `r`'s outputs.
fn run_norm(r: &RowContract, case: &RawCase, kernel: NormKernel) -> Vec<Array> {
    let (rows, cols) = shape(case);
    let x = f32s(&case.inputs[0]);
    let g = case.inputs.get(1).map(f32s);
    let b = case.inputs.get(2).map(f32s);
    let Value::Float32(eps) = case.params[2] else { panic!("eps") };
    let (mut y, mut mean, mut rstd) = (Vec::new(), Vec::new(), Vec::new());
    for row in 0..rows {
        let (out, m, s) = kernel(&x[row * cols..(row + 1) * cols], g.as_deref(), b.as_deref(), eps);
        y.extend(out);
        mean.push(m);
        rstd.push(s);
    }
    let mut outputs = vec![rounded(r.parts.dtype_out, y)];
    if r.parts.stats && r.parts.kind == RowKind::LayerNorm {
        outputs.push(Array::Float32(mean));
    }
    if r.parts.stats {
        outputs.push(Array::Float32(rstd));
    }
    outputs
}

/// Every case's verdict under `kernel`, with the failing cases' ids.
fn verdicts(name: &str, run: impl Fn(&RowContract, &RawCase) -> Vec<Array>) -> Vec<(String, Verdict)> {
    let r = row(name);
    cases_of(name)
        .into_iter()
        .map(|spec| {
            let case = (spec.make)().expect("made");
            let got = run(r, &case);
            (format!("{} {}", spec.id.size, spec.id.family), rules::compare(&r.contract, &case, &got))
        })
        .collect()
}

fn failing(verdicts: &[(String, Verdict)]) -> Vec<String> {
    verdicts.iter().filter(|(_, v)| !v.passed()).map(|(id, v)| format!("{id}: {v:?}")).collect()
}

#[test]
fn correct_float32_norms_pass_every_case_of_every_type() {
    for name in [
        "layernorm.f32.f32.affine.stats",
        "layernorm.bf16.bf16.affine",
        "layernorm.f16.f32",
        "rmsnorm.f32.f32.affine.stats",
        "rmsnorm.bf16.bf16",
        "rmsnorm.f16.f16.affine",
    ] {
        let kernel: NormKernel = if name.starts_with("layer") { layernorm_two_pass } else { rmsnorm_f32 };
        let bad = failing(&verdicts(name, |r, case| run_norm(r, case, kernel)));
        assert!(bad.is_empty(), "{name}: {bad:#?}");
    }
    assert!(rules::take_accuracy().is_some_and(|(ratio, line)| ratio <= 1.0 && line.contains("of its tolerance")));
}

#[test]
fn planted_norm_bugs_fail_on_their_families() {
    let families = |name: &str, kernel: NormKernel| -> Vec<String> {
        let v = verdicts(name, |r, case| run_norm(r, case, kernel));
        v.into_iter()
            .filter(|(_, v)| !v.passed())
            .map(|(id, _)| id.split(' ').nth(1).unwrap_or("").to_string())
            .collect()
    };
    let one_pass = families("layernorm.f32.f32", layernorm_one_pass);
    assert!(one_pass.iter().any(|f| f == "offset"), "{one_pass:?}");
    let no_eps = families("layernorm.f32.f32.affine", layernorm_no_eps);
    assert!(no_eps.iter().any(|f| f == "constant"), "{no_eps:?}");
    let bf16_mean = families("layernorm.bf16.bf16", layernorm_bf16_mean);
    assert!(bf16_mean.iter().any(|f| f == "uniform"), "{bf16_mean:?}");
    // The one-pass failure line names the case, the element and the tolerance.
    let r = row("layernorm.f32.f32");
    let (spec, case) =
        family("layernorm.f32.f32", "offset").into_iter().find(|(s, _)| s.id.size == "61x33").expect("61x33");
    let Verdict::Fail(m) = rules::compare(&r.contract, &case, &run_norm(r, &case, layernorm_one_pass)) else {
        panic!("fails")
    };
    let line = crate::sweep::case::failure_line(&spec.id, &m);
    assert!(
        line.starts_with("layernorm/user.layernorm.f32.f32 n=61x33 seed=") && line.contains("family=offset"),
        "{line}"
    );
    assert!(line.contains("check=layernorm within atol + rtol |exact| + rtol_acc scale"), "{line}");
    let summary = rules::mismatch_lines(&r.contract, &case, &run_norm(r, &case, layernorm_one_pass));
    assert!(summary[0].starts_with("failing elements of out: "), "{summary:?}");
}

/// What a cross-entropy kernel computes for one row (None: ignored).
type LossKernel = fn(&[f32], i64) -> Option<f32>;

fn loss_shifted(x: &[f32], t: i64) -> Option<f32> {
    let t = usize::try_from(t).ok()?;
    let m = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let s = block_sum(|i| (x[i] - m).exp(), x.len());
    Some(-((x[t] - m) - s.ln()))
}

fn loss_unshifted(x: &[f32], t: i64) -> Option<f32> {
    let t = usize::try_from(t).ok()?;
    let s = block_sum(|i| x[i].exp(), x.len());
    Some(s.ln() - x[t])
}

/// Runs a cross-entropy on `case`; `count_ignored` divides the mean by every row.
fn run_loss(r: &RowContract, case: &RawCase, kernel: LossKernel, count_ignored: bool) -> Vec<Array> {
    let (rows, cols) = shape(case);
    let x = f32s(&case.inputs[0]);
    let Array::Int64(targets) = &case.inputs[1] else { panic!("int64") };
    let losses: Vec<Option<f32>> =
        (0..rows).map(|row| kernel(&x[row * cols..(row + 1) * cols], targets[row])).collect();
    let out = match r.parts.reduction {
        Reduction::None => losses.iter().map(|l| l.unwrap_or(0.0)).collect(),
        reduction => {
            let counted: Vec<f32> = losses.iter().flatten().copied().collect();
            let sum = block_sum(|i| counted[i], counted.len());
            let k = if count_ignored { rows } else { counted.len() };
            vec![if reduction == Reduction::Mean { sum / k as f32 } else { sum }]
        }
    };
    vec![rounded(r.parts.dtype_out, out)]
}

#[test]
fn a_correct_cross_entropy_passes_and_planted_bugs_fail_on_their_families() {
    for name in [
        "cross_entropy.f32.f32.none",
        "cross_entropy.f32.f32.mean",
        "cross_entropy.bf16.bf16.sum",
        "cross_entropy.f16.f32.mean",
    ] {
        let bad = failing(&verdicts(name, |r, case| run_loss(r, case, loss_shifted, false)));
        assert!(bad.is_empty(), "{name}: {bad:#?}");
    }
    let failing_families = |name: &str, kernel: LossKernel, count_ignored: bool| -> Vec<String> {
        let v = verdicts(name, |r, case| run_loss(r, case, kernel, count_ignored));
        v.into_iter()
            .filter(|(_, v)| !v.passed())
            .map(|(id, _)| id.split(' ').nth(1).unwrap_or("").to_string())
            .collect()
    };
    let unshifted = failing_families("cross_entropy.f32.f32.none", loss_unshifted, false);
    assert!(unshifted.iter().any(|f| f == "extreme_logits"), "{unshifted:?}");
    let counted = failing_families("cross_entropy.f32.f32.mean", loss_shifted, true);
    assert!(counted.iter().any(|f| f == "ignored_rows"), "{counted:?}");
    assert!(!counted.iter().any(|f| f == "uniform_logits"), "no ignored row there: {counted:?}");
}

#[test]
fn made_cases_regenerate_the_same_data() {
    let r = row("cross_entropy.bf16.f32.none");
    let a = make(r.parts, 1, (7, 33), 42).expect("made");
    let b = make(r.parts, 1, (7, 33), 42).expect("made");
    assert_eq!(a, b);
    assert_eq!(a.inputs[0].dtype(), Dtype::Bfloat16);
}

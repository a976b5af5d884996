//! The sampler's model against values worked by hand and against a softmax written
//! independently (a stable sort of the row, then f64 probabilities from the sorted values).

use super::*;
use crate::generators::Rng;
use half::bf16;

fn spec(k: usize, temperature: f32) -> SampleSpec {
    SampleSpec { k, temperature }
}

/// Logits 0, ln 2, ln 2, -inf, 0 at T = 1: survivors (k = 3) columns 1, 2, 0 with weights
/// 2, 2, 1 (column 0 before column 4 among the zeros), so the CDF is 0.4, 0.8, 1.
#[test]
fn the_worked_example_draws_by_the_inverse_cdf() {
    let ln2 = std::f32::consts::LN_2;
    let x = [0.0f32, ln2, ln2, f32::NEG_INFINITY, 0.0];
    let rows = distributions(&x, (1, 5), spec(3, 1.0), &[0.0]).expect("valid");
    assert_eq!(rows[0].columns, vec![1, 2, 0]);
    for (i, want) in [0.4, 0.4, 0.2].into_iter().enumerate() {
        assert!((rows[0].probability(i) - want).abs() < 1e-7, "p_{i}");
    }
    for (u, column) in [(0.0f32, 1), (0.39, 1), (0.41, 2), (0.79, 2), (0.81, 0), (0.999_999_94, 0)] {
        let got = sample_rows(&x, (1, 5), spec(3, 1.0), &[u]).expect("valid");
        assert_eq!(got[0].0, column, "u = {u}");
    }
    // k = 5 keeps the -inf, which weighs 0 and is never drawn, even at the top of [0, 1).
    let rows = distributions(&x, (1, 5), spec(5, 1.0), &[0.0]).expect("valid");
    assert_eq!(rows[0].columns, vec![1, 2, 0, 4, 3]);
    assert_eq!(rows[0].probability(4), 0.0);
    assert_eq!(rows[0].draw(0.999_999_94), 3);
}

#[test]
fn the_temperature_sharpens_and_flattens() {
    let x = [1.0f32, 0.0];
    let p = |t: f32| distributions(&x, (1, 2), spec(2, t), &[0.0]).expect("valid")[0].probability(0);
    assert!((p(1.0) - 1.0 / (1.0 + (-1.0f64).exp())).abs() < 1e-15);
    // 1 / (1 + e^-100) rounds to 1 in f64; the weight itself stays exact.
    assert_eq!(p(0.01), 1.0);
    let sharp = distributions(&x, (1, 2), spec(2, 0.01), &[0.0]).expect("valid");
    assert!((sharp[0].weights[1] / (-1.0 / 0.01f32 as f64).exp() - 1.0).abs() < 1e-12);
    assert!((p(1e6) - 0.5).abs() < 1e-6);
}

/// An independent definition: sort the columns (stable, value descending), keep k, softmax
/// in f64 from the sorted values, and find u's interval by running sums of probabilities.
fn independent_draw(row: &[f32], k: usize, t: f32, u: f32) -> (i64, f64) {
    let mut order: Vec<usize> = (0..row.len()).collect();
    order.sort_by(|&a, &b| row[b].partial_cmp(&row[a]).expect("finite"));
    order.truncate(k);
    let top = row[order[0]] as f64;
    let e: Vec<f64> = order.iter().map(|&c| ((row[c] as f64 - top) / t as f64).exp()).collect();
    let sum: f64 = e.iter().sum();
    let mut below = 0.0;
    for (i, &c) in order.iter().enumerate() {
        let p = e[i] / sum;
        if (u as f64) < below + p {
            return (c as i64, p);
        }
        below += p;
    }
    let last = order.len() - 1;
    (order[last] as i64, e[last] / sum)
}

#[test]
fn draws_match_an_independent_softmax_away_from_boundaries() {
    let mut rng = Rng::new(7);
    for case in 0..200 {
        let cols = 1 + rng.index(300);
        let k = 1 + rng.index(cols);
        let t = [0.3f32, 1.0, 2.5][case % 3];
        // Few distinct values, so ties straddle the k-th.
        let row: Vec<f32> = (0..cols).map(|_| (rng.index(9) as f32 - 4.0) * 0.5).collect();
        let u = rng.unit_f64() as f32;
        let d = &distributions(&row, (1, cols), spec(k, t), &[u]).expect("valid")[0];
        let (column, p) = independent_draw(&row, k, t, u);
        let j = d.draw(u);
        // The two sum in different orders: only a u within 1e-12 of a boundary may differ.
        let near = d.cumulative.iter().any(|&c| (c / d.total() - u as f64).abs() < 1e-12);
        if !near {
            assert_eq!(d.columns[j], column, "case {case}: cols {cols} k {k} t {t} u {u}");
            assert!((d.probability(j) - p).abs() < 1e-12);
        }
        d.judge(u, column, Some(p as f32), Precision::Double).unwrap_or_else(|e| panic!("case {case}: {e}"));
    }
}

#[test]
fn judge_refuses_what_the_contract_forbids() {
    // Survivors (k = 4): columns 0, 3, 4 and the -inf at 1; column 2 is left out.
    let x = [3.0f32, f32::NEG_INFINITY, f32::NEG_INFINITY, 2.0, 1.0];
    let rows = distributions(&x, (1, 5), spec(4, 1.0), &[0.5]).expect("valid");
    let d = &rows[0];
    let j = d.draw(0.5);
    let (column, p) = (d.columns[j], d.probability(j) as f32);
    assert!(d.judge(0.5, column, Some(p), Precision::Double).is_ok());
    // Another survivor, a column outside the top k, the -inf survivor, a probability 2 ulps off.
    let other = d.columns[(j + 1) % 3];
    assert!(d.judge(0.5, other, Some(p), Precision::Double).unwrap_err().contains("CDF interval"));
    assert!(d.judge(0.5, 1, Some(p), Precision::Double).unwrap_err().contains("probability is 0"));
    let outside = (0..5).find(|c| !d.columns.contains(c)).expect("k < cols");
    assert!(d.judge(0.5, outside, Some(p), Precision::Double).unwrap_err().contains("not among"));
    let off = f32::from_bits(p.to_bits() + 2);
    assert!(d.judge(0.5, column, Some(off), Precision::Double).unwrap_err().contains("probability"));
    // Two equal logits: the boundary is 0.5 exactly, where either survivor passes; one f32
    // step above it only the second does.
    let even = &distributions(&[0.0f32, 0.0], (1, 2), spec(2, 1.0), &[0.5]).expect("valid")[0];
    assert!(even.judge(0.5, 0, Some(0.5), Precision::Double).is_ok());
    assert!(even.judge(0.5, 1, Some(0.5), Precision::Double).is_ok());
    let above = f32::from_bits(0.5f32.to_bits() + 1);
    assert!(even.judge(above, 0, Some(0.5), Precision::Double).unwrap_err().contains("CDF interval"));
    assert!(even.judge(above, 1, Some(0.5), Precision::Double).is_ok());
}

#[test]
fn refusals_come_in_the_contract_order() {
    let s = spec(2, 1.0);
    let nonfinite = |x: &[f32], shape, u: &[f32]| match distributions(x, shape, s, u) {
        Err(ModelError::NonFinite { index, .. }) => Some(index),
        _ => None,
    };
    // Row 0's +inf (its largest) comes before row 1's NaN; in one row the NaN counts first.
    let x = [1.0, f32::INFINITY, 0.0, f32::NAN, 1.0, 2.0];
    assert_eq!(nonfinite(&x, (2, 3), &[0.0, 0.0]), Some(1));
    let x = [f32::INFINITY, f32::NAN, 0.0];
    assert_eq!(nonfinite(&x, (1, 3), &[0.0]), Some(1));
    // A row of -inf has nothing to draw; it is named before a bad uniform.
    let x = [0.0, 1.0, f32::NEG_INFINITY, f32::NEG_INFINITY];
    let e = distributions(&x, (2, 2), s, &[1.0, 0.0]).unwrap_err().to_string();
    assert!(e.contains("row 1 has no finite logit"), "{e}");
    for u in [1.0f32, -0.5, f32::NAN] {
        let e = distributions(&[0.0f32, 1.0], (1, 2), s, &[u]).unwrap_err().to_string();
        assert!(e.contains("uniform of row 0"), "{e}");
    }
    for t in [0.0f32, -1.0, f32::INFINITY, f32::NAN] {
        assert!(matches!(distributions(&[0.0f32], (1, 1), spec(1, t), &[0.0]), Err(ModelError::BadSample { .. })));
    }
    assert!(matches!(distributions(&[0.0f32], (1, 1), spec(0, 1.0), &[0.0]), Err(ModelError::BadSample { .. })));
    assert!(matches!(distributions(&[0.0f32], (1, 1), spec(2, 1.0), &[0.0]), Err(ModelError::BadShape { .. })));
    assert!(matches!(distributions(&[0.0f32], (1, 1), spec(1, 1.0), &[]), Err(ModelError::BadShape { .. })));
}

#[test]
fn bf16_rows_widen_exactly() {
    let x: Vec<bf16> = [2.0f32, 1.0, 1.0, 0.5].iter().map(|&v| bf16::from_f32(v)).collect();
    let d = &distributions(&x, (1, 4), spec(3, 1.0), &[0.0]).expect("valid")[0];
    assert_eq!(d.columns, vec![0, 1, 2]);
    assert_eq!(d.weights[1], (-1.0f64).exp());
}

/// A float32 sampler as PyTorch's recipe computes it: scaled logits, exponentials and a
/// running sum in f32, the draw the first running sum above `u * S`.
fn float32_draw(d: &RowDistribution, row: &[f32], t: f32, u: f32) -> (i64, f32) {
    let values: Vec<f32> = d.columns.iter().map(|&c| row[c as usize]).collect();
    let w: Vec<f32> = values.iter().map(|&v| ((v - values[0]) / t).exp()).collect();
    let mut running = 0.0f32;
    let cumulative: Vec<f32> = w
        .iter()
        .map(|x| {
            running += x;
            running
        })
        .collect();
    let total = running;
    let j = cumulative.iter().position(|&c| u * total < c).unwrap_or(w.len() - 1);
    (d.columns[j], w[j] / total)
}

#[test]
fn a_float32_sampler_passes_at_float32_precision_even_at_the_boundaries() {
    let mut rng = Rng::new(13);
    for case in 0..400 {
        let cols = 1 + rng.index(3000);
        let k = 1 + rng.index(cols.min(2048));
        let t = [0.25f32, 1.0, 4.0][case % 3];
        let row: Vec<f32> = (0..cols).map(|_| (8.0 * rng.signed_unit_f64()) as f32).collect();
        let d = &distributions(&row, (1, cols), spec(k, t), &[0.0]).expect("valid")[0];
        // Half the uniforms on a boundary of the exact CDF, rounded to f32.
        let u = if case % 2 == 0 {
            rng.unit_f64() as f32
        } else {
            (d.cumulative[rng.index(k)] / d.total()).min(0.999_999) as f32
        };
        let (column, p) = float32_draw(d, &row, t, u);
        d.judge(u, column, Some(p), Precision::Float32)
            .unwrap_or_else(|e| panic!("case {case} (cols {cols}, k {k}, T {t}): {e}"));
    }
}

#[test]
fn float32_precision_still_catches_a_sampler_that_ignores_the_temperature() {
    let mut rng = Rng::new(17);
    let (mut caught, mut drawn) = (0, 0);
    for _ in 0..100 {
        let row: Vec<f32> = (0..64).map(|_| (4.0 * rng.signed_unit_f64()) as f32).collect();
        let u = rng.unit_f64() as f32;
        let d = &distributions(&row, (1, 64), spec(50, 0.25), &[u]).expect("valid")[0];
        let wrong = &distributions(&row, (1, 64), spec(50, 1.0), &[u]).expect("valid")[0];
        let j = wrong.draw(u);
        drawn += 1;
        if d.judge(u, wrong.columns[j], Some(wrong.probability(j) as f32), Precision::Float32).is_err() {
            caught += 1;
        }
    }
    // Every probability differs far beyond the bound; the draw itself differs in most rows.
    assert_eq!(caught, drawn);
}

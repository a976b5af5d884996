//! The model against a definition written independently of its order key: a stable sort
//! by f64 comparisons (NaN placed by hand, -0.0 == +0.0 by IEEE equality).

use super::*;
use crate::generators::Rng;
use std::cmp::Ordering;

/// The contract's order of two values, from f64 comparisons: Greater when `a` ranks first
/// in a top-k.
fn value_order(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        // -0.0 == +0.0 under IEEE comparison.
        (false, false) => a.partial_cmp(&b).expect("no NaN here"),
    }
}

/// The top-k of each row by a stable sort of the columns (index ascending among equals).
fn by_sorting<T: TopkValue>(input: &[T], rows: usize, cols: usize, spec: TopkSpec) -> (Vec<u32>, Vec<i64>) {
    let mut bits = Vec::new();
    let mut indices = Vec::new();
    for r in 0..rows {
        let row = &input[r * cols..(r + 1) * cols];
        let mut order: Vec<usize> = (0..cols).collect();
        // Stable: equal values keep the index order.
        order.sort_by(|&i, &j| {
            let ascending = value_order(row[i].to_f64(), row[j].to_f64());
            if spec.largest {
                ascending.reverse()
            } else {
                ascending
            }
        });
        for &c in order.iter().take(spec.k) {
            bits.push(row[c].bits());
            indices.push(c as i64);
        }
    }
    (bits, indices)
}

fn spec(k: usize, largest: bool, nan: TopkNan) -> TopkSpec {
    TopkSpec { k, largest, nan }
}

fn model_bits<T: TopkValue>(input: &[T], rows: usize, cols: usize, s: TopkSpec) -> (Vec<u32>, Vec<i64>) {
    let out = topk_rows(input, rows, cols, s).expect("valid input");
    (out.values.iter().map(|v| v.bits()).collect(), out.indices)
}

#[test]
fn the_seed_example_orders_ties_by_index_and_zeros_as_equal() {
    let x = [1.0f32, -0.0, 3.0, 3.0, 0.0, -2.0, 3.0];
    let out = topk_rows(&x, 1, 7, spec(5, true, TopkNan::Reject)).expect("valid");
    assert_eq!(out.indices, vec![2, 3, 6, 0, 1]);
    let out = topk_rows(&x, 1, 7, spec(3, false, TopkNan::Reject)).expect("valid");
    // -2.0, then the two zeros by index: -0.0 at 1 before +0.0 at 4.
    assert_eq!(out.indices, vec![5, 1, 4]);
    assert_eq!(out.values[1].to_bits(), (-0.0f32).to_bits(), "the value is the input element, bit for bit");
}

#[test]
fn nan_is_rejected_by_default_and_ranks_above_inf_when_asked() {
    let x = [1.0f32, f32::NAN, f32::INFINITY, f32::NAN];
    match topk_rows(&x, 2, 2, spec(1, true, TopkNan::Reject)) {
        Err(ModelError::NonFinite { index: 1, .. }) => {}
        other => panic!("expected NonFinite at 1, got {other:?}"),
    }
    let top = topk_rows(&x, 1, 4, spec(4, true, TopkNan::AboveAll)).expect("valid");
    assert_eq!(top.indices, vec![1, 3, 2, 0]);
    let bottom = topk_rows(&x, 1, 4, spec(4, false, TopkNan::AboveAll)).expect("valid");
    assert_eq!(bottom.indices, vec![0, 2, 1, 3]);
}

#[test]
fn k_zero_is_empty_and_bad_shapes_are_errors() {
    let x = [1.0f32; 6];
    assert_eq!(topk_rows(&x, 2, 3, spec(0, true, TopkNan::Reject)).expect("valid").indices.len(), 0);
    assert!(matches!(topk_rows(&x, 2, 3, spec(4, true, TopkNan::Reject)), Err(ModelError::BadShape { .. })));
    assert!(matches!(topk_rows(&x, 2, 4, spec(1, true, TopkNan::Reject)), Err(ModelError::BadShape { .. })));
    assert!(matches!(topk_rows(&x, usize::MAX, 2, spec(1, true, TopkNan::Reject)), Err(ModelError::BadShape { .. })));
}

/// Values drawn from a small set with both zeros, infinities and (when ordered) NaN, so
/// that ties straddle the k-th value in almost every row.
fn tie_heavy(rng: &mut Rng, n: usize, with_nan: bool) -> Vec<f32> {
    let set = [-0.0f32, 0.0, 1.5, -1.5, 7.0, f32::INFINITY, f32::NEG_INFINITY, 1e-40, -1e-40];
    (0..n).map(|_| if with_nan && rng.below(11) == 0 { f32::NAN } else { set[rng.index(set.len())] }).collect()
}

#[test]
fn f32_agrees_with_a_stable_sort_for_every_k_both_directions_and_both_nan_rules() {
    let mut rng = Rng::new(7);
    for &(rows, cols) in &[(1, 1), (3, 2), (5, 33), (2, 257), (1, 1000)] {
        for with_nan in [false, true] {
            let x = tie_heavy(&mut rng, rows * cols, with_nan);
            let nan = if with_nan { TopkNan::AboveAll } else { TopkNan::Reject };
            for k in [0, 1, 2, cols / 2, cols.saturating_sub(1), cols].into_iter().filter(|&k| k <= cols) {
                for largest in [true, false] {
                    let s = spec(k, largest, nan);
                    assert_eq!(model_bits(&x, rows, cols, s), by_sorting(&x, rows, cols, s), "{rows}x{cols} {s:?}");
                }
            }
        }
    }
}

/// The one-pass selection that holds k ranks (small k) and the selection among every rank
/// give the same k ranks, on tie-heavy rows and on rows sorted either way (where the kept set
/// changes at every item or never).
#[test]
fn the_bounded_selection_keeps_what_the_full_selection_selects() {
    let mut rng = Rng::new(13);
    let ascending: Vec<f32> = (0..4099).map(|i| (i % 700) as f32).collect();
    let descending: Vec<f32> = ascending.iter().rev().copied().collect();
    let ties = tie_heavy(&mut rng, 4099, true);
    for row in [&ascending, &descending, &ties] {
        for k in [1, 2, 31, 32, 33, 511, 512] {
            for largest in [true, false] {
                let s = spec(k, largest, TopkNan::AboveAll);
                let mut bounded = bounded_selection(row, s, k);
                let mut full = full_selection(row, s, k);
                bounded.sort_unstable();
                full.sort_unstable();
                assert_eq!(bounded, full, "k = {k} {s:?}");
                assert_eq!(model_bits(row, 1, row.len(), s), by_sorting(row, 1, row.len(), s), "k = {k} {s:?}");
            }
        }
    }
}

#[test]
fn bf16_and_f16_agree_with_a_stable_sort() {
    let mut rng = Rng::new(11);
    let wide = tie_heavy(&mut rng, 4 * 129, true);
    let b: Vec<bf16> = wide.iter().map(|&v| bf16::from_f32(v)).collect();
    let h: Vec<f16> = wide.iter().map(|&v| f16::from_f32(v)).collect();
    for k in [1, 31, 64, 129] {
        for largest in [true, false] {
            let s = spec(k, largest, TopkNan::AboveAll);
            assert_eq!(model_bits(&b, 4, 129, s), by_sorting(&b, 4, 129, s), "bf16 {s:?}");
            assert_eq!(model_bits(&h, 4, 129, s), by_sorting(&h, 4, 129, s), "f16 {s:?}");
        }
    }
}

#[test]
fn keys_order_as_the_values_do() {
    let ladder = [f32::NEG_INFINITY, -3.0, -1e-45, -0.0, 0.0, 1e-45, 2.5, f32::MAX, f32::INFINITY, f32::NAN];
    for w in ladder.windows(2) {
        let (a, b) = (w[0].order_key(), w[1].order_key());
        if w[0] == w[1] {
            assert_eq!(a, b, "{} and {}", w[0], w[1]);
        } else {
            assert!(a < b, "{} below {}", w[0], w[1]);
        }
        let (ha, hb) = (f16::from_f32(w[0]).order_key(), f16::from_f32(w[1]).order_key());
        assert!(ha <= hb, "f16 {} and {}", w[0], w[1]);
    }
}

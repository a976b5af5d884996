//! Tests of the large softmax cases' catalogue, sampling and row judgement (CPU).

use super::*;
use crate::registry::primitive::Primitive;
use crate::sweep::gpu::streamed::test_plan;
use kernels::SoftmaxDtype;

/// Past 2^32 the catalogue holds one f32 and one bf16 input of rows of
/// LARGE_COLS past the size asked, every variant on each, made a piece at a
/// time, with unique ids; below it, none.
#[test]
fn large_offset_sizes_have_streamed_row_cases() {
    let sizes = crate::sweep::sizes::LARGE_OFFSET_SIZES.to_vec();
    let cases = super::super::catalogue(&test_plan(Primitive::Softmax, sizes.clone()));
    let variants = SoftmaxVariant::ALL.into_iter().filter(|v| LARGE_COLS <= v.max_cols()).count();
    assert_eq!(variants, SoftmaxVariant::ALL.len(), "every variant takes the large rows");
    for n in sizes {
        let rows = large_rows(n);
        let at: Vec<&GpuCase> = cases.iter().filter(|c| c.id.size == format!("{rows}x{LARGE_COLS}")).collect();
        assert_eq!(at.len(), 2 * variants, "n={n}");
        assert!(at.iter().all(|c| c.pieced() && c.id.n == rows * LARGE_COLS && c.id.n >= n));
        let keys: std::collections::BTreeSet<&str> = at.iter().map(|c| c.input_key()).collect();
        assert_eq!(keys.len(), 2, "one input a dtype");
        let mut ids: Vec<String> = at.iter().map(|c| c.id.marker()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), at.len());
    }
    let small = super::super::catalogue(&test_plan(Primitive::Softmax, vec![1 << 20]));
    assert!(small.iter().all(|c| !c.id.size.ends_with(&format!("x{LARGE_COLS}"))));
}

/// The large shapes pass 2^32 and 2^33 inside a row, and the sampled rows
/// hold the ends and the rows around each boundary.
#[test]
fn sampled_rows_hold_the_boundaries() {
    for n in crate::sweep::sizes::LARGE_OFFSET_SIZES {
        let rows = large_rows(n);
        assert!(rows * LARGE_COLS >= n && (rows - 1) * LARGE_COLS < n);
        for boundary in [1usize << 31, 1 << 32] {
            let r = boundary / LARGE_COLS;
            assert!(r * LARGE_COLS < boundary && boundary < (r + 1) * LARGE_COLS, "inside row {r}");
            assert!((r - 1..=r + 1).all(|k| sampled(rows, LARGE_COLS, k)), "n={n} around {boundary}");
            let (away, near_end) = (r + 5, r + 5 + 2 >= rows);
            assert!(near_end || away % SAMPLE_EVERY == 0 || !sampled(rows, LARGE_COLS, away), "n={n}: row {away}");
        }
        assert!([0, 1, rows - 2, rows - 1].into_iter().all(|r| sampled(rows, LARGE_COLS, r)));
        let count = (0..rows).filter(|&r| sampled(rows, LARGE_COLS, r)).count();
        assert!(count < rows / 900, "n={n}: {count} sampled rows");
    }
}

fn exact_of(x: &[f32]) -> Vec<f64> {
    softmax_exact_f32(x).expect("a row with an unmasked logit")
}

/// A correct row passes; a masked logit given mass, a value out of [0, 1],
/// a row that does not sum to 1 (a poisoned or unwritten row) and, on a
/// sampled row, another row's distribution each fail, naming the index.
#[test]
fn judge_row_fails_each_kind_of_wrong_row() {
    let tol = softmax_tolerance(4, SoftmaxVariant::OnlineBlock, SoftmaxDtype::F32);
    let x = [0.5f32, f32::NEG_INFINITY, 2.0, -1.0];
    let exact = exact_of(&x);
    let p: Vec<f32> = exact.iter().map(|&v| v as f32).collect();
    assert!(judge_row(&x, &p, 100, Some(&exact), &tol).passed());
    assert!(judge_row(&x, &p, 100, None, &tol).passed());
    let fails_at = |p: &[f32], exact: Option<&Vec<f64>>, what: &str| {
        let v = judge_row(&x, p, 100, exact, &tol);
        assert!(!v.passed(), "{what}");
        assert!(format!("{v:?}").contains(what), "{v:?}");
    };
    let mut masked = p.clone();
    masked[1] = 1e-3;
    fails_at(&masked, None, "masked logit");
    let mut negative = p.clone();
    negative[0] = -0.25;
    fails_at(&negative, None, "probability range");
    let poison = vec![f32::from_bits(0xA5A5_A5A5); 4];
    assert!(!judge_row(&x, &poison, 100, None, &tol).passed(), "a poisoned row");
    let mut short = p.clone();
    short[2] *= 0.5;
    fails_at(&short, None, "row sum");
    // Another row's probabilities: a distribution that sums to 1, so only
    // the exact check of a sampled row sees it.
    let other = exact_of(&[2.0f32, f32::NEG_INFINITY, 0.5, -1.0]);
    let swapped: Vec<f32> = other.iter().map(|&v| v as f32).collect();
    assert!(judge_row(&x, &swapped, 100, None, &tol).passed());
    fails_at(&swapped, Some(&exact), "declared tolerance");
}

/// The streamed input's sampled rows hold the exact softmax of the rows as
/// the device gets them (bf16: the rounded logits), on a small shape.
#[test]
fn streamed_rows_sample_the_exact_softmax() {
    fn check<E: LargeElement>() {
        let rows = 2 * model::generators::PIECE / LARGE_COLS + 5;
        let recipe = StreamedRows::<E>::new(rows, 3);
        let mut device: Vec<E> = Vec::new();
        let (exact, digests) = recipe
            .stream(|at, piece| {
                assert_eq!(at, device.len());
                device.extend_from_slice(piece);
                Ok(())
            })
            .unwrap_or_else(|v| panic!("{v:?}"));
        assert_eq!(device.len(), rows * LARGE_COLS);
        let whole = model::generators::softmax_rows(rows, LARGE_COLS, 3, MASK).unwrap();
        let widened: Vec<f32> = device.iter().map(|&v| v.widen()).collect();
        assert!(whole.iter().zip(&widened).all(|(&a, &b)| E::from_logit(a).widen().to_bits() == b.to_bits()));
        assert_eq!(
            exact.keys().copied().collect::<Vec<_>>(),
            (0..rows).filter(|&r| sampled(rows, LARGE_COLS, r)).collect::<Vec<_>>()
        );
        for (r, p) in &exact {
            assert_eq!(p, &exact_of(&widened[r * LARGE_COLS..(r + 1) * LARGE_COLS]), "row {r}");
        }
        assert!(digests.contains_key(INPUT_PART) && digests.contains_key(&expected_part::<E>()));
        assert_eq!(recipe.digests_only().unwrap().unwrap(), digests);
    }
    check::<f32>();
    check::<bf16>();
}

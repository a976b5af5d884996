//! Tests of `kernels::softmax`.

use super::*;

#[test]
fn row_in_registers_shapes_cover_every_length_up_to_the_limit() {
    assert_eq!(row_in_registers_shape(1).map(|s| s.0), Some("small"));
    assert_eq!(row_in_registers_shape(4096).map(|s| s.0), Some("small"));
    assert_eq!(row_in_registers_shape(4097).map(|s| s.0), Some("medium"));
    assert_eq!(row_in_registers_shape(32_000).map(|s| s.0), Some("large"));
    assert_eq!(row_in_registers_shape(32_768).map(|s| s.0), Some("large"));
    assert_eq!(row_in_registers_shape(32_769), None);
    for (_, _, items) in ROW_IN_REGISTERS_SHAPES {
        assert_eq!(items % 8, 0, "whole bf16 vectors per thread");
    }
}

#[test]
fn row_in_warp_registers_items_cover_every_length_up_to_the_limit() {
    assert_eq!(row_in_warp_registers_items(1), Some(1));
    assert_eq!(row_in_warp_registers_items(32), Some(1));
    assert_eq!(row_in_warp_registers_items(33), Some(2));
    assert_eq!(row_in_warp_registers_items(1000), Some(32));
    assert_eq!(row_in_warp_registers_items(MAX_ROW_IN_WARP_REGISTERS_COLS), Some(32));
    assert_eq!(row_in_warp_registers_items(MAX_ROW_IN_WARP_REGISTERS_COLS + 1), None);
    assert_eq!(SoftmaxVariant::RowInWarpRegisters.max_cols(), MAX_ROW_IN_WARP_REGISTERS_COLS);
}

#[test]
fn best_for_picks_a_variant_that_accepts_the_row() {
    for cols in [1, 33, 1024, 1025, 32_000, 32_768, 32_769, MAX_SOFTMAX_COLS] {
        for dtype in [SoftmaxDtype::F32, SoftmaxDtype::Bf16] {
            assert!(SoftmaxVariant::best_for(cols, dtype).max_cols() >= cols);
        }
    }
}

#[test]
fn tolerances_are_small_and_grow_with_the_row() {
    for variant in SoftmaxVariant::ALL {
        let short = softmax_error_bound_ulps(33, variant);
        let long = softmax_error_bound_ulps(variant.max_cols(), variant);
        assert!((88.0..200.0).contains(&short), "{variant:?} {short}");
        // OnlineWarp at 131,072 columns: 4096 chunks per lane, each a possible
        // rescale of the running sum (a sorted row does that): ~1.5e-3.
        assert!(long >= short && long < 30_000.0, "{variant:?} {long}");
        let t = softmax_tolerance(32_000, variant, SoftmaxDtype::F32);
        assert!(t.relative > 10.0 * U_F32 && t.per_shift > U_F32);
        let b = softmax_tolerance(32_000, variant, SoftmaxDtype::Bf16);
        assert!(b.relative > U_BF16 && b.relative < 1.1 * U_BF16);
        // [-10000, 0, 10000] -> [0, 0, 1]: the shifted-out logits have exact
        // probability 0 (below the absolute term) and 1 is within bounds of itself.
        assert!(t.allows(0.0, -20000.0, 0.0) && t.allows(1.0, 0.0, 1.0));
    }
}

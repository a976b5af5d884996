use super::*;
use crate::operator::SumF32;

#[test]
fn layouts_cover_every_tile_offset_once() {
    for layout in [TileLayout::Vector4, TileLayout::Vector8, TileLayout::Strided] {
        let mut seen = vec![false; FLOAT_TILE_ITEMS];
        for t in 0..BLOCK_THREADS {
            for i in 0..FLOAT_ITEMS_PER_THREAD {
                let o = layout.offset(t, i);
                assert!(!seen[o], "{layout:?} thread {t} item {i}");
                seen[o] = true;
            }
        }
    }
}

#[test]
fn layouts_match_the_kernel_loaders() {
    // f32: thread 1 item 5 is load j = 1, lane k = 1: 4 (256 + 1) + 1.
    assert_eq!(TileLayout::Vector4.offset(1, 5), 1029);
    // bf16: thread 2 item 9 is load j = 1, k = 1: 8 (256 + 2) + 1.
    assert_eq!(TileLayout::Vector8.offset(2, 9), 2065);
    // pairs: thread 3 item 2: 512 + 3.
    assert_eq!(TileLayout::Strided.offset(3, 2), 515);
}

/// Values whose sums depend on the grouping (magnitudes 2^0 to 2^27, signs mixed).
fn spread(k: usize) -> f32 {
    let m = [1.0f32, 3.0e7, -1.0, 7.0, -2.9e7, 0.25, 1.0e8, -3.0];
    m[k % 8] * (1.0 + k as f32 / 64.0)
}

#[test]
fn pairwise16_is_the_written_out_tree() {
    let x: [f32; 16] = [3.0, 3.0, 1.0e8, -1.0e8, 1.0, 1.0, 1.0, 1.0, 2.0e8, 3.0, 3.0, -2.0e8, 0.5, 0.25, 7.0, -7.0];
    let expected = (((x[0] + x[1]) + (x[2] + x[3])) + ((x[4] + x[5]) + (x[6] + x[7])))
        + (((x[8] + x[9]) + (x[10] + x[11])) + ((x[12] + x[13]) + (x[14] + x[15])));
    let sequential = x.iter().fold(0.0f32, |a, b| a + b);
    assert_ne!(expected.to_bits(), sequential.to_bits(), "the data must tell the trees apart");
    assert_eq!(pairwise16(&SumF32, x).unwrap().to_bits(), expected.to_bits());
}

#[test]
fn eight_f32_inputs_sit_in_two_threads_of_one_warp() {
    // n = 8, Vector4: thread 0 holds 0..4 (items 0..3), thread 1 holds 4..8; the rest is +0.
    let x: Vec<f32> = (0..8).map(spread).collect();
    let t0 = (x[0] + x[1]) + (x[2] + x[3]);
    let t1 = (x[4] + x[5]) + (x[6] + x[7]);
    // Ascending shuffle, offset 1: lane 0 = lane 0 + lane 1; later levels add +0.
    let expected = t0 + t1;
    let got = tile_total(&SumF32, 8, 0, TileLayout::Vector4, &|e| x[e]).unwrap();
    assert_eq!(got.to_bits(), expected.to_bits());
}

#[test]
fn sixteen_bf16_inputs_sit_in_two_threads() {
    // n = 16, Vector8: thread 0 holds 0..8 (items 0..7), thread 1 holds 8..16.
    let x: Vec<f32> = (0..16).map(spread).collect();
    let t0 = ((x[0] + x[1]) + (x[2] + x[3])) + ((x[4] + x[5]) + (x[6] + x[7]));
    let t1 = ((x[8] + x[9]) + (x[10] + x[11])) + ((x[12] + x[13]) + (x[14] + x[15]));
    let got = tile_total(&SumF32, 16, 0, TileLayout::Vector8, &|e| x[e]).unwrap();
    assert_eq!(got.to_bits(), (t0 + t1).to_bits());
}

#[test]
fn scattered_inputs_follow_the_thread_warp_and_block_levels() {
    // Inputs at chosen offsets of a full tile, zero elsewhere:
    // 0 -> thread 0 item 0; 1024 -> thread 0 item 4 (load j = 1); 4 -> thread 1 item 0;
    // 8 -> thread 2; 128 -> thread 32 (warp 1, lane 0); 1536 -> thread 128 (warp 4).
    let (a, b, c, d, e, f) = (1.0e8f32, 3.0, 5.0, -1.0e8, 7.0, 11.0);
    let mut x = vec![0.0f32; FLOAT_TILE_ITEMS];
    for (i, v) in [(0, a), (1024, b), (4, c), (8, d), (128, e), (1536, f)] {
        x[i] = v;
    }
    // thread 0: items 0 and 4 meet at width 4: a + b. Warp 0, offset 1: lanes 0 + 1, lane
    // 2 + 3; offset 2: (lane 0) + (lane 2). Block: warps 0 + 1 (offset 1), then + warps 2..3
    // (+0), then + warps 4..7 (offset 4).
    let warp0 = ((a + b) + c) + d;
    let expected = (warp0 + e) + f;
    let got = tile_total(&SumF32, FLOAT_TILE_ITEMS, 0, TileLayout::Vector4, &|i| x[i]).unwrap();
    assert_eq!(got.to_bits(), expected.to_bits());
    // Index order (0, 4, 8, 128, 1024, 1536) folded left to right gives 29, the tree 26.
    let other = ((((a + c) + d) + e) + b) + f;
    assert_ne!(other.to_bits(), expected.to_bits(), "the data must tell the orders apart");
}

#[test]
fn negative_zero_becomes_positive_through_identity_lanes() {
    // One input -0: every later level adds +0, and -0 + +0 = +0.
    let got = tile_total(&SumF32, 1, 0, TileLayout::Vector4, &|_| -0.0f32).unwrap();
    assert_eq!(got.to_bits(), 0);
}

#[test]
fn a_block_needs_256_thread_values() {
    assert!(matches!(block_total(&SumF32, &[0.0; 3]), Err(ModelError::InvalidWidth { width: 3, .. })));
}

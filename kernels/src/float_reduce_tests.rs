//! Tests of `kernels::float_reduce`.

use super::*;

#[test]
fn compensated_pair_matches_the_cuda_layout() {
    assert_eq!(std::mem::size_of::<CompensatedPair>(), 8);
    assert_eq!(std::mem::align_of::<CompensatedPair>(), 4);
}

#[test]
fn tree_depths_follow_the_documented_tree() {
    use FloatReduceVariant::*;
    assert_eq!(tree_grids(1), vec![1]);
    assert_eq!(tree_grids(4096), vec![1]);
    assert_eq!(tree_grids(4097), vec![2, 1]);
    assert_eq!(tree_grids(1 << 28), vec![65_536, 16, 1]);
    assert_eq!(FixedTree.tree_depth(1), 12);
    assert_eq!(FixedTree.tree_depth(1 << 24), 24);
    assert_eq!(FixedTree.tree_depth(1 << 28), 36);
    assert_eq!(Compensated.tree_depth(1 << 28), 36);
    // 2^28: 65536 tiles over 1024 blocks -> 64 per thread.
    assert_eq!(TwoPass.tree_depth(1 << 28), 64 + 24);
    assert_eq!(TwoPass.tree_depth(100), 1 + 24);
    assert_eq!(AtomicPerBlock.tree_depth(1 << 20), 12 + 256);
    assert_eq!(AtomicPerElement.tree_depth(1000), 1000);
    assert!(AtomicPerElement.is_order_free() && AtomicPerBlock.is_order_free());
    assert!(FixedTree.is_deterministic() && Compensated.is_deterministic() && TwoPass.is_deterministic());
}

#[test]
fn bounds_are_ordered_as_expected() {
    use FloatReduceVariant::*;
    let n = 1 << 20;
    let fixed = FixedTree.error_bound(n, 1.0, 1e-3);
    assert!(fixed > 24.0 * U_F32 && fixed < 25.0 * U_F32);
    assert!(Compensated.error_bound(n, 1.0, 1e-3) < fixed);
    assert!(AtomicPerElement.error_bound(n, 1.0, 1e-3) > fixed);
    assert_eq!(AtomicPerElement.error_bound(1, 5.0, 5.0), 0.0);
}

/// The tile layouts of the loaders cover each element of a tile once.
#[test]
fn tile_layouts_partition_the_tile() {
    let threads = BLOCK_THREADS as usize;
    let layouts: [&dyn Fn(usize, usize) -> usize; 3] = [
        &|t, item| 4 * ((item / 4) * threads + t) + item % 4,
        &|t, item| 8 * ((item / 8) * threads + t) + item % 8,
        &|t, item| item * threads + t,
    ];
    for layout in layouts {
        let mut seen = vec![0u8; FLOAT_TILE_ITEMS];
        for t in 0..threads {
            for item in 0..16 {
                seen[layout(t, item)] += 1;
            }
        }
        assert!(seen.iter().all(|&s| s == 1));
    }
}

/// Past 2^32 the plans' grids are the documented ones, computed in 64 bits:
/// the tree's levels, the two-pass grid capped at its 1024 blocks with the
/// per-thread depth growing instead, the atomic grids; the limit is the grid's.
#[test]
fn plan_geometry_past_2_32() {
    use FloatReduceVariant::*;
    for k in [0usize, 1, 333, 4095, 4096, 4097] {
        let n = (1usize << 32) + k;
        let tiles = n.div_ceil(4096);
        assert_eq!(tiles_of(n), tiles);
        assert_eq!(tree_grids(n), vec![tiles, tiles.div_ceil(4096), 1], "n={n}");
        assert_eq!(two_pass_grid(n), 1024);
        assert_eq!(TwoPass.tree_depth(n) as usize, tiles.div_ceil(1024) + 24);
        assert_eq!(FixedTree.tree_depth(n), 36);
        assert_eq!(AtomicPerBlock.tree_depth(n) as usize, 12 + tiles);
        // The atomic chain's depth saturates at u32::MAX; its bound is then the order-free one.
        assert_eq!(AtomicPerElement.tree_depth(n), u32::MAX);
    }
    let n = (1usize << 33) + 555;
    assert_eq!(tree_grids(n), vec![2_097_153, 513, 1]);
    assert_eq!(TwoPass.tree_depth(n), 2049 + 24);
    // The largest n: the first pass fills the grid, one more item overflows it.
    assert_eq!(tiles_of(MAX_LEN), i32::MAX as usize);
    assert_eq!(tiles_of(MAX_LEN + 1), i32::MAX as usize + 1);
    assert_eq!(tree_grids(MAX_LEN).len(), 4);
}

/// The declared bounds stay finite and meaningful where a chain is long:
/// gamma saturates at infinity instead of turning negative.
#[test]
fn bounds_past_2_32_never_turn_negative() {
    let n = (1usize << 32) + 333;
    for variant in FloatReduceVariant::ALL {
        let bound = variant.error_bound(n, 1e6, 1e3);
        assert!(bound >= 0.0, "{}: {bound}", variant.name());
    }
    // 36 rounded additions: gamma_36 sum|x| is about 2.1e-6 sum|x|.
    assert!(FloatReduceVariant::FixedTree.error_bound(n, 1e6, 1e3) < 1e-5 * 1e6);
}

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

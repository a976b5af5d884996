//! Tests of `kernels::reduce`.

use super::*;
use crate::family_build_checks::{assert_kernels_present, assert_mutants_compile_cleanly};

/// The limits are shared with the scans and tested in `int_element_tests.rs`.
#[test]
fn names_round_trip() {
    for v in ReduceVariant::ALL {
        assert_eq!(ReduceVariant::from_name(v.name()), Some(v));
    }
}

#[test]
fn multipass_passes() {
    assert_eq!(multipass_counts(1), vec![1, 1]);
    assert_eq!(multipass_counts(512), vec![512, 1]);
    assert_eq!(multipass_counts(513), vec![513, 2, 1]);
    assert_eq!(multipass_counts(262_144), vec![262_144, 512, 1]);
    assert_eq!(multipass_counts(262_145), vec![262_145, 513, 2, 1]);
    assert_eq!(multipass_counts(1 << 28), vec![1 << 28, 1 << 19, 1024, 2, 1]);
    assert_eq!(multipass_counts(MAX_LEN).len() - 1, 4);
}

/// The single-pass int32 kernel's split (whole tiles by even share, the
/// vector remainder and the scalar tail to the last block) covers
/// [0, n) exactly once.
#[test]
fn single_pass_i32_partition_covers_every_item_once() {
    const TILE_VECTORS: u64 = 1024;
    for &n in &[1u64, 3, 4, 5, 31, 33, 257, 4095, 4096, 4097, 4099, 8191, 65_536, 262_145, 1_000_003] {
        for &grid in &[1u64, 2, 3, 7, 132, 1056] {
            let grid = grid.min(((n as usize).div_ceil(4096)).max(1) as u64).max(1);
            let mut seen = vec![0u8; n as usize];
            let vector_count = n / 4;
            let full_tiles = vector_count / TILE_VECTORS;
            for b in 0..grid {
                let (begin, end) = (full_tiles * b / grid, full_tiles * (b + 1) / grid);
                for tile in begin..end {
                    for t in 0..256 {
                        for k in 0..4 {
                            let v = tile * TILE_VECTORS + k * 256 + t;
                            (0..4).for_each(|e| seen[(4 * v + e) as usize] += 1);
                        }
                    }
                }
                if b == grid - 1 {
                    for t in 0..256 {
                        let mut v = full_tiles * TILE_VECTORS + t;
                        while v < vector_count {
                            (0..4).for_each(|e| seen[(4 * v + e) as usize] += 1);
                            v += 256;
                        }
                        if vector_count * 4 + t < n {
                            seen[(vector_count * 4 + t) as usize] += 1;
                        }
                    }
                }
            }
            assert!(seen.iter().all(|&c| c == 1), "n={n} grid={grid}");
        }
    }
}

/// The affine single pass gives block b the chunk [n*b/G, n*(b+1)/G) and
/// thread t a contiguous sub-range of it: the concatenation over (block,
/// thread) order is exactly 0, 1, ..., n-1 (order kept).
#[test]
fn single_pass_affine_partition_is_in_order() {
    for &n in &[1u64, 2, 255, 256, 257, 511, 513, 2047, 2049, 100_000] {
        for &grid in &[1u64, 2, 5, 132, 1056] {
            let mut order = Vec::new();
            for b in 0..grid {
                let (chunk_begin, chunk_end) = (n * b / grid, n * (b + 1) / grid);
                let per = (chunk_end - chunk_begin).div_ceil(256);
                for t in 0..256 {
                    let begin = chunk_end.min(chunk_begin + t * per);
                    let end = chunk_end.min(begin + per);
                    order.extend(begin..end);
                }
            }
            assert_eq!(order, (0..n).collect::<Vec<_>>(), "n={n} grid={grid}");
        }
    }
}

/// The last block's in-order fold of the partials (thread t: a contiguous run).
#[test]
fn partials_fold_is_in_order() {
    for count in 1u32..=2200 {
        let per = count.div_ceil(256);
        let mut order = Vec::new();
        for t in 0..256u32 {
            let begin = count.min(t * per);
            let end = count.min(begin + per);
            order.extend(begin..end);
        }
        assert_eq!(order, (0..count).collect::<Vec<_>>());
    }
}

/// Every kernel the plans launch exists in the compiled module, and each
/// planted mutant of this family still compiles without a warning.
#[test]
fn kernels_exist_and_mutants_compile() {
    let mut names = Vec::new();
    for sfx in ["i32", "affine"] {
        for stem in ["reduce_serial", "reduce_multipass", "reduce_block_atomic", "reduce_single_pass"] {
            names.push(format!("{stem}_{sfx}"));
        }
    }
    names.push("reduce_multipass_i64".into());
    assert_kernels_present(KernelFamily::Reduce, &names);
    assert_mutants_compile_cleanly(KernelFamily::Reduce, &["sm_90"], &[3, 4, 6]);
}

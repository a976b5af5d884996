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
    assert_eq!(multipass_counts(u32::MAX as usize).len() - 1, 4);
    assert_eq!(multipass_counts(1 << 36).len() - 1, 4);
    assert_eq!(multipass_counts((1 << 36) + 1).len() - 1, 5);
    assert_eq!(multipass_counts(MAX_LEN).len() - 1, 5);
}

// ---------------------------------------------------------------------------
// 64-bit sizes: plans past 2^32 and 2^33, on the CPU.

/// Sizes on both sides of 2^32 and past 2^33 (odd, and not a multiple of
/// 4, 512, 2048 or 4096, so every last block, pair and warp tile is
/// partial), a size with four whole levels of 512 (2^36), and the limit.
const PAST_2_32: [usize; 9] = [
    (1 << 32) - 1,
    1 << 32,
    (1 << 32) + 1,
    (1 << 32) + 333,
    (1 << 32) + 4099,
    (1 << 33) + 555,
    (1 << 33) + (1 << 20) + 7,
    (1 << 36) + 1,
    MAX_LEN,
];

/// The grid caps the single pass is built with: one block, the H100's and
/// H200's 132 SMs at 8 and at 4 resident blocks, and more blocks than any
/// size here has warp tiles for (the cap unused).
const PERSISTENT: [u32; 4] = [1, 132 * 8, 132 * 4, u32::MAX];

fn ceil(a: u128, b: u128) -> u128 {
    a.div_ceil(b).max(1)
}

/// Checks `g` against the geometry recomputed here in u128 from the kernel
/// shapes (512 items a multipass block, 4096 int32 or 2048 affine items a
/// block-atomic block, 512-item warp tiles, 8 warps a block).
fn assert_geometry<E: ReduceElement>(variant: ReduceVariant, n: usize, persistent: u32, g: &ReduceGeometry) {
    let what = format!("{} {} n={n} persistent={persistent}", E::INPUT_SUFFIX, variant.name());
    let n128 = n as u128;
    match variant {
        ReduceVariant::Serial => unreachable!(),
        ReduceVariant::Multipass => {
            let mut items = n128;
            for (p, launch) in g.launches.iter().enumerate() {
                assert_eq!(launch.items as u128, items, "{what} pass {p} items");
                assert_eq!(launch.grid as u128, ceil(items, 512), "{what} pass {p} grid");
                items = launch.grid as u128;
            }
            assert_eq!(g.launches.last().map(|l| l.grid), Some(1), "{what}: the last pass writes one value");
            let expected: Vec<u64> =
                g.launches.iter().take(g.launches.len() - 1).take(2).map(|l| u64::from(l.grid)).collect();
            assert_eq!(g.partials, expected, "{what}: ping-pong buffers of the first two levels");
            assert_eq!(g.sync_words, 0, "{what}");
        }
        ReduceVariant::BlockAtomic => {
            let per = if E::ORDERED_ATOMIC { 2048 } else { 4096 };
            assert_eq!(g.launches, vec![ReduceLaunch { grid: ceil(n128, per) as u32, items: n as u64 }], "{what}");
            assert!(g.partials.is_empty(), "{what}");
            assert_eq!(g.sync_words, if E::ORDERED_ATOMIC { 3 } else { 0 }, "{what}");
        }
        ReduceVariant::SinglePass => {
            let grid = ceil(n128, 4096).min(persistent as u128).max(1);
            assert_eq!(g.launches, vec![ReduceLaunch { grid: grid as u32, items: n as u64 }], "{what}");
            assert_eq!(g.partials, vec![grid as u64], "{what}");
            assert_eq!(g.sync_words, 1, "{what}");
        }
    }
    for launch in &g.launches {
        assert!(launch.grid >= 1 && u64::from(launch.grid) <= MAX_GRID_BLOCKS, "{what}: grid {}", launch.grid);
    }
}

/// Every variant but the serial baseline builds the geometry its kernels
/// need at every size past 2^32, for both element types: grids, items per
/// launch and partial counts exactly as recomputed in u128.
#[test]
fn plans_past_2_32_have_the_right_grids_and_partials() {
    fn stamp<E: ReduceElement>() {
        for n in PAST_2_32 {
            for variant in [ReduceVariant::Multipass, ReduceVariant::BlockAtomic, ReduceVariant::SinglePass] {
                assert!(n <= variant.max_len(), "{} accepts {n}", variant.name());
                for persistent in PERSISTENT {
                    let g = ReduceGeometry::new::<E>(variant, n, persistent).unwrap_or_else(|e| panic!("{n}: {e}"));
                    assert_geometry::<E>(variant, n, persistent, &g);
                }
            }
        }
    }
    stamp::<i32>();
    stamp::<AffineMap>();
}

/// The same plans written out, so a change of policy or rounding shows as
/// a number: 2^32 + 333 and 2^33 + 555 items.
#[test]
fn plans_past_2_32_in_numbers() {
    let launches = |variant, n, persistent| {
        let g = ReduceGeometry::new::<i32>(variant, n, persistent).unwrap();
        g.launches.iter().map(|l| (l.grid, l.items)).collect::<Vec<_>>()
    };
    let (a, b) = ((1usize << 32) + 333, (1usize << 33) + 555);
    assert_eq!(
        launches(ReduceVariant::Multipass, a, 1),
        vec![(8_388_609, 4_294_967_629), (16_385, 8_388_609), (33, 16_385), (1, 33)]
    );
    assert_eq!(
        launches(ReduceVariant::Multipass, b, 1),
        vec![(16_777_218, 8_589_935_147), (32_769, 16_777_218), (65, 32_769), (1, 65)]
    );
    assert_eq!(launches(ReduceVariant::BlockAtomic, a, 1), vec![(1_048_577, 4_294_967_629)]);
    assert_eq!(launches(ReduceVariant::BlockAtomic, b, 1), vec![(2_097_153, 8_589_935_147)]);
    let affine = ReduceGeometry::new::<AffineMap>(ReduceVariant::BlockAtomic, b, 1).unwrap();
    assert_eq!(affine.launches, vec![ReduceLaunch { grid: 4_194_305, items: 8_589_935_147 }]);
    assert_eq!(launches(ReduceVariant::SinglePass, b, 1056), vec![(1056, 8_589_935_147)]);
    // Scratch: multipass 8 bytes a partial of its first two levels.
    let g = ReduceGeometry::new::<i32>(ReduceVariant::Multipass, b, 1).unwrap();
    assert_eq!(g.scratch_bytes::<i32>(), 8 * (16_777_218 + 32_769));
    let g = ReduceGeometry::new::<AffineMap>(ReduceVariant::SinglePass, b, 1056).unwrap();
    assert_eq!(g.scratch_bytes::<AffineMap>(), 16 * 1056 + 4);
}

/// Past the grid limit the geometry is refused with the reason, and the
/// variant's `max_len()` is that limit exactly.
#[test]
fn the_limit_is_the_grid_limit() {
    assert!(ReduceGeometry::new::<i32>(ReduceVariant::Multipass, MAX_LEN, 1).is_ok());
    let e = ReduceGeometry::new::<i32>(ReduceVariant::Multipass, MAX_LEN + 1, 1).unwrap_err();
    assert!(e.contains("2147483648 blocks") && e.contains("2147483647"), "{e}");
    assert!(ReduceGeometry::new::<i32>(ReduceVariant::SinglePass, 0, 1).is_err());
    let e = check_len::<i32>(ReduceVariant::SinglePass, MAX_LEN + 1).unwrap_err().to_string();
    assert!(e.contains(&format!("at most {MAX_LEN} elements")), "{e}");
    assert!(check_len::<AffineMap>(ReduceVariant::BlockAtomic, MAX_LEN).is_ok());
}

/// A line of `reduce.cu` that the host twin below mirrors: the test fails
/// when the kernel's arithmetic changes and its twin does not.
fn assert_kernel_line(line: &str) {
    let source = crate::sources::source("reduce.cu").expect("reduce.cu is embedded");
    assert_eq!(source.matches(line).count(), 1, "reduce.cu no longer holds exactly once: {line}");
}

/// The multipass and block-atomic kernels' item offsets (the u64 lines of
/// `multipass_reduce`, `reduce_block_atomic_i32` and the ordered affine
/// kernel) for the last blocks at sizes past 2^32: each block's first item
/// is below n, its items are exactly the rest up to its size, and a 32-bit
/// offset would have wrapped there.
#[test]
fn block_offsets_past_2_32_are_exact() {
    assert_kernel_line("const u64 block_first = (u64)blockIdx.x * kBlockItems;");
    assert_kernel_line("const u64 first = block_first + 2 * (u64)threadIdx.x;");
    assert_kernel_line("const u64 block_first = (u64)blockIdx.x * kAtomicBlockItems;");
    assert_kernel_line("if (block_first + kAtomicBlockItems <= count) {");
    assert_kernel_line("const u64 first = (u64)ticket * kOrderedBlockItems + (u64)threadIdx.x * kOrderedThreadItems;");
    for n in PAST_2_32.into_iter().filter(|&n| n > 1 << 32) {
        let n = n as u64;
        for (variant, per_block) in [("multipass", 512u64), ("block_atomic.i32", 4096), ("block_atomic.affine", 2048)] {
            let grid = n.div_ceil(per_block);
            for block in [grid - 2, grid - 1] {
                let block_first = block * per_block;
                assert!(block_first < n, "{variant} n={n}: block {block} has an item");
                // Past 2^32 a 32-bit product wraps: the kernels must not compute one.
                let wrapped = u64::from((block as u32).wrapping_mul(per_block as u32));
                assert_eq!(wrapped == block_first, block_first <= u32::MAX as u64, "{variant} n={n}");
                if block == grid - 1 {
                    assert!(block_first > u32::MAX as u64, "{variant} n={n}: the last block starts past 2^32");
                }
                let items = (n - block_first).min(per_block);
                let whole = block_first + per_block <= n;
                assert_eq!(whole, items == per_block, "{variant} n={n} block {block}");
                // Thread t of a multipass block: the pair (first, first + 1),
                // a lone item at an odd end, or the identity.
                if per_block == 512 {
                    let loaded: u64 = (0..256u64)
                        .map(|t| {
                            let first = block_first + 2 * t;
                            if first + 1 < n {
                                2
                            } else {
                                u64::from(first < n)
                            }
                        })
                        .sum();
                    assert_eq!(loaded, items, "multipass n={n} block {block}");
                }
                // The ordered affine kernel: thread t's 8 items [first, first + 8).
                if per_block == 2048 {
                    let loaded: u64 =
                        (0..256u64).map(|t| (0..8).filter(|j| block * 2048 + t * 8 + j < n).count() as u64).sum();
                    assert_eq!(loaded, items, "ordered affine n={n} ticket {block}");
                }
            }
            assert_eq!((grid - 1) * per_block + (n - (grid - 1) * per_block), n);
        }
    }
}

/// The host twin of `reduce_single_pass`'s split (the lines checked below):
/// block b of G takes the warp tiles [W*b/G, W*(b+1)/G), its warp w the
/// w-th share of ceil(len / 8) of them. Returns each warp's [begin, end).
fn single_pass_warp_ranges(n: u64, grid: u64) -> Vec<(u64, u64)> {
    let warp_tiles = n.div_ceil(512);
    let mut out = Vec::new();
    for block in 0..grid {
        let block_begin = warp_tiles * block / grid;
        let block_end = warp_tiles * (block + 1) / grid;
        let per_warp = (block_end - block_begin).div_ceil(8);
        for warp in 0..8 {
            let begin = block_end.min(block_begin + warp * per_warp);
            let end = block_end.min(begin + per_warp);
            out.push((begin, end));
        }
    }
    out
}

/// At every size past 2^32 and every grid the single pass is built with,
/// the warps' runs of warp tiles follow each other in (block, warp) order
/// and cover every tile once; every tile but the last is whole, and the
/// last holds 1..=512 items (the `u32(count - base)` of the kernel), at a
/// base past 2^32.
#[test]
fn single_pass_tiles_past_2_32_cover_every_item_once() {
    assert_kernel_line("const u64 warp_tiles = (count + kReduceWarpTileItems - 1) / kReduceWarpTileItems;");
    assert_kernel_line("const u64 block_begin = warp_tiles * blockIdx.x / gridDim.x;");
    assert_kernel_line("const u64 block_end = warp_tiles * (blockIdx.x + 1) / gridDim.x;");
    assert_kernel_line("const u64 per_warp = (block_end - block_begin + kBlockWarps - 1) / kBlockWarps;");
    assert_kernel_line("const u64 begin = min_u64(block_end, block_begin + (u64)warp * per_warp);");
    assert_kernel_line("const u64 end = min_u64(block_end, begin + per_warp);");
    assert_kernel_line("const u64 base = (step + k) * kReduceWarpTileItems;");
    assert_kernel_line("const u32 valid = step + k < end ? u32(count - base) : 0u;");
    assert_eq!(SINGLE_PASS_WARP_TILE_ITEMS, 512);
    for n in PAST_2_32.into_iter().filter(|&n| n > 1 << 32 && n < 1 << 40) {
        for persistent in PERSISTENT.into_iter().filter(|&p| p <= 132 * 8) {
            let g = ReduceGeometry::new::<i32>(ReduceVariant::SinglePass, n, persistent).unwrap();
            let (n, grid) = (n as u64, u64::from(g.launches[0].grid));
            let ranges = single_pass_warp_ranges(n, grid);
            let mut next = 0;
            for &(begin, end) in &ranges {
                assert!(begin <= end, "n={n} grid={grid}");
                if begin < end {
                    assert_eq!(begin, next, "n={n} grid={grid}: runs follow each other");
                    next = end;
                }
            }
            let warp_tiles = n.div_ceil(512);
            assert_eq!(next, warp_tiles, "n={n} grid={grid}: every warp tile once");
            let last_base = (warp_tiles - 1) * 512;
            assert!(last_base > u32::MAX as u64 && last_base < n && n - last_base <= 512, "n={n}");
            assert_eq!(u64::from((n - last_base) as u32), n - last_base);
        }
    }
}

/// `Gpu::reduce`'s device-memory error names what it needs and what is
/// free, in gigabytes.
#[test]
fn the_device_memory_error_names_the_real_limit() {
    let e = GpuError::DeviceMemory {
        primitive: "reduce",
        variant: "single_pass",
        n: (1 << 33) + 555,
        needed: 34_359_746_668,
        what: "input 34.4 GB, output and scratch 8460 bytes".into(),
        free: 30_000_000_000,
        total: 85_520_000_000,
    };
    assert_eq!(
        e.to_string(),
        "reduce/single_pass n=8589935147: needs 34.4 GB of device memory (input 34.4 GB, output and scratch \
         8460 bytes), 30.0 GB of the device's 85.5 GB are free"
    );
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

//! The sizes a sweep visits: each side of every boundary where a kernel's
//! code path changes (one warp of 32, one block of 256 threads / 512
//! hierarchical items, one 4096-item tile, one level of 512-way recursion),
//! random sizes from the seed, and the large GPU sizes.

/// Warp (31..33), block (255..257, 511..513), 4099, and the scan recursion
/// boundary 512^2 = 262,144 / 512^2 + 1 = 262,145.
pub const BOUNDARY_SIZES: [usize; 13] = [1, 31, 32, 33, 255, 256, 257, 511, 512, 513, 4099, 262_144, 262_145];

/// Sizes every variant runs at under each sanitizer tool: one item, a
/// partial warp on each side of 32, just past one block (256) and one
/// hierarchical block (512), a partial second tile (4099), and one past a
/// full level of 512-way recursion (262,145).
pub const SANITIZE_SIZES: [usize; 7] = [1, 31, 33, 257, 513, 4099, 262_145];

/// Large sizes for the GPU sweep (skipped by --quick).
pub const LARGE_SIZES: [usize; 2] = [1 << 24, 1 << 28];

/// Large-offset sizes of the 64-bit primitives, past 2^32 and past 2^33, each a few
/// hundred past the power (odd and no multiple of 4, so every last pair,
/// vector, warp tile and block is partial). Not in the default sizes yet
/// (the receipt gate would digest 2.6e10 generated items on two cores):
/// asked with `harness sweep --primitive reduce --primitive scan --sizes
/// 2^32+333,2^33+555` (the other primitives still refuse n past u32::MAX,
/// so ask for these alone). A case there streams its int32 input to the
/// device (`sweep::gpu::streamed::STREAMED_FROM`). Device memory: reduce 4
/// bytes an item plus at most 8 bytes per 512 items of scratch, 17.2 GB at
/// 2^32 + 333 and 34.4 GB at 2^33 + 555 (both fit an 80 GB H100); scan 12
/// bytes an item (int32 in, int64 out) plus its scratch, 51.6 GB at
/// 2^32 + 333 (fits an H100) and 103.2 GB at 2^33 + 555 (an H200 only:
/// skipped for memory on an H100, with the numbers). Host memory a piece of
/// 2^20 items at a time, whatever n.
pub const LARGE_OFFSET_SIZES: [usize; 2] = [(1 << 32) + 333, (1 << 33) + 555];

/// `count` random sizes in [2, 2^21), reproducible from `seed`.
pub fn random_sizes(seed: u64, count: usize) -> Vec<usize> {
    let mut state = seed ^ 0x9e37_79b9_7f4a_7c15;
    (0..count)
        .map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            // Log-uniform: as many small sizes as large ones.
            let bits = 1 + (z % 21) as u32;
            let size = (z >> 8) as usize % (1usize << bits);
            size.max(2)
        })
        .collect()
}

/// The sweep's sizes: explicit ones if given, else boundaries + random (+
/// large); each size once, in first-seen order (a random size may repeat a
/// boundary, and a case that ran twice would be counted twice).
pub fn sweep_sizes(explicit: &[usize], seed: u64, quick: bool, gpu: bool) -> Vec<usize> {
    let mut sizes = if explicit.is_empty() {
        let mut sizes = BOUNDARY_SIZES.to_vec();
        sizes.extend(random_sizes(seed, if quick { 3 } else { 8 }));
        if gpu && !quick {
            sizes.extend(LARGE_SIZES);
        }
        sizes
    } else {
        explicit.to_vec()
    };
    let mut seen = std::collections::BTreeSet::new();
    sizes.retain(|n| seen.insert(*n));
    sizes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_sizes_are_reproducible_and_in_range() {
        assert_eq!(random_sizes(7, 20), random_sizes(7, 20));
        assert_ne!(random_sizes(7, 20), random_sizes(8, 20));
        assert!(random_sizes(7, 200).iter().all(|&s| (2..1 << 21).contains(&s)));
    }

    #[test]
    fn each_size_is_visited_once() {
        assert_eq!(sweep_sizes(&[33, 1, 33], 0, false, true), vec![33, 1]);
        for seed in 0..200 {
            let sizes = sweep_sizes(&[], seed, true, true);
            let unique: std::collections::BTreeSet<_> = sizes.iter().collect();
            assert_eq!(unique.len(), sizes.len(), "seed {seed}: {sizes:?}");
        }
    }

    #[test]
    fn the_boundaries_include_both_sides_of_the_recursion_level() {
        assert!(BOUNDARY_SIZES.contains(&(512 * 512)));
        assert!(BOUNDARY_SIZES.contains(&(512 * 512 + 1)));
    }
}

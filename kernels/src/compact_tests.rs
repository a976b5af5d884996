//! Tests of `kernels::compact`.

use super::*;
use crate::family_build_checks::assert_mutants_compile_cleanly;

#[test]
fn three_phase_levels_end_in_one_tile() {
    assert_eq!(three_phase_level_lens(1), vec![1]);
    assert_eq!(three_phase_level_lens(2048), vec![1]);
    assert_eq!(three_phase_level_lens(2049), vec![2, 1]);
    assert_eq!(three_phase_level_lens(2048 * 2048), vec![2048, 1]);
    assert_eq!(three_phase_level_lens(2048 * 2048 + 1), vec![2049, 2, 1]);
    assert_eq!(three_phase_level_lens(1 << 28), vec![1 << 17, 64, 1]);
    assert_eq!(three_phase_level_lens(MAX_ITEMS), vec![1 << 21, 1024, 1]);
}

/// Emulates the three-phase scan (tiles of `tile` items, the level
/// recursion, the add-back order of `enqueue` and the scatter's
/// destination) for a small tile so that several levels appear, and
/// checks every destination against a serial exclusive scan.
fn emulate_three_phase(flags: &[u32], tile: usize) -> (Vec<u32>, u32) {
    let n = flags.len();
    let scan_tiles = |values: &[u32], out: &mut Vec<u32>| -> Vec<u32> {
        let mut totals = Vec::new();
        out.clear();
        for chunk in values.chunks(tile) {
            let mut running = 0u32;
            for &v in chunk {
                out.push(running);
                running += v;
            }
            totals.push(running);
        }
        totals
    };
    let mut positions = Vec::new();
    let mut levels = vec![scan_tiles(flags, &mut positions)];
    while levels.last().unwrap().len() > 1 {
        let mut scanned = Vec::new();
        let totals = scan_tiles(levels.last().unwrap(), &mut scanned);
        *levels.last_mut().unwrap() = scanned;
        levels.push(totals);
    }
    let top = levels.len() - 1;
    for k in (0..top.saturating_sub(1)).rev() {
        let upper = levels[k + 1].clone();
        for (i, v) in levels[k].iter_mut().enumerate() {
            *v += upper[i / tile];
        }
    }
    let destinations: Vec<u32> =
        (0..n).map(|i| positions[i] + if top >= 1 { levels[0][i / tile] } else { 0 }).collect();
    let count = destinations[n - 1] + flags[n - 1];
    (destinations, count)
}

#[test]
fn three_phase_destinations_equal_a_serial_exclusive_scan() {
    let mut state = 0x9e3779b97f4a7c15u64;
    for n in [1usize, 2, 3, 4, 5, 15, 16, 17, 63, 64, 65, 255, 256, 257, 1000, 4097] {
        for tile in [2usize, 4, 16] {
            let flags: Vec<u32> = (0..n)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    (state % 3 != 0) as u32
                })
                .collect();
            let (destinations, count) = emulate_three_phase(&flags, tile);
            let mut running = 0u32;
            for i in 0..n {
                assert_eq!(destinations[i], running, "n={n} tile={tile} i={i}");
                running += flags[i];
            }
            assert_eq!(count, running);
        }
    }
}

/// Emulates the single-pass tile's striped layout and packed-count scan:
/// the rank of every kept item is the number of kept items before it in
/// input order.
#[test]
fn single_pass_ranks_are_stable() {
    const THREADS: usize = BLOCK_THREADS as usize;
    const VECTORS: usize = SINGLE_PASS_TILE_ITEMS / THREADS / 4;
    const FIELD_MASK: u64 = (1 << PACKED_FIELD_BITS) - 1;
    let mut state = 0x2545f4914f6cdd1du64;
    for density in [0u64, 1, 2, 3, 4] {
        let keep: Vec<bool> = (0..SINGLE_PASS_TILE_ITEMS)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state % 4 < density
            })
            .collect();
        let item = |k: usize, t: usize, j: usize| (k * THREADS + t) * 4 + j;
        let packed: Vec<u64> = (0..THREADS)
            .map(|t| {
                (0..VECTORS)
                    .map(|k| {
                        ((0..4).filter(|&j| keep[item(k, t, j)]).count() as u64) << (PACKED_FIELD_BITS as usize * k)
                    })
                    .sum()
            })
            .collect();
        let total: u64 = packed.iter().sum();
        let mut prefix = 0u64;
        let mut ranks = vec![u32::MAX; SINGLE_PASS_TILE_ITEMS];
        for t in 0..THREADS {
            let mut row_start = 0u32;
            for k in 0..VECTORS {
                let mut rank = row_start + ((prefix >> (PACKED_FIELD_BITS as usize * k)) & FIELD_MASK) as u32;
                for j in 0..4 {
                    if keep[item(k, t, j)] {
                        ranks[item(k, t, j)] = rank;
                        rank += 1;
                    }
                }
                row_start += ((total >> (PACKED_FIELD_BITS as usize * k)) & FIELD_MASK) as u32;
            }
            prefix += packed[t];
        }
        let mut expected = 0u32;
        for i in 0..SINGLE_PASS_TILE_ITEMS {
            if keep[i] {
                assert_eq!(ranks[i], expected, "density {density}, item {i}");
                expected += 1;
            }
        }
    }
}

#[test]
fn mutant_builds_compile_cleanly() {
    assert_mutants_compile_cleanly(KernelFamily::Compact, &["sm_80", "sm_90"], &[9, 12]);
}

#[test]
fn variant_names_are_snake_case() {
    let names: Vec<_> = CompactVariant::ALL.iter().map(|v| v.name()).collect();
    assert_eq!(names, ["three_phase", "single_pass"]);
}

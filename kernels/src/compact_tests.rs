//! Tests of `kernels::compact`.

use super::*;
use crate::family_build_checks::{assert_kernels_present, assert_mutants_compile_cleanly};

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

/// `n` keep flags, two in three set, from the xorshift `state`.
fn random_flags(state: &mut u64, n: usize) -> Vec<u32> {
    (0..n)
        .map(|_| {
            *state ^= *state << 13;
            *state ^= *state >> 7;
            *state ^= *state << 17;
            (*state % 3 != 0) as u32
        })
        .collect()
}

#[test]
fn three_phase_destinations_equal_a_serial_exclusive_scan() {
    let mut state = 0x9e3779b97f4a7c15u64;
    for n in [1usize, 2, 3, 4, 5, 15, 16, 17, 63, 64, 65, 255, 256, 257, 1000, 4097] {
        for tile in [2usize, 4, 16] {
            let flags = random_flags(&mut state, n);
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
    assert_mutants_compile_cleanly(KernelFamily::Compact, &["sm_80", "sm_90"], &[9, 12, 21]);
}

#[test]
fn variant_names_are_snake_case() {
    let names: Vec<_> = CompactVariant::ALL.iter().map(|v| v.name()).collect();
    assert_eq!(names, ["three_phase", "single_pass"]);
}

/// The sizes past 2^32 the wide path is checked at: the sweep's large sizes
/// and the limit.
const PAST_2P32: [usize; 4] = [(1 << 32) + 333, (1 << 33) + 555, (1 << 32) + 1, MAX_LEN];

/// Past 2^32 the three-phase wide path scans windows of 2^30: they cover the
/// input once, in order; each starts at a multiple of the scan tile and of 4
/// items (the flag kernels' vector loads stay aligned); each window's scan
/// has the levels of a 2^30-item run (three, its positions below 2^30, so
/// u32), grids within the grid-stride cap, and the scratch of one window
/// (8 bytes an item) serves every window.
#[test]
fn wide_windows_past_2p32_stay_aligned_and_bounded() {
    for n in PAST_2P32 {
        let windows = wide_windows(n, WIDE_WINDOW);
        assert_eq!(windows.len(), n.div_ceil(WIDE_WINDOW), "n={n}");
        let mut next = 0;
        for &(start, len) in &windows {
            assert_eq!(start, next, "n={n}");
            assert!(len > 0 && len <= WIDE_WINDOW, "n={n}: window of {len}");
            assert_eq!(start % THREE_PHASE_TILE_ITEMS, 0, "n={n}: window at {start} starts a scan tile");
            assert_eq!((start * std::mem::size_of::<i32>()) % 16, 0, "n={n}: input window 16-byte aligned");
            assert_eq!(start % 4, 0, "n={n}: selector-flag window 4-byte aligned");
            let levels = three_phase_level_lens(len);
            assert!(levels.len() <= 3 && levels.iter().all(|&l| l <= 1 << 19), "n={n}: levels {levels:?}");
            assert!((1..=1 << 20).contains(&keep_flags_grid(len)), "n={n}");
            assert!((1..=1 << 20).contains(&grid_stride_grid(len)), "n={n}");
            next = start + len;
        }
        assert_eq!(next, n, "n={n}: the windows end at n");
        // One window's flags and positions: 8 bytes an item of the longest window.
        assert_eq!(8 * n.min(WIDE_WINDOW), 8 << 30, "n={n}");
    }
    assert_eq!(three_phase_level_lens(WIDE_WINDOW), vec![1 << 19, 256, 1]);
    assert_eq!(wide_windows((1 << 32) + 333, WIDE_WINDOW).last(), Some(&(1 << 32, 333)));
    assert_eq!(wide_windows(MAX_LEN, WIDE_WINDOW).len(), 1024, "1024 base words at the limit");
    assert_eq!(wide_windows(WIDE_WINDOW, WIDE_WINDOW), vec![(0, WIDE_WINDOW)]);
    assert_eq!(wide_windows(0, WIDE_WINDOW), vec![(0, 0)]);
}

/// The single pass's wide path keeps one block a tile: at 2^40 items
/// 2^40 / 5120 tiles, below the 2^31 - 1 blocks of a grid and u32 tile ids;
/// its look-back scratch is 16 bytes a tile after a 16-byte header.
#[test]
fn single_pass_tiles_fit_the_grid_at_the_limit() {
    assert_eq!(SINGLE_PASS_TILE_ITEMS, 5120);
    assert_eq!(single_pass_tiles(MAX_ITEMS), 838_861);
    assert_eq!(single_pass_tiles((1 << 32) + 333), 838_861);
    for n in PAST_2P32 {
        let tiles = single_pass_tiles(n);
        assert!(tiles * SINGLE_PASS_TILE_ITEMS >= n && (tiles - 1) * SINGLE_PASS_TILE_ITEMS < n, "n={n}");
    }
    assert_eq!(single_pass_tiles(MAX_LEN), 214_748_365);
    assert!(single_pass_tiles(MAX_LEN) as u64 <= GRID_MAX_BLOCKS);
    let scratch = |n: usize| crate::lookback::scratch_words(single_pass_tiles(n), 8) * 8;
    assert_eq!(scratch((1 << 32) + 333), 16 + 16 * 838_861);
    assert_eq!(scratch(MAX_LEN), 16 + 16 * 214_748_365, "3.4 GB of look-back at 2^40");
}

/// The u32 path's launches are what they always were: the flag kernel one
/// vector a thread, the grid-stride kernels one item a thread, both capped
/// at 2^20 blocks.
#[test]
fn grids_follow_the_length() {
    assert_eq!(keep_flags_grid(0), 1);
    assert_eq!(keep_flags_grid(1), 1);
    assert_eq!(keep_flags_grid(1024), 1);
    assert_eq!(keep_flags_grid(1025), 2);
    assert_eq!(keep_flags_grid(MAX_ITEMS), 1 << 20);
    assert_eq!(grid_stride_grid(257), 2);
    assert_eq!(grid_stride_grid(MAX_ITEMS), 1 << 20);
}

/// Emulates the wide three-phase path for a small window: each window
/// scanned on its own ([`emulate_three_phase`]), its destinations offset by
/// the base word the window before it wrote (word 0 zero), the last
/// window's base + count the count; every destination and the count equal a
/// serial exclusive scan of the whole, at window edges too.
#[test]
fn window_bases_chain_into_the_whole_scan() {
    let mut state = 0x3c6ef372fe94f82bu64;
    for n in [1usize, 3, 4, 5, 8, 9, 12, 13, 100, 1001] {
        let flags = random_flags(&mut state, n);
        for window in [4usize, 8, 12, 100] {
            let windows = wide_windows(n, window);
            let mut bases = vec![u64::MAX; windows.len()];
            bases[0] = 0;
            let mut count = u64::MAX;
            let mut destinations = vec![u64::MAX; n];
            for (w, &(start, len)) in windows.iter().enumerate() {
                let (local, kept) = emulate_three_phase(&flags[start..start + len], 4);
                let base = bases[w];
                for (i, &d) in local.iter().enumerate() {
                    destinations[start + i] = base + u64::from(d);
                }
                let next = base + u64::from(kept);
                if w + 1 == windows.len() {
                    count = next;
                } else {
                    bases[w + 1] = next;
                }
            }
            let mut running = 0u64;
            for i in 0..n {
                assert_eq!(destinations[i], running, "n={n} window={window} i={i}");
                running += u64::from(flags[i]);
            }
            assert_eq!(count, running, "n={n} window={window}");
        }
    }
}

/// `new_wide_with_window` takes multiples of 4 from 4 to 2^30 and names
/// what it refuses.
#[test]
fn windows_must_be_multiples_of_four_up_to_2p30() {
    for ok in [4, 8, 1 << 20, WIDE_WINDOW] {
        assert_eq!(check_window(ok), Ok(()), "{ok}");
    }
    for bad in [0, 1, 2, 6, WIDE_WINDOW + 4, 1 << 31] {
        let e = check_window(bad).expect_err("refused");
        assert!(e.contains(&bad.to_string()) && e.contains("multiple of 4"), "{e}");
    }
}

/// Every refusal is an `InvalidInput` naming the primitive, the variant and
/// n: too long for either path, a bad window, an enqueue of the other
/// width, buffers or flags of the wrong length.
#[test]
fn bad_input_is_refused_by_name() {
    let names = |e: GpuError, variant: &str, n: usize, what: &str| match e {
        GpuError::InvalidInput { primitive, variant: v, n: got, reason } => {
            assert_eq!((primitive, v, got), ("compact", variant, n), "{reason}");
            assert!(reason.contains(what), "{reason} should name {what}");
        }
        other => panic!("{other:?} is not InvalidInput"),
    };
    let (three, single) = (CompactVariant::ThreePhase, CompactVariant::SinglePass);
    assert!(check_len(three, MAX_ITEMS).is_ok());
    names(check_len(three, MAX_ITEMS + 1).unwrap_err(), "three_phase", MAX_ITEMS + 1, "new_wide");
    assert!(check_wide_len(single, MAX_LEN, WIDE_WINDOW).is_ok());
    names(check_wide_len(single, MAX_LEN + 1, WIDE_WINDOW).unwrap_err(), "single_pass", MAX_LEN + 1, "2^40");
    names(check_wide_len(three, 100, 6).unwrap_err(), "three_phase", 100, "multiple of 4");

    let n = (1 << 32) + 333;
    let wide = Built { variant: three, selector: SelectorKind::Flags, n, width: Width::U64 };
    assert!(wide.check_call(Width::U64, n, Some(n), n, 1).is_ok());
    names(wide.check_call(Width::U32, n, Some(n), n, 1).unwrap_err(), "three_phase", n, "enqueue_wide");
    names(wide.check_call(Width::U64, n - 1, Some(n), n, 1).unwrap_err(), "three_phase", n, "input");
    names(wide.check_call(Width::U64, n, Some(n), n + 1, 1).unwrap_err(), "three_phase", n, "output");
    names(wide.check_call(Width::U64, n, Some(n), n, 0).unwrap_err(), "three_phase", n, "count");
    names(wide.check_call(Width::U64, n, None, n, 1).unwrap_err(), "three_phase", n, "flagged");
    names(wide.check_call(Width::U64, n, Some(n - 4), n, 1).unwrap_err(), "three_phase", n, "flags");
    let narrow = Built { variant: single, selector: SelectorKind::Positive, n: 7, width: Width::U32 };
    assert!(narrow.check_call(Width::U32, 7, None, 7, 1).is_ok());
    names(narrow.check_call(Width::U64, 7, None, 7, 1).unwrap_err(), "single_pass", 7, "CompactPlan::new)");
    names(narrow.check_call(Width::U32, 7, Some(7), 7, 1).unwrap_err(), "single_pass", 7, "positive");
    names(check_selector(single, Selector::Flags(&[1, 0]), 3).unwrap_err(), "single_pass", 3, "2 flags");
}

/// Every kernel a plan of either width launches is in the compiled module.
#[test]
fn every_kernel_the_plans_launch_is_compiled() {
    let mut names: Vec<String> =
        ["compact_scan_tiles", "compact_add_tile_offsets", "compact_scatter", "compact_scatter_window"]
            .map(String::from)
            .to_vec();
    for selector in [SelectorKind::Positive, SelectorKind::Flags] {
        names.push(format!("compact_keep_flags_{}", selector.name()));
        for suffix in ["", "_c64"] {
            names.push(format!("compact_single_pass_{}{suffix}", selector.name()));
        }
    }
    assert_kernels_present(KernelFamily::Compact, &names);
}

/// A wide plan's scratch: at most 8.6 GB for three-phase whatever n (one
/// window), 16 bytes a 5120-item tile for the single pass.
#[test]
fn wide_scratch_is_bounded_by_one_window() {
    assert_eq!(wide_scratch_bytes(CompactVariant::ThreePhase, 0), 0);
    assert_eq!(wide_scratch_bytes(CompactVariant::SinglePass, 0), 0);
    assert_eq!(wide_scratch_bytes(CompactVariant::ThreePhase, 4096), 8 * 4096 + 4 * (2 + 1) + 8);
    let window = 8 * WIDE_WINDOW as u64 + 4 * ((1 << 19) + 256 + 1);
    assert_eq!(wide_scratch_bytes(CompactVariant::ThreePhase, (1 << 32) + 333), window + 8 * 5);
    assert_eq!(wide_scratch_bytes(CompactVariant::ThreePhase, MAX_LEN), window + 8 * 1024);
    assert_eq!(wide_scratch_bytes(CompactVariant::SinglePass, (1 << 32) + 333), 16 + 16 * 838_861);
}

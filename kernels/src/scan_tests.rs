//! Tests of `kernels::scan`.

use super::*;
use crate::family_build_checks::{assert_kernels_present, assert_mutants_compile_cleanly};

/// The shared limits are tested in `int_element_tests.rs`; the tile ids of
/// the longest input fit u32.
#[test]
fn names_round_trip_and_tile_ids_fit() {
    for v in ScanVariant::ALL {
        assert_eq!(ScanVariant::from_name(v.name()), Some(v));
    }
    assert!(MAX_LEN.div_ceil(LOOKBACK_TILE_ITEMS) <= u32::MAX as usize);
}

/// `n` maps from the 64-bit LCG state `seed` (Knuth's MMIX constants), advanced once per map:
/// multiplier `state | 1` (odd, so no map collapses the input), offset `state >> 7`.
fn random_maps(n: usize, seed: &mut u64) -> Vec<AffineMap> {
    (0..n)
        .map(|_| {
            *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            AffineMap::new(*seed | 1, *seed >> 7)
        })
        .collect()
}

#[test]
fn blelloch_levels_at_the_recursion_boundaries() {
    // (items, levels): no items launch nothing; each power of the 512-item block width is the
    // last size of its level.
    let cube = 512 * 512 * 512;
    let boundaries = [(1, 1), (512, 1), (513, 2), (262_144, 2), (262_145, 3), (cube, 3), (cube + 1, 4), (MAX_LEN, 4)];
    for (n, levels) in [(0, 0)].into_iter().chain(boundaries) {
        assert_eq!(blelloch_levels(n), levels, "levels of {n} items");
    }
    assert_eq!(blelloch_level_sizes(262_145), vec![262_145, 513, 2]);
}

/// A pure-Rust emulation of the whole Blelloch recursion as the plan
/// launches it (level scans, totals, offsets added top-down, inclusive
/// via exclusive (+) x), checked against a serial scan, for the affine
/// operator so that order matters.
#[test]
fn blelloch_recursion_emulation_matches_serial() {
    fn block_scan(data: &mut [AffineMap], totals: &mut [AffineMap], inclusive: bool) {
        for (b, chunk) in data.chunks_mut(BLELLOCH_BLOCK_ITEMS).enumerate() {
            let mut running = AffineMap::IDENTITY;
            for x in chunk.iter_mut() {
                let next = AffineMap::combine(running, *x);
                *x = if inclusive { next } else { running };
                running = next;
            }
            totals[b] = running;
        }
    }
    fn add_offsets(data: &mut [AffineMap], offsets: &[AffineMap]) {
        for (b, chunk) in data.chunks_mut(BLELLOCH_BLOCK_ITEMS).enumerate() {
            chunk.iter_mut().for_each(|x| *x = AffineMap::combine(offsets[b], *x));
        }
    }
    let mut seed = 3u64;
    for &n in &[1usize, 511, 512, 513, 4099, 262_144, 262_145, 300_001] {
        let input = random_maps(n, &mut seed);
        for inclusive in [false, true] {
            let sizes = blelloch_level_sizes(n);
            let mut totals: Vec<Vec<AffineMap>> =
                sizes.iter().map(|&m| vec![AffineMap::IDENTITY; blelloch_grid(m) as usize]).collect();
            let mut out = input.clone();
            block_scan(&mut out, &mut totals[0], inclusive);
            for k in 1..sizes.len() {
                let (low, high) = totals.split_at_mut(k);
                block_scan(&mut low[k - 1], &mut high[0], false);
            }
            for k in (1..sizes.len()).rev() {
                if k == 1 {
                    add_offsets(&mut out, &totals[0]);
                } else {
                    let (low, high) = totals.split_at_mut(k - 1);
                    add_offsets(&mut low[k - 2], &high[0]);
                }
            }
            let mut running = AffineMap::IDENTITY;
            for (i, x) in input.iter().enumerate() {
                let next = AffineMap::combine(running, *x);
                assert_eq!(out[i], if inclusive { next } else { running }, "n={n} i={i}");
                running = next;
            }
        }
    }
}

/// `tile_io.cuh`'s shared slot of 16-byte vector `v` when a thread owns
/// `per_thread` vectors: padded by one per 8 for an even count.
fn exchange_slot(v: usize, per_thread: usize) -> usize {
    if per_thread % 2 == 0 {
        v + v / 8
    } else {
        v
    }
}

/// The tile layer's shared-memory layout: every 8-thread phase of a 16-byte
/// access (a quarter warp) touches 8 distinct 4-bank groups in the striped
/// (global side) and the blocked (thread side) pattern when a thread owns an
/// odd or power-of-two number of vectors, and at most two threads share a
/// group otherwise (e.g. 10 vectors: the int64 stores of 20 items). Checked for
/// the vector counts the look-back policy uses, int32 loads (4 items a
/// vector) and int64 stores (2 a vector), and others.
#[test]
fn tile_exchange_padding_is_conflict_free() {
    for group in [32usize, LOOKBACK_BLOCK_THREADS as usize] {
        for per_thread in [LOOKBACK_ITEMS_PER_THREAD / 4, LOOKBACK_ITEMS_PER_THREAD / 2, 1, 2, 3, 4, 5, 6, 8] {
            let allowed = if per_thread % 2 == 1 || per_thread.is_power_of_two() { 1 } else { 2 };
            let worst = |index: &dyn Fn(usize) -> usize| {
                (0..group / 8)
                    .map(|phase| {
                        let mut count = [0usize; 8];
                        (0..8).for_each(|i| count[exchange_slot(index(phase * 8 + i), per_thread) % 8] += 1);
                        count.into_iter().max().unwrap_or(0)
                    })
                    .max()
                    .unwrap_or(0)
            };
            for k in 0..per_thread {
                let w = worst(&|t| k * group + t);
                assert!(w <= allowed, "striped k={k}, {per_thread} vectors a thread, group {group}: {w}-way");
            }
            for j in 0..per_thread {
                let w = worst(&|t| per_thread * t + j);
                assert!(w <= allowed, "blocked j={j}, {per_thread} vectors a thread, group {group}: {w}-way");
            }
        }
    }
}

/// A transcription of `TileExchange::load`: thread t's blocked items of one
/// tile whose first `valid` items are real (`vector_items` items a 16-byte
/// vector, striped through padded slots), `oob` past them.
fn exchange_load<T: Copy>(
    tile: &[T],
    valid: usize,
    (threads, items, vector_items): (usize, usize, usize),
    oob: T,
) -> Vec<Vec<T>> {
    let per_thread = items / vector_items;
    let mut slots = vec![None; threads * per_thread + threads * per_thread / 8];
    for t in 0..threads {
        for k in 0..per_thread {
            let v = k * threads + t;
            let vector: Vec<T> = (0..vector_items)
                .map(|e| if v * vector_items + e < valid { tile[v * vector_items + e] } else { oob })
                .collect();
            let s = exchange_slot(v, per_thread);
            assert!(slots[s].is_none(), "slot {s} stored twice");
            slots[s] = Some(vector);
        }
    }
    (0..threads)
        .map(|t| {
            (0..per_thread)
                .flat_map(|j| slots[exchange_slot(per_thread * t + j, per_thread)].clone().expect("stored slot"))
                .collect()
        })
        .collect()
}

/// A transcription of `TileExchange::store`: writes thread t's blocked items
/// of one tile, only the first `valid`, each exactly once.
fn exchange_store<T: Copy>(
    blocked: &[Vec<T>],
    valid: usize,
    (threads, items, vector_items): (usize, usize, usize),
    out: &mut [Option<T>],
) {
    let per_thread = items / vector_items;
    let mut slots = vec![None; threads * per_thread + threads * per_thread / 8];
    for (t, mine) in blocked.iter().enumerate() {
        for j in 0..per_thread {
            slots[exchange_slot(per_thread * t + j, per_thread)] =
                Some(mine[j * vector_items..(j + 1) * vector_items].to_vec());
        }
    }
    for t in 0..threads {
        for k in 0..per_thread {
            let v = k * threads + t;
            let vector = slots[exchange_slot(v, per_thread)].clone().expect("staged slot");
            for (e, &x) in vector.iter().enumerate() {
                let item = v * vector_items + e;
                if item < valid {
                    assert!(out[item].is_none(), "item {item} written twice");
                    out[item] = Some(x);
                }
            }
        }
    }
}

/// `LookbackScan` transcribed for the affine operator (order matters): per
/// tile, the tile layer's load, the thread-serial scan, the exclusive scan
/// of thread totals, out = tile prefix . thread prefix . local, the tile
/// layer's store; tiles in order with the previous tiles' composition as
/// the prefix. Checked against a serial scan over the policy's shape and
/// others, at sizes around the tile boundaries.
#[test]
fn lookback_tile_emulation_matches_serial() {
    let compose = AffineMap::combine;
    let shapes = [(LOOKBACK_BLOCK_THREADS as usize, LOOKBACK_ITEMS_PER_THREAD), (64, 4), (32, 12), (96, 8)];
    let mut seed = 11u64;
    for (threads, items) in shapes {
        let tile_items = threads * items;
        for n in [1, 2, 31, 33, tile_items - 1, tile_items, tile_items + 1, 2 * tile_items + 3, 3 * tile_items] {
            let input = random_maps(n, &mut seed);
            for inclusive in [false, true] {
                let mut out = vec![None; n];
                let mut prefix = AffineMap::IDENTITY;
                for tile_base in (0..n).step_by(tile_items) {
                    let valid = (n - tile_base).min(tile_items);
                    // int32 loads move 4 items a vector, int64 stores 2, affine maps 1;
                    // the result may not depend on it.
                    let vector_items = [1, 2, 4][tile_base / tile_items % 3];
                    // The tile moves through the block or through each warp (its
                    // own slice of the tile): the same blocked arrangement.
                    let group = if tile_base / tile_items % 2 == 0 { threads } else { 32.min(threads) };
                    let mut x = Vec::new();
                    for first in (0..tile_items).step_by(group * items) {
                        let group_valid = valid.saturating_sub(first).min(group * items);
                        let tile = &input[(tile_base + first).min(n)..];
                        x.extend(exchange_load(tile, group_valid, (group, items, vector_items), AffineMap::IDENTITY));
                    }
                    let mut thread_prefix = AffineMap::IDENTITY;
                    let mut blocked = Vec::new();
                    for mine in &x {
                        let mut running = AffineMap::IDENTITY;
                        let mut local = Vec::new();
                        for &item in mine {
                            let next = compose(running, item);
                            local.push(if inclusive { next } else { running });
                            running = next;
                        }
                        let base = compose(prefix, thread_prefix);
                        blocked.push(local.into_iter().map(|l| compose(base, l)).collect::<Vec<_>>());
                        thread_prefix = compose(thread_prefix, running);
                    }
                    for (g, first) in (0..tile_items).step_by(group * items).enumerate() {
                        let group_valid = valid.saturating_sub(first).min(group * items);
                        let start = (tile_base + first).min(n);
                        let mine = &blocked[g * group..(g + 1) * group];
                        exchange_store(mine, group_valid, (group, items, vector_items), &mut out[start..]);
                    }
                    prefix = compose(prefix, thread_prefix);
                }
                let mut running = AffineMap::IDENTITY;
                for (i, &x) in input.iter().enumerate() {
                    let next = compose(running, x);
                    assert_eq!(out[i], Some(if inclusive { next } else { running }), "{threads}x{items} n={n} i={i}");
                    running = next;
                }
                assert_eq!(prefix, running, "{threads}x{items} n={n}: tile totals");
            }
        }
    }
}

/// Every kernel the plans launch exists in the compiled module, and each
/// planted mutant of this family still compiles without a warning.
#[test]
fn kernels_exist_and_mutants_compile() {
    let mut names = Vec::new();
    for (t, o) in [("i32", "i64"), ("affine", "affine")] {
        for k in ScanKind::ALL.map(|k| k.name()) {
            names.push(format!("scan_serial_{k}_{t}"));
            names.push(format!("scan_blelloch_level_{k}_{t}"));
            names.push(format!("scan_decoupled_lookback_{k}_{t}"));
        }
        names.push(format!("scan_blelloch_level_inplace_{o}"));
        names.push(format!("scan_blelloch_add_offsets_{o}"));
        names.push(format!("scan_blelloch_add_offsets_totals_{o}"));
    }
    assert_kernels_present(KernelFamily::Scan, &names);
    assert_mutants_compile_cleanly(KernelFamily::Scan, &["sm_90"], &[5, 7, 13]);
}

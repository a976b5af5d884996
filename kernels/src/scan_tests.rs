//! Tests of `kernels::scan`.

use super::*;
use crate::family_build_checks::{assert_kernels_present, assert_mutants_compile_cleanly};

/// The limits are tested in `int_element_tests.rs`; the tile ids of the
/// longest look-back input fit a grid, so u32 (and 31 bits).
#[test]
fn names_round_trip_and_tile_ids_fit() {
    for v in ScanVariant::ALL {
        assert_eq!(ScanVariant::from_name(v.name()), Some(v));
    }
    assert_eq!(LOOKBACK_MAX_LEN.div_ceil(LOOKBACK_TILE_ITEMS) as u64, MAX_GRID_BLOCKS);
    const { assert!(MAX_GRID_BLOCKS < 1 << 31) };
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
    let boundaries = [(1, 1), (512, 1), (513, 2), (262_144, 2), (262_145, 3), (cube, 3), (cube + 1, 4)];
    let boundaries = boundaries.into_iter().chain([(1 << 36, 4), ((1 << 36) + 1, 5), (MAX_LEN, 5)]);
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
                sizes.iter().map(|&m| vec![AffineMap::IDENTITY; blelloch_grid(m).unwrap() as usize]).collect();
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

/// Sizes the plans past 2^32 are built for: both sides of 2^32, a few
/// hundred and a few tiles past it, past 2^33 (the sweep's sizes among
/// them), past 512^4 = 2^36 (a fifth Blelloch level) and the largest n
/// every variant but the serial one accepts.
const PAST_2_32: [usize; 11] = [
    (1 << 32) - 1,
    1 << 32,
    (1 << 32) + 1,
    (1 << 32) + 333,
    (1 << 32) + 4099,
    (1 << 32) + 3 * 4480 + 7,
    (1 << 33) + 555,
    (1 << 33) + (1 << 20) + 7,
    (1 << 36) + 1,
    (1 << 39) + 12_345,
    MAX_LEN,
];

fn ceil(a: u128, b: u128) -> u128 {
    a.div_ceil(b).max(1)
}

/// Checks `g` against the geometry recomputed here in u128 from the kernel
/// shapes (512 items a Blelloch block of 256 threads; a look-back tile of
/// 224 threads x 20 items, one descriptor of 2 (int64) or 4 (affine) words
/// each behind a 2-word header).
fn assert_geometry<E: ScanElement>(variant: ScanVariant, n: usize, g: &ScanGeometry) {
    let what = format!("{} {} n={n}", E::INPUT_SUFFIX, variant.name());
    let n128 = n as u128;
    match variant {
        ScanVariant::Serial => unreachable!(),
        ScanVariant::Blelloch => {
            let mut sizes = vec![n128];
            while *sizes.last().unwrap() > 512 {
                sizes.push(ceil(*sizes.last().unwrap(), 512));
            }
            let levels = sizes.len();
            // The closed form: the fewest L with 512^L >= n.
            assert_eq!(levels, (1..).find(|&l| 512u128.pow(l as u32) >= n128).unwrap(), "{what}");
            assert_eq!(g.launches.len(), 2 * levels - 1, "{what}: L level scans and L - 1 offset launches");
            for (k, launch) in g.launches[..levels].iter().enumerate() {
                let want = (ScanStep::Level(k), ceil(sizes[k], 512), 256, sizes[k]);
                assert_eq!((launch.step, launch.grid as u128, launch.block, launch.items as u128), want, "{what}");
            }
            // Offsets top level first: level k's scanned totals into level k - 1's data.
            for (launch, k) in g.launches[levels..].iter().zip((1..levels).rev()) {
                let want = (ScanStep::AddOffsets { into: k - 1 }, ceil(sizes[k - 1], 512), 256, sizes[k - 1]);
                assert_eq!((launch.step, launch.grid as u128, launch.block, launch.items as u128), want, "{what}");
            }
            // totals[k] holds one slot per block of level k, and is level k + 1's items.
            let totals: Vec<u128> = g.totals.iter().map(|&t| t as u128).collect();
            assert_eq!(totals, sizes.iter().map(|&m| ceil(m, 512)).collect::<Vec<_>>(), "{what}");
            assert_eq!(&totals[..levels - 1], &sizes[1..], "{what}");
            assert_eq!(totals[levels - 1], 1, "{what}: the top level is one block");
            assert_eq!((g.tiles, g.scratch_words), (0, 0), "{what}");
        }
        ScanVariant::DecoupledLookback => {
            let tiles = ceil(n128, 4480);
            let launch = g.launches[0];
            assert_eq!(g.launches.len(), 1, "{what}");
            assert_eq!((launch.step, launch.grid as u128, launch.block), (ScanStep::Lookback, tiles, 224), "{what}");
            assert_eq!(launch.items as u128, n128, "{what}");
            assert_eq!(g.tiles as u128, tiles, "{what}");
            let per_tile = if std::mem::size_of::<E::Output>() == 8 { 2 } else { 4 };
            assert_eq!(g.scratch_words as u128, 2 + per_tile * tiles, "{what}");
            assert!(g.totals.is_empty(), "{what}");
            // Every tile id (0 .. tiles - 1) fits the kernel's u32 and the
            // counter that hands them out ends at `tiles`, below 2^31.
            assert!(tiles < 1 << 31, "{what}");
        }
    }
    for launch in &g.launches {
        assert!(launch.grid >= 1 && u64::from(launch.grid) <= MAX_GRID_BLOCKS, "{what}: grid {}", launch.grid);
    }
}

/// Every variant but the serial baseline builds the geometry its kernels
/// need at every size past 2^32, for both element types: grids, tiles,
/// level counts, items per launch and scratch exactly as recomputed in
/// u128.
#[test]
fn plans_past_2_32_have_the_right_grids_tiles_and_levels() {
    fn stamp<E: ScanElement>() {
        let lookback_only = [LOOKBACK_MAX_LEN - 1, LOOKBACK_MAX_LEN];
        for variant in [ScanVariant::Blelloch, ScanVariant::DecoupledLookback] {
            let extra = if variant == ScanVariant::DecoupledLookback { &lookback_only[..] } else { &[] };
            for &n in PAST_2_32.iter().chain(extra) {
                assert!(n <= variant.max_len(), "{} accepts {n}", variant.name());
                let g = ScanGeometry::new::<E>(variant, n).unwrap_or_else(|e| panic!("{n}: {e}"));
                assert_geometry::<E>(variant, n, &g);
            }
        }
    }
    stamp::<i32>();
    stamp::<AffineMap>();
}

/// The same plans written out, so a change of policy or rounding shows as
/// a number: 2^32 + 333 and 2^33 + 555 items (the sweep's sizes).
#[test]
fn plans_past_2_32_in_numbers() {
    let launches = |variant, n| {
        let g = ScanGeometry::new::<i32>(variant, n).unwrap();
        g.launches.iter().map(|l| (l.grid, l.items)).collect::<Vec<_>>()
    };
    let (a, b) = ((1usize << 32) + 333, (1usize << 33) + 555);
    // Four levels (512^3 < n <= 512^4), then the offsets into levels 2, 1 and the output.
    assert_eq!(
        launches(ScanVariant::Blelloch, a),
        vec![
            (8_388_609, 4_294_967_629),
            (16_385, 8_388_609),
            (33, 16_385),
            (1, 33),
            (33, 16_385),
            (16_385, 8_388_609),
            (8_388_609, 4_294_967_629)
        ]
    );
    let g = ScanGeometry::new::<i32>(ScanVariant::Blelloch, b).unwrap();
    assert_eq!(g.totals, vec![16_777_218, 32_769, 65, 1]);
    assert_eq!(g.scratch_bytes::<i32>(), 8 * (16_777_218 + 32_769 + 65 + 1));
    assert_eq!(launches(ScanVariant::DecoupledLookback, a), vec![(958_699, 4_294_967_629)]);
    assert_eq!(launches(ScanVariant::DecoupledLookback, b), vec![(1_917_397, 8_589_935_147)]);
    let g = ScanGeometry::new::<i32>(ScanVariant::DecoupledLookback, b).unwrap();
    assert_eq!((g.tiles, g.scratch_words), (1_917_397, 2 + 2 * 1_917_397));
    let g = ScanGeometry::new::<AffineMap>(ScanVariant::DecoupledLookback, b).unwrap();
    assert_eq!(g.scratch_bytes::<AffineMap>(), 8 * (2 + 4 * 1_917_397));
    // Past 2^36 the recursion takes a fifth level.
    let g = ScanGeometry::new::<i32>(ScanVariant::Blelloch, (1 << 36) + 1).unwrap();
    assert_eq!(g.totals, vec![134_217_729, 262_145, 513, 2, 1]);
    assert_eq!(blelloch_levels(MAX_LEN), 5);
}

/// Past each grid limit the geometry is refused with the reason, and each
/// variant's `max_len()` is that limit exactly; the error of a too-long
/// input names it.
#[test]
fn the_limits_are_the_grid_limits() {
    assert_eq!(BLELLOCH_MAX_LEN, (1 << 40) - 512);
    assert_eq!(LOOKBACK_MAX_LEN, ((1 << 31) - 1) * 4480);
    assert_eq!(MAX_LEN, BLELLOCH_MAX_LEN);
    for (variant, limit) in
        [(ScanVariant::Blelloch, BLELLOCH_MAX_LEN), (ScanVariant::DecoupledLookback, LOOKBACK_MAX_LEN)]
    {
        assert_eq!(variant.max_len(), limit);
        assert!(ScanGeometry::new::<i32>(variant, limit).is_ok());
        let e = ScanGeometry::new::<AffineMap>(variant, limit + 1).unwrap_err();
        assert!(e.contains("2147483648 blocks") && e.contains("2147483647"), "{e}");
        for e in [check_len::<i32>(variant, limit + 1), ScanPlan::<i32>::device_bytes(variant, limit + 1).map(|_| ())] {
            let e = e.unwrap_err().to_string();
            assert!(e.contains(&format!("at most {limit} elements")), "{e}");
            assert!(e.contains(&format!("scan/{} n={}", variant.name(), limit + 1)), "{e}");
        }
        assert!(check_len::<AffineMap>(variant, limit).is_ok());
        assert!(ScanGeometry::new::<i32>(variant, 0).is_err());
    }
    // The look-back takes what Blelloch refuses.
    assert!(check_len::<i32>(ScanVariant::DecoupledLookback, BLELLOCH_MAX_LEN + 1).is_ok());
    let e = check_len::<i32>(ScanVariant::Serial, SERIAL_MAX_LEN + 1).unwrap_err().to_string();
    assert!(e.contains(&format!("at most {SERIAL_MAX_LEN} elements")), "{e}");
    // The device bytes: input, then output and scratch.
    let n = (1usize << 33) + 555;
    let (input, other) = ScanPlan::<i32>::device_bytes(ScanVariant::DecoupledLookback, n).unwrap();
    assert_eq!((input, other), (4 * n as u64, 8 * n as u64 + 8 * (2 + 2 * 1_917_397)));
}

/// A line of a kernel source that a host twin below mirrors, `count` times:
/// the test fails when the kernel's arithmetic changes and its twin does not.
fn assert_kernel_line(file: &str, line: &str, count: usize) {
    let source = crate::sources::source(file).unwrap_or_else(|| panic!("{file} is embedded"));
    assert_eq!(source.matches(line).count(), count, "{file} no longer holds {count} times: {line}");
}

/// The Blelloch kernels' offsets (the u64 lines of `blelloch_level` and
/// `blelloch_add_offsets`) for the last blocks of every level at sizes past
/// 2^32: each block's first item is below its level's count, its two slots
/// per thread load exactly the rest up to 512, its total lands in a slot of
/// the next level, and a 32-bit offset would have wrapped there.
#[test]
fn blelloch_offsets_past_2_32_are_exact() {
    assert_kernel_line("scan.cu", "const u64 base = (u64)blockIdx.x * kBlockItems;", 2);
    assert_kernel_line("scan.cu", "const u64 i0 = base + t;", 1);
    assert_kernel_line("scan.cu", "const u64 i1 = base + t + kBlockThreads;", 1);
    assert_kernel_line("scan.cu", "if (t == 0) totals[blockIdx.x] = total;", 1);
    assert_kernel_line("scan.cu", "const u64 i = base + threadIdx.x + (u64)k * kBlockThreads;", 1);
    assert_eq!((BLELLOCH_BLOCK_ITEMS, BLOCK_THREADS), (512, 256));
    for n in PAST_2_32.into_iter().filter(|&n| n > 1 << 32) {
        let g = ScanGeometry::new::<i32>(ScanVariant::Blelloch, n).unwrap();
        for launch in &g.launches {
            let (count, grid) = (launch.items, u64::from(launch.grid));
            for block in [grid.saturating_sub(2), grid - 1] {
                let base = block * 512;
                assert!(base < count, "n={n} {:?}: block {block} has an item", launch.step);
                let wrapped = u64::from((block as u32).wrapping_mul(512));
                assert_eq!(wrapped == base, base <= u32::MAX as u64, "n={n}");
                // Thread t loads slots t and t + 256 (i0, i1), the identity past count.
                let loaded: u64 =
                    (0..256u64).map(|t| u64::from(base + t < count) + u64::from(base + t + 256 < count)).sum();
                assert_eq!(loaded, (count - base).min(512), "n={n} {:?} block {block}", launch.step);
                // The add-offsets loop (k = 0, 1) touches the same items.
                let added: u64 =
                    (0..256u64).map(|t| (0..2u64).filter(|k| base + t + k * 256 < count).count() as u64).sum();
                assert_eq!(added, loaded, "n={n} block {block}");
                // A level scan's total goes to totals[block] of its level.
                if let ScanStep::Level(k) = launch.step {
                    assert!(block < g.totals[k], "n={n} level {k} block {block}");
                }
            }
        }
        // Level 0's last block starts past 2^32.
        assert!((u64::from(g.launches[0].grid) - 1) * 512 > u32::MAX as u64, "n={n}");
    }
}

/// The look-back kernel's tile base (`(u64)tile_id * kTileItems`, u64) and
/// the partial last tile's `u32(count - tile_base)` at sizes past 2^32:
/// every tile id below the grid (u32, 31 bits), every tile but the last
/// whole, the last holding 1..=4480 items (at a base past 2^32 from 2^32 +
/// 4480 on), split over
/// the warp groups of the tile exactly.
#[test]
fn lookback_tiles_past_2_32_are_exact() {
    assert_kernel_line("scan.cu", "const u64 tile_base = (u64)tile_id * kTileItems;", 1);
    assert_kernel_line("scan.cu", "if (tile_base + kTileItems <= count) {", 1);
    assert_kernel_line(
        "scan.cu",
        "tile<false>(in + tile_base, out + tile_base, u32(count - tile_base), tile_id, status, storage);",
        1,
    );
    assert_kernel_line(
        "scan.cu",
        "const u32 group_valid = valid > group_first ? min(valid - group_first, u32(kGroupItems)) : 0u;",
        1,
    );
    assert_kernel_line("common/decoupled_lookback.cuh", "*shared_slot = atomicAdd(tile_counter, 1u);", 1);
    let tile = LOOKBACK_TILE_ITEMS as u64;
    let group_items = u64::from(SCAN.exchange_threads) * LOOKBACK_ITEMS_PER_THREAD as u64;
    for n in PAST_2_32.into_iter().chain([LOOKBACK_MAX_LEN]).filter(|&n| n > 1 << 32) {
        let g = ScanGeometry::new::<i32>(ScanVariant::DecoupledLookback, n).unwrap();
        let (n, tiles) = (n as u64, g.tiles);
        assert!(tiles - 1 <= u64::from(u32::MAX >> 1), "n={n}: the last tile id fits 31 bits");
        for id in [tiles.saturating_sub(2), tiles - 1] {
            let base = id * tile;
            let whole = base + tile <= n;
            assert_eq!(whole, id + 1 < tiles || n % tile == 0, "n={n}: only the last tile is partial");
            let valid = (n - base).min(tile);
            assert!(valid >= 1 && u64::from(valid as u32) == valid, "n={n} tile {id}");
            let wrapped = u64::from((id as u32).wrapping_mul(tile as u32));
            assert_eq!(wrapped == base, base <= u32::MAX as u64, "n={n}");
            let split: u64 = (0..tile / group_items)
                .map(|group| {
                    let first = group * group_items;
                    if valid > first {
                        (valid - first).min(group_items)
                    } else {
                        0
                    }
                })
                .sum();
            assert_eq!(split, valid, "n={n} tile {id}");
        }
        assert!((tiles - 1) * tile < n, "n={n}");
        if n > u32::MAX as u64 + tile {
            assert!((tiles - 1) * tile > u32::MAX as u64, "n={n}: the last tile starts past 2^32");
        }
    }
}

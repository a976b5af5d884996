//! Tests of `kernels::scan`.

use super::*;

#[test]
fn names_round_trip_and_limits() {
    for v in ScanVariant::ALL {
        assert_eq!(ScanVariant::from_name(v.name()), Some(v));
    }
    assert_eq!(ScanVariant::Serial.max_len(), 1 << 22);
    assert_eq!(ScanVariant::DecoupledLookback.max_len(), (1usize << 32) - 1);
    assert!((MAX_LEN as u128) * (1u128 << 31) < (1u128 << 63));
    assert!(MAX_LEN.div_ceil(LOOKBACK_TILE_ITEMS_AFFINE) <= u32::MAX as usize);
}

#[test]
fn blelloch_levels_at_the_recursion_boundaries() {
    assert_eq!(blelloch_levels(0), 0);
    assert_eq!(blelloch_levels(1), 1);
    assert_eq!(blelloch_levels(512), 1);
    assert_eq!(blelloch_levels(513), 2);
    assert_eq!(blelloch_levels(262_144), 2);
    assert_eq!(blelloch_levels(262_145), 3);
    assert_eq!(blelloch_levels(512 * 512 * 512), 3);
    assert_eq!(blelloch_levels(512 * 512 * 512 + 1), 4);
    assert_eq!(blelloch_levels(MAX_LEN), 4);
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
        let input: Vec<AffineMap> = (0..n)
            .map(|_| {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                AffineMap::new(seed | 1, seed >> 7)
            })
            .collect();
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

/// The look-back kernel's shared-memory padding, slot(v) = v + v/8 in
/// 16-byte units: every 8-thread phase of a 16-byte access touches 8
/// distinct 4-bank groups (no bank conflict) in all four patterns, and
/// the slots stay inside the arrays.
#[test]
fn lookback_shared_memory_padding_is_conflict_free() {
    let slot = |v: usize| v + v / 8;
    let bank_group = |s: usize| s % 8; // 16-byte slot -> its 4 banks of 32
    let conflict_free = |index: &dyn Fn(usize) -> usize| {
        (0..BLOCK_THREADS as usize / 8).all(|phase| {
            let mut groups: Vec<usize> = (0..8).map(|i| bank_group(slot(index(phase * 8 + i)))).collect();
            groups.sort();
            groups.dedup();
            groups.len() == 8
        })
    };
    let (in_vectors, out_pairs) = (LOOKBACK_TILE_ITEMS_I32 / 4, LOOKBACK_TILE_ITEMS_I32 / 2);
    for k in 0..4 {
        assert!(conflict_free(&|t| k * 256 + t), "load store k={k}");
    }
    for j in 0..4 {
        assert!(conflict_free(&|t| 4 * t + j), "thread read j={j}");
    }
    for j in 0..8 {
        assert!(conflict_free(&|t| 8 * t + j), "thread write j={j}");
    }
    for k in 0..8 {
        assert!(conflict_free(&|t| k * 256 + t), "store read k={k}");
    }
    assert!(slot(in_vectors - 1) < in_vectors + in_vectors / 8);
    assert!(slot(out_pairs - 1) < out_pairs + out_pairs / 8);
    // Thread t's 4 vectors are its 16 consecutive items; every vector is owned once.
    let mut owned = vec![0; in_vectors];
    (0..256).for_each(|t| (0..4).for_each(|j| owned[4 * t + j] += 1));
    assert!(owned.iter().all(|&c| c == 1));
}

/// A transcription of `lookback_scan_i32`'s index arithmetic (vector
/// loads into padded shared slots, 16 consecutive items per thread, the
/// pair store transpose, partial-tile guards), tile after tile with the
/// previous tiles' total as the prefix, against a serial scan.
#[test]
fn lookback_tile_emulation_matches_serial() {
    const THREADS: usize = 256;
    let slot = |v: usize| v + v / 8;
    let tile_items = LOOKBACK_TILE_ITEMS_I32;
    let emulate_tile = |input: &[i32], tile: usize, prefix: i64, inclusive: bool, out: &mut [Option<i64>]| {
        let (count, tile_base) = (input.len(), tile * tile_items);
        let mut smem_in = vec![[0i32; 4]; tile_items / 4 + tile_items / 32];
        for t in 0..THREADS {
            for k in 0..4 {
                let v = k * THREADS + t;
                let item = tile_base + 4 * v;
                smem_in[slot(v)] = std::array::from_fn(|e| if item + e < count { input[item + e] } else { 0 });
            }
        }
        let mut locals = vec![[0i64; 16]; THREADS];
        let mut thread_totals = vec![0i64; THREADS];
        for t in 0..THREADS {
            let mut running = 0i64;
            for j in 0..4 {
                let q = smem_in[slot(4 * t + j)];
                for e in 0..4 {
                    if inclusive {
                        running += q[e] as i64;
                        locals[t][4 * j + e] = running;
                    } else {
                        locals[t][4 * j + e] = running;
                        running += q[e] as i64;
                    }
                }
            }
            thread_totals[t] = running;
        }
        let mut smem_out = vec![[0i64; 2]; tile_items / 2 + tile_items / 16];
        let mut thread_prefix = 0i64;
        for t in 0..THREADS {
            let base = prefix + thread_prefix;
            for j in 0..8 {
                smem_out[slot(8 * t + j)] = [base + locals[t][2 * j], base + locals[t][2 * j + 1]];
            }
            thread_prefix += thread_totals[t];
        }
        for t in 0..THREADS {
            for k in 0..8 {
                let p = k * THREADS + t;
                let item = tile_base + 2 * p;
                let value = smem_out[slot(p)];
                if item + 2 <= count {
                    assert!(out[item].is_none() && out[item + 1].is_none(), "item {item} written twice");
                    out[item] = Some(value[0]);
                    out[item + 1] = Some(value[1]);
                } else if item < count {
                    assert!(out[item].is_none(), "item {item} written twice");
                    out[item] = Some(value[0]);
                }
            }
        }
        thread_prefix
    };
    let mut seed = 11u64;
    for &n in &[1usize, 2, 31, 33, 257, 4095, 4096, 4097, 4099, 8191, 8192, 12_345] {
        let input: Vec<i32> = (0..n)
            .map(|_| {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (seed >> 33) as i32
            })
            .collect();
        for inclusive in [false, true] {
            let mut out = vec![None; n];
            let mut prefix = 0i64;
            for tile in 0..n.div_ceil(tile_items) {
                prefix += emulate_tile(&input, tile, prefix, inclusive, &mut out);
            }
            let mut running = 0i64;
            for (i, &x) in input.iter().enumerate() {
                let next = running + x as i64;
                assert_eq!(out[i], Some(if inclusive { next } else { running }), "n={n} i={i}");
                running = next;
            }
            assert_eq!(prefix, running, "n={n}: tile totals");
        }
    }
}

/// Every kernel the plans launch exists in the compiled module, and each
/// planted mutant of this family still compiles without a warning.
#[test]
fn kernels_exist_and_mutants_compile() {
    crate::compile::ensure_nvrtc().unwrap_or_else(|e| panic!("{e}: run `make verify`"));
    let compiled = crate::compile::compile_family(KernelFamily::Scan, "sm_90", 0).unwrap_or_else(|e| panic!("{e}"));
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
    let bogus = b"scan_no_such_kernel\0";
    assert!(!compiled.cubin.windows(bogus.len()).any(|w| w == bogus), "the name check is vacuous");
    for name in names {
        let needle = format!("{name}\0").into_bytes();
        assert!(compiled.cubin.windows(needle.len()).any(|w| w == needle), "kernel {name} missing from scan.cu");
    }
    for mutant in [5, 7, 13] {
        let compiled =
            crate::compile::compile_family(KernelFamily::Scan, "sm_90", mutant).unwrap_or_else(|e| panic!("{e}"));
        assert!(compiled.log.is_empty(), "mutant {mutant} warned:\n{}", compiled.log);
    }
}

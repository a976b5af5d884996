//! Tests of `kernels::histogram`.

use super::*;

#[test]
fn kernel_parameters_match_the_cuda_structs() {
    assert_eq!(std::mem::size_of::<HistogramBinsI32>(), 20);
    assert_eq!(std::mem::align_of::<HistogramBinsI32>(), 4);
    assert_eq!(std::mem::size_of::<HistogramBinsF32>(), 16);
    assert_eq!(std::mem::align_of::<HistogramBinsF32>(), 4);
}

/// The device's int32 binning, step by step in the same arithmetic
/// (`__uint2float_rn`, `__fmul_rn`, `__float2uint_rz`, wrapping u32 or
/// u64 integer steps): BinI32 in histogram.cu.
fn device_bin_i32(params: &HistogramBinsI32, wide: bool, x: i32) -> Option<usize> {
    let off = (x as u32).wrapping_sub(params.lower as u32);
    if off >= params.range {
        return None;
    }
    let mut t = ((off as f32) * params.scale) as u32;
    if wide {
        let d = off as u64 * params.bins as u64;
        let low = t as u64 * params.range as u64;
        if d < low {
            t -= 1;
        } else if d - low >= params.range as u64 {
            t += 1;
        }
    } else {
        let rem = off.wrapping_mul(params.bins).wrapping_sub(t.wrapping_mul(params.range)) as i32;
        t = t.wrapping_sub((rem < 0) as u32).wrapping_add((rem >= params.range as i32) as u32);
    }
    Some(t as usize)
}

fn check_spec(spec: HistogramSpec<i32>, samples: impl Iterator<Item = i32>) {
    let (params, _, suffix) = i32::device_bins(&spec).expect("valid spec");
    let wide = suffix == "i32_wide";
    for x in samples {
        assert_eq!(device_bin_i32(&params, wide, x), spec.bin_of(x), "spec {spec:?} x={x}");
        // The narrow path must also be exact wherever the host picks it,
        // and the wide one is exact everywhere.
        if !wide {
            assert_eq!(device_bin_i32(&params, true, x), spec.bin_of(x), "wide path, spec {spec:?} x={x}");
        }
    }
}

/// Every bin boundary (and its neighbours) of many specs, plus the range
/// ends: the f32 estimate plus one exact correction equals the exact
/// int64 formula.
#[test]
fn int32_binning_is_exact_at_every_bin_boundary() {
    let mut specs = vec![
        HistogramSpec { bins: 19, lower: -9, upper: 11 },
        HistogramSpec { bins: 1, lower: i32::MIN, upper: i32::MAX },
        HistogramSpec { bins: 4096, lower: i32::MIN, upper: i32::MAX },
        HistogramSpec { bins: 4095, lower: -1_000_000_007, upper: 1_999_999_999 },
        HistogramSpec { bins: 4096, lower: 0, upper: 1 },
        HistogramSpec { bins: 4096, lower: 0, upper: 4095 },
        HistogramSpec { bins: 3, lower: 0, upper: 1 << 30 },
        HistogramSpec { bins: 4093, lower: -(1 << 29), upper: 1 << 29 },
        HistogramSpec { bins: 4093, lower: -(1 << 29), upper: (1 << 29) + 1 },
        HistogramSpec { bins: 7, lower: i32::MAX - 1, upper: i32::MAX },
    ];
    let mut state = 0x853c49e6748fea9bu64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..300 {
        let a = next() as i32;
        let b = next() as i32;
        let (lower, upper) = if a < b {
            (a, b)
        } else if b < a {
            (b, a)
        } else {
            continue;
        };
        let bins = 1 + (next() % 4096) as u32;
        specs.push(HistogramSpec { bins, lower, upper });
        // Narrow ranges too.
        let width = 1 + (next() % (1 << 31)) as i64;
        let lower = (next() % (1 << 31)) as i64 - (1 << 30);
        let upper = (lower + width).min(i32::MAX as i64);
        if upper > lower {
            specs.push(HistogramSpec { bins, lower: lower as i32, upper: upper as i32 });
        }
    }
    for spec in specs {
        let range = spec.upper as i64 - spec.lower as i64;
        let bins = spec.bins as i64;
        // The first sample of every bin b is lower + ceil(b * range / bins).
        let boundaries = (0..=bins).flat_map(move |b| {
            let start = spec.lower as i64 + (b * range + bins - 1) / bins;
            [start - 1, start, start + 1]
        });
        let samples = boundaries
            .chain([spec.lower as i64 - 1, spec.upper as i64 - 1, spec.upper as i64, i32::MIN as i64, i32::MAX as i64])
            .filter(|&x| x >= i32::MIN as i64 && x <= i32::MAX as i64)
            .map(|x| x as i32);
        check_spec(spec, samples);
    }
}

#[test]
fn int32_binning_is_exact_for_the_seed_values() {
    let spec = HistogramSpec { bins: 19, lower: -9, upper: 11 };
    check_spec(spec, -20..20);
    let counted: Vec<usize> = (-9..=9).map(|x| spec.bin_of(x).expect("in range")).collect();
    let expected: Vec<usize> = (0..19).map(|offset| offset * 19 / 20).collect();
    assert_eq!(counted, expected);
}

#[test]
fn f32_bins_follow_the_documented_formula() {
    let spec = HistogramSpec::<f32> { bins: 10, lower: -1.0, upper: 1.0 };
    assert_eq!(spec.scale(), 5.0);
    assert_eq!(spec.bin_of(-1.0), Some(0));
    assert_eq!(spec.bin_of(0.0), Some(5));
    assert_eq!(spec.bin_of(0.99999994), Some(9));
    assert_eq!(spec.bin_of(1.0), None);
    assert_eq!(spec.bin_of(f32::NAN), None);
    assert_eq!(spec.bin_of(-1.0000001), None);
    assert!(f32::device_bins(&HistogramSpec::<f32> { bins: 4, lower: -3e38, upper: 3e38 }).is_err());
    assert!(f32::device_bins(&HistogramSpec::<f32> { bins: 4, lower: 1.0, upper: 1.0 }).is_err());
    assert!(i32::device_bins(&HistogramSpec { bins: 0, lower: 0, upper: 1 }).is_err());
    assert!(i32::device_bins(&HistogramSpec { bins: 4097, lower: 0, upper: 1 }).is_err());
    assert!(i32::device_bins(&HistogramSpec { bins: 4, lower: 1, upper: 1 }).is_err());
}

#[test]
fn warp_copies_fit_the_shared_budget() {
    for (bins, copies) in [(33, 8), (1024, 8), (1025, 4), (2048, 4), (4096, 2)] {
        assert_eq!(warp_copies_for(bins), copies, "copies for {bins} bins");
    }
    for bins in THREAD_COUNTER_MAX_BINS + 1..=MAX_BINS {
        let copies = warp_copies_for(bins);
        assert!(copies.is_power_of_two() && copies * bins * 4 <= WARP_COPIES_SHARED_BYTES);
    }
    assert!(THREAD_COUNTER_MAX_BINS * BLOCK_THREADS as usize * 4 <= 48 * 1024);
}

/// Past 2^32 samples the u64 path counts windows of 2^31 (no window's u32
/// count can wrap), each starting 16-byte aligned, covering the input
/// once; each window's grid is the one a plan of that length would launch
/// and never more than the resident grid.
#[test]
fn wide_windows_past_2p32_keep_every_count_below_2p32() {
    for n in [(1usize << 32) + 333, (1 << 33) + 555, MAX_LEN] {
        let windows = crate::windows::windows(n, WIDE_WINDOW, WIDE_WINDOW);
        assert_eq!(windows.len(), n.div_ceil(WIDE_WINDOW), "n={n}");
        let mut next = 0;
        for &(start, len) in &windows {
            assert_eq!(start, next, "n={n}");
            assert!(len <= WIDE_WINDOW && (len as u64) < 1 << 32, "n={n}: window of {len}");
            assert_eq!((start * std::mem::size_of::<i32>()) % 16, 0, "n={n}: window at {start} is 16-byte aligned");
            next = start + len;
            for layout in [Layout::GlobalAtomic, Layout::ThreadCounters, Layout::WarpCopies { copies: 8 }] {
                let grid = counting_grid(layout, 132 * 8, 66, len);
                assert!((1..=132 * 8).contains(&grid), "n={n} {layout:?}: grid {grid}");
            }
        }
        assert_eq!(next, n, "n={n}: the windows end at n");
    }
    assert_eq!(crate::windows::windows((1 << 32) + 333, WIDE_WINDOW, WIDE_WINDOW).last(), Some(&(1 << 32, 333)));
}

/// The grid of a length is what the plan always launched for it: one
/// 16-byte vector a thread (thread counters: a round of them, but at least
/// one block per two SMs while there is a vector a thread for them),
/// capped by the resident grid.
#[test]
fn counting_grid_follows_the_length() {
    let round = crate::policy::HISTOGRAM.thread_counter_vectors_in_flight as usize;
    let block_vectors = BLOCK_THREADS as usize * 4;
    assert_eq!(counting_grid(Layout::GlobalAtomic, 1056, 66, 0), 1);
    assert_eq!(counting_grid(Layout::GlobalAtomic, 1056, 66, block_vectors * 10), 10);
    assert_eq!(counting_grid(Layout::GlobalAtomic, 1056, 66, 1 << 31), 1056);
    assert_eq!(counting_grid(Layout::ThreadCounters, 1056, 66, block_vectors * 10), 10);
    assert_eq!(counting_grid(Layout::ThreadCounters, 1056, 66, block_vectors * 66 * round), 66);
    assert_eq!(counting_grid(Layout::ThreadCounters, 1056, 66, block_vectors * 1000 * round), 1000);
    assert_eq!(counting_grid(Layout::WarpCopies { copies: 4 }, 500, 66, 1 << 31), 500);
}

/// `with_window` takes multiples of 4 from 4 to 2^31 and names what it
/// refuses.
#[test]
fn windows_must_be_multiples_of_four_up_to_2p31() {
    for ok in [4, 8, 1 << 20, WIDE_WINDOW] {
        assert_eq!(check_window(ok), Ok(()), "{ok}");
    }
    for bad in [0, 1, 2, 6, WIDE_WINDOW + 4, 1 << 32] {
        let e = check_window(bad).expect_err("refused");
        assert!(e.contains(&bad.to_string()) && e.contains("multiple of 4"), "{e}");
    }
}

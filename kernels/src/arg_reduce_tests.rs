//! Tests of `kernels::arg_reduce`.

use super::*;

#[test]
fn device_mirrors_have_the_cuda_layout() {
    assert_eq!(std::mem::size_of::<ArgPair<f32>>(), 8);
    assert_eq!(std::mem::align_of::<ArgPair<f32>>(), 4);
    assert_eq!(std::mem::size_of::<ArgPair<i32>>(), 8);
    assert_eq!(std::mem::size_of::<ArgControl>(), 16);
    assert_eq!(std::mem::align_of::<ArgControl>(), 8);
    assert_eq!(std::mem::offset_of!(ArgControl, blocks_done), 8);
    assert_eq!(std::mem::size_of::<ArgResult<f32>>(), 16);
    assert_eq!(std::mem::align_of::<ArgResult<f32>>(), 8);
    assert_eq!(std::mem::offset_of!(ArgResult<i32>, first_nonfinite), 8);
}

/// Emulates the vector + tail partition of `scan_range` and checks that it
/// visits every element exactly once, in increasing order per thread.
#[test]
fn scan_range_partition_covers_each_element_once_in_order() {
    for count in [1u32, 3, 4, 5, 31, 32, 33, 255, 256, 257, 511, 512, 513, 4099, 262_145] {
        for step in [32u32, 256, 1024] {
            for unroll in [1u32, 4] {
                let mut seen = vec![0u8; count as usize];
                for start in 0..step {
                    let mut visited = Vec::new();
                    let vector_count = count / 4;
                    let mut i = start;
                    while i + (unroll - 1) * step < vector_count {
                        for u in 0..unroll {
                            visited.extend((0..4).map(|k| (i + u * step) * 4 + k));
                        }
                        i += unroll * step;
                    }
                    while i < vector_count {
                        visited.extend((0..4).map(|k| i * 4 + k));
                        i += step;
                    }
                    if start < count - vector_count * 4 {
                        visited.push(vector_count * 4 + start);
                    }
                    assert!(visited.windows(2).all(|w| w[0] < w[1]), "count {count} step {step}");
                    for v in visited {
                        seen[v as usize] += 1;
                    }
                }
                assert!(seen.iter().all(|&s| s == 1), "count {count} step {step} unroll {unroll}");
            }
        }
    }
}

/// Up to 2^31 - 1 elements one window of n (the 32-bit path, unchanged);
/// past it windows of 2^30 that tile [0, n) in order, each 16-byte aligned
/// and addressable by the int32 device index, at sizes past 2^31, 2^32, 2^33.
#[test]
fn windows_tile_every_length_in_order() {
    for n in [1, 4097, MAX_ARG_ELEMENTS - 1, MAX_ARG_ELEMENTS] {
        assert_eq!(arg_windows(n), vec![(0, n)], "n={n}");
    }
    let big = [MAX_ARG_ELEMENTS + 1, 1 << 31, (1 << 32) + 333, (1 << 33) + 555, 3 << 32, (1 << 40) - 1];
    for n in big {
        let windows = arg_windows(n);
        assert_eq!(windows.len(), n.div_ceil(ARG_WINDOW), "n={n}");
        let mut next = 0;
        for &(start, len) in &windows {
            assert_eq!(start, next, "n={n}: windows in order, no gap");
            assert!((1..=MAX_ARG_ELEMENTS).contains(&len), "n={n}: window of {len}");
            assert_eq!(start % 4, 0, "n={n}: window at {start} keeps 16-byte alignment of 4-byte items");
            next = start + len;
        }
        assert_eq!(next, n, "n={n}: the windows cover the array");
    }
    assert_eq!(arg_windows((1 << 32) + 333).last(), Some(&((1 << 32), 333)));
}

fn answers<T: ArgElement>(pairs: &[(T, i32)]) -> Vec<ArgResult<T>> {
    pairs
        .iter()
        .map(|&(value, index)| ArgResult { best: ArgPair { value, index }, first_nonfinite: u64::MAX })
        .collect()
}

fn fold<T: ArgElement>(results: &[ArgResult<T>], extremum: Extremum) -> GpuResult<(T, usize)> {
    let w = ARG_WINDOW;
    let windows: Vec<(usize, usize)> = (0..results.len()).map(|i| (i * w, w)).collect();
    fold_windows(
        results,
        &windows,
        FoldFor { primitive: "argmax", variant: "two_pass", n: w * results.len(), extremum },
    )
}

/// The windows' fold: a later window wins only with a strictly better value,
/// so ties (-0.0 and 0.0 among them) go to the lowest index; its index is
/// the window's start plus the index within it.
#[test]
fn window_fold_keeps_the_lowest_index_of_the_best() {
    let w = ARG_WINDOW;
    let tie = answers(&[(5i32, 7), (5, 0), (4, 3)]);
    assert_eq!(fold(&tie, Extremum::Max).ok(), Some((5, 7)));
    assert_eq!(fold(&tie, Extremum::Min).ok(), Some((4, 2 * w + 3)));
    let later = answers(&[(1i32, 9), (2, 5), (2, 1)]);
    assert_eq!(fold(&later, Extremum::Max).ok(), Some((2, w + 5)));
    assert_eq!(fold(&later, Extremum::Min).ok(), Some((1, 9)));
    let zeros = answers(&[(-0.0f32, 3), (0.0, 0)]);
    let (value, index) = fold(&zeros, Extremum::Max).expect("an answer");
    assert_eq!((value.to_bits(), index), ((-0.0f32).to_bits(), 3));
}

/// A nonfinite element is reported at its window's start plus its index in
/// the window, and the first window that saw one decides; an index outside
/// its window, a missing answer, and the poisoned "no element" index are
/// kernel faults, never answers.
#[test]
fn window_fold_reports_the_first_nonfinite_and_refuses_bad_answers() {
    let w = ARG_WINDOW;
    let mut results = answers(&[(1.0f32, 0), (2.0, 0), (3.0, 0)]);
    results[2].first_nonfinite = 5;
    match fold(&results, Extremum::Max) {
        Err(GpuError::NonFinite { index, .. }) => assert_eq!(index, 2 * w + 5),
        other => panic!("{other:?}"),
    }
    results[1].first_nonfinite = w as u64 - 1;
    match fold(&results, Extremum::Max) {
        Err(GpuError::NonFinite { index, .. }) => assert_eq!(index, 2 * w - 1),
        other => panic!("{other:?}"),
    }
    for bad in [w as i32, i32::MAX, -1] {
        let results = answers(&[(1i32, 0), (2, bad)]);
        assert!(matches!(fold(&results, Extremum::Max), Err(GpuError::KernelFault { .. })), "index {bad}");
    }
    let windows = [(0, w), (w, 3)];
    let of = FoldFor { primitive: "argmax", variant: "two_pass", n: w + 3, extremum: Extremum::Max };
    assert!(matches!(fold_windows(&answers(&[(1i32, 0)]), &windows, of), Err(GpuError::KernelFault { .. })));
    assert!(matches!(fold_windows(&answers(&[(1i32, 0), (1, 3)]), &windows, of), Err(GpuError::KernelFault { .. })));
    assert_eq!(fold_windows(&answers(&[(1i32, 0), (2, 2)]), &windows, of).ok(), Some((2, w + 2)));
}

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

//! Tests of `kernels::segmented_reduce`.

use super::*;
use crate::family_build_checks::{assert_kernels_present, assert_mutants_compile_cleanly};

#[test]
fn argmax_result_matches_the_cuda_layout() {
    assert_eq!(std::mem::size_of::<SegmentArgF32>(), 8);
    assert_eq!(std::mem::align_of::<SegmentArgF32>(), 4);
    assert_eq!(SegmentArgF32 { value: 1.0, index: i32::MAX }.to_pair(), (f32::NEG_INFINITY, usize::MAX));
    assert_eq!(SegmentArgF32 { value: 2.5, index: 7 }.to_pair(), (2.5, 7));
}

#[test]
fn offsets_are_validated_with_the_first_bad_position() {
    assert_eq!(
        validate_segment_offsets(&[0, 4, 4, 8], 8),
        Ok(OffsetSummary { segments: 3, longest: 4, first: 0, last: 8 })
    );
    assert_eq!(validate_segment_offsets(&[3], 8), Ok(OffsetSummary { segments: 0, longest: 0, first: 3, last: 3 }));
    assert!(validate_segment_offsets(&[], 8).unwrap_err().contains("at least one"));
    let decrease = validate_segment_offsets(&[0, 5, 4, 8], 8).unwrap_err();
    assert!(
        decrease.contains("position 2") && decrease.contains("offsets[1] = 5") && decrease.contains("offsets[2] = 4")
    );
    let past = validate_segment_offsets(&[0, 4, 9], 8).unwrap_err();
    assert!(past.contains("offsets[2] = 9") && past.contains("n = 8"));
    assert!(validate_segment_offsets(&[0], MAX_LEN + 1).unwrap_err().contains("2^40"));
    let past_u32 = validate_segment_offsets(&[0, 1 << 31, MAX_ITEMS + 1], MAX_ITEMS + 1);
    assert_eq!(
        past_u32,
        Ok(OffsetSummary { segments: 2, longest: MAX_ITEMS + 1 - (1 << 31), first: 0, last: MAX_ITEMS + 1 })
    );
}

/// u32 offsets up to u32::MAX items, u64 past it; each width names its
/// kernels' suffix and its bytes.
#[test]
fn offsets_are_u32_up_to_u32_max_and_u64_past_it() {
    assert_eq!(OffsetWidth::for_len(0), OffsetWidth::U32);
    assert_eq!(OffsetWidth::for_len(MAX_ITEMS), OffsetWidth::U32);
    assert_eq!(OffsetWidth::for_len(MAX_ITEMS + 1), OffsetWidth::U64);
    assert_eq!(OffsetWidth::for_len(MAX_LEN), OffsetWidth::U64);
    assert_eq!((OffsetWidth::U32.kernel_suffix(), OffsetWidth::U32.bytes()), ("", 4));
    assert_eq!((OffsetWidth::U64.kernel_suffix(), OffsetWidth::U64.bytes()), ("_o64", 8));
}

#[test]
fn best_for_picks_by_average_length() {
    assert_eq!(SegmentedVariant::best_for(0, 1), SegmentedVariant::WarpPerSegment);
    assert_eq!(SegmentedVariant::best_for(32, 1 << 10), SegmentedVariant::WarpPerSegment);
    assert_eq!(SegmentedVariant::best_for(32, 1 << 23), SegmentedVariant::WarpBatched);
    assert_eq!(
        SegmentedVariant::best_for(WARP_BATCHED_MAX_AVG_LEN, WARP_BATCHED_MIN_SEGMENTS),
        SegmentedVariant::WarpBatched
    );
    assert_eq!(SegmentedVariant::best_for(WARP_BATCHED_MAX_AVG_LEN + 1, 1 << 23), SegmentedVariant::WarpPerSegment);
    assert_eq!(SegmentedVariant::best_for(1024, 1 << 18), SegmentedVariant::WarpPerSegment);
    assert_eq!(SegmentedVariant::best_for(20_000, 100), SegmentedVariant::BlockPerSegment);
    assert_eq!(SegmentedVariant::best_for(512 * 512 + 1, 4), SegmentedVariant::MultiBlockPerSegment);
}

/// Emulates accumulate_range's head / 16-byte body / tail split and the
/// rank-strided assignment: every index of [lo, hi) is visited exactly
/// once, and body vectors are whole and inside the range.
fn visits(lo: u64, hi: u64, lanes: u64) -> Vec<u32> {
    let mut seen = vec![0u32; (hi - lo) as usize];
    let head_end = hi.min((lo + 3) & !3);
    let body_end = head_end.max(hi & !3);
    for rank in 0..lanes {
        let mut i = lo + rank;
        while i < head_end {
            seen[(i - lo) as usize] += 1;
            i += lanes;
        }
        let vector_end = body_end / 4;
        let mut v = head_end / 4 + rank;
        while v + 3 * lanes < vector_end {
            for u in 0..4 {
                for j in 0..4 {
                    seen[((v + u * lanes) * 4 + j - lo) as usize] += 1;
                }
            }
            v += 4 * lanes;
        }
        while v < vector_end {
            for j in 0..4 {
                seen[(v * 4 + j - lo) as usize] += 1;
            }
            v += lanes;
        }
        let mut i = body_end + rank;
        while i < hi {
            seen[(i - lo) as usize] += 1;
            i += lanes;
        }
    }
    seen
}

#[test]
fn accumulate_range_visits_every_item_once() {
    for lo in 0..9u64 {
        for len in [0u64, 1, 2, 3, 4, 5, 7, 8, 31, 32, 33, 127, 128, 129, 255, 256, 257, 511, 512, 513, 1024, 4099] {
            for lanes in [32u64, 256] {
                assert!(visits(lo, lo + len, lanes).iter().all(|&c| c == 1), "lo={lo} len={len} lanes={lanes}");
            }
        }
    }
}

/// Emulates multi_block_partials' chunking: the chunks of a segment cover
/// it exactly once, in order.
#[test]
fn multi_block_chunks_partition_every_segment() {
    for len in [0u64, 1, 3, 4, 5, 31, 32, 33, 8191, 8192, 8193, 512 * 512 + 1, 1 << 24] {
        for blocks in [1u64, 2, 3, 7, 32, 33, 64, 4096] {
            let begin = 13u64;
            let chunk = (len.div_ceil(blocks) + 3) & !3;
            let mut expected_lo = begin;
            for c in 0..blocks {
                let lo = begin + len.min(c * chunk);
                let hi = begin + len.min((c + 1) * chunk);
                assert_eq!(lo, expected_lo, "len={len} blocks={blocks} c={c}");
                assert!(hi >= lo);
                expected_lo = hi;
            }
            assert_eq!(expected_lo, begin + len, "len={len} blocks={blocks}");
        }
    }
}

#[test]
fn blocks_per_segment_is_bounded() {
    assert_eq!(blocks_per_segment(0, 0), 1);
    assert_eq!(blocks_per_segment(1024, 1), 1);
    assert_eq!(blocks_per_segment(512 * 512 + 1, 1), 33);
    assert_eq!(blocks_per_segment(1 << 28, 1), MAX_BLOCKS_PER_SEGMENT);
    assert_eq!(blocks_per_segment(1 << 28, 1 << 18), 1);
}

#[test]
fn mutant_builds_compile_cleanly() {
    assert_mutants_compile_cleanly(KernelFamily::SegmentedReduce, &["sm_80", "sm_90"], &[9, 12]);
}

/// Every first kernel a plan launches exists for both offset widths, and the
/// combine kernel once per operator.
#[test]
fn every_kernel_the_plans_launch_is_compiled() {
    let mut names = Vec::new();
    for op in [SegmentedSumI32::NAME, SegmentedSumF32::NAME, SegmentedMaxI32::NAME, SegmentedArgMaxF32::NAME] {
        for variant in SegmentedVariant::ALL {
            for width in [OffsetWidth::U32, OffsetWidth::U64] {
                names.push(format!("{}_{op}{}", variant.kernel_prefix(), width.kernel_suffix()));
            }
        }
        names.push(format!("segmented_multi_block_combine_{op}"));
    }
    assert_kernels_present(KernelFamily::SegmentedReduce, &names);
}

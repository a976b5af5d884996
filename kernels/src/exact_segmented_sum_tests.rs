//! Tests of `kernels::exact_segmented_sum` that need no GPU (NVRTC runs on
//! the CPU).

use super::*;
use crate::family_build_checks::{assert_kernels_present, assert_mutants_compile_cleanly};

#[test]
fn schedules_have_snake_case_names_and_pick_by_length() {
    let names: Vec<&str> = ExactSegmentedSchedule::ALL.iter().map(|s| s.name()).collect();
    assert_eq!(names, ["warp_per_segment", "warp_window", "block_per_segment"]);
    assert_eq!(ExactSegmentedSchedule::best_for(0), ExactSegmentedSchedule::WarpWindow);
    assert_eq!(ExactSegmentedSchedule::best_for(64), ExactSegmentedSchedule::WarpWindow);
    assert_eq!(ExactSegmentedSchedule::best_for(65), ExactSegmentedSchedule::WarpPerSegment);
    assert_eq!(ExactSegmentedSchedule::best_for(4096), ExactSegmentedSchedule::WarpPerSegment);
    assert_eq!(ExactSegmentedSchedule::best_for(4097), ExactSegmentedSchedule::BlockPerSegment);
}

#[test]
fn the_natural_grid_gives_each_segment_a_warp_or_a_block() {
    let warp = ExactSegmentedSchedule::WarpPerSegment;
    let block = ExactSegmentedSchedule::BlockPerSegment;
    assert_eq!(warp.natural_grid(0), 1);
    assert_eq!(warp.natural_grid(8), 1);
    assert_eq!(warp.natural_grid(9), 2);
    assert_eq!(block.natural_grid(9), 9);
    assert_eq!(ExactSegmentedSchedule::WarpWindow.natural_grid(9), 2);
    assert_eq!(block.natural_grid(1 << 30), MAX_GRID_BLOCKS);
}

#[test]
fn bad_offsets_are_rejected_naming_the_primitive_the_variant_and_the_position() {
    assert_eq!(validate_offsets(&[0, 4, 4, 8], 8).map(|s| s.segments).ok(), Some(3));
    let message = |offsets: &[usize], n: usize| validate_offsets(offsets, n).unwrap_err().to_string();
    let decrease = message(&[0, 5, 4, 8], 8);
    assert!(decrease.starts_with("exact_sum/segmented_correctly_rounded n=8: "), "{decrease}");
    assert!(decrease.contains("offsets[1] = 5 > offsets[2] = 4"), "{decrease}");
    assert!(message(&[0, 4, 9], 8).contains("offsets[2] = 9 passes n = 8"));
    assert!(message(&[], 8).contains("at least one"));
    assert!(matches!(validate_offsets(&[0], MAX_ITEMS + 1), Err(GpuError::InvalidInput { .. })));
}

#[test]
fn every_kernel_the_plans_launch_is_compiled() {
    let names: Vec<String> = ExactSegmentedSchedule::ALL
        .iter()
        .flat_map(|s| ["f32", "bf16"].map(|t| format!("exact_segmented_{}_{t}", s.name())))
        .collect();
    assert_kernels_present(KernelFamily::ExactSegmentedSum, &names);
}

#[test]
fn the_dropped_carry_mutant_compiles_cleanly() {
    assert_mutants_compile_cleanly(KernelFamily::ExactSegmentedSum, &["sm_80", "sm_90"], &[14]);
}

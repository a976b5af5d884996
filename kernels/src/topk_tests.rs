use super::*;
use crate::family_build_checks::{assert_kernels_present, assert_mutants_compile_cleanly};

/// Every kernel a plan launches is in the compiled family, and its planted bugs build cleanly.
#[test]
fn the_family_holds_every_kernel_and_its_mutants_compile() {
    let mut names: Vec<String> = ["f32", "bf16", "f16"]
        .iter()
        .flat_map(|d| {
            [
                "block_radix_select",
                "block_radix_sample",
                "grid_histogram",
                "grid_collect",
                "grid_select",
                "grid_sample",
                "grid_collect_histogram",
                "grid_list_histogram",
            ]
            .map(|k| format!("topk_{k}_{d}"))
        })
        .collect();
    names.extend(["topk_grid_threshold".into(), "topk_grid_list_collect".into()]);
    assert_kernels_present(KernelFamily::Topk, &names);
    assert_mutants_compile_cleanly(KernelFamily::Topk, &["sm_80", "sm_90"], &[15, 16, 17, 18, 22]);
}

#[test]
fn the_sampler_shape_is_the_one_its_schedule_model_replays() {
    // model::hardware::sample_draw's tests replay a block of 512 threads owning 8 survivors each.
    assert_eq!((TOPK.block_threads, TOPK.max_k / TOPK.block_threads), (512, 8));
}

#[test]
fn names_and_limits() {
    assert_eq!(TopkVariant::BlockRadixSelect.name(), "block_radix_select");
    assert_eq!(TopkVariant::BlockRadixSelect.max_k(), TOPK.max_k as usize);
    assert!(TopkVariant::BlockRadixSelect.max_k() >= 2048, "the LLM shapes' largest k fits one block");
}

#[test]
fn the_grid_chunks_cover_every_column_with_enough_blocks() {
    for (rows, cols) in [(1, 1), (1, 4097), (1, 256_000), (8, 128_256), (256, 32_000), (1, 1 << 24)] {
        let (chunk, chunks) = grid_chunks(rows, cols, 132);
        assert!(chunk * chunks as u64 >= cols as u64, "{rows}x{cols}: {chunks} x {chunk}");
        assert!(chunk * (chunks as u64 - 1) < cols as u64, "{rows}x{cols}: no empty chunk");
        assert!(chunk >= TOPK.grid_min_chunk as u64 || chunks == 1, "{rows}x{cols}: {chunk} columns a block");
    }
    assert_eq!(grid_chunks(1, 256_000, 132).1, 62, "a batch of one spreads over the GPU");
}

#[test]
fn the_grid_levels_narrow_every_bit_of_the_key_once_from_the_top() {
    assert_eq!(TOPK.grid_bin_bits, 11, "the levels below are 11 bits a level");
    assert_eq!(grid_levels(32), [(21, 11), (10, 11), (0, 10)]);
    assert_eq!(grid_levels(16), [(5, 11), (0, 5)]);
    for width in [16, 32] {
        let levels = grid_levels(width);
        assert_eq!(levels.iter().map(|&(_, bits)| bits).sum::<u32>(), width, "every bit once");
        assert!(levels.windows(2).all(|w| w[0].0 == w[1].0 + w[1].1), "each level starts where the last ended");
    }
}

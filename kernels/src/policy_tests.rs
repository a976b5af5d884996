//! Tests of `kernels::policy`: the defines it passes, and NVRTC compiles that
//! prove each family binds its constants to the policy the host reads (the
//! invariants themselves are compile-time asserts in policy.rs).

use super::*;
use crate::kernel_family::KernelFamily;

#[test]
fn define_names_are_unique_prefixed_and_fit_an_int() {
    let defines = defines();
    let mut names: Vec<&str> = defines.iter().map(|(n, _)| n.as_str()).collect();
    names.sort_unstable();
    let before = names.len();
    names.dedup();
    assert_eq!(names.len(), before, "a define name repeats");
    for (name, value) in &defines {
        assert!(
            name.starts_with("PRIMLAB_")
                && name.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        );
        assert!(*value > 0 && *value <= i32::MAX as u64, "{name} = {value} must be a positive int");
    }
    assert_eq!(define_options()[0], format!("-D{}={}", defines[0].0, defines[0].1));
}

/// Each family's device constants, as compiled with the policy defines,
/// equal the host constants its launch code uses.
#[test]
fn every_family_compiles_its_constants_equal_to_the_host_ones() {
    use crate::{arg_reduce as arg, compact, exact_sum as exact, float_reduce as float, histogram, reduce, scan};
    use KernelFamily as F;
    crate::compile::ensure_nvrtc().unwrap_or_else(|e| panic!("{e}: run `make verify`"));
    let arg_f32 = (std::mem::size_of::<crate::SegmentArgF32>(), std::mem::align_of::<crate::SegmentArgF32>());
    // (family, device expression, host value)
    let mut checks: Vec<(F, String, usize)> = [
        (F::Reduce, "kBlockThreads", crate::launch::BLOCK_THREADS as usize),
        (F::Reduce, "kBlockItems", reduce::MULTIPASS_BLOCK_ITEMS),
        (F::Reduce, "kSerialBatch", REDUCE.serial_batch as usize),
        (F::Reduce, "kAtomicBlockItems", reduce::ATOMIC_BLOCK_ITEMS_I32),
        (F::Reduce, "kOrderedBlockItems", (BLOCK.threads * REDUCE.ordered_thread_items) as usize),
        (F::Reduce, "kReduceWarpTileItems", reduce::SINGLE_PASS_WARP_TILE_ITEMS),
        (F::Reduce, "kReduceTilesInFlight", REDUCE.single_pass_tiles_in_flight as usize),
        (F::Scan, "kScanTileItems", scan::LOOKBACK_TILE_ITEMS),
        (F::Scan, "kScanBlockThreads", scan::LOOKBACK_BLOCK_THREADS as usize),
        (F::Scan, "kScanMinBlocksPerSm", SCAN.min_blocks_per_sm as usize),
        (F::Scan, "kScanExchangeThreads", SCAN.exchange_threads as usize),
        (F::Scan, "kBlockItems", scan::BLELLOCH_BLOCK_ITEMS),
        (F::ArgReduce, "kArgVectorsPerStep", arg::ARG_VECTORS_PER_STEP),
        (F::ArgReduce, "kArgTwoPassMaxBlocks", arg::ARG_TWO_PASS_MAX_BLOCKS as usize),
        (F::ArgReduce, "kRowsPerWarpBlock", arg::ROWS_PER_WARP_BLOCK as usize),
        (F::Softmax, "kSoftmaxBlockThreads", crate::softmax::SOFTMAX_BLOCK_THREADS as usize),
        (F::Compact, "kThreePhaseTileItems", compact::THREE_PHASE_TILE_ITEMS),
        (F::Compact, "kSinglePassTileItems", compact::SINGLE_PASS_TILE_ITEMS),
        (F::Compact, "kSinglePassMinBlocksPerSm", COMPACT.single_pass_min_blocks_per_sm as usize),
        (F::Compact, "kPackedFieldBits", compact::PACKED_FIELD_BITS as usize),
        (F::SegmentedReduce, "sizeof(ArgF32)", arg_f32.0),
        (F::SegmentedReduce, "alignof(ArgF32)", arg_f32.1),
        (F::SegmentedReduce, "kNoIndex", i32::MAX as usize),
        (F::SegmentedReduce, "kSegmentsPerWarp", crate::segmented_reduce::SEGMENTS_PER_WARP),
        (F::Histogram, "kMaxBins", histogram::MAX_BINS),
        (F::Histogram, "kThreadCounterMaxBins", histogram::THREAD_COUNTER_MAX_BINS),
        (F::FloatReduce, "kFloatTileItems", float::FLOAT_TILE_ITEMS),
        (F::FloatReduce, "kFloatTwoPassMaxBlocks", float::FLOAT_TWO_PASS_MAX_BLOCKS),
        (F::ExactSum, "kExactTileItems", exact::EXACT_TILE_ITEMS),
        (F::ExactSum, "kExactMaxBlocks", exact::EXACT_MAX_BLOCKS as usize),
        (F::ExactSum, "kExactFlushTiles", EXACT_SUM.flush_tiles as usize),
        (F::ExactSum, "kExactMinBlocksPerSm", EXACT_SUM.min_blocks_per_sm as usize),
        (F::ExactSum, "kExactRecordWords", exact::EXACT_RECORD_WORDS),
    ]
    .into_iter()
    .map(|(family, device, host)| (family, device.to_string(), host))
    .collect();
    for (name, threads, items) in crate::softmax::ROW_IN_REGISTERS_SHAPES {
        let title = format!("{}{}", name[..1].to_uppercase(), &name[1..]);
        checks.push((F::Softmax, format!("kSoftmaxReg{title}Threads"), threads as usize));
        checks.push((F::Softmax, format!("kSoftmaxReg{title}Items"), items as usize));
    }
    for family in KernelFamily::ALL {
        let appended: String = checks
            .iter()
            .filter(|(f, _, _)| *f == family)
            .map(|(_, device, host)| format!("static_assert({device} == {host}, \"{device} != host {host}\");\n"))
            .collect();
        if appended.is_empty() {
            continue;
        }
        match crate::compile::compile_family_with(family, &appended) {
            Ok(log) => assert!(log.is_empty(), "{} warned:\n{log}", family.file()),
            Err(e) => panic!("{}: a device constant differs from the host's:\n{e}", family.file()),
        }
    }
}

/// A compile without one policy define stops at an `#error` naming it, in
/// the file that binds it.
#[test]
fn a_missing_define_stops_the_compile_with_its_name() {
    crate::compile::ensure_nvrtc().unwrap_or_else(|e| panic!("{e}: run `make verify`"));
    let base = ["-std=c++17".to_string(), "--gpu-architecture=sm_90".to_string()];
    for (dropped, _) in defines() {
        let file = match dropped.split('_').nth(1) {
            Some("REDUCE") if !dropped.starts_with("PRIMLAB_REDUCE_SINGLE_PASS_") => "reduce.cu",
            Some("COMPACT") => "compact.cu",
            Some("HISTOGRAM") => "histogram.cu",
            Some("TOPK") => "topk.cu",
            _ => "common/config.cuh",
        };
        let unit = crate::sources::translation_unit(file).expect("embedded");
        let mut options = base.to_vec();
        options.extend(defines().into_iter().filter(|(n, _)| *n != dropped).map(|(n, v)| format!("-D{n}={v}")));
        let outcome = crate::compile::compile_source_with(file, &unit, "sm_90", options);
        match outcome {
            Err(e) => {
                let message = e.to_string();
                assert!(
                    message.contains("#error") && message.contains(&dropped),
                    "{file} without {dropped}: {message}"
                );
            }
            Ok(_) => panic!("{file} compiled without {dropped}"),
        }
    }
}

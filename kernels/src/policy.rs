//! The tuning policy of every kernel family: block sizes, items per thread,
//! grid caps. Rust owns these values. [`defines`] turns them into the
//! `-D PRIMLAB_<FAMILY>_<NAME>=value` options every NVRTC compile receives
//! (see [`crate::compile::compile_options`]); the CUDA side binds each define
//! to the `constexpr` name its kernels read, stops with `#error` when one is
//! missing, and keeps its `static_assert`s. The launch code (grids, scratch
//! sizes) reads the same structs, so the host and the device cannot disagree.
//!
//! A retune is an edit here. The values are part of the compiled source (the
//! options enter the kernel cache key) and this file is part of the kernel
//! source hash and the verdict hash, so every receipt goes stale with it.

/// Block shape shared by every block-cooperative kernel (`config.cuh`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockPolicy {
    /// `kBlockThreads`. 256 threads = 8 warps: one shared partial per warp
    /// and a single second warp pass (a warp folds at most 32 partials).
    pub threads: u32,
    /// `kItemsPerThreadPair`: items per thread of the hierarchical reduce and
    /// the Blelloch block scan; 2 because the up-sweep pairs neighbours.
    pub hierarchical_items_per_thread: u32,
}

/// Whole-array reductions (`reduce.cu`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReducePolicy {
    /// `kSerialBatch`: int32 loads the one-thread baseline issues per step
    /// (enough independent loads to hide latency without vector casts).
    pub serial_batch: u32,
    /// `kAtomicVectorsPerThread`: int4 loads per thread of the block-atomic
    /// kernel (4 x 16 B in flight per thread reaches the read ceiling).
    pub atomic_vectors_per_thread: u32,
    /// `kOrderedThreadItems`: affine items per thread of one ordered
    /// block-atomic ticket (8 keeps the ticket chain short at 2^28 items).
    pub ordered_thread_items: u32,
    /// `kReduceItemsPerThread`: consecutive items per lane of one
    /// single-pass warp tile (16 int32 = four 16-byte loads per lane).
    pub single_pass_items_per_thread: u32,
    /// `kReduceTilesInFlight`: warp tiles whose loads a warp issues before
    /// it reduces the first (two keep the single pass at the read ceiling;
    /// one was 2-6 % slower than the old striped kernel at 2^24-2^28).
    pub single_pass_tiles_in_flight: u32,
}

/// Scans (`scan.cu`, `common/decoupled_lookback.cuh`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanPolicy {
    /// `kScanBlockThreads`: threads of one look-back block (7 warps).
    pub block_threads: u32,
    /// `kScanItemsPerThread`: items per thread of one look-back tile (int32
    /// and affine alike); 20 = five int4 loads. Beside CUB on the H200 once
    /// the tile body stopped spilling (scripts/baselines/scan_tile_sweep.cu,
    /// receipts/ncu/scan_tile_shapes.txt), 224 x 20 at 5 blocks per SM (56
    /// registers, no spills) was within 3 % of the fastest shape of the
    /// same run at every size from 2^16 to 2^28 (2^20 11.5 us, 2^28 1006.7
    /// us against CUB's 1025.9); the previous 384 x 12 took 11.5 and 1084.7.
    pub items_per_thread: u32,
    /// `kScanMinBlocksPerSm`: blocks per SM the compiler must fit in
    /// registers (`__launch_bounds__`).
    pub min_blocks_per_sm: u32,
    /// `kScanExchangeThreads`: the group that moves a tile between global
    /// memory and registers; 32 (a warp) needs only `__syncwarp`.
    pub exchange_threads: u32,
    /// `kLookbackSpinLimit`: polls of one predecessor before the kernel
    /// records a timeout instead of hanging the machine.
    pub lookback_spin_limit: u32,
}

/// argmax / argmin (`arg_reduce.cu`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArgReducePolicy {
    /// `kArgVectorsPerStep`: 16-byte loads issued back to back per
    /// grid-stride step (more bytes in flight per thread); also the partials
    /// each thread of the final fold loads at once.
    pub vectors_per_step: u32,
    /// `kArgTwoPassMaxBlocks`: most first-pass blocks, i.e. the partials the
    /// one-block second pass reads.
    pub two_pass_max_blocks: u32,
}

/// One register-resident softmax block shape: `threads` x `items` floats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegisterShape {
    /// Name used in kernel names and bench records.
    pub name: &'static str,
    /// Threads per block.
    pub threads: u32,
    /// Floats each thread holds.
    pub items: u32,
}

/// Row softmax (`softmax.cu`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SoftmaxPolicy {
    /// `kSoftmaxBlockThreads`: threads per block of the block-per-row
    /// schedules (ThreePass, OnlineBlock).
    pub block_threads: u32,
    /// `kSoftmaxReg{Small,Medium,Large}{Threads,Items}`, smallest first: the
    /// host picks the first that holds the row; the last one is the limit.
    pub register_shapes: [RegisterShape; 3],
}

/// float32 / bf16 reductions (`float_reduce.cu`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FloatReducePolicy {
    /// `kFloatItemsPerThread`: inputs per thread of one tile, summed as a
    /// fixed pairwise tree of depth log2(16) = 4.
    pub items_per_thread: u32,
    /// `kFloatTwoPassMaxBlocks`: most first-pass blocks; the second pass
    /// is one tile, so this must not exceed the tile.
    pub two_pass_max_blocks: u32,
}

/// Correctly rounded sums (`exact_sum.cu`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExactSumPolicy {
    /// `kExactItemsPerThread`: inputs per thread of one tile (four 16-byte
    /// loads of f32, two of bf16).
    pub items_per_thread: u32,
    /// `kExactFlushTiles`: tiles a thread adds before it normalises its
    /// bins; each bin then takes `flush_tiles * items_per_thread` adds
    /// between normalisations, which must stay at most 256.
    pub flush_tiles: u32,
    /// `kExactMaxBlocks`: most blocks of one launch (= block records the
    /// last block adds).
    pub max_blocks: u32,
    /// `kExactMinBlocksPerSm`: the kernels' `__launch_bounds__` minimum
    /// resident blocks per SM, which caps their registers (more resident
    /// warps keep more loads in flight).
    pub min_blocks_per_sm: u32,
}

/// Stream compaction (`compact.cu`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactPolicy {
    /// `kThreePhaseItemsPerThread`: consecutive flags per thread of one
    /// three-phase scan tile.
    pub three_phase_items_per_thread: u32,
    /// `kSinglePassVectorsPerThread`: int4 vectors per thread of one
    /// single-pass tile; the per-row counts are packed as 12-bit fields of
    /// one i64, so at most five.
    pub single_pass_vectors_per_thread: u32,
    /// `kSinglePassMinBlocksPerSm`: the `__launch_bounds__` minimum of the
    /// single-pass kernels (a register cap), so that this many tiles load
    /// at once per SM. 6 (40 registers) beat 5 (48) by 5 % at 2^24-2^28
    /// beside CUB once the full tile compiled without bounds checks
    /// (scripts/baselines/compact_explore.cu, receipts/ncu/compact_tile_shapes.txt).
    pub single_pass_min_blocks_per_sm: u32,
    /// `kPackedFieldBits`: a single-pass thread packs the kept counts of its
    /// vector rows into one i64 as fields of this many bits and scans them
    /// in one block scan; a field's block total (at most `4 * threads`) must
    /// not carry into the next field.
    pub packed_field_bits: u32,
}

/// Histograms (`histogram.cu`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistogramPolicy {
    /// `kMaxBins`: the most bins ([`primlab_types::MAX_BINS`]); two copies
    /// of the largest histogram fit 32 KiB of shared memory.
    pub max_bins: u32,
    /// `kThreadCounterMaxBins`: up to this many bins every thread keeps its
    /// own counters, `bins * threads * 4` bytes of shared memory.
    pub thread_counter_max_bins: u32,
    /// `kThreadCounterVectorsInFlight`: 16-byte loads a thread of the
    /// thread-counter layout issues before it counts them; its grid also
    /// gives every thread at least this many vectors, so that no block pays
    /// for clearing and merging its counters with less work than one round.
    pub thread_counter_vectors_in_flight: u32,
}

/// Top-k (`topk.cu`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopkPolicy {
    /// `kTopkBlockThreads`: threads of the block that selects one row (at
    /// least 256: one clears each radix bin).
    pub block_threads: u32,
    /// `kTopkMaxK`: the largest k of the block-per-row schedule, a power of
    /// two: its survivors' ranks (8 bytes each) are sorted in shared memory.
    pub max_k: u32,
    /// `kGridBinBits`: the grid schedule's first-level bins are a key's top this many bits
    /// (2^bits counters a block in shared memory, and a warp scans them per row).
    pub grid_bin_bits: u32,
    /// The grid schedule's blocks per SM over all rows (its chunks per row follow).
    pub grid_blocks_per_sm: u32,
    /// The fewest columns a block of the grid schedule counts and collects.
    pub grid_min_chunk: u32,
    /// `kGridCandidates`: the grid schedule narrows a row's k-th key (`grid_bin_bits` more
    /// bits a level) until the keys from its bin up are at most this many, the candidates
    /// one block then sorts out (at least `max_k`).
    pub grid_candidates: u32,
    /// `kGridItems`: columns a thread of the grid schedule's histogram and collect launches
    /// loads before it uses any.
    pub grid_items: u32,
    /// The grid schedule narrows past its first level only rows of at least this many
    /// columns; narrower rows take one level, and a block per row sorts their bin out.
    /// Measured on the H100 (2026-12-06, f32, one level / every level, both with the first
    /// try's warp-aggregated histogram): a whole array of 2^20 135 / 48.5 us; [1, 128256]
    /// k = 50 39 / 48 us, [8, 256000] k = 1 43 / 56 us, [256, 256000] k = 256 408 / 602 us.
    /// Not remeasured with the plain histogram; shapes between 256,000 and 2^20 columns untimed.
    pub grid_narrow_min_cols: u32,
}

/// Shared block shape.
pub const BLOCK: BlockPolicy = BlockPolicy { threads: 256, hierarchical_items_per_thread: 2 };
/// Whole-array reductions.
pub const REDUCE: ReducePolicy = ReducePolicy {
    serial_batch: 8,
    atomic_vectors_per_thread: 4,
    ordered_thread_items: 8,
    single_pass_items_per_thread: 16,
    single_pass_tiles_in_flight: 2,
};
/// Scans.
pub const SCAN: ScanPolicy = ScanPolicy {
    block_threads: 224,
    items_per_thread: 20,
    min_blocks_per_sm: 5,
    exchange_threads: 32,
    lookback_spin_limit: 1 << 22,
};
/// argmax / argmin.
pub const ARG_REDUCE: ArgReducePolicy = ArgReducePolicy { vectors_per_step: 4, two_pass_max_blocks: 1024 };
/// Row softmax.
pub const SOFTMAX: SoftmaxPolicy = SoftmaxPolicy {
    block_threads: 256,
    register_shapes: [
        RegisterShape { name: "small", threads: 256, items: 16 },
        RegisterShape { name: "medium", threads: 512, items: 32 },
        RegisterShape { name: "large", threads: 1024, items: 32 },
    ],
};
/// float32 / bf16 reductions.
pub const FLOAT_REDUCE: FloatReducePolicy = FloatReducePolicy { items_per_thread: 16, two_pass_max_blocks: 1024 };
/// Correctly rounded sums.
pub const EXACT_SUM: ExactSumPolicy =
    ExactSumPolicy { items_per_thread: 16, flush_tiles: 16, max_blocks: 1 << 16, min_blocks_per_sm: 4 };
/// Stream compaction.
pub const COMPACT: CompactPolicy = CompactPolicy {
    three_phase_items_per_thread: 8,
    single_pass_vectors_per_thread: 5,
    single_pass_min_blocks_per_sm: 6,
    packed_field_bits: 12,
};
/// Histograms.
pub const HISTOGRAM: HistogramPolicy = HistogramPolicy {
    max_bins: primlab_types::MAX_BINS,
    thread_counter_max_bins: 32,
    thread_counter_vectors_in_flight: 4,
};

/// Top-k.
pub const TOPK: TopkPolicy = TopkPolicy {
    block_threads: 512,
    max_k: 4096,
    grid_bin_bits: 11,
    grid_blocks_per_sm: 4,
    grid_min_chunk: 4096,
    grid_candidates: 8192,
    grid_items: 4,
    grid_narrow_min_cols: 1 << 20,
};

/// The invariants every retune must keep, checked when this crate compiles
/// (the host-side twins of the CUDA `static_assert`s).
const _: () = {
    const WARP: u32 = 32;
    assert!(BLOCK.threads % WARP == 0, "a block is whole warps");
    assert!(BLOCK.threads / WARP <= WARP, "the second block_reduce pass folds one partial per warp in one warp");
    assert!(BLOCK.hierarchical_items_per_thread == 2, "the Blelloch up-sweep pairs neighbours");
    assert!(SOFTMAX.block_threads % WARP == 0, "a softmax block is whole warps");
    let mut i = 0;
    let mut capacity = 0;
    while i < SOFTMAX.register_shapes.len() {
        let shape = SOFTMAX.register_shapes[i];
        assert!(shape.threads % WARP == 0 && shape.threads <= 1024, "a register shape is whole warps, <= 1024");
        assert!(shape.items % 8 == 0, "whole 16-byte vectors of f32 (4) and bf16 (8) per thread");
        assert!(shape.threads * shape.items > capacity, "register shapes are smallest first");
        capacity = shape.threads * shape.items;
        i += 1;
    }
    assert!(SCAN.items_per_thread % 4 == 0, "a thread's look-back items are int4 vectors");
    assert!(SCAN.block_threads % SCAN.exchange_threads == 0, "a look-back block is whole exchange groups");
    assert!(SCAN.exchange_threads % WARP == 0, "an exchange group is whole warps");
    assert!(SCAN.block_threads / WARP <= WARP, "block_exclusive_scan folds one total per warp in one warp");
    assert!(REDUCE.single_pass_items_per_thread % 4 == 0, "a lane's warp-tile items are int4 vectors");
    assert!(
        FLOAT_REDUCE.two_pass_max_blocks <= BLOCK.threads * FLOAT_REDUCE.items_per_thread,
        "the float second pass is one tile"
    );
    assert!(
        BLOCK.threads * FLOAT_REDUCE.items_per_thread == 4096,
        "TILE_PASS_DEPTH (float_reduce.rs) counts the levels of a 4096-item tile"
    );
    assert!(EXACT_SUM.flush_tiles * EXACT_SUM.items_per_thread <= 256, "a bin takes at most 256 adds per flush");
    assert!(4 * BLOCK.threads < 1 << COMPACT.packed_field_bits, "a packed field's block total must not carry");
    assert!(
        COMPACT.single_pass_vectors_per_thread * COMPACT.packed_field_bits <= 63,
        "the packed count fields fill one non-negative i64"
    );
    assert!(HISTOGRAM.max_bins * 4 * 2 <= 32 * 1024, "two copies of the largest histogram fit 32 KiB");
    assert!(HISTOGRAM.thread_counter_max_bins * BLOCK.threads * 4 <= 48 * 1024, "the default shared-memory limit");
    assert!(TOPK.block_threads >= 256 && TOPK.block_threads % WARP == 0, "one thread clears each radix bin");
    assert!(TOPK.max_k.is_power_of_two(), "the bitonic sort pads k to a power of two");
    assert!(TOPK.max_k * 8 + 1024 <= 48 * 1024, "the ranks and the bins fit the static shared limit");
    assert!(TOPK.grid_bin_bits <= 16 && (1 << TOPK.grid_bin_bits) % WARP == 0, "a 16-bit key holds the bins");
    assert!(TOPK.grid_min_chunk > 0 && TOPK.grid_blocks_per_sm > 0, "every block has columns");
    assert!(TOPK.grid_candidates >= TOPK.max_k, "every k fits the candidate bound");
    assert!(TOPK.grid_items >= 1 && TOPK.grid_items <= 16, "a thread's loads of one round stay in registers");
    assert!(TOPK.max_k % TOPK.block_threads == 0, "each thread of the sampler owns max_k / block_threads survivors");
};

/// Every policy value as `(define name, value)`, in a fixed order. Each name
/// is `PRIMLAB_<FAMILY>_<NAME>` and is passed to every family's compile.
pub fn defines() -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = vec![
        ("PRIMLAB_BLOCK_THREADS".into(), BLOCK.threads.into()),
        ("PRIMLAB_BLOCK_HIERARCHICAL_ITEMS_PER_THREAD".into(), BLOCK.hierarchical_items_per_thread.into()),
        ("PRIMLAB_REDUCE_SERIAL_BATCH".into(), REDUCE.serial_batch.into()),
        ("PRIMLAB_REDUCE_ATOMIC_VECTORS_PER_THREAD".into(), REDUCE.atomic_vectors_per_thread.into()),
        ("PRIMLAB_REDUCE_ORDERED_THREAD_ITEMS".into(), REDUCE.ordered_thread_items.into()),
        ("PRIMLAB_REDUCE_SINGLE_PASS_ITEMS_PER_THREAD".into(), REDUCE.single_pass_items_per_thread.into()),
        ("PRIMLAB_REDUCE_SINGLE_PASS_TILES_IN_FLIGHT".into(), REDUCE.single_pass_tiles_in_flight.into()),
        ("PRIMLAB_SCAN_BLOCK_THREADS".into(), SCAN.block_threads.into()),
        ("PRIMLAB_SCAN_ITEMS_PER_THREAD".into(), SCAN.items_per_thread.into()),
        ("PRIMLAB_SCAN_MIN_BLOCKS_PER_SM".into(), SCAN.min_blocks_per_sm.into()),
        ("PRIMLAB_SCAN_EXCHANGE_THREADS".into(), SCAN.exchange_threads.into()),
        ("PRIMLAB_SCAN_LOOKBACK_SPIN_LIMIT".into(), SCAN.lookback_spin_limit.into()),
        ("PRIMLAB_ARG_REDUCE_VECTORS_PER_STEP".into(), ARG_REDUCE.vectors_per_step.into()),
        ("PRIMLAB_ARG_REDUCE_TWO_PASS_MAX_BLOCKS".into(), ARG_REDUCE.two_pass_max_blocks.into()),
        ("PRIMLAB_SOFTMAX_BLOCK_THREADS".into(), SOFTMAX.block_threads.into()),
    ];
    for shape in SOFTMAX.register_shapes {
        let name = shape.name.to_ascii_uppercase();
        out.push((format!("PRIMLAB_SOFTMAX_REG_{name}_THREADS"), shape.threads.into()));
        out.push((format!("PRIMLAB_SOFTMAX_REG_{name}_ITEMS"), shape.items.into()));
    }
    out.extend([
        ("PRIMLAB_FLOAT_REDUCE_ITEMS_PER_THREAD".into(), FLOAT_REDUCE.items_per_thread.into()),
        ("PRIMLAB_FLOAT_REDUCE_TWO_PASS_MAX_BLOCKS".into(), FLOAT_REDUCE.two_pass_max_blocks.into()),
        ("PRIMLAB_EXACT_SUM_ITEMS_PER_THREAD".into(), EXACT_SUM.items_per_thread.into()),
        ("PRIMLAB_EXACT_SUM_FLUSH_TILES".into(), EXACT_SUM.flush_tiles.into()),
        ("PRIMLAB_EXACT_SUM_MAX_BLOCKS".into(), EXACT_SUM.max_blocks.into()),
        ("PRIMLAB_EXACT_SUM_MIN_BLOCKS_PER_SM".into(), EXACT_SUM.min_blocks_per_sm.into()),
        ("PRIMLAB_COMPACT_THREE_PHASE_ITEMS_PER_THREAD".into(), COMPACT.three_phase_items_per_thread.into()),
        ("PRIMLAB_COMPACT_SINGLE_PASS_VECTORS_PER_THREAD".into(), COMPACT.single_pass_vectors_per_thread.into()),
        ("PRIMLAB_COMPACT_SINGLE_PASS_MIN_BLOCKS_PER_SM".into(), COMPACT.single_pass_min_blocks_per_sm.into()),
        ("PRIMLAB_COMPACT_PACKED_FIELD_BITS".into(), COMPACT.packed_field_bits.into()),
        ("PRIMLAB_HISTOGRAM_MAX_BINS".into(), HISTOGRAM.max_bins.into()),
        ("PRIMLAB_HISTOGRAM_THREAD_COUNTER_MAX_BINS".into(), HISTOGRAM.thread_counter_max_bins.into()),
        (
            "PRIMLAB_HISTOGRAM_THREAD_COUNTER_VECTORS_IN_FLIGHT".into(),
            HISTOGRAM.thread_counter_vectors_in_flight.into(),
        ),
        ("PRIMLAB_TOPK_BLOCK_THREADS".into(), TOPK.block_threads.into()),
        ("PRIMLAB_TOPK_MAX_K".into(), TOPK.max_k.into()),
        ("PRIMLAB_TOPK_GRID_BIN_BITS".into(), TOPK.grid_bin_bits.into()),
        ("PRIMLAB_TOPK_GRID_CANDIDATES".into(), TOPK.grid_candidates.into()),
        ("PRIMLAB_TOPK_GRID_ITEMS".into(), TOPK.grid_items.into()),
    ]);
    out
}

/// [`defines`] as NVRTC options, `-DNAME=value` each.
pub fn define_options() -> Vec<String> {
    defines().into_iter().map(|(name, value)| format!("-D{name}={value}")).collect()
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;

//! The planted bugs of the mutant gallery as edits of the kernel sources
//! ([`Patch`], defined here with the data it types), so that the shipped `.cu` files hold none: each
//! `original` is production code that occurs exactly once in the translation
//! unit of every family it plants in (a test holds them to it), with enough
//! context around an insertion to say where; `planted` replaces it.
//! Generated once from the `#if PRIMLAB_MUTANT` blocks the sources held before.

/// One edit that plants (part of) a bug: `original`, production code of
/// `file` (a path under `kernels/cuda/`), becomes `planted`. It applies to a
/// translation unit that holds `original` exactly once, and leaves one that
/// holds none as it is (a header reaches only the families that include it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Patch {
    /// The source file the edit belongs to.
    pub file: &'static str,
    /// The production code it replaces (with enough context to occur once).
    pub original: &'static str,
    /// What replaces it.
    pub planted: &'static str,
}

/// Mutant 1.
pub(crate) const PLANT_1: &[Patch] = &[Patch {
    file: "common/block_reduce.cuh",
    original: r#"    // Warp 0 must not read warp_partials before every warp has written its own.
    __syncthreads();"#,
    planted: r#"    // MUTANT 1: no barrier between the partial writes and warp 0's reads."#,
}];
/// Mutant 2.
pub(crate) const PLANT_2: &[Patch] = &[Patch {
    file: "common/block_reduce.cuh",
    original: r#"    // Warp 0 must not read warp_partials before every warp has written its own.
    __syncthreads();"#,
    planted: r#"    // MUTANT 2: the barrier sits inside a branch only warp 0 takes.
    if (warp == 0) __syncthreads();"#,
}];
/// Mutant 3.
pub(crate) const PLANT_3: &[Patch] = &[Patch {
    file: "reduce.cu",
    original: r#"    const T total = block_reduce(value, op, storage);"#,
    planted: r#"    // MUTANT 3: whole tail warps (no input in the warp) return before the
    // block barrier inside block_reduce; their partial slots stay unwritten.
    if (block_first + 2 * (u64)(threadIdx.x & ~(u32)(kWarpThreads - 1)) >= count) return;
    const T total = block_reduce(value, op, storage);"#,
}];
/// Mutant 4.
pub(crate) const PLANT_4: &[Patch] = &[Patch {
    file: "reduce.cu",
    original: r#"    const T value = load_adjacent_pair(in, first, count, op);"#,
    planted: r#"    // MUTANT 4: threads with no input leave at once, so the last partial
    // warp's shuffles in warp_reduce name lanes that have exited.
    if (first >= count) return;
    const T value = load_adjacent_pair(in, first, count, op);"#,
}];
/// Mutant 5.
pub(crate) const PLANT_5: &[Patch] = &[Patch {
    file: "scan.cu",
    original: r#"    const T offset = offsets[blockIdx.x];"#,
    planted: r#"    // MUTANT 5: the block offset is never read; every block keeps its local
    // scan (wrong wherever an earlier block's total is not the identity).
    const T offset = Op::identity();"#,
}];
/// Mutant 6.
pub(crate) const PLANT_6: &[Patch] = &[Patch {
    file: "reduce.cu",
    original: r#"    if (first + 1 < count) return combine_pair(in + first, op);"#,
    planted: r#"    // MUTANT 6: off-by-one tail guard (<= instead of <): at an odd count the
    // last pair load also reads in[count], one element past the end.
    if (first + 1 <= count) return combine_pair(in + first, op);"#,
}];
/// Mutant 7.
pub(crate) const PLANT_7: &[Patch] = &[Patch {
    file: "scan.cu",
    original: r#"        if (lane_id() == 0) *shared_prefix = exclusive;"#,
    planted: r#"        // MUTANT 7: tile 0 never writes its (identity) prefix, so every
        // thread of tile 0 reads an uninitialised shared slot below (stale
        // data from an earlier block on that SM).
        if (lane_id() == 0 && tile != 0) *shared_prefix = exclusive;"#,
}];
/// Mutant 8.
pub(crate) const PLANT_8: &[Patch] = &[Patch {
    file: "common/decoupled_lookback.cuh",
    original: r#"        const T contribution = lane >= start ? value : Op::identity();"#,
    planted: r#"        // MUTANT 8: the window starts one lane late, so the P tile that closes
        // the walk is dropped: every tile after the first loses the prefix of
        // everything before its nearest published predecessor.
        const T contribution = lane > start ? value : Op::identity();"#,
}];
/// Mutant 9.
pub(crate) const PLANT_9: &[Patch] = &[
    Patch {
        file: "compact.cu",
        original: r#"        if (kept) output[destination] = input[i];"#,
        planted: r#"        // MUTANT 9: a rejected item still writes, at its prefix destination
        // (the slot of the next kept item, or one past the count).
        output[destination] = input[i];"#,
    },
    Patch {
        file: "compact.cu",
        original: r#"        if (tid == 0 && last_tile) *count = Count(tile_offset + tile_count);"#,
        planted: r#"        // MUTANT 9: a rejected item still writes, at its prefix destination
        // (the slot of the next kept item, or one past the tile's last kept
        // item).
        for_each_item(f, keep, row_base, [&](u32 item, i32 value, u32 kept, u32 rank) {
            if (!kept && item < valid) output[tile_offset + rank] = value;
        });
        if (tid == 0 && last_tile) *count = Count(tile_offset + tile_count);"#,
    },
];
/// Mutant 10.
pub(crate) const PLANT_10: &[Patch] = &[
    Patch {
        file: "common/operators.cuh",
        original: r#"        if (m == -__int_as_float(0x7f800000)) return identity();"#,
        planted: r#""#,
    },
    Patch {
        file: "softmax.cu",
        original: r#"    // The -inf guard: while every value so far is -inf, v - m would be
    // -inf - -inf = NaN.
    if (s.m == neg_inf()) return;"#,
        planted: r#""#,
    },
];
/// Mutant 11.
pub(crate) const PLANT_11: &[Patch] = &[Patch {
    file: "common/operators.cuh",
    original: r#"    return candidate < incumbent;"#,
    planted: r#"    // MUTANT 11: ties resolved to the highest index.
    return candidate > incumbent;"#,
}];
/// Mutant 12.
pub(crate) const PLANT_12: &[Patch] = &[Patch {
    file: "segmented_reduce.cu",
    original: r#"    return bounds;"#,
    planted: r#"    // MUTANT 12: an empty segment is read as if it held the element at
    // offsets[s] (past the end of the input when offsets[s] == n).
    if (bounds.end == bounds.begin) bounds.end = bounds.begin + 1;
    return bounds;"#,
}];
/// Mutant 13.
pub(crate) const PLANT_13: &[Patch] = &[
    Patch {
        file: "scan.cu",
        original: r#"    blelloch_add_offsets(data, offsets, count, SumI64{});
}
extern "C" __global__ void __launch_bounds__(kBlockThreads)
scan_blelloch_add_offsets_totals_affine(AffineMap* __restrict__ data, const AffineMap* __restrict__ offsets,"#,
        planted: r#"    // MUTANT 13: the offsets of the third level are never added back into
    // the second, so the scan is wrong only past 512^2 items.
    (void)data, (void)offsets, (void)count;
}
extern "C" __global__ void __launch_bounds__(kBlockThreads)
scan_blelloch_add_offsets_totals_affine(AffineMap* __restrict__ data, const AffineMap* __restrict__ offsets,"#,
    },
    Patch {
        file: "scan.cu",
        original: r#"    blelloch_add_offsets(data, offsets, count, AffineCompose{});
}

// ---------------------------------------------------------------------------"#,
        planted: r#"    (void)data, (void)offsets, (void)count;  // MUTANT 13, as above.
}

// ---------------------------------------------------------------------------"#,
    },
];
/// Mutant 14.
pub(crate) const PLANT_14: &[Patch] = &[Patch {
    file: "common/superaccumulator.cuh",
    original: r#"    }
    words[kExactBins] += carry;"#,
    planted: r#"        // MUTANT 14: the carry out of word 3 (exponents 96..127, the bin of
        // values in [2^-54, 1)) is dropped instead of propagated.
        if (b == 3) carry = 0;
    }
    words[kExactBins] += carry;"#,
}];
/// Mutant 15.
pub(crate) const PLANT_15: &[Patch] = &[
    Patch {
        file: "topk.cu",
        original: r#"    return ((u64)key << 32) | (u64)(~column);"#,
        planted: r#"    // MUTANT 15: the tie rule inverted: equal keys rank the HIGHER index
    // first (the column itself in the low half instead of its complement).
    return ((u64)key << 32) | column;"#,
    },
    Patch { file: "topk.cu", original: r#"    return ~(u32)rank;"#, planted: r#"    return (u32)rank;"# },
];
/// Mutant 16.
pub(crate) const PLANT_16: &[Patch] = &[Patch {
    file: "topk.cu",
    original: r#"        if (tie && rank < remaining) s.ranks[above_count + rank] = rank_of(key, (u32)c);"#,
    planted: r#"        // MUTANT 16: the k-th value's run cut short: one tie fewer than
        // needed is kept (an off-by-one in the remaining count).
        if (tie && rank + 1 < remaining) s.ranks[above_count + rank] = rank_of(key, (u32)c);"#,
}];
/// Mutant 17.
pub(crate) const PLANT_17: &[Patch] = &[Patch {
    file: "topk.cu",
    original: r#"            if ((key & mask) == prefix) atomicAdd(&s.hist[digit], 1u);"#,
    planted: r#"            // MUTANT 17: the histogram pass drops its last bin (an off-by-one
            // in a loop bound over the bins).
            if ((key & mask) == prefix && digit != kRadixBins - 1) atomicAdd(&s.hist[digit], 1u);"#,
}];
/// Mutant 18.
pub(crate) const PLANT_18: &[Patch] = &[Patch {
    file: "topk.cu",
    original: r#"    // -inf - top is -inf, and exp(-inf) is 0: a masked logit is never drawn.
    return exp(((double)v - (double)top) / (double)temperature);"#,
    planted: r#"    // MUTANT 18: the sampler ignores the temperature (every T acts as 1).
    return exp((double)v - (double)top);"#,
}];
/// Mutant 19.
pub(crate) const PLANT_19: &[Patch] = &[Patch {
    file: "histogram.cu",
    original: r#"    if (b < bins) totals[b] += window[b];"#,
    planted: r#"    // MUTANT 19: a window's counts overwrite the totals instead of adding
    // to them (only the last window's samples are counted).
    if (b < bins) totals[b] = window[b];"#,
}];
/// Mutant 20.
pub(crate) const PLANT_20: &[Patch] = &[Patch {
    file: "segmented_reduce.cu",
    original: r#"PRIMLAB_SEGMENTED_ENTRIES(sum_i32, SegmentedSumI32, u64, _o64)"#,
    planted: r#"// MUTANT 20: the _o64 int64 sums are instantiated for u32 offsets, so they
// read the host's u64 offsets as pairs of u32 words.
PRIMLAB_SEGMENTED_ENTRIES(sum_i32, SegmentedSumI32, u32, _o64)"#,
}];
/// Mutant 21.
pub(crate) const PLANT_21: &[Patch] = &[Patch {
    file: "compact.cu",
    original: r#"    const u64 base = *base_in;"#,
    planted: r#"    // MUTANT 21: the window scatter forgets the earlier windows' count: every
    // window writes from position 0, and the count is the last window's alone.
    const u64 base = 0;"#,
}];
/// Mutant 22.
pub(crate) const PLANT_22: &[Patch] = &[Patch {
    file: "topk.cu",
    original: r#"    u64* segment = list_a + row_first + (u64)blockIdx.x * chunk;"#,
    planted: r#"    // MUTANT 22: every block appends from the row's start, not its own
    // segment's (the blocks of a row overwrite each other's ranks).
    u64* segment = list_a + row_first;"#,
}];

// Stream compaction of int32 items: keep flags -> exclusive scan -> scatter.
// Stable (kept items keep their input order); the number kept is written to
// a device word; a rejected item writes nothing.
//
// Two schedules:
//  * three-phase: compact_keep_flags_* writes one u32 flag per item;
//    compact_scan_tiles scans tiles of kThreePhaseTileItems flags (and,
//    recursively, the tile totals); compact_add_tile_offsets pushes the upper
//    levels down; compact_scatter writes every kept item to its destination.
//    On the wide path (a u64 count, n up to 2^40: the host's choice, the one
//    an input past u32::MAX items takes) the host runs the first three
//    kernels on windows of at most 2^30 items (so every u32 position of a
//    window stays below 2^30) and compact_scatter_window, which adds the u64
//    count of the earlier windows (a device word) to each destination.
//  * single pass: compact_single_pass_* takes a tile id from an atomic
//    counter, computes keep flags and the tile's count, finds the count of
//    every earlier tile by decoupled look-back (SumI64 payloads), stages the
//    kept items in shared memory in order and writes them out coalesced. Its
//    _c64 entry points are the same kernel writing a u64 count.
//
// Selection: "positive" keeps x > 0; "flagged" keeps item i when the u8
// flag array holds a nonzero byte at i.
//
// Limits (checked on the host): the u32 entry points take n < 2^32, so every
// position and the count fit a u32; the wide path (compact_scatter_window,
// compact_single_pass_*_c64) takes n up to 2^40 with u64 destinations and a
// u64 count (the look-back's payloads are i64 and its tile ids u32: at most
// 2^40 / kSinglePassTileItems < 2^31 tiles).
#include "common/config.cuh"
#include "common/block_scan.cuh"
#include "common/decoupled_lookback.cuh"
#include "common/operators.cuh"
#include "common/tile_io.cuh"
#include "common/vector_of.cuh"

using namespace primlab;

// Selector flags are bytes (config.cuh names no 8-bit type; a repeated
// identical typedef is harmless if it ever does).
typedef unsigned char u8;

// ---- tuning policy of this family (values from kernels/src/policy.rs) ----

#if !defined(PRIMLAB_COMPACT_THREE_PHASE_ITEMS_PER_THREAD) || !defined(PRIMLAB_COMPACT_SINGLE_PASS_VECTORS_PER_THREAD) || \
    !defined(PRIMLAB_COMPACT_SINGLE_PASS_MIN_BLOCKS_PER_SM) || !defined(PRIMLAB_COMPACT_PACKED_FIELD_BITS)
#error "policy.rs passes PRIMLAB_COMPACT_THREE_PHASE_ITEMS_PER_THREAD, PRIMLAB_COMPACT_SINGLE_PASS_VECTORS_PER_THREAD, PRIMLAB_COMPACT_SINGLE_PASS_MIN_BLOCKS_PER_SM and PRIMLAB_COMPACT_PACKED_FIELD_BITS: one is missing"
#endif

// Three-phase scan tile: 256 threads x 8 consecutive flags.
constexpr int kThreePhaseItemsPerThread = PRIMLAB_COMPACT_THREE_PHASE_ITEMS_PER_THREAD;
constexpr int kThreePhaseTileItems = kBlockThreads * kThreePhaseItemsPerThread;

// Single-pass tile: 256 threads x kSinglePassVectorsPerThread int4 vectors,
// striped (vector k of thread t covers items [(k * 256 + t) * 4, +4) of the
// tile), so every warp load is 512 contiguous bytes.
constexpr int kSinglePassVectorsPerThread = PRIMLAB_COMPACT_SINGLE_PASS_VECTORS_PER_THREAD;
constexpr int kSinglePassTileItems = kBlockThreads * kSinglePassVectorsPerThread * 4;
// __launch_bounds__ minimum: the register cap that lets this many tiles
// (blocks) load at once on an SM.
constexpr int kSinglePassMinBlocksPerSm = PRIMLAB_COMPACT_SINGLE_PASS_MIN_BLOCKS_PER_SM;
// The per-vector-row counts of one thread are packed into one i64 as
// kPackedFieldBits-bit fields and scanned in one block scan. A field's block
// total is at most 4 * kBlockThreads, which must not carry into the next field.
constexpr int kPackedFieldBits = PRIMLAB_COMPACT_PACKED_FIELD_BITS;
constexpr i64 kPackedFieldMask = (i64(1) << kPackedFieldBits) - 1;
static_assert(4 * kBlockThreads <= kPackedFieldMask, "a field's block total must not carry into the next");
static_assert(kSinglePassVectorsPerThread * kPackedFieldBits <= 63, "the fields fill one non-negative i64");

// ---- selectors ----

// keep(x, i): whether item i (value x) is kept. keep4(v, i): the keep bits of
// the 4 items [i, i + 4) (bit j = item i + j); i is a multiple of 4.
struct SelectPositive {
    static constexpr bool kReadsValues = true;
    __device__ __forceinline__ bool keep(i32 x, u64 /*i*/) const { return x > 0; }
    __device__ __forceinline__ u32 keep4(const int4& v, u64 /*i*/) const {
        return u32(v.x > 0) | (u32(v.y > 0) << 1) | (u32(v.z > 0) << 2) | (u32(v.w > 0) << 3);
    }
};

struct SelectFlagged {
    static constexpr bool kReadsValues = false;
    const u8* flags;
    __device__ __forceinline__ bool keep(i32 /*x*/, u64 i) const { return flags[i] != 0; }
    __device__ __forceinline__ u32 keep4(const int4& /*v*/, u64 i) const {
        // i % 4 == 0 and flags is 4-byte aligned: a whole allocation, or a
        // window of one that starts at a multiple of 4 items (the host's rule).
        const u32 word = *reinterpret_cast<const u32*>(flags + i);
        return u32((word & 0xffu) != 0) | (u32((word & 0xff00u) != 0) << 1) |
               (u32((word & 0xff0000u) != 0) << 2) | (u32((word & 0xff000000u) != 0) << 3);
    }
};

// ---- three-phase: phase 1, keep flags ----

// flags[i] = 1 if item i is kept, else 0, for i in [0, n). Grid-stride over
// groups of 4 items (16-byte loads and stores), then the n % 4 tail.
template <class Selector>
__device__ __forceinline__ void keep_flags(const i32* __restrict__ input, u64 n, Selector selector,
                                           u32* __restrict__ flags) {
    const u64 groups = n / 4;
    const u64 stride = (u64)gridDim.x * kBlockThreads;
    const u64 first_thread = (u64)blockIdx.x * kBlockThreads + threadIdx.x;
    for (u64 g = first_thread; g < groups; g += stride) {
        int4 v = make_int4(0, 0, 0, 0);
        if (Selector::kReadsValues) v = as_vectors(input)[g];
        const u32 bits = selector.keep4(v, g * 4);
        as_vectors(flags)[g] = make_uint4(bits & 1u, (bits >> 1) & 1u, (bits >> 2) & 1u, (bits >> 3) & 1u);
    }
    for (u64 i = groups * 4 + first_thread; i < n; i += stride) {
        const i32 x = Selector::kReadsValues ? input[i] : 0;
        flags[i] = selector.keep(x, i) ? 1u : 0u;
    }
}

extern "C" __global__ void __launch_bounds__(kBlockThreads)
compact_keep_flags_positive(const i32* __restrict__ input, u64 n, u32* __restrict__ flags) {
    keep_flags(input, n, SelectPositive{}, flags);
}

extern "C" __global__ void __launch_bounds__(kBlockThreads)
compact_keep_flags_flagged(const u8* __restrict__ selector_flags, u64 n, u32* __restrict__ flags) {
    // The flagged selector never reads the values.
    keep_flags(static_cast<const i32*>(nullptr), n, SelectFlagged{selector_flags}, flags);
}

// ---- three-phase: phase 2, multi-pass exclusive scan of u32 counts ----

// Tile t = blockIdx.x covers values [t * kThreePhaseTileItems, min(len, (t + 1) * kThreePhaseTileItems));
// thread k of the tile owns 8 consecutive values. Writes the exclusive prefix
// of every value *within its tile* to exclusive_out and the tile's total to
// tile_totals[t]. `values` and `exclusive_out` may be the same buffer (each
// thread reads its own 8 values before the block scan and writes the same 8
// after it), hence no __restrict__ on them.
extern "C" __global__ void __launch_bounds__(kBlockThreads)
compact_scan_tiles(const u32* values, u64 len, u32* exclusive_out, u32* __restrict__ tile_totals) {
    __shared__ BlockScanStorage<i64> scan_storage;
    const u64 first = (u64)blockIdx.x * kThreePhaseTileItems + (u64)threadIdx.x * kThreePhaseItemsPerThread;
    u32 items[kThreePhaseItemsPerThread];
    if (first + kThreePhaseItemsPerThread <= len) {
        // first is a multiple of 8 and `values` a whole allocation: 16-byte aligned.
        const uint4 a = as_vectors(values + first)[0];
        const uint4 b = as_vectors(values + first)[1];
        items[0] = a.x; items[1] = a.y; items[2] = a.z; items[3] = a.w;
        items[4] = b.x; items[5] = b.y; items[6] = b.z; items[7] = b.w;
    } else {
#pragma unroll
        for (int j = 0; j < kThreePhaseItemsPerThread; ++j) items[j] = first + j < len ? values[first + j] : 0u;
    }
    i64 thread_sum = 0;
#pragma unroll
    for (int j = 0; j < kThreePhaseItemsPerThread; ++j) thread_sum += items[j];
    i64 tile_total;
    // Every thread of the block takes part (tail threads carry 0, the identity).
    const i64 thread_prefix = block_exclusive_scan(thread_sum, SumI64(), scan_storage, tile_total);
    u32 running = u32(thread_prefix);
#pragma unroll
    for (int j = 0; j < kThreePhaseItemsPerThread; ++j) {
        if (first + j < len) exclusive_out[first + j] = running;
        running += items[j];
    }
    if (threadIdx.x == 0) tile_totals[blockIdx.x] = u32(tile_total);
}

// values[i] += tile_offsets[i / kThreePhaseTileItems] for i in [0, len): pushes the scanned
// totals of the level above down into the level below.
extern "C" __global__ void __launch_bounds__(kBlockThreads)
compact_add_tile_offsets(u32* __restrict__ values, u64 len, const u32* __restrict__ tile_offsets) {
    const u64 stride = (u64)gridDim.x * kBlockThreads;
    for (u64 i = (u64)blockIdx.x * kBlockThreads + threadIdx.x; i < len; i += stride) {
        values[i] += tile_offsets[i / kThreePhaseTileItems];
    }
}

// ---- three-phase: phase 3, scatter ----

// Kept item i goes to base + positions[i] (+ tile_offsets[i / kThreePhaseTileItems] when
// the scan had more than one tile). The thread of item n - 1 writes the count (base + the
// kept items of these n). Position is the type of a destination and of the count: u32
// (base 0, n < 2^32) or u64 (a window of a longer input; base = the earlier windows' count).
template <class Position>
__device__ __forceinline__ void scatter(const i32* __restrict__ input, const u32* __restrict__ flags,
                                        const u32* __restrict__ positions, u64 n, const u32* __restrict__ tile_offsets,
                                        u32 has_tile_offsets, Position base, i32* __restrict__ output,
                                        Position* __restrict__ count) {
    const u64 stride = (u64)gridDim.x * kBlockThreads;
    for (u64 i = (u64)blockIdx.x * kBlockThreads + threadIdx.x; i < n; i += stride) {
        const Position destination =
            base + positions[i] + (has_tile_offsets ? tile_offsets[i / kThreePhaseTileItems] : 0u);
        const u32 kept = flags[i];
        if (kept) output[destination] = input[i];
        if (i == n - 1) *count = destination + kept;
    }
}

extern "C" __global__ void __launch_bounds__(kBlockThreads)
compact_scatter(const i32* __restrict__ input, const u32* __restrict__ flags, const u32* __restrict__ positions,
                u64 n, const u32* __restrict__ tile_offsets, u32 has_tile_offsets, i32* __restrict__ output,
                u32* __restrict__ count) {
    scatter<u32>(input, flags, positions, n, tile_offsets, has_tile_offsets, 0u, output, count);
}

// One window of the wide path (an input past u32::MAX items, or a test's small window):
// `input`, `flags` and `positions` are the window's (n <= 2^30 items, scanned on their
// own), `output` the whole output. The window's destinations start at *base_in, the kept
// count of every earlier window; the window's last item writes *base_in + its kept items
// to *next_base: the next window's base word, or the caller's u64 count after the last
// window. The host launches the windows in order on one stream (each reads the word the
// one before it wrote) and never passes one word as both base_in and next_base, so no
// launch reads a word it writes.
extern "C" __global__ void __launch_bounds__(kBlockThreads)
compact_scatter_window(const i32* __restrict__ input, const u32* __restrict__ flags,
                       const u32* __restrict__ positions, u64 n, const u32* __restrict__ tile_offsets,
                       u32 has_tile_offsets, const u64* __restrict__ base_in, i32* __restrict__ output,
                       u64* __restrict__ next_base) {
    const u64 base = *base_in;
    scatter<u64>(input, flags, positions, n, tile_offsets, has_tile_offsets, base, output, next_base);
}

// ---- single pass: decoupled look-back ----

// One tile per block (grid = number of tiles). `scratch` is the look-back
// scratch (tile counter, error word, one descriptor per tile), cleared by
// the host before every launch.
struct SinglePass {
    // The tile layer's striped fetch: vector k of thread t holds items
    // [(k * kBlockThreads + t) * 4, +4) of the tile, so every warp load is
    // 512 contiguous bytes; missing items of the partial tile read 0.
    typedef TileExchange<i32, kBlockThreads, 4 * kSinglePassVectorsPerThread> Load;
    struct Storage {
        BlockScanStorage<i64> scan;
        i64 tile_exclusive;
        u32 tile;
        i32 stage[kSinglePassTileItems];
    };

    // The tile-relative index of the first item of thread t's vector k.
    static __device__ __forceinline__ u32 vector_first(int k, int t) { return u32(k * kBlockThreads + t) * 4u; }

    // visit(item, value, kept, rank) for every item of this thread, rank =
    // the item's place among the tile's kept items (the next kept item's
    // place when it is rejected).
    template <class Visit>
    static __device__ __forceinline__ void for_each_item(const typename Load::Fetched& f,
                                                         const u32 (&keep)[kSinglePassVectorsPerThread],
                                                         const u32 (&row_base)[kSinglePassVectorsPerThread],
                                                         Visit visit) {
#pragma unroll
        for (int k = 0; k < kSinglePassVectorsPerThread; ++k) {
            u32 rank = row_base[k];
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const u32 kept = (keep[k] >> j) & 1u;
                visit(vector_first(k, int(threadIdx.x)) + u32(j), f.v[k].item[j], kept, rank);
                rank += kept;
            }
        }
    }

    // Count: the type of the count word (u32 for n < 2^32, u64 for the _c64
    // entry points); destinations are u64 either way.
    template <bool FULL, class Selector, class Count>
    static __device__ __forceinline__ void tile(const i32* __restrict__ tile_in, u32 valid, u64 tile_base, u32 tile,
                                                bool last_tile, Selector selector, i32* __restrict__ output,
                                                Count* __restrict__ count, const TileStatus<i64>& status,
                                                Storage& storage) {
        const int tid = int(threadIdx.x);
        const int lane = lane_id();
        typename Load::Fetched f;
        Load::template fetch<FULL>(tile_in, valid, 0, f);
        u32 keep[kSinglePassVectorsPerThread];
#pragma unroll
        for (int k = 0; k < kSinglePassVectorsPerThread; ++k) {
            const u32 first = vector_first(k, tid);
            if (FULL || first + 4 <= valid) {
                const int4 v = make_int4(f.v[k].item[0], f.v[k].item[1], f.v[k].item[2], f.v[k].item[3]);
                keep[k] = selector.keep4(v, tile_base + first);
            } else {
                // Items past `valid` are never kept (and the flagged selector
                // must not read their flags).
                keep[k] = 0;
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    if (first + j < valid && selector.keep(f.v[k].item[j], tile_base + first + j)) keep[k] |= 1u << j;
                }
            }
        }

        // One block scan of the packed counts (one field per vector row).
        i64 packed = 0;
#pragma unroll
        for (int k = 0; k < kSinglePassVectorsPerThread; ++k) packed |= (i64)__popc(keep[k]) << (kPackedFieldBits * k);
        i64 packed_total;
        const i64 packed_prefix = block_exclusive_scan(packed, SumI64(), storage.scan, packed_total);
        u32 row_base[kSinglePassVectorsPerThread];
        u32 tile_count = 0;
#pragma unroll
        for (int k = 0; k < kSinglePassVectorsPerThread; ++k) {
            row_base[k] = tile_count + u32((packed_prefix >> (kPackedFieldBits * k)) & kPackedFieldMask);
            tile_count += u32((packed_total >> (kPackedFieldBits * k)) & kPackedFieldMask);
        }

        // Warp 0 finds the count of every earlier tile; the other warps go on.
        if (warp_id() == 0) {
            i64 exclusive = 0;
            if (tile == 0) {
                if (lane == 0) publish_prefix(status, 0u, (i64)tile_count);
            } else {
                if (lane == 0) publish_aggregate(status, tile, (i64)tile_count);
                exclusive = lookback_exclusive_prefix(status, tile, SumI64());
                if (lane == 0) publish_prefix(status, tile, exclusive + (i64)tile_count);
            }
            if (lane == 0) storage.tile_exclusive = exclusive;
        }

        // Stage the kept items at their rank within the tile.
        for_each_item(f, keep, row_base, [&](u32, i32 value, u32 kept, u32 rank) {
            if (kept) storage.stage[rank] = value;
        });
        // The copy below reads stage slots written by other threads, and
        // tile_exclusive written by warp 0 (RAW).
        __syncthreads();
        const u64 tile_offset = (u64)storage.tile_exclusive;
        for (u32 s = u32(tid); s < tile_count; s += kBlockThreads) output[tile_offset + s] = storage.stage[s];
        if (tid == 0 && last_tile) *count = Count(tile_offset + tile_count);
    }

    template <class Selector, class Count>
    static __device__ __forceinline__ void run(const i32* __restrict__ input, u64 n, Selector selector,
                                               i32* __restrict__ output, Count* __restrict__ count, u64* scratch) {
        __shared__ Storage storage;
        const TileStatus<i64> status = tile_status_in<i64>(scratch);
        const u32 tile_id = acquire_tile_id(status.tile_counter, &storage.tile);
        const u64 tile_base = (u64)tile_id * kSinglePassTileItems;
        const bool last_tile = tile_base + kSinglePassTileItems >= n;
        // Block-uniform: every thread takes the same branch, so the barriers
        // inside either instantiation are reached by the whole block.
        if (tile_base + kSinglePassTileItems <= n) {
            tile<true>(input + tile_base, kSinglePassTileItems, tile_base, tile_id, last_tile, selector, output, count,
                       status, storage);
        } else {
            tile<false>(input + tile_base, u32(n - tile_base), tile_base, tile_id, last_tile, selector, output, count,
                        status, storage);
        }
    }
};

extern "C" __global__ void __launch_bounds__(kBlockThreads, kSinglePassMinBlocksPerSm)
compact_single_pass_positive(const i32* __restrict__ input, u64 n, i32* __restrict__ output, u32* __restrict__ count,
                             u64* scratch) {
    SinglePass::run(input, n, SelectPositive{}, output, count, scratch);
}

extern "C" __global__ void __launch_bounds__(kBlockThreads, kSinglePassMinBlocksPerSm)
compact_single_pass_flagged(const i32* __restrict__ input, const u8* __restrict__ selector_flags, u64 n,
                            i32* __restrict__ output, u32* __restrict__ count, u64* scratch) {
    SinglePass::run(input, n, SelectFlagged{selector_flags}, output, count, scratch);
}

// The same kernels writing a u64 count: the wide path (n up to 2^40; tile ids
// and the look-back stay as they are, see Limits above).
extern "C" __global__ void __launch_bounds__(kBlockThreads, kSinglePassMinBlocksPerSm)
compact_single_pass_positive_c64(const i32* __restrict__ input, u64 n, i32* __restrict__ output,
                                 u64* __restrict__ count, u64* scratch) {
    SinglePass::run(input, n, SelectPositive{}, output, count, scratch);
}

extern "C" __global__ void __launch_bounds__(kBlockThreads, kSinglePassMinBlocksPerSm)
compact_single_pass_flagged_c64(const i32* __restrict__ input, const u8* __restrict__ selector_flags, u64 n,
                                i32* __restrict__ output, u64* __restrict__ count, u64* scratch) {
    SinglePass::run(input, n, SelectFlagged{selector_flags}, output, count, scratch);
}

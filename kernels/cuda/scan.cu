// scan.cu: exclusive and inclusive scans in three schedules, each
// instantiated for
//   * SumI64 over int32 input (int64 output), and
//   * AffineCompose over affine maps (associative, NOT commutative).
// exclusive[0] = identity, exclusive[i] = x[0] (+) ... (+) x[i-1];
// inclusive[i] = exclusive[i] (+) x[i]. The two kinds are the same kernels
// with a template flag.
//
// Entry points (launched from kernels/src/scan.rs):
//   scan_serial_{exclusive,inclusive}_{i32,affine}                <<<1, 1>>>
//   scan_blelloch_level_{exclusive,inclusive}_{i32,affine}        <<<ceil(n/512), 256>>>  level 0
//   scan_blelloch_level_inplace_{i64,affine}                      <<<ceil(m/512), 256>>>  levels >= 1
//   scan_blelloch_add_offsets_{i64,affine}                        <<<ceil(n/512), 256>>>  into the output
//   scan_blelloch_add_offsets_totals_{i64,affine}                 <<<ceil(m/512), 256>>>  into a totals level
//   scan_decoupled_lookback_{exclusive,inclusive}_{i32,affine}    <<<ceil(n/kScanTileItems), kScanBlockThreads>>>
//
// Sizes (checked on the host, kernels/src/scan.rs): 1 <= n <= the grid limit
// of the widest launch, (2^31 - 1) * 512 = 2^40 - 512 for Blelloch (level 0)
// and (2^31 - 1) tiles for the look-back; device memory runs out long before.
// Every item index, block or tile base and count is u64 (n passes 2^32 on an
// H200); only offsets inside one block or tile, and tile ids (below gridDim.x,
// so at most 2^31 - 1), are 32-bit. There is ONE path, no 32-bit fast path:
// the look-back's 64-bit arithmetic is once per tile (its per-item work uses
// tile-local u32 offsets), and Blelloch's per-item u64 compares are the ones
// these kernels were timed with before 64-bit sizes (receipts/bench).
//
// The int64 prefixes: adds are modulo 2^64 (SumI64, operators.cuh), so each
// output is the exact prefix whenever that fits int64, always so for n <=
// 2^32 (|prefix| <= n * 2^31 <= 2^63); past 2^32 a prefix may leave int64,
// and that output is the exact prefix wrapped to int64 (as CUB's and
// torch.cumsum's int64 scans give), in every schedule. The affine maps compose
// in wrapping u64 arithmetic (no overflow to speak of).
#include "common/config.cuh"
#include "common/block_scan.cuh"
#include "common/decoupled_lookback.cuh"
#include "common/memory_order.cuh"
#include "common/operators.cuh"
#include "common/tile_io.cuh"

using namespace primlab;

__device__ __forceinline__ i64 lift(i32 x) { return (i64)x; }
__device__ __forceinline__ i64 lift(i64 x) { return x; }
__device__ __forceinline__ AffineMap lift(const AffineMap& x) { return x; }

// ---------------------------------------------------------------------------
// Serial: one thread, left to right.
template <bool INCLUSIVE, class Op, class In>
__device__ __forceinline__ void serial_scan(const In* __restrict__ in, typename Op::T* __restrict__ out, u64 count,
                                            Op op) {
    typedef typename Op::T T;
    T running = Op::identity();
    for (u64 i = 0; i < count; ++i) {
        const T next = op(running, lift(in[i]));
        out[i] = INCLUSIVE ? next : running;
        running = next;
    }
}

extern "C" __global__ void scan_serial_exclusive_i32(const i32* __restrict__ in, i64* __restrict__ out, u64 count) {
    serial_scan<false>(in, out, count, SumI64{});
}
extern "C" __global__ void scan_serial_inclusive_i32(const i32* __restrict__ in, i64* __restrict__ out, u64 count) {
    serial_scan<true>(in, out, count, SumI64{});
}
extern "C" __global__ void scan_serial_exclusive_affine(const AffineMap* __restrict__ in, AffineMap* __restrict__ out,
                                                        u64 count) {
    serial_scan<false>(in, out, count, AffineCompose{});
}
extern "C" __global__ void scan_serial_inclusive_affine(const AffineMap* __restrict__ in, AffineMap* __restrict__ out,
                                                        u64 count) {
    serial_scan<true>(in, out, count, AffineCompose{});
}

// ---------------------------------------------------------------------------
// Blelloch multi-pass (recursive). Level k scans m_k items in blocks of 512
// (blelloch_block_scan, 2 items per thread, 256 threads) and writes each
// block's total to totals[block]; level k+1 scans those totals (exclusively,
// in place) with the same kernel, until a level fits in one block. Then the
// scanned totals are added back, top level first, as block offsets:
//   level sizes m_0 = n, m_{k+1} = ceil(m_k / 512); levels = 1 + #{k : m_k > 512}
//   (1 for n <= 512, 2 up to 512^2 = 262,144, 3 from 262,145 ...).
//
// Thread t owns slots t and t+256 (coalesced global accesses); the scan
// itself runs over slot order, so the layout does not affect the result.
// In place (in == out) is safe: each element is read and written by the
// same thread, read first, and no other block touches it.
template <bool INCLUSIVE, class Op, class In>
__device__ __forceinline__ void blelloch_level(const In* in, typename Op::T* out, typename Op::T* __restrict__ totals,
                                               u64 count, Op op) {
    typedef typename Op::T T;
    __shared__ T items[kBlockItems];
    const u64 base = (u64)blockIdx.x * kBlockItems;
    const int t = int(threadIdx.x);
    const u64 i0 = base + t;
    const u64 i1 = base + t + kBlockThreads;
    // Slots past the end carry the identity: the up-sweep reads every slot.
    const T x0 = i0 < count ? lift(in[i0]) : Op::identity();
    const T x1 = i1 < count ? lift(in[i1]) : Op::identity();
    items[t] = x0;
    items[t + kBlockThreads] = x1;
    // The scan reads slots that other threads wrote (RAW).
    __syncthreads();
    const T total = blelloch_block_scan(items, op);  // ends with a barrier
    T y0 = items[t];
    T y1 = items[t + kBlockThreads];
    if (INCLUSIVE) {
        y0 = op(y0, x0);
        y1 = op(y1, x1);
    }
    if (i0 < count) out[i0] = y0;
    if (i1 < count) out[i1] = y1;
    if (t == 0) totals[blockIdx.x] = total;
}

extern "C" __global__ void __launch_bounds__(kBlockThreads)
scan_blelloch_level_exclusive_i32(const i32* __restrict__ in, i64* __restrict__ out, i64* __restrict__ totals,
                                  u64 count) {
    blelloch_level<false>(in, out, totals, count, SumI64{});
}
extern "C" __global__ void __launch_bounds__(kBlockThreads)
scan_blelloch_level_inclusive_i32(const i32* __restrict__ in, i64* __restrict__ out, i64* __restrict__ totals,
                                  u64 count) {
    blelloch_level<true>(in, out, totals, count, SumI64{});
}
extern "C" __global__ void __launch_bounds__(kBlockThreads)
scan_blelloch_level_inplace_i64(i64* data, i64* __restrict__ totals, u64 count) {
    blelloch_level<false>(data, data, totals, count, SumI64{});
}
extern "C" __global__ void __launch_bounds__(kBlockThreads)
scan_blelloch_level_exclusive_affine(const AffineMap* __restrict__ in, AffineMap* __restrict__ out,
                                     AffineMap* __restrict__ totals, u64 count) {
    blelloch_level<false>(in, out, totals, count, AffineCompose{});
}
extern "C" __global__ void __launch_bounds__(kBlockThreads)
scan_blelloch_level_inclusive_affine(const AffineMap* __restrict__ in, AffineMap* __restrict__ out,
                                     AffineMap* __restrict__ totals, u64 count) {
    blelloch_level<true>(in, out, totals, count, AffineCompose{});
}
extern "C" __global__ void __launch_bounds__(kBlockThreads)
scan_blelloch_level_inplace_affine(AffineMap* data, AffineMap* __restrict__ totals, u64 count) {
    blelloch_level<false>(data, data, totals, count, AffineCompose{});
}

// data[i] = offsets[block(i)] (+) data[i]: the scanned total of everything
// before block(i) goes on the LEFT. Block 0's offset is the identity, so
// block 0 has nothing to do (a block-uniform return; no barrier here).
template <class Op>
__device__ __forceinline__ void blelloch_add_offsets(typename Op::T* __restrict__ data,
                                                     const typename Op::T* __restrict__ offsets, u64 count, Op op) {
    typedef typename Op::T T;
    if (blockIdx.x == 0) return;
    const T offset = offsets[blockIdx.x];
    const u64 base = (u64)blockIdx.x * kBlockItems;
#pragma unroll
    for (int k = 0; k < kItemsPerThreadPair; ++k) {
        const u64 i = base + threadIdx.x + (u64)k * kBlockThreads;
        if (i < count) data[i] = op(offset, data[i]);
    }
}

// Into the output (level 0).
extern "C" __global__ void __launch_bounds__(kBlockThreads)
scan_blelloch_add_offsets_i64(i64* __restrict__ data, const i64* __restrict__ offsets, u64 count) {
    blelloch_add_offsets(data, offsets, count, SumI64{});
}
extern "C" __global__ void __launch_bounds__(kBlockThreads)
scan_blelloch_add_offsets_affine(AffineMap* __restrict__ data, const AffineMap* __restrict__ offsets, u64 count) {
    blelloch_add_offsets(data, offsets, count, AffineCompose{});
}

// Into a totals level (levels >= 1; only launched when there are 3 or more
// levels, i.e. n > 512^2).
extern "C" __global__ void __launch_bounds__(kBlockThreads)
scan_blelloch_add_offsets_totals_i64(i64* __restrict__ data, const i64* __restrict__ offsets, u64 count) {
    blelloch_add_offsets(data, offsets, count, SumI64{});
}
extern "C" __global__ void __launch_bounds__(kBlockThreads)
scan_blelloch_add_offsets_totals_affine(AffineMap* __restrict__ data, const AffineMap* __restrict__ offsets,
                                        u64 count) {
    blelloch_add_offsets(data, offsets, count, AffineCompose{});
}

// ---------------------------------------------------------------------------
// Decoupled look-back, single pass (Merrill & Garland 2016), ONE schedule for
// both operators: the int32 sum the bench times and the affine maps whose
// non-commutative composition proves that the schedule keeps order.
//
// A tile is kScanTileItems = kScanBlockThreads x kScanItemsPerThread items,
// thread t owning items [t * kScanItemsPerThread, (t + 1) * ...) (blocked):
//  1. Load the tile (tile_io.cuh; the last tile is the partial one, FULL=false,
//     whose missing items read the identity).
//  2. Thread-serial total of its items, block_exclusive_scan of the totals.
//  3. The tile prefix by decoupled look-back (tile_exclusive_prefix).
//  4. out = tile prefix (+) thread prefix, then the thread's items combined
//     onto it left to right, stored through the tile layer (the partial tile
//     writes only its valid items).
// Scratch (zeroed by a memset in the plan before every launch): the look-back
// header words and one descriptor per tile (decoupled_lookback.cuh).

// The combination of every tile before `tile`, returned to every thread of
// the block (which must all call this: barrier inside). Tile 0 publishes P
// at once; any other tile publishes A, lets warp 0 look back (all 32 lanes of
// that one warp: lookback_exclusive_prefix shuffles with the full mask), and
// publishes P = prefix (+) aggregate. The prefix reaches the other warps
// through shared memory.
template <class Op>
__device__ __forceinline__ typename Op::T tile_exclusive_prefix(const TileStatus<typename Op::T>& status, u32 tile,
                                                                const typename Op::T& tile_total, Op op,
                                                                typename Op::T* shared_prefix) {
    typedef typename Op::T T;
    if (warp_id() == 0) {
        T exclusive = Op::identity();
        if (tile == 0) {
            if (lane_id() == 0) publish_prefix(status, tile, tile_total);
        } else {
            if (lane_id() == 0) publish_aggregate(status, tile, tile_total);
            exclusive = lookback_exclusive_prefix(status, tile, op);
            if (lane_id() == 0) publish_prefix(status, tile, op(exclusive, tile_total));
        }
        if (lane_id() == 0) *shared_prefix = exclusive;
    }
    // Every thread reads the prefix only after lane 0 of warp 0 stored it.
    __syncthreads();
    return *shared_prefix;
}

// The input whose lift is the operator's identity: what missing items of the
// partial tile read.
__device__ __forceinline__ i32 input_identity(SumI64, const i32*) { return 0; }
__device__ __forceinline__ AffineMap input_identity(AffineCompose, const AffineMap*) {
    return AffineCompose::identity();
}

// EXCHANGE_THREADS: the group that moves a tile between global memory and
// registers (tile_io.cuh). With a warp (32), warp w moves the items [w * 32 *
// ITEMS, (w + 1) * 32 * ITEMS) of the tile: the same blocked arrangement
// (thread t = 32 w + l still holds items [t * ITEMS, (t + 1) * ITEMS)), with
// __syncwarp instead of two block barriers. With THREADS, the block moves it.
template <bool INCLUSIVE, int THREADS, int ITEMS, int EXCHANGE_THREADS, class Op, class In>
struct LookbackScan {
    typedef typename Op::T T;
    static_assert(THREADS % EXCHANGE_THREADS == 0, "the block is whole exchange groups");
    static constexpr int kGroups = THREADS / EXCHANGE_THREADS;
    typedef TileExchange<In, EXCHANGE_THREADS, ITEMS> Load;
    typedef TileExchange<T, EXCHANGE_THREADS, ITEMS> Store;
    static constexpr int kTileItems = THREADS * ITEMS;
    static constexpr int kGroupItems = EXCHANGE_THREADS * ITEMS;
    // A group's loaded items are read out (into registers) before the block
    // scan's barriers, and the store stages only after them, so the two share
    // bytes.
    union Exchange {
        typename Load::Storage load;
        typename Store::Storage store;
    };
    struct Storage {
        Exchange exchange[kGroups];
        BlockScanStorage<T, THREADS> scan;
        T prefix;
        u32 tile;
    };

    template <bool FULL>
    static __device__ __forceinline__ void tile(const In* __restrict__ tile_in, T* __restrict__ tile_out, u32 valid,
                                                u32 tile_id, const TileStatus<T>& status, Storage& storage) {
        const Op op{};
        const int group = int(threadIdx.x) / EXCHANGE_THREADS;
        const u32 group_first = u32(group * kGroupItems);
        // The group's share of the tile's valid items (all of them when FULL).
        const u32 group_valid = valid > group_first ? min(valid - group_first, u32(kGroupItems)) : 0u;
        In x[ITEMS];
        Load::template load<FULL>(tile_in + group_first, group_valid, x, input_identity(op, tile_in),
                                  storage.exchange[group].load);
        // Only the thread's total crosses the block scan and the look-back;
        // the per-item prefixes are formed after them, from the loaded
        // inputs. Holding the narrow inputs (int32) instead of the wide
        // prefixes (int64) across the look-back keeps the kernel inside the
        // policy's register budget without spilling to local memory.
        T running = Op::identity();
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) running = op(running, lift(x[i]));
        // The barriers inside block_exclusive_scan also order every thread's
        // reads of the loaded tile before the store stages into the same
        // bytes (WAR).
        T tile_total;
        const T thread_prefix = block_exclusive_scan<Op, THREADS>(running, op, storage.scan, tile_total);
        const T tile_prefix = tile_exclusive_prefix(status, tile_id, tile_total, op, &storage.prefix);
        // out[i] = (tile prefix (+) thread prefix) (+) x[0] (+) ... (+) x[i-1]
        // (then (+) x[i] when INCLUSIVE), combined left to right: the same
        // value as the prefix of the whole input by associativity alone.
        T prefix = op(tile_prefix, thread_prefix);
        T local[ITEMS];
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) {
            const T next = op(prefix, lift(x[i]));
            local[i] = INCLUSIVE ? next : prefix;
            prefix = next;
        }
        Store::template store<FULL>(tile_out + group_first, group_valid, local, storage.exchange[group].store);
    }

    static __device__ __forceinline__ void run(const In* __restrict__ in, T* __restrict__ out, u64 count,
                                               u64* scratch) {
        __shared__ Storage storage;
        const TileStatus<T> status = tile_status_in<T>(scratch);
        const u32 tile_id = acquire_tile_id(status.tile_counter, &storage.tile);
        const u64 tile_base = (u64)tile_id * kTileItems;
        // Block-uniform: every thread takes the same branch, so the barriers
        // inside either instantiation are reached by the whole block.
        if (tile_base + kTileItems <= count) {
            tile<true>(in + tile_base, out + tile_base, kTileItems, tile_id, status, storage);
        } else {
            tile<false>(in + tile_base, out + tile_base, u32(count - tile_base), tile_id, status, storage);
        }
    }
};

#define PRIMLAB_LOOKBACK_SCAN(NAME, INCLUSIVE, OP, IN)                                                     \
    extern "C" __global__ void __launch_bounds__(kScanBlockThreads, kScanMinBlocksPerSm)                  \
        NAME(const IN* __restrict__ in, OP::T* __restrict__ out, u64 count, u64* scratch) {                \
        LookbackScan<INCLUSIVE, kScanBlockThreads, kScanItemsPerThread, kScanExchangeThreads, OP, IN>::run( \
            in, out, count, scratch);                                                                      \
    }
PRIMLAB_LOOKBACK_SCAN(scan_decoupled_lookback_exclusive_i32, false, SumI64, i32)
PRIMLAB_LOOKBACK_SCAN(scan_decoupled_lookback_inclusive_i32, true, SumI64, i32)
PRIMLAB_LOOKBACK_SCAN(scan_decoupled_lookback_exclusive_affine, false, AffineCompose, AffineMap)
PRIMLAB_LOOKBACK_SCAN(scan_decoupled_lookback_inclusive_affine, true, AffineCompose, AffineMap)
#undef PRIMLAB_LOOKBACK_SCAN

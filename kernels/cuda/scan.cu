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
//   scan_decoupled_lookback_{exclusive,inclusive}_i32             <<<ceil(n/4096), 256>>> single pass
//   scan_decoupled_lookback_{exclusive,inclusive}_affine          <<<ceil(n/512), 256>>>  single pass
//
// Limits (checked on the host): 1 <= n < 2^32, so |every int64 prefix| <=
// n * 2^31 < 2^63 and every tile id fits in u32.
#include "common/config.cuh"
#include "common/block_scan.cuh"
#include "common/decoupled_lookback.cuh"
#include "common/memory_order.cuh"
#include "common/operators.cuh"

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
#if PRIMLAB_MUTANT == 5
    // MUTANT 5: the block offset is never read; every block keeps its local
    // scan (wrong wherever an earlier block's total is not the identity).
    const T offset = Op::identity();
#else
    const T offset = offsets[blockIdx.x];
#endif
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
#if PRIMLAB_MUTANT == 13
    // MUTANT 13: the offsets of the third level are never added back into
    // the second, so the scan is wrong only past 512^2 items.
    (void)data, (void)offsets, (void)count;
#else
    blelloch_add_offsets(data, offsets, count, SumI64{});
#endif
}
extern "C" __global__ void __launch_bounds__(kBlockThreads)
scan_blelloch_add_offsets_totals_affine(AffineMap* __restrict__ data, const AffineMap* __restrict__ offsets,
                                        u64 count) {
#if PRIMLAB_MUTANT == 13
    (void)data, (void)offsets, (void)count;  // MUTANT 13, as above.
#else
    blelloch_add_offsets(data, offsets, count, AffineCompose{});
#endif
}

// ---------------------------------------------------------------------------
// Decoupled look-back, single pass (Merrill & Garland 2016).
//
// Scratch (`control`, cleared by a memset in the plan before every launch):
//   control[0] tile counter, control[1] error word, control[2 + tile] flags.
// Payload arrays `aggregates` / `inclusive` are never initialised; a tile's
// payload is only read after its flag (acquire) says it was written.
template <class T>
__device__ __forceinline__ TileStatus<T> tile_status(u32* control, T* aggregates, T* inclusive) {
    TileStatus<T> status;
    status.flags = control + 2;
    status.aggregates = aggregates;
    status.inclusive = inclusive;
    status.tile_counter = control;
    status.error = control + 1;
    return status;
}

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
#if PRIMLAB_MUTANT == 7
        // MUTANT 7: tile 0 never writes its (identity) prefix, so every
        // thread of tile 0 reads an uninitialised shared slot below (stale
        // data from an earlier block on that SM).
        if (lane_id() == 0 && tile != 0) *shared_prefix = exclusive;
#else
        if (lane_id() == 0) *shared_prefix = exclusive;
#endif
    }
    // Every thread reads the prefix only after lane 0 of warp 0 stored it.
    __syncthreads();
    return *shared_prefix;
}

// int32 -> int64, the fast path. Tile = kScanTileItems = 256 x 16 items.
//  1. Load: 16-byte int4 vectors, coalesced (thread t: vectors t + 256k),
//     into shared memory; then thread t reads the 4 vectors 4t..4t+3, i.e.
//     its 16 consecutive items.
//  2. Thread-serial scan in int64, block_exclusive_scan of thread totals.
//  3. Tile prefix by decoupled look-back (tile_exclusive_prefix).
//  4. Store: thread t writes its 16 int64 results as 8 longlong2 into shared
//     memory; then threads store 16-byte longlong2 vectors coalesced.
// Shared memory is padded with one 16-byte slot per 8 vectors (128 bytes):
// slot(v) = v + v/8. A quarter warp's 16-byte accesses (8 threads) then hit
// 8 distinct 4-bank groups in each of the four access patterns (the unit
// tests in kernels/src/scan.rs check this).
constexpr int kLookbackVectorsPerThread = kScanItemsPerThread / 4;   // int4 per thread
constexpr int kLookbackPairsPerThread = kScanItemsPerThread / 2;     // longlong2 per thread
constexpr int kTileInVectors = kScanTileItems / 4;
constexpr int kTileOutPairs = kScanTileItems / 2;
static_assert(kScanItemsPerThread % 8 == 0, "whole int4 loads and longlong2 stores per thread");
static_assert(kScanItemsPerThread == 16, "the padding argument above assumes 16 items per thread");

__device__ __forceinline__ int padded_slot(int v) { return v + (v >> 3); }

union LookbackTileSmem {
    int4 in[kTileInVectors + kTileInVectors / 8];
    longlong2 out[kTileOutPairs + kTileOutPairs / 8];
};

template <bool INCLUSIVE>
__device__ __forceinline__ void lookback_scan_i32(const i32* __restrict__ in, i64* __restrict__ out, u64 count,
                                                  const TileStatus<i64>& status) {
    __shared__ LookbackTileSmem smem;
    __shared__ BlockScanStorage<i64> scan_storage;
    __shared__ u32 tile_slot;
    __shared__ i64 shared_prefix;
    const SumI64 op{};
    const int t = int(threadIdx.x);
    const u32 tile = acquire_tile_id(status.tile_counter, &tile_slot);
    const u64 tile_base = (u64)tile * kScanTileItems;
    const bool full_tile = tile_base + kScanTileItems <= count;  // block-uniform

    // 1. Load (tile_base is a multiple of 4096 items: int4-aligned).
    const int4* __restrict__ vectors = reinterpret_cast<const int4*>(in + tile_base);
    if (full_tile) {
#pragma unroll
        for (int k = 0; k < kLookbackVectorsPerThread; ++k) {
            const int v = k * kBlockThreads + t;
            smem.in[padded_slot(v)] = vectors[v];
        }
    } else {
#pragma unroll
        for (int k = 0; k < kLookbackVectorsPerThread; ++k) {
            const int v = k * kBlockThreads + t;
            const u64 item = tile_base + 4 * (u64)v;
            int4 q;
            if (item + 4 <= count) {
                q = vectors[v];
            } else {
                // Past the end: the identity 0 (only the scalars before n are read).
                q.x = item < count ? in[item] : 0;
                q.y = item + 1 < count ? in[item + 1] : 0;
                q.z = item + 2 < count ? in[item + 2] : 0;
                q.w = item + 3 < count ? in[item + 3] : 0;
            }
            smem.in[padded_slot(v)] = q;
        }
    }
    // Each thread reads vectors that other threads stored (RAW).
    __syncthreads();

    // 2. Thread-serial scan of items 16t .. 16t+15.
    i64 local[kScanItemsPerThread];
    i64 running = 0;
#pragma unroll
    for (int j = 0; j < kLookbackVectorsPerThread; ++j) {
        const int4 q = smem.in[padded_slot(kLookbackVectorsPerThread * t + j)];
        const i32 x[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            if (INCLUSIVE) {
                running += x[e];
                local[4 * j + e] = running;
            } else {
                local[4 * j + e] = running;
                running += x[e];
            }
        }
    }
    // The barriers inside block_exclusive_scan also order every thread's
    // reads of smem.in above before smem.out (the same bytes) is written in
    // step 4 (WAR).
    i64 tile_total;
    const i64 thread_prefix = block_exclusive_scan(running, op, scan_storage, tile_total);

    // 3. Everything before this tile.
    const i64 tile_prefix = tile_exclusive_prefix(status, tile, tile_total, op, &shared_prefix);
    const i64 base = tile_prefix + thread_prefix;

    // 4. Store through shared memory: thread t's pairs are 8t .. 8t+7.
#pragma unroll
    for (int j = 0; j < kLookbackPairsPerThread; ++j) {
        smem.out[padded_slot(kLookbackPairsPerThread * t + j)] =
            make_longlong2(base + local[2 * j], base + local[2 * j + 1]);
    }
    // Each thread stores pairs that other threads wrote (RAW).
    __syncthreads();
    longlong2* __restrict__ pairs = reinterpret_cast<longlong2*>(out + tile_base);
    if (full_tile) {
#pragma unroll
        for (int k = 0; k < kLookbackPairsPerThread; ++k) {
            const int p = k * kBlockThreads + t;
            pairs[p] = smem.out[padded_slot(p)];
        }
    } else {
#pragma unroll
        for (int k = 0; k < kLookbackPairsPerThread; ++k) {
            const int p = k * kBlockThreads + t;
            const u64 item = tile_base + 2 * (u64)p;
            const longlong2 value = smem.out[padded_slot(p)];
            if (item + 2 <= count) {
                pairs[p] = value;
            } else if (item < count) {
                out[item] = value.x;
            }
        }
    }
}

extern "C" __global__ void __launch_bounds__(kBlockThreads)
scan_decoupled_lookback_exclusive_i32(const i32* __restrict__ in, i64* __restrict__ out, u64 count,
                                      u32* control, i64* aggregates, i64* inclusive) {
    lookback_scan_i32<false>(in, out, count, tile_status(control, aggregates, inclusive));
}
extern "C" __global__ void __launch_bounds__(kBlockThreads)
scan_decoupled_lookback_inclusive_i32(const i32* __restrict__ in, i64* __restrict__ out, u64 count,
                                      u32* control, i64* aggregates, i64* inclusive) {
    lookback_scan_i32<true>(in, out, count, tile_status(control, aggregates, inclusive));
}

// Affine maps: the simpler per-item path. Tile = kBlockItems = 512 items,
// thread t holds the adjacent items (2t, 2t+1) of its tile.
template <bool INCLUSIVE>
__device__ __forceinline__ void lookback_scan_affine(const AffineMap* __restrict__ in, AffineMap* __restrict__ out,
                                                     u64 count, const TileStatus<AffineMap>& status) {
    __shared__ BlockScanStorage<AffineMap> scan_storage;
    __shared__ u32 tile_slot;
    __shared__ AffineMap shared_prefix;
    const AffineCompose op{};
    const u32 tile = acquire_tile_id(status.tile_counter, &tile_slot);
    const u64 first = (u64)tile * kBlockItems + 2 * (u64)threadIdx.x;
    const AffineMap x0 = first < count ? in[first] : AffineCompose::identity();
    const AffineMap x1 = first + 1 < count ? in[first + 1] : AffineCompose::identity();
    AffineMap tile_total;
    const AffineMap thread_prefix = block_exclusive_scan(op(x0, x1), op, scan_storage, tile_total);
    const AffineMap tile_prefix = tile_exclusive_prefix(status, tile, tile_total, op, &shared_prefix);
    const AffineMap exclusive0 = op(tile_prefix, thread_prefix);
    const AffineMap inclusive0 = op(exclusive0, x0);
    if (first < count) out[first] = INCLUSIVE ? inclusive0 : exclusive0;
    if (first + 1 < count) out[first + 1] = INCLUSIVE ? op(inclusive0, x1) : inclusive0;
}

extern "C" __global__ void __launch_bounds__(kBlockThreads)
scan_decoupled_lookback_exclusive_affine(const AffineMap* __restrict__ in, AffineMap* __restrict__ out,
                                         u64 count, u32* control, AffineMap* aggregates, AffineMap* inclusive) {
    lookback_scan_affine<false>(in, out, count, tile_status(control, aggregates, inclusive));
}
extern "C" __global__ void __launch_bounds__(kBlockThreads)
scan_decoupled_lookback_inclusive_affine(const AffineMap* __restrict__ in, AffineMap* __restrict__ out,
                                         u64 count, u32* control, AffineMap* aggregates, AffineMap* inclusive) {
    lookback_scan_affine<true>(in, out, count, tile_status(control, aggregates, inclusive));
}

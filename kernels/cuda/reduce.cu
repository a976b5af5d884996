// reduce.cu: whole-array reductions in four schedules, each instantiated for
//   * SumI64 over int32 input (int64 accumulation and output), and
//   * AffineCompose over affine maps (associative, NOT commutative: the
//     result is only right if every schedule keeps left-to-right order).
//
// Entry points (launched from kernels/src/reduce.rs):
//   reduce_serial_{i32,affine}          <<<1, 1>>>      one thread, the baseline
//   reduce_multipass_{i32,i64,affine}   <<<ceil(n/512), 256>>>  one partial per block;
//                                        later passes (i64 / affine) until one value is left
//   reduce_block_atomic_i32             <<<ceil(n/4096), 256>>> one atomicAdd per block
//   reduce_block_atomic_affine          <<<ceil(n/2048), 256>>> one ticket per block, ordered
//   reduce_single_pass_{i32,affine}     <<<G, 256>>> persistent grid, warp tiles, last block done
//
// Sizes (checked on the host, kernels/src/reduce.rs): 1 <= n <= MAX_LEN =
// (2^31 - 1) * 512, the most items whose grids (ceil(n/512) blocks, the
// multipass first pass) fit gridDim.x; device memory runs out long before.
// Every item index, tile base and count is u64 (n passes 2^32 on an H200):
// only per-thread offsets inside one block or tile are 32-bit. There is ONE
// path, no 32-bit fast path: the 64-bit arithmetic is a few instructions per
// block or per 512-item tile, never per item, and these same kernels were
// measured at the read ceiling (receipts/bench) with it.
//
// The int64 sum: adds are modulo 2^64 (SumI64, operators.cuh), so the result
// is the exact sum whenever that fits int64, always so for n <= 2^32 (|sum|
// <= n * 2^31 <= 2^63); past 2^32 an input may have a sum outside int64, and
// the result is then that sum wrapped to int64 (as CUB and torch.sum give).
// The affine maps compose in wrapping u64 arithmetic, which is exactly
// associative, so every order-preserving tree gives the same bits.
#include "common/config.cuh"
#include "common/block_reduce.cuh"
#include "common/decoupled_lookback.cuh"
#include "common/memory_order.cuh"
#include "common/operators.cuh"
#include "common/tile_io.cuh"
#include "common/vector_of.cuh"

using namespace primlab;

// ---------------------------------------------------------------------------
// Elements: what one input element means to the operator.
__device__ __forceinline__ i64 lift(i32 x) { return (i64)x; }
__device__ __forceinline__ i64 lift(i64 x) { return x; }
__device__ __forceinline__ AffineMap lift(const AffineMap& x) { return x; }

__device__ __forceinline__ u64 min_u64(u64 a, u64 b) { return a < b ? a : b; }

// ---------------------------------------------------------------------------
// Serial: one thread folds the input left to right. Loads are issued in
// batches before they are combined so the one thread keeps several loads in
// flight; the combine order is still strictly left to right.
#ifndef PRIMLAB_REDUCE_SERIAL_BATCH
#error "PRIMLAB_REDUCE_SERIAL_BATCH is not defined (policy.rs passes it)"
#endif
constexpr int kSerialBatch = PRIMLAB_REDUCE_SERIAL_BATCH;

template <class Op, class In>
__device__ __forceinline__ void serial_reduce(const In* __restrict__ in, u64 count, typename Op::T* out, Op op) {
    typedef typename Op::T T;
    T acc = Op::identity();
    u64 i = 0;
    for (; i + kSerialBatch <= count; i += kSerialBatch) {
        T batch[kSerialBatch];
#pragma unroll
        for (int j = 0; j < kSerialBatch; ++j) batch[j] = lift(in[i + j]);
#pragma unroll
        for (int j = 0; j < kSerialBatch; ++j) acc = op(acc, batch[j]);
    }
    for (; i < count; ++i) acc = op(acc, lift(in[i]));
    *out = acc;
}

extern "C" __global__ void reduce_serial_i32(const i32* __restrict__ in, u64 count, i64* out) {
    serial_reduce(in, count, out, SumI64{});
}

extern "C" __global__ void reduce_serial_affine(const AffineMap* __restrict__ in, u64 count, AffineMap* out) {
    serial_reduce(in, count, out, AffineCompose{});
}

// ---------------------------------------------------------------------------
// Multipass (recursive): 256 threads, 512 inputs per block, one partial
// per block; the host launches the same kernel over the partials until one
// value is left, every pass after the last on the same stream.
//
// Layout: thread t loads the ADJACENT pair (2t, 2t+1) of its block's 512
// items and combines it as op(x[2t], x[2t+1]). Thread t then covers
// [2t, 2t+2), warp w covers [64w, 64w+64), and block_reduce's warp tree
// combines lower ranges on the left, so the block partial is the in-order
// fold of its 512 items. (The seed's "t and t+256" layout gives thread t the
// items t and t+256, which are not adjacent: that is only equivalent for a
// commutative operator such as the int64 sum.)
//
// A pair is one naturally aligned vector: `first` is even and cudaMalloc
// aligns buffers to 256 bytes, so an int32 pair is one 8-byte int2 load and
// an int64 pair one 16-byte longlong2 load.
__device__ __forceinline__ i64 combine_pair(const i32* pair, SumI64 op) {
    const int2 v = *reinterpret_cast<const int2*>(pair);
    return op((i64)v.x, (i64)v.y);
}
__device__ __forceinline__ i64 combine_pair(const i64* pair, SumI64 op) {
    const longlong2 v = *reinterpret_cast<const longlong2*>(pair);
    return op(v.x, v.y);
}
__device__ __forceinline__ AffineMap combine_pair(const AffineMap* pair, AffineCompose op) {
    return op(pair[0], pair[1]);
}

// op(in[first], in[first + 1]) where both exist; in[first] alone at an odd
// tail; the identity past the end (tail lanes stay in every collective).
template <class Op, class In>
__device__ __forceinline__ typename Op::T load_adjacent_pair(const In* __restrict__ in, u64 first, u64 count, Op op) {
    if (first + 1 < count) return combine_pair(in + first, op);
    if (first < count) return lift(in[first]);
    return Op::identity();
}

template <class Op, class In>
__device__ __forceinline__ void multipass_reduce(const In* __restrict__ in, u64 count, typename Op::T* __restrict__ partials,
                                                 Op op) {
    typedef typename Op::T T;
    __shared__ BlockReduceStorage<T> storage;
    const u64 block_first = (u64)blockIdx.x * kBlockItems;
    const u64 first = block_first + 2 * (u64)threadIdx.x;
    const T value = load_adjacent_pair(in, first, count, op);
    const T total = block_reduce(value, op, storage);
    if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

extern "C" __global__ void __launch_bounds__(kBlockThreads)
reduce_multipass_i32(const i32* __restrict__ in, u64 count, i64* __restrict__ partials) {
    multipass_reduce(in, count, partials, SumI64{});
}

// Later passes of the int32 sum: the same kernel over the int64 partials.
extern "C" __global__ void __launch_bounds__(kBlockThreads)
reduce_multipass_i64(const i64* __restrict__ in, u64 count, i64* __restrict__ partials) {
    multipass_reduce(in, count, partials, SumI64{});
}

extern "C" __global__ void __launch_bounds__(kBlockThreads)
reduce_multipass_affine(const AffineMap* __restrict__ in, u64 count, AffineMap* __restrict__ partials) {
    multipass_reduce(in, count, partials, AffineCompose{});
}

// ---------------------------------------------------------------------------
// Block atomic, int32 sum: each block reduces 4096 items (4 int4 loads per
// thread), then thread 0 issues ONE atomicAdd into *out, which the host
// zeroes (memset) before the launch.
//
// Signed correctness: the legacy 64-bit atomicAdd is unsigned. In two's
// complement, adding the bit pattern of a signed value modulo 2^64 is the
// same operation as signed addition, so adding (u64)total to (u64)*out gives
// the bits of the signed sum modulo 2^64, in any order of the atomics: read
// as int64, the exact signed sum whenever it fits int64 (always for n <=
// 2^32), negative totals included; past that, the sum wrapped (see the top).
#ifndef PRIMLAB_REDUCE_ATOMIC_VECTORS_PER_THREAD
#error "PRIMLAB_REDUCE_ATOMIC_VECTORS_PER_THREAD is not defined (policy.rs passes it)"
#endif
constexpr int kAtomicVectorsPerThread = PRIMLAB_REDUCE_ATOMIC_VECTORS_PER_THREAD;
constexpr int kAtomicBlockItems = kBlockThreads * kAtomicVectorsPerThread * 4;

extern "C" __global__ void __launch_bounds__(kBlockThreads)
reduce_block_atomic_i32(const i32* __restrict__ in, u64 count, i64* out) {
    __shared__ BlockReduceStorage<i64> storage;
    const u64 block_first = (u64)blockIdx.x * kAtomicBlockItems;
    i64 sum = 0;
    if (block_first + kAtomicBlockItems <= count) {
        // Whole block: 16-byte loads (block_first is a multiple of 4096 items).
        const int4* vectors = as_vectors(in + block_first);
        int4 v[kAtomicVectorsPerThread];
#pragma unroll
        for (int k = 0; k < kAtomicVectorsPerThread; ++k) v[k] = vectors[k * kBlockThreads + threadIdx.x];
#pragma unroll
        for (int k = 0; k < kAtomicVectorsPerThread; ++k) sum += (i64)v[k].x + v[k].y + v[k].z + v[k].w;
    } else {
        // The last, partial block: scalar loads, coalesced, guarded.
        for (u32 j = threadIdx.x; j < (u32)kAtomicBlockItems; j += kBlockThreads) {
            const u64 i = block_first + j;
            if (i < count) sum += in[i];
        }
    }
    const i64 total = block_reduce(sum, SumI64{}, storage);
    if (threadIdx.x == 0) atomicAdd(reinterpret_cast<unsigned long long*>(out), (unsigned long long)total);
}

// ---------------------------------------------------------------------------
// Block atomic, affine maps ("ticket-ordered"): an atomic add cannot keep
// the order of a non-commutative operator, so each block takes a ticket from
// an atomic counter (sync[0]) and reduces the ticket's range of 2048 items
// (thread t: the 8 contiguous items [8t, 8t+8) of it, in order). Thread 0
// then waits (bounded, acquire) until the turn word sync[1] equals its
// ticket, folds acc = op(acc, partial) into *out, and release-stores
// turn = ticket + 1. One atomic per block, and order is kept.
//
// Forward progress: tickets are handed out in block start order, so a block
// only ever waits for blocks that have already started (and, inductively,
// finish); it never waits for a block the hardware has not scheduled.
// The plan zeroes sync[0..3) = {ticket counter, turn, error word} before
// every launch. Ticket 0 writes *out without reading it (no memset of out).
#ifndef PRIMLAB_REDUCE_ORDERED_THREAD_ITEMS
#error "PRIMLAB_REDUCE_ORDERED_THREAD_ITEMS is not defined (policy.rs passes it)"
#endif
constexpr int kOrderedThreadItems = PRIMLAB_REDUCE_ORDERED_THREAD_ITEMS;
constexpr int kOrderedBlockItems = kBlockThreads * kOrderedThreadItems;

// Polls *turn (acquire) until it equals `ticket`. The bound counts polls
// without progress: it restarts whenever the turn moves, so a long queue
// that keeps moving never times out, while a stuck one records the fault in
// *error (the host turns it into GpuError::KernelFault) instead of hanging.
__device__ __forceinline__ void wait_for_turn(const u32* turn, u32 ticket, u32* error) {
    u32 seen = load_acquire_gpu(turn);
    u32 polls = 0;
    while (seen != ticket) {
        if (++polls > kLookbackSpinLimit) {
            atomicExch(error, 1u);
            return;
        }
        __nanosleep(polls < 64 ? 20 : 200);
        const u32 now = load_acquire_gpu(turn);
        if (now != seen) polls = 0;
        seen = now;
    }
}

extern "C" __global__ void __launch_bounds__(kBlockThreads)
reduce_block_atomic_affine(const AffineMap* __restrict__ in, u64 count, AffineMap* out, u32* sync) {
    __shared__ BlockReduceStorage<AffineMap> storage;
    __shared__ u32 ticket_slot;
    const AffineCompose op{};
    const u32 ticket = acquire_tile_id(sync, &ticket_slot);
    const u64 first = (u64)ticket * kOrderedBlockItems + (u64)threadIdx.x * kOrderedThreadItems;
    AffineMap acc = AffineCompose::identity();
#pragma unroll
    for (int j = 0; j < kOrderedThreadItems; ++j) {
        if (first + j < count) acc = op(acc, in[first + j]);
    }
    const AffineMap partial = block_reduce(acc, op, storage);
    if (threadIdx.x == 0) {
        AffineMap running = partial;
        if (ticket > 0) {
            wait_for_turn(sync + 1, ticket, sync + 2);
            // The acquire above makes ticket-1's store of *out visible.
            running = op(load_payload(out), partial);
        }
        store_payload(out, running);
        // Release: *out is visible before the next ticket sees its turn.
        store_release_gpu(sync + 1, ticket + 1);
    }
}

// ---------------------------------------------------------------------------
// Single pass: ONE launch of a persistent grid (SMs x resident blocks, fewer
// for small n). Each block reduces a contiguous chunk and writes its partial;
// the last block to finish (last-block-done: __threadfence + atomicInc
// ticket) folds all partials in block order and writes *out.
//
// The done counter is zeroed once when the plan is created. atomicInc with
// the limit gridDim.x - 1 wraps it back to 0 on the last block, so every
// completed launch leaves it at 0 for the next one: no memset per call.
template <class Op>
__device__ __forceinline__ typename Op::T reduce_partials_in_order(const typename Op::T* partials, u32 count, Op op,
                                                                   BlockReduceStorage<typename Op::T>& storage) {
    typedef typename Op::T T;
    // Thread t folds the contiguous run [t*per, (t+1)*per): thread order is
    // partial order, and block_reduce keeps thread order.
    const u32 per_thread = (count + kBlockThreads - 1) / kBlockThreads;
    const u32 begin = min(count, threadIdx.x * per_thread);
    const u32 end = min(count, begin + per_thread);
    T acc = Op::identity();
    for (u32 i = begin; i < end; ++i) acc = op(acc, load_payload(partials + i));
    return block_reduce(acc, op, storage);
}

template <class Op>
__device__ __forceinline__ void finish_single_pass(typename Op::T block_total, typename Op::T* partials,
                                                   u32* done_counter, typename Op::T* out, Op op,
                                                   BlockReduceStorage<typename Op::T>& storage) {
    __shared__ u32 is_last;
    if (threadIdx.x == 0) {
        store_payload(partials + blockIdx.x, block_total);
        // Release: the partial is visible GPU-wide before the counter counts it.
        __threadfence();
        const u32 done = atomicInc(done_counter, gridDim.x - 1);
        // Acquire: what the earlier blocks released is visible from here on.
        __threadfence();
        is_last = done == gridDim.x - 1 ? 1u : 0u;
    }
    // Every thread reads is_last after thread 0 wrote it. This barrier also
    // orders block_reduce's reads of `storage` before its reuse below (WAR).
    __syncthreads();
    if (is_last) {  // block-uniform: the barriers inside are reached by all
        __threadfence();
        const typename Op::T total = reduce_partials_in_order(partials, gridDim.x, op, storage);
        if (threadIdx.x == 0) *out = total;
    }
}

// The single-pass body, ONE schedule for both operators (the int32 sum the
// bench times, and the affine maps that prove it keeps order). The input is
// cut into warp tiles of kReduceWarpTileItems = 32 x kReduceItemsPerThread
// consecutive items (the last one partial). Block b of G takes the
// contiguous run of warp tiles [W*b/G, W*(b+1)/G), and its warp w the w-th
// contiguous share of that run. A warp folds its warp tiles in order: each
// through the tile layer (coalesced 16-byte loads; lane l then holds the
// tile's items [l * ITEMS, (l + 1) * ITEMS), the missing items of the
// partial tile read the identity), a lane-serial fold, warp_reduce (lane
// order) and running = running (+) tile. The block combines its warps'
// totals in warp order and the last block folds the partials in block
// order: input order throughout.
constexpr int kReduceWarpTileItems = kWarpThreads * kReduceItemsPerThread;

__device__ __forceinline__ i32 input_identity(SumI64, const i32*) { return 0; }
__device__ __forceinline__ AffineMap input_identity(AffineCompose, const AffineMap*) {
    return AffineCompose::identity();
}

template <class Op, class In>
__device__ __forceinline__ void reduce_single_pass(const In* __restrict__ in, u64 count, typename Op::T* partials,
                                                   u32* done_counter, typename Op::T* out) {
    typedef typename Op::T T;
    typedef TileExchange<In, kWarpThreads, kReduceItemsPerThread> WarpTile;
    // One exchange slot per warp: warps never share one, so __syncwarp (in
    // the tile layer and below) is the only barrier the loop needs.
    __shared__ typename WarpTile::Storage exchange[kBlockWarps];
    __shared__ BlockReduceStorage<T> storage;
    const Op op{};
    const int warp = warp_id();
    const u64 warp_tiles = (count + kReduceWarpTileItems - 1) / kReduceWarpTileItems;
    const u64 block_begin = warp_tiles * blockIdx.x / gridDim.x;
    const u64 block_end = warp_tiles * (blockIdx.x + 1) / gridDim.x;
    const u64 per_warp = (block_end - block_begin + kBlockWarps - 1) / kBlockWarps;
    const u64 begin = min_u64(block_end, block_begin + (u64)warp * per_warp);
    const u64 end = min_u64(block_end, begin + per_warp);
    T running = Op::identity();
    const In oob = input_identity(op, in);
    // kReduceTilesInFlight warp tiles a step: every tile's loads are issued
    // before the first is arranged, so more bytes are in flight. A tile past
    // the warp's run fetches nothing (valid = 0: all identities). The trip
    // count is the same for every lane of a warp (warp-uniform), so the
    // __syncwarp inside the tile layer is reached by all 32 lanes.
    for (u64 step = begin; step < end; step += kReduceTilesInFlight) {
        typename WarpTile::Fetched fetched[kReduceTilesInFlight];
#pragma unroll
        for (int k = 0; k < kReduceTilesInFlight; ++k) {
            const u64 base = (step + k) * kReduceWarpTileItems;
            if (step + k < end && base + kReduceWarpTileItems <= count) {
                WarpTile::template fetch<true>(in + base, kReduceWarpTileItems, oob, fetched[k]);
            } else {
                const u32 valid = step + k < end ? u32(count - base) : 0u;
                WarpTile::template fetch<false>(in + base, valid, oob, fetched[k]);
            }
        }
#pragma unroll
        for (int k = 0; k < kReduceTilesInFlight; ++k) {
            In x[kReduceItemsPerThread];
            WarpTile::arrange(fetched[k], x, exchange[warp]);
            T acc = Op::identity();
#pragma unroll
            for (int i = 0; i < kReduceItemsPerThread; ++i) acc = op(acc, lift(x[i]));
            running = op(running, warp_reduce(acc, op));  // valid in lane 0
            // Every lane has read its items before the next tile is staged (WAR).
            __syncwarp();
        }
    }
    const T mine = lane_id() == 0 ? running : Op::identity();
    const T block_total = block_reduce(mine, op, storage);
    finish_single_pass(block_total, partials, done_counter, out, op, storage);
}

extern "C" __global__ void __launch_bounds__(kBlockThreads)
reduce_single_pass_i32(const i32* __restrict__ in, u64 count, i64* partials, u32* done_counter, i64* out) {
    reduce_single_pass<SumI64>(in, count, partials, done_counter, out);
}

extern "C" __global__ void __launch_bounds__(kBlockThreads)
reduce_single_pass_affine(const AffineMap* __restrict__ in, u64 count, AffineMap* partials, u32* done_counter,
                          AffineMap* out) {
    reduce_single_pass<AffineCompose>(in, count, partials, done_counter, out);
}

// Single-pass scan tile protocol (Merrill & Garland 2016): every tile
// publishes its aggregate (status A), then its inclusive prefix (status P);
// a successor walks back over A tiles until it meets a P tile.
//
// * Tile ids come from an atomic counter, not blockIdx: a tile only ever
//   waits for tiles whose blocks already started, so progress never depends
//   on the order in which the hardware schedules blocks.
// * Each payload is written before its flag with a release store; readers
//   acquire the flag before reading the payload.
// * The host clears the flags (X = 0) before every launch; payloads are only
//   read after a flag says they were written, so initcheck stays clean.
// * A bounded spin turns a lost predecessor into an error flag, not a hang.
#pragma once
#include "common/config.cuh"
#include "common/memory_order.cuh"
#include "common/shuffle.cuh"
#include "common/warp_reduce.cuh"

namespace primlab {

enum TileFlag : u32 { kTileInvalid = 0, kTileAggregate = 1, kTilePrefix = 2 };
// Returned by wait_for_status (never stored): the spin bound ran out.
constexpr u32 kTileTimedOut = 3;

// Device-side view of the look-back scratch: `flags` (cleared by the host),
// `aggregates`, `inclusive` (one per tile), the tile counter (cleared by the
// host) and an error word set on a spin timeout.
template <class T>
struct TileStatus {
    u32* flags;
    T* aggregates;
    T* inclusive;
    u32* tile_counter;
    u32* error;
};

// Thread 0 of the block takes the next tile id; every thread gets it.
__device__ __forceinline__ u32 acquire_tile_id(u32* tile_counter, u32* shared_slot) {
    if (threadIdx.x == 0) *shared_slot = atomicAdd(tile_counter, 1u);
    // Every thread reads the id only after thread 0 has stored it.
    __syncthreads();
    const u32 tile = *shared_slot;
    return tile;
}

template <class T>
__device__ __forceinline__ void publish_aggregate(const TileStatus<T>& status, u32 tile, const T& aggregate) {
    store_payload(status.aggregates + tile, aggregate);
    store_release_gpu(status.flags + tile, kTileAggregate);
}

template <class T>
__device__ __forceinline__ void publish_prefix(const TileStatus<T>& status, u32 tile, const T& inclusive) {
    store_payload(status.inclusive + tile, inclusive);
    store_release_gpu(status.flags + tile, kTilePrefix);
}

// Waits (bounded) until tile `tile` has left status X; returns its flag.
template <class T>
__device__ __forceinline__ u32 wait_for_status(const TileStatus<T>& status, u32 tile) {
    u32 flag = load_acquire_gpu(status.flags + tile);
    u32 polls = 0;
    while (flag == kTileInvalid) {
        if (++polls > kLookbackSpinLimit) {
            atomicExch(status.error, 1u);
            return kTileTimedOut;
        }
        __nanosleep(polls < 64 ? 20 : 200);
        flag = load_acquire_gpu(status.flags + tile);
    }
    return flag;
}

// Called by all 32 lanes of ONE warp of tile `tile` (> 0). Returns, in every
// lane of that warp, the combination of all earlier tiles in order. Each
// round inspects a window of 32 predecessors at once (lane 31 = nearest).
template <class Op>
__device__ __forceinline__ typename Op::T lookback_exclusive_prefix(const TileStatus<typename Op::T>& status,
                                                                     u32 tile, Op op) {
    typedef typename Op::T T;
    const int lane = lane_id();
    T exclusive = Op::identity();
    long long window_end = (long long)tile;  // predecessors [window_end - 32, window_end)
    while (true) {
        const long long pred = window_end - kWarpThreads + lane;
        u32 flag = kTilePrefix;
        T value = Op::identity();
        if (pred >= 0) {
#if PRIMLAB_MUTANT == 8
            // MUTANT 8: the payloads are read before the flag is acquired.
            const T early_aggregate = status.aggregates[pred];
            const T early_inclusive = status.inclusive[pred];
            flag = wait_for_status(status, (u32)pred);
            value = flag == kTilePrefix ? early_inclusive : early_aggregate;
#else
            flag = wait_for_status(status, (u32)pred);
            if (flag == kTilePrefix) value = load_payload(status.inclusive + pred);
            if (flag == kTileAggregate) value = load_payload(status.aggregates + pred);
#endif
            // A timed-out predecessor ends the walk; the host reports the error.
            if (flag == kTileTimedOut) flag = kTilePrefix;
        }
        const u32 prefix_lanes = __ballot_sync(kFullMask, flag == kTilePrefix);
        // The nearest P tile closes the window; tiles before it are covered by its prefix.
        const int start = prefix_lanes ? 31 - __clz(prefix_lanes) : 0;
        const T contribution = lane >= start ? value : Op::identity();
        const T window = shfl_idx(warp_reduce(contribution, op), 0);
        exclusive = op(window, exclusive);
        if (prefix_lanes) break;
        window_end -= kWarpThreads;
    }
    return exclusive;
}

}  // namespace primlab

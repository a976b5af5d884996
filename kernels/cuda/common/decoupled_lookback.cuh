// Single-pass scan tile protocol (Merrill & Garland 2016): every tile
// publishes its aggregate (status A), then its inclusive prefix (status P);
// a successor walks back over A tiles until it meets a P tile.
//
// * Tile ids come from an atomic counter, not blockIdx: a tile only ever
//   waits for tiles whose blocks already started, so progress never depends
//   on the order in which the hardware schedules blocks.
// * Status and value travel together, so a look-back step is ONE trip to
//   memory per predecessor (not a flag, then a payload). Each 32-bit word of
//   the value is stored in its own 64-bit descriptor word with the status in
//   the high half. Aligned 64-bit relaxed accesses are single-copy atomic, so
//   every descriptor word a reader sees was written whole by one publish; a
//   reader accepts a descriptor only when every word carries the same status,
//   and since each status (A, then P) is published exactly once per tile,
//   equal statuses mean the words come from the same publish. A torn read (some
//   words A, some P) is simply read again. No ordering beyond coherence is
//   needed: the value is the only data a successor takes from the tile.
// * The host clears the whole scratch (status X = 0) before every launch, so
//   initcheck stays clean and stale descriptors from a previous launch never
//   look published.
// * A bounded spin turns a lost predecessor into an error word, not a hang.
#pragma once
#include "common/config.cuh"
#include "common/shuffle.cuh"
#include "common/warp_reduce.cuh"

namespace primlab {

enum TileFlag : u32 { kTileInvalid = 0, kTileAggregate = 1, kTilePrefix = 2 };
// Returned by wait_for_descriptor (never stored): the spin bound ran out.
constexpr u32 kTileTimedOut = 3;

// One tile's descriptor: the value's 32-bit words, each in the low half of a
// 64-bit word whose high half is the tile's status, padded to an even count
// (a padding word carries the status and a zero). 16-byte aligned (the
// scratch is), a whole number of 16-byte vectors, so it is written and read
// with 16-byte accesses.
template <class T>
struct TileDescriptor {
    static_assert(sizeof(T) % 4 == 0, "descriptor values are whole 32-bit words");
    static constexpr int kValueWords = int(sizeof(T) / 4);
    static constexpr int kVectors = (kValueWords + 1) / 2;
    static constexpr int kWords = 2 * kVectors;
    u64 word[kWords];
};

// The words in front of the descriptors in the scratch: word 0 holds the tile
// counter (low 32 bits) and the error word (high 32 bits); word 1 pads the
// descriptors to 16-byte alignment.
constexpr int kLookbackHeaderWords = 2;

// Device-side view of the look-back scratch (one u64 array, zeroed by the
// host before every launch): the tile counter, the error word, then one
// descriptor per tile.
template <class T>
struct TileStatus {
    TileDescriptor<T>* descriptors;
    u32* tile_counter;
    u32* error;
};

template <class T>
__device__ __forceinline__ TileStatus<T> tile_status_in(u64* scratch) {
    TileStatus<T> status;
    status.tile_counter = reinterpret_cast<u32*>(scratch);
    status.error = reinterpret_cast<u32*>(scratch) + 1;
    status.descriptors = reinterpret_cast<TileDescriptor<T>*>(scratch + kLookbackHeaderWords);
    return status;
}

// Thread 0 of the block takes the next tile id; every thread gets it. Tile
// ids and the counter stay 32-bit with 64-bit sizes: one block runs one tile,
// so ids are below gridDim.x (at most 2^31 - 1, checked on the host) and the
// counter ends at the number of tiles, never wrapping; tile bases are formed
// in u64 by the callers. (The descriptors hold no tile id: widening n leaves
// their packed status-and-value words, and so their atomicity, unchanged.)
__device__ __forceinline__ u32 acquire_tile_id(u32* tile_counter, u32* shared_slot) {
    if (threadIdx.x == 0) *shared_slot = atomicAdd(tile_counter, 1u);
    // Every thread reads the id only after thread 0 has stored it.
    __syncthreads();
    const u32 tile = *shared_slot;
    return tile;
}

__device__ __forceinline__ void store_relaxed_gpu_v2(u64* address, u64 a, u64 b) {
    asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(address), "l"(a), "l"(b) : "memory");
}

__device__ __forceinline__ void load_relaxed_gpu_v2(const u64* address, u64& a, u64& b) {
    asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(address) : "memory");
}

// Publishes `value` with status `flag` (A or P) for tile `tile`.
template <class T>
__device__ __forceinline__ void publish_descriptor(const TileStatus<T>& status, u32 tile, u32 flag, const T& value) {
    typedef TileDescriptor<T> D;
    const u32* words = reinterpret_cast<const u32*>(&value);
    u64 packed[D::kWords];
#pragma unroll
    for (int w = 0; w < D::kWords; ++w) packed[w] = ((u64)flag << 32) | (w < D::kValueWords ? words[w] : 0u);
    u64* out = status.descriptors[tile].word;
#pragma unroll
    for (int v = 0; v < D::kVectors; ++v) store_relaxed_gpu_v2(out + 2 * v, packed[2 * v], packed[2 * v + 1]);
}

template <class T>
__device__ __forceinline__ void publish_aggregate(const TileStatus<T>& status, u32 tile, const T& aggregate) {
    publish_descriptor(status, tile, kTileAggregate, aggregate);
}

template <class T>
__device__ __forceinline__ void publish_prefix(const TileStatus<T>& status, u32 tile, const T& inclusive) {
    publish_descriptor(status, tile, kTilePrefix, inclusive);
}

// One read of tile `tile`'s descriptor: its status (X when any word is still
// X or the words disagree, i.e. a read torn between two publishes) and value.
template <class T>
__device__ __forceinline__ u32 read_descriptor(const TileStatus<T>& status, u32 tile, T& value) {
    typedef TileDescriptor<T> D;
    u64 raw[D::kWords];
    const u64* in = status.descriptors[tile].word;
#pragma unroll
    for (int v = 0; v < D::kVectors; ++v) load_relaxed_gpu_v2(in + 2 * v, raw[2 * v], raw[2 * v + 1]);
    const u32 flag = u32(raw[0] >> 32);
    bool agree = true;
    u32* words = reinterpret_cast<u32*>(&value);
#pragma unroll
    for (int w = 0; w < D::kWords; ++w) {
        agree = agree && u32(raw[w] >> 32) == flag;
        if (w < D::kValueWords) words[w] = u32(raw[w]);
    }
    return agree ? flag : kTileInvalid;
}

// Waits (bounded) until tile `tile` has a whole published descriptor;
// returns its status (A or P, or kTileTimedOut) and its value.
template <class T>
__device__ __forceinline__ u32 wait_for_descriptor(const TileStatus<T>& status, u32 tile, T& value) {
    u32 flag = read_descriptor(status, tile, value);
    u32 polls = 0;
    while (flag == kTileInvalid) {
        if (++polls > kLookbackSpinLimit) {
            atomicExch(status.error, 1u);
            return kTileTimedOut;
        }
        // Short sleeps first: most predecessors publish within a few hundred
        // nanoseconds; long ones only when a predecessor is far behind.
        if (polls > 8) __nanosleep(polls < 64 ? 32 : 256);
        flag = read_descriptor(status, tile, value);
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
            flag = wait_for_descriptor(status, (u32)pred, value);
            // A timed-out predecessor ends the walk; the host reports the error.
            if (flag == kTileTimedOut) {
                flag = kTilePrefix;
                value = Op::identity();
            }
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

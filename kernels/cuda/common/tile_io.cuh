// The tile layer: moves one tile of GROUP_THREADS * ITEMS items between
// global memory and the BLOCKED arrangement in registers (thread t of the
// group holds the ITEMS consecutive items [t * ITEMS, (t + 1) * ITEMS) of the
// tile), which is what thread-serial scans and reductions need. The group is
// the whole block (GROUP_THREADS = blockDim.x, synchronised by __syncthreads)
// or one warp (GROUP_THREADS = 32, synchronised by __syncwarp, each warp
// with its own storage).
//
// * FULL (a template flag, block-uniform): every item of the tile is valid,
//   so no access is guarded. Otherwise only the first `valid` items are: a
//   load gives `oob` (the operator's identity) past them and a store writes
//   nothing past them.
// * Global accesses are 16-byte vectors where the type allows (T of 4 or 8
//   bytes: the tile is staged in shared memory, striped so that consecutive
//   threads touch consecutive vectors, i.e. coalesced); a T of 16 bytes is
//   already one vector, moved directly between global memory and registers.
//   The caller guarantees 16-byte alignment of the tile's first item (the host
//   checks the buffers; tiles are whole multiples of 16 bytes).
// * Shared memory is padded by one vector per 8 (128 bytes) when a thread
//   owns an even number of vectors, so that a quarter warp's 16-byte accesses
//   hit 8 distinct 4-bank groups in both the striped and the blocked pattern
//   (at most 2 threads a group for an even count that is not a power of two,
//   e.g. 6); an odd count needs no padding (an odd stride spreads them).
#pragma once
#include "common/config.cuh"

namespace primlab {

template <class T, int GROUP_THREADS, int ITEMS>
struct TileExchange {
    static_assert(GROUP_THREADS % kWarpThreads == 0, "a group is whole warps");
    static_assert(sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16, "16-byte vectors of whole items");
    static constexpr int kVectorItems = int(16 / sizeof(T));
    static_assert(ITEMS % kVectorItems == 0, "a thread owns whole vectors");
    static constexpr int kVectorsPerThread = ITEMS / kVectorItems;
    static constexpr int kTileVectors = GROUP_THREADS * kVectorsPerThread;
    static constexpr int kTileItems = GROUP_THREADS * ITEMS;
    // Staged through shared memory unless an item is already a vector.
    static constexpr bool kStaged = kVectorItems > 1;
    static constexpr bool kPadded = kVectorsPerThread % 2 == 0;

    struct alignas(16) Vector {
        T item[kVectorItems];
    };
    struct Storage {
        Vector slots[kStaged ? kTileVectors + (kPadded ? kTileVectors / 8 : 0) : 1];
    };

    static __device__ __forceinline__ int slot(int v) { return kPadded ? v + v / 8 : v; }
    static __device__ __forceinline__ int rank() { return int(threadIdx.x) % GROUP_THREADS; }
    // Orders the group's shared-memory writes before its reads (RAW).
    static __device__ __forceinline__ void group_sync() {
        if constexpr (GROUP_THREADS == kWarpThreads) {
            __syncwarp();
        } else {
            __syncthreads();
        }
    }

    // The global half of a load: this thread's striped vectors of the tile
    // (vector k * GROUP_THREADS + rank), `oob` past `valid`. Touches no
    // shared memory, so a caller may fetch several tiles before arranging
    // any (more loads in flight).
    struct Fetched {
        Vector v[kStaged ? kVectorsPerThread : ITEMS];
    };
    template <bool FULL>
    static __device__ __forceinline__ void fetch(const T* __restrict__ tile_in, u32 valid, T oob, Fetched& f) {
        const int t = rank();
        const Vector* __restrict__ vectors = reinterpret_cast<const Vector*>(tile_in);
        if constexpr (!kStaged) {
            // An item is a vector: thread t fetches its own consecutive items.
#pragma unroll
            for (int i = 0; i < ITEMS; ++i) {
                const u32 item = u32(t * ITEMS + i);
                if (FULL || item < valid) {
                    f.v[i] = vectors[item];
                } else {
                    f.v[i].item[0] = oob;
                }
            }
        } else {
#pragma unroll
            for (int k = 0; k < kVectorsPerThread; ++k) {
                const int v = k * GROUP_THREADS + t;
                if (FULL || u32(v + 1) * kVectorItems <= valid) {
                    f.v[k] = vectors[v];
                } else {
#pragma unroll
                    for (int e = 0; e < kVectorItems; ++e) {
                        const u32 item = u32(v) * kVectorItems + e;
                        f.v[k].item[e] = item < valid ? tile_in[item] : oob;
                    }
                }
            }
        }
    }

    // The shared half: fetched vectors into the blocked `items`. Ends after
    // every thread has read its own items from `storage`: the caller must
    // pass a group barrier before `storage` is written again (WAR).
    static __device__ __forceinline__ void arrange(const Fetched& f, T (&items)[ITEMS], Storage& storage) {
        const int t = rank();
        if constexpr (!kStaged) {
#pragma unroll
            for (int i = 0; i < ITEMS; ++i) items[i] = f.v[i].item[0];
        } else {
#pragma unroll
            for (int k = 0; k < kVectorsPerThread; ++k) storage.slots[slot(k * GROUP_THREADS + t)] = f.v[k];
            // Each thread reads vectors that other threads stored (RAW).
            group_sync();
#pragma unroll
            for (int j = 0; j < kVectorsPerThread; ++j) {
                const Vector q = storage.slots[slot(kVectorsPerThread * t + j)];
#pragma unroll
                for (int e = 0; e < kVectorItems; ++e) items[kVectorItems * j + e] = q.item[e];
            }
        }
    }

    // fetch, then arrange.
    template <bool FULL>
    static __device__ __forceinline__ void load(const T* __restrict__ tile_in, u32 valid, T (&items)[ITEMS], T oob,
                                                Storage& storage) {
        Fetched f;
        fetch<FULL>(tile_in, valid, oob, f);
        arrange(f, items, storage);
    }

    // Writes the blocked `items` as the tile. The caller must have passed a
    // barrier since the last reads of `storage` (WAR); ends with the stores
    // issued, after which `storage` needs a barrier before its next writes.
    template <bool FULL>
    static __device__ __forceinline__ void store(T* __restrict__ tile_out, u32 valid, const T (&items)[ITEMS],
                                                 Storage& storage) {
        const int t = rank();
        Vector* __restrict__ vectors = reinterpret_cast<Vector*>(tile_out);
        if constexpr (!kStaged) {
#pragma unroll
            for (int i = 0; i < ITEMS; ++i) {
                const u32 item = u32(t * ITEMS + i);
                if (FULL || item < valid) vectors[item].item[0] = items[i];
            }
        } else {
#pragma unroll
        for (int j = 0; j < kVectorsPerThread; ++j) {
            Vector q;
#pragma unroll
            for (int e = 0; e < kVectorItems; ++e) q.item[e] = items[kVectorItems * j + e];
            storage.slots[slot(kVectorsPerThread * t + j)] = q;
        }
        // Each thread stores vectors that other threads wrote (RAW).
        group_sync();
#pragma unroll
        for (int k = 0; k < kVectorsPerThread; ++k) {
            const int v = k * GROUP_THREADS + t;
            const Vector q = storage.slots[slot(v)];
            if (FULL || u32(v + 1) * kVectorItems <= valid) {
                vectors[v] = q;
            } else {
#pragma unroll
                for (int e = 0; e < kVectorItems; ++e) {
                    const u32 item = u32(v) * kVectorItems + e;
                    if (item < valid) tile_out[item] = q.item[e];
                }
            }
        }
        }
    }
};

}  // namespace primlab

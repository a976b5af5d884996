// GPU-scope release/acquire and relaxed accesses through inline PTX (NVRTC
// has no <cuda/atomic> without the CCCL include path). Cache hints such as
// .cg are not ordering; these are.
#pragma once
#include "common/config.cuh"

namespace primlab {

// One u32 store and one u32 load at GPU scope, with the PTX memory orders
// `store_order` and `load_order`: defines store_<store_order>_gpu and
// load_<load_order>_gpu.
#define PRIMLAB_GPU_SCOPE_U32_ACCESS(store_order, load_order)                                             \
    __device__ __forceinline__ void store_##store_order##_gpu(u32* address, u32 value) {                   \
        asm volatile("st." #store_order ".gpu.global.u32 [%0], %1;" ::"l"(address), "r"(value) : "memory"); \
    }                                                                                                      \
    __device__ __forceinline__ u32 load_##load_order##_gpu(const u32* address) {                           \
        u32 value;                                                                                         \
        asm volatile("ld." #load_order ".gpu.global.u32 %0, [%1];" : "=r"(value) : "l"(address) : "memory"); \
        return value;                                                                                      \
    }

// store_release_gpu orders every earlier write of this thread before the flag
// becomes visible; after load_acquire_gpu, later reads of this thread see
// everything the releasing writer wrote first.
PRIMLAB_GPU_SCOPE_U32_ACCESS(release, acquire)
// store_relaxed_gpu / load_relaxed_gpu: atomic word accesses with no ordering.
PRIMLAB_GPU_SCOPE_U32_ACCESS(relaxed, relaxed)

#undef PRIMLAB_GPU_SCOPE_U32_ACCESS

// A value of any word-multiple type, written and read word by word with
// relaxed GPU-scope accesses: the payload of a look-back tile, published
// before (and read after) its release/acquire flag.
template <class T>
__device__ __forceinline__ void store_payload(T* address, const T& value) {
    static_assert(sizeof(T) % 4 == 0, "payloads are whole 32-bit words");
    const u32* words = reinterpret_cast<const u32*>(&value);
    u32* out = reinterpret_cast<u32*>(address);
#pragma unroll
    for (int w = 0; w < int(sizeof(T) / 4); ++w) store_relaxed_gpu(out + w, words[w]);
}

template <class T>
__device__ __forceinline__ T load_payload(const T* address) {
    static_assert(sizeof(T) % 4 == 0, "payloads are whole 32-bit words");
    T value;
    u32* words = reinterpret_cast<u32*>(&value);
    const u32* in = reinterpret_cast<const u32*>(address);
#pragma unroll
    for (int w = 0; w < int(sizeof(T) / 4); ++w) words[w] = load_relaxed_gpu(in + w);
    return value;
}

}  // namespace primlab

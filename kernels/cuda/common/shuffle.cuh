// Warp shuffles for any trivially copyable value type (i64, float pairs,
// softmax states, affine maps): the value is moved as 32-bit words.
#pragma once
#include "common/config.cuh"

namespace primlab {

template <class T>
union ShuffleWords {
    T value;
    u32 words[sizeof(T) / 4];
};

// Moves `value` one 32-bit word at a time through `shuffle_word`, one warp
// shuffle per word.
template <class T, class ShuffleWord>
__device__ __forceinline__ T shuffle_words(T value, ShuffleWord shuffle_word) {
    static_assert(sizeof(T) % 4 == 0, "shuffle moves whole 32-bit words");
    ShuffleWords<T> in, out;
    in.value = value;
#pragma unroll
    for (int w = 0; w < int(sizeof(T) / 4); ++w) {
        out.words[w] = shuffle_word(in.words[w]);
    }
    return out.value;
}

// Every lane named by kFullMask must call these with the same delta: callers
// keep tail lanes alive (carrying the identity) instead of letting them exit.
template <class T>
__device__ __forceinline__ T shfl_down(T value, u32 delta) {
    return shuffle_words(value, [delta](u32 word) { return __shfl_down_sync(kFullMask, word, delta); });
}

template <class T>
__device__ __forceinline__ T shfl_up(T value, u32 delta) {
    return shuffle_words(value, [delta](u32 word) { return __shfl_up_sync(kFullMask, word, delta); });
}

template <class T>
__device__ __forceinline__ T shfl_idx(T value, int src_lane) {
    return shuffle_words(value, [src_lane](u32 word) { return __shfl_sync(kFullMask, word, src_lane); });
}

__device__ __forceinline__ int lane_id() { return int(threadIdx.x) & (kWarpThreads - 1); }
__device__ __forceinline__ int warp_id() { return int(threadIdx.x) / kWarpThreads; }

}  // namespace primlab

// Row softmax over [rows, cols] row-major logits, f32 or bf16 in and out, all
// math in f32 (bf16 is widened on load and rounded once on store).
//
// Contract, shared by every schedule below:
//  * A masked logit is -inf and gets probability exactly 0.
//  * NaN or +inf input: each thread keeps the smallest flat index
//    (row * cols + col) of such a logit and atomicMin's it into
//    *first_nonfinite, which the host initialises to ~0 (0xFF memset) before
//    every launch; the host then reports GpuError::NonFinite. Outputs of such
//    rows are unspecified (they may hold NaN).
//  * A row whose logits are all -inf has no maximum: masked_rows[row] = 1 and
//    the row's outputs are written as 0.0 (never NaN). Every other row gets
//    masked_rows[row] = 0, so the flag array is fully written by every launch.
//  * p = expf(x - m) * (1 / d), with the exact row maximum m (fmaxf), the
//    IEEE-accurate expf (max 2 ulp, not __expf), d = sum of expf(x - m), and
//    1/d rounded once (__frcp_rn). kernels/src/softmax.rs derives the
//    per-element error bound from this and from each schedule's sum tree.
//  * 16-byte loads/stores when every row start is 16-byte aligned: f32 needs
//    cols % 4 == 0, bf16 cols % 8 == 0 (and 16-byte aligned buffers);
//    otherwise scalar accesses.
//
// The (m, d) guard: a thread whose values so far are all -inf
// (m == -inf) must not evaluate exp(-inf - -inf) = NaN. add_values below
// holds that guard for the per-thread online state, SoftmaxMerge
// (common/operators.cuh) for merges (the gallery's mutant 10 removes both).
#include "common/config.cuh"
#include "common/element_io.cuh"
#include "common/async_copy.cuh"
#include "common/bf16.cuh"
#include "common/block_reduce.cuh"
#include "common/operators.cuh"
#include "common/shuffle.cuh"
#include "common/vector_of.cuh"
#include "common/warp_reduce.cuh"

using namespace primlab;

typedef unsigned char u8;

namespace {

constexpr u64 kNoNonfinite = ~0ull;

// Rows a RowInWarpRegisters warp holds at once: 8 loads per lane in flight
// for the shortest rows (ITEMS <= 4), one row (ITEMS loads) beyond.
__host__ __device__ constexpr int warp_register_rows(int items) { return items >= 8 ? 1 : 8 / items; }

__device__ __forceinline__ float neg_inf() { return -__int_as_float(0x7f800000); }

// ---- A thread's share of one row ----------------------------------------------
//
// With `vectors`, the thread owns the 16-byte vectors start, start + step, ...
// (vector i = columns [W*i, W*i + W)); otherwise the columns start,
// start + step, ... one by one. Every pass over a row uses the same layout.
// f(at, col0, values) receives a chunk of N = W or 1 values starting at col0;
// `at` is its index in the row's chunks (vector i, or column col0), which is
// what Io::store_vec or Io::store takes (visitors are functors with a
// templated operator(): NVRTC compiles no device lambdas).

template <class Io, class F>
__device__ __forceinline__ void for_each_chunk(const typename Io::Elem* __restrict__ row, u32 cols, u32 start,
                                               u32 step, bool vectors, F& f) {
    if (vectors) {
        const u32 vector_count = cols / Io::kVec;
#pragma unroll 4
        for (u32 vi = start; vi < vector_count; vi += step) {
            float v[Io::kVec];
            Io::load_vec(row, vi, v);
            f(vi, vi * Io::kVec, v);
        }
    } else {
#pragma unroll 4
        for (u32 c = start; c < cols; c += step) {
            float v[1] = {Io::load(row, c)};
            f(c, c, v);
        }
    }
}

// Lets `map` rewrite each chunk in place, then stores it to the same chunk of `out_row`.
template <class Io, class F>
struct StoreMapped {
    typename Io::Elem* __restrict__ out_row;
    const F& map;
    template <int N>
    __device__ __forceinline__ void operator()(u32 at, u32, float (&v)[N]) {
        map(v);
        if constexpr (N == 1) {
            Io::store(out_row, at, v[0]);
        } else {
            Io::store_vec(out_row, at, v);
        }
    }
};

// Reads every chunk, lets f rewrite it in place, stores it to out_row.
template <class Io, class F>
__device__ __forceinline__ void transform_chunks(const typename Io::Elem* __restrict__ in_row,
                                                 typename Io::Elem* __restrict__ out_row, u32 cols, u32 start,
                                                 u32 step, bool vectors, const F& f) {
    StoreMapped<Io, F> store{out_row, f};
    for_each_chunk<Io>(in_row, cols, start, step, vectors, store);
}

// An all-masked row: its outputs are 0.0, never NaN.
template <class Io>
__device__ __forceinline__ void write_zeros(typename Io::Elem* __restrict__ out_row, u32 cols, u32 start, u32 step,
                                            bool vectors) {
    if (vectors) {
        float z[Io::kVec];
#pragma unroll
        for (int k = 0; k < Io::kVec; ++k) z[k] = 0.0f;
        for (u32 vi = start; vi < cols / Io::kVec; vi += step) Io::store_vec(out_row, vi, z);
    } else {
        for (u32 c = start; c < cols; c += step) Io::store(out_row, c, 0.0f);
    }
}

// NaN and +inf are rejected; -inf (masked) passes: !(x < +inf) is exactly
// "NaN or +inf".
template <int N>
__device__ __forceinline__ void note_nonfinite(const float (&v)[N], u64 flat0, u64& first_bad) {
#pragma unroll
    for (int k = 0; k < N; ++k) {
        if (!(v[k] < __int_as_float(0x7f800000))) first_bad = flat0 + k < first_bad ? flat0 + k : first_bad;
    }
}

__device__ __forceinline__ void report_nonfinite(u64 first_bad, u64* first_nonfinite) {
    if (first_bad != kNoNonfinite) atomicMin(first_nonfinite, first_bad);
}

// Pairwise sum of a small array, order fixed: ((v0+v1)+(v2+v3))+... (depth
// log2 N). Works on a copy: RowInRegisters keeps its values for the output.
template <int N>
__device__ __forceinline__ float pairwise_sum(const float (&v)[N]) {
    float t[N];
#pragma unroll
    for (int i = 0; i < N; ++i) t[i] = v[i];
#pragma unroll
    for (int width = 1; width < N; width *= 2) {
#pragma unroll
        for (int i = 0; i + width < N; i += 2 * width) t[i] = __fadd_rn(t[i], t[i + width]);
    }
    return t[0];
}

template <int N>
__device__ __forceinline__ float chunk_max(const float (&v)[N]) {
    float m = v[0];
#pragma unroll
    for (int k = 1; k < N; ++k) m = fmaxf(m, v[k]);
    return m;
}

// Online (m, d) update with a chunk of N values: one rescale per chunk at
// most, then d += the pairwise sum of expf(v - m).
template <int N>
__device__ __forceinline__ void add_values(SoftmaxState& s, const float (&v)[N]) {
    const float chunk_m = chunk_max(v);
    if (chunk_m > s.m) {
        // s.m == -inf gives expf(-inf) * 0 = 0: d starts over, no NaN.
        s.d = __fmul_rn(s.d, expf(s.m - chunk_m));
        s.m = chunk_m;
    }
    // The -inf guard: while every value so far is -inf, v - m would be
    // -inf - -inf = NaN.
    if (s.m == neg_inf()) return;
    float e[N];
#pragma unroll
    for (int k = 0; k < N; ++k) e[k] = expf(v[k] - s.m);
    s.d = __fadd_rn(s.d, pairwise_sum(e));
}

// p = expf(x - m) * inv_d for a chunk; masked logits give expf(-inf) = 0.
template <int N>
__device__ __forceinline__ void probabilities(float (&v)[N], float m, float inv_d) {
#pragma unroll
    for (int k = 0; k < N; ++k) v[k] = __fmul_rn(expf(v[k] - m), inv_d);
}

// ---- Chunk visitors of the passes (functors: NVRTC compiles no device lambdas) --

// A reading pass that also rejects NaN/+inf: `first_bad` keeps the first such
// flat index, `acc` (MaxOf or OnlineOf) folds in every chunk.
template <class Acc>
struct CheckingVisitor {
    u64 row_start;
    u64 first_bad;
    Acc acc;
    template <int N>
    __device__ __forceinline__ void operator()(u32, u32 col0, const float (&v)[N]) {
        note_nonfinite(v, row_start + col0, first_bad);
        acc.add(v);
    }
};

// Max pass (ThreePass): the running maximum.
struct MaxOf {
    float m;
    template <int N>
    __device__ __forceinline__ void add(const float (&v)[N]) { m = fmaxf(m, chunk_max(v)); }
};

// Online pass (OnlineBlock, OnlineWarp): the (m, d) state.
struct OnlineOf {
    SoftmaxState state;
    template <int N>
    __device__ __forceinline__ void add(const float (&v)[N]) { add_values(state, v); }
};

// Sum pass (ThreePass): sum of expf(x - m), m finite.
struct SumExpVisitor {
    float m;
    float sum;
    template <int N>
    __device__ __forceinline__ void operator()(u32, u32, const float (&v)[N]) {
        float e[N];
#pragma unroll
        for (int k = 0; k < N; ++k) e[k] = expf(v[k] - m);
        sum = __fadd_rn(sum, pairwise_sum(e));
    }
};


// Write pass: logits to probabilities in place.
struct ProbabilityMap {
    float m;
    float inv_d;
    template <int N>
    __device__ __forceinline__ void operator()(float (&v)[N]) const {
        probabilities(v, m, inv_d);
    }
};

// ---- The row loop of ThreePass, OnlineBlock and OnlineWarp --------------------
//
// A group of threads owns one row at a time: the whole block (BlockRows) or
// one warp, kRowsPerWarpBlock rows per block (WarpRows). The row loop is
// uniform across the group, so every group-wide reduction (barriers, or
// warp_reduce with all 32 lanes) is reached by all of its threads. Passes
// reads a row and writes its probabilities; it returns true for a row whose
// m is -inf (every logit masked), whose outputs are then 0.0, never NaN.

struct BlockRows {
    static constexpr u32 kThreads = kSoftmaxBlockThreads;
    __device__ __forceinline__ static u32 rank() { return threadIdx.x; }
    __device__ __forceinline__ static u64 first_row() { return blockIdx.x; }
    __device__ __forceinline__ static u64 row_step() { return gridDim.x; }
};

struct WarpRows {
    static constexpr u32 kThreads = kWarpThreads;
    __device__ __forceinline__ static u32 rank() { return u32(lane_id()); }
    __device__ __forceinline__ static u64 first_row() { return u64(blockIdx.x) * kRowsPerWarpBlock + warp_id(); }
    __device__ __forceinline__ static u64 row_step() { return u64(gridDim.x) * kRowsPerWarpBlock; }
};

template <class Io, class Rows, class Passes>
__device__ __forceinline__ void softmax_rows(const typename Io::Elem* __restrict__ in,
                                             typename Io::Elem* __restrict__ out, u64 rows, u32 cols,
                                             u64* first_nonfinite, u8* masked_rows) {
    const bool vectors = cols % Io::kVec == 0 && aligned16(in) && aligned16(out);
    const u32 start = Rows::rank();
    u64 first_bad = kNoNonfinite;
    for (u64 row = Rows::first_row(); row < rows; row += Rows::row_step()) {
        const u64 row_start = row * cols;
        const typename Io::Elem* row_in = in + row_start;
        typename Io::Elem* row_out = out + row_start;
        const bool masked = Passes::template row<Io>(row_in, row_out, cols, start, vectors, row_start, first_bad);
        if (start == 0) masked_rows[row] = masked ? 1 : 0;
    }
    report_nonfinite(first_bad, first_nonfinite);
}

// ThreePass (block per row): a max pass, then (unless masked) a sum pass, then
// the write pass. Each block_all_reduce ends with a barrier, so one storage
// serves both reductions and the next row.
struct ThreePassRow {
    template <class Io>
    __device__ __forceinline__ static bool row(const typename Io::Elem* __restrict__ row_in,
                                               typename Io::Elem* __restrict__ row_out, u32 cols, u32 start,
                                               bool vectors, u64 row_start, u64& first_bad) {
        constexpr int kThreads = BlockRows::kThreads;
        __shared__ BlockReduceStorage<float, kThreads> storage;
        CheckingVisitor<MaxOf> max_pass{row_start, first_bad, {neg_inf()}};
        for_each_chunk<Io>(row_in, cols, start, kThreads, vectors, max_pass);
        first_bad = max_pass.first_bad;
        const float m = block_all_reduce<MaxF32, kThreads>(max_pass.acc.m, MaxF32(), storage);
        const bool masked = m == neg_inf();  // uniform: every thread holds the same m
        if (masked) {
            write_zeros<Io>(row_out, cols, start, kThreads, vectors);
        } else {
            SumExpVisitor sum_pass{m, 0.0f};
            for_each_chunk<Io>(row_in, cols, start, kThreads, vectors, sum_pass);
            const float d = block_all_reduce<SumF32, kThreads>(sum_pass.sum, SumF32(), storage);
            transform_chunks<Io>(row_in, row_out, cols, start, kThreads, vectors, ProbabilityMap{m, __frcp_rn(d)});
        }
        return masked;
    }
};

// OnlineBlock and OnlineWarp: one (m, d) pass merged across the group, then
// the write pass.
template <class Rows>
struct OnlineRow {
    // The group's merged state, in every thread of the group.
    __device__ __forceinline__ static SoftmaxState all_reduce(SoftmaxState state) {
        if constexpr (Rows::kThreads == kWarpThreads) {
            return shfl_idx(warp_reduce(state, SoftmaxMerge()), 0);
        } else {
            // Ends with a barrier, so the next row may reuse storage at once.
            __shared__ BlockReduceStorage<SoftmaxState, Rows::kThreads> storage;
            return block_all_reduce<SoftmaxMerge, Rows::kThreads>(state, SoftmaxMerge(), storage);
        }
    }
    template <class Io>
    __device__ __forceinline__ static bool row(const typename Io::Elem* __restrict__ row_in,
                                               typename Io::Elem* __restrict__ row_out, u32 cols, u32 start,
                                               bool vectors, u64 row_start, u64& first_bad) {
        CheckingVisitor<OnlineOf> online_pass{row_start, first_bad, {SoftmaxMerge::identity()}};
        for_each_chunk<Io>(row_in, cols, start, Rows::kThreads, vectors, online_pass);
        first_bad = online_pass.first_bad;
        const SoftmaxState total = all_reduce(online_pass.acc.state);
        const bool masked = total.m == neg_inf();  // uniform across the group
        if (masked) {
            write_zeros<Io>(row_out, cols, start, Rows::kThreads, vectors);
        } else {
            transform_chunks<Io>(row_in, row_out, cols, start, Rows::kThreads, vectors,
                                 ProbabilityMap{total.m, __frcp_rn(total.d)});
        }
        return masked;
    }
};

template <class Io>
__device__ __forceinline__ void softmax_three_pass(const typename Io::Elem* __restrict__ in,
                                                   typename Io::Elem* __restrict__ out, u64 rows, u32 cols,
                                                   u64* first_nonfinite, u8* masked_rows) {
    softmax_rows<Io, BlockRows, ThreePassRow>(in, out, rows, cols, first_nonfinite, masked_rows);
}

template <class Io>
__device__ __forceinline__ void softmax_online_block(const typename Io::Elem* __restrict__ in,
                                                     typename Io::Elem* __restrict__ out, u64 rows, u32 cols,
                                                     u64* first_nonfinite, u8* masked_rows) {
    softmax_rows<Io, BlockRows, OnlineRow<BlockRows>>(in, out, rows, cols, first_nonfinite, masked_rows);
}

template <class Io>
__device__ __forceinline__ void softmax_online_warp(const typename Io::Elem* __restrict__ in,
                                                    typename Io::Elem* __restrict__ out, u64 rows, u32 cols,
                                                    u64* first_nonfinite, u8* masked_rows) {
    softmax_rows<Io, WarpRows, OnlineRow<WarpRows>>(in, out, rows, cols, first_nonfinite, masked_rows);
}

// ---- RowInWarpRegisters: a warp per row, the row read ONCE into registers ----
// Lane l holds columns l, l + 32, ..., l + 32 (ITEMS - 1) of a row (scalar
// loads: a warp's load of one item reads 32 consecutive elements), slots
// past the row hold -inf (probability 0, never stored). Max, then the sum of
// expf(x - m) (pairwise over the lane's ITEMS, then warp_reduce's 5 levels),
// then p = e * (1/d) from the same registers: one global read, no block
// barrier, for short rows (cols <= 32 * ITEMS). A warp takes ROWS
// consecutive rows at a time, all loads first, so that short rows still keep
// ROWS * ITEMS loads per lane in flight. Whether a row exists is uniform
// across the warp, so every lane runs every warp_reduce (they need all 32).

template <class Io, int ITEMS, int ROWS>
__device__ __forceinline__ void softmax_row_in_warp_registers(const typename Io::Elem* __restrict__ in,
                                                              typename Io::Elem* __restrict__ out, u64 rows,
                                                              u32 cols, u64* first_nonfinite, u8* masked_rows) {
    const u32 lane = u32(lane_id());
    u64 first_bad = kNoNonfinite;
    for (u64 first_row = (u64(blockIdx.x) * kRowsPerWarpBlock + warp_id()) * ROWS; first_row < rows;
         first_row += u64(gridDim.x) * kRowsPerWarpBlock * ROWS) {
        float x[ROWS][ITEMS];
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
            const u64 row_start = (first_row + r) * cols;
#pragma unroll
            for (int i = 0; i < ITEMS; ++i) {
                const u32 c = u32(i) * kWarpThreads + lane;
                float t[1] = {neg_inf()};
                if (first_row + r < rows && c < cols) {
                    t[0] = Io::load(in + row_start, c);
                    note_nonfinite(t, row_start + c, first_bad);
                }
                x[r][i] = t[0];
            }
        }
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
            const u64 row = first_row + r;
            typename Io::Elem* row_out = out + row * cols;
            const float m = shfl_idx(warp_reduce(chunk_max(x[r]), MaxF32()), 0);
            const bool masked = m == neg_inf();  // uniform across the warp
            // A row past the end (row >= rows) holds only -inf: it stores nothing.
            const u32 stored_cols = row < rows ? cols : 0;
            if (masked) {
#pragma unroll
                for (int i = 0; i < ITEMS; ++i) {
                    const u32 c = u32(i) * kWarpThreads + lane;
                    if (c < stored_cols) Io::store(row_out, c, 0.0f);
                }
            } else {
#pragma unroll
                for (int i = 0; i < ITEMS; ++i) x[r][i] = expf(x[r][i] - m);  // padding, masked: expf(-inf) = 0
                const float d = shfl_idx(warp_reduce(pairwise_sum(x[r]), SumF32()), 0);
                const float inv_d = __frcp_rn(d);
#pragma unroll
                for (int i = 0; i < ITEMS; ++i) {
                    const u32 c = u32(i) * kWarpThreads + lane;
                    if (c < stored_cols) Io::store(row_out, c, __fmul_rn(x[r][i], inv_d));
                }
            }
            if (lane == 0 && row < rows) masked_rows[row] = masked ? 1 : 0;
        }
    }
    report_nonfinite(first_bad, first_nonfinite);
}

// ---- RowInRegisters: block per row, the row read ONCE into registers ---------
//
// THREADS x ITEMS floats hold the row (the host rejects longer rows). Item
// i = j*W + k of a thread is column (j*THREADS + tid)*W + k with vectors, or
// column i*THREADS + tid without; slots past the row hold -inf (probability
// 0, never stored). Max, then sum of expf(x - m) (kept in the same
// registers), then p = e * (1/d): no second global read.
//
// With vectors the global read is staged: each thread cp.async's its own
// VECS 16-byte vectors of the NEXT row into its own slots of the dynamic
// shared buffer `stage` (THREADS * VECS * 16 bytes, sized by the host) while
// it computes the current row from registers, so one block per SM keeps the
// memory busy through its reductions. A thread only ever reads and writes
// its own slots, and it waits for its copies (cp.async.wait_group) before
// reading them, so `stage` needs no barrier; it issues the next copies only
// after the max reduction, whose barriers follow its reads of `stage`.

template <class Io, int THREADS, int VECS>
__device__ __forceinline__ void stage_row(uint4* stage, const typename Io::Elem* __restrict__ row_in, u32 vector_count) {
    const u32 tid = threadIdx.x;
    const uint4* src = reinterpret_cast<const uint4*>(row_in);
#pragma unroll
    for (int j = 0; j < VECS; ++j) {
        const u32 vi = u32(j) * THREADS + tid;
        if (vi < vector_count) cp_async_16(stage + j * THREADS + tid, src + vi);
    }
    cp_async_commit();
}

template <class Io, int THREADS, int ITEMS>
__device__ __forceinline__ void softmax_row_in_registers(const typename Io::Elem* __restrict__ in,
                                                         typename Io::Elem* __restrict__ out, u64 rows, u32 cols,
                                                         u64* first_nonfinite, u8* masked_rows) {
    constexpr int W = Io::kVec;
    static_assert(ITEMS % W == 0, "whole vectors per thread");
    constexpr int VECS = ITEMS / W;
    __shared__ BlockReduceStorage<float, THREADS> storage;
    extern __shared__ uint4 stage[];  // THREADS * VECS vectors; used only with `vectors`
    const bool vectors = cols % W == 0 && aligned16(in) && aligned16(out);
    const u32 tid = threadIdx.x;
    const u32 vector_count = cols / W;
    u64 first_bad = kNoNonfinite;
    if (vectors && blockIdx.x < rows) stage_row<Io, THREADS, VECS>(stage, in + u64(blockIdx.x) * cols, vector_count);
    for (u64 row = blockIdx.x; row < rows; row += gridDim.x) {
        const u64 row_start = row * cols;
        const typename Io::Elem* row_in = in + row_start;
        typename Io::Elem* row_out = out + row_start;
        float x[ITEMS];
        if (vectors) {
            cp_async_wait_all();  // this thread's vectors of `row` have landed in its slots
#pragma unroll
            for (int j = 0; j < VECS; ++j) {
                const u32 vi = u32(j) * THREADS + tid;
                float t[W];
                if (vi < vector_count) {
                    Io::unpack(stage[j * THREADS + tid], t);
                    note_nonfinite(t, row_start + u64(vi) * W, first_bad);
                } else {
#pragma unroll
                    for (int k = 0; k < W; ++k) t[k] = neg_inf();
                }
#pragma unroll
                for (int k = 0; k < W; ++k) x[j * W + k] = t[k];
            }
        } else {
#pragma unroll
            for (int i = 0; i < ITEMS; ++i) {
                const u32 c = u32(i) * THREADS + tid;
                float t[1] = {neg_inf()};
                if (c < cols) {
                    t[0] = Io::load(row_in, c);
                    note_nonfinite(t, row_start + c, first_bad);
                }
                x[i] = t[0];
            }
        }
        const float m = block_all_reduce<MaxF32, THREADS>(chunk_max(x), MaxF32(), storage);
        // Every thread has read its slots (the reduction's barriers lie between):
        // start fetching the next row while this one is computed and stored.
        const u64 next = row + gridDim.x;
        if (vectors && next < rows) stage_row<Io, THREADS, VECS>(stage, in + next * cols, vector_count);
        const bool masked = m == neg_inf();  // uniform
        if (masked) {
            write_zeros<Io>(row_out, cols, tid, THREADS, vectors);
        } else {
#pragma unroll
            for (int i = 0; i < ITEMS; ++i) x[i] = expf(x[i] - m);  // padding and masked slots: expf(-inf) = 0
            const float d = block_all_reduce<SumF32, THREADS>(pairwise_sum(x), SumF32(), storage);
            const float inv_d = __frcp_rn(d);
            if (vectors) {
#pragma unroll
                for (int j = 0; j < VECS; ++j) {
                    const u32 vi = u32(j) * THREADS + tid;
                    if (vi < vector_count) {
                        float t[W];
#pragma unroll
                        for (int k = 0; k < W; ++k) t[k] = __fmul_rn(x[j * W + k], inv_d);
                        Io::store_vec(row_out, vi, t);
                    }
                }
            } else {
#pragma unroll
                for (int i = 0; i < ITEMS; ++i) {
                    const u32 c = u32(i) * THREADS + tid;
                    if (c < cols) Io::store(row_out, c, __fmul_rn(x[i], inv_d));
                }
            }
        }
        if (tid == 0) masked_rows[row] = masked ? 1 : 0;
    }
    report_nonfinite(first_bad, first_nonfinite);
}

}  // namespace

// Entry points: softmax_<variant>_<f32|bf16>(in, out, rows, cols,
// first_nonfinite, masked_rows). Argument order and types are mirrored by
// kernels/src/softmax.rs.
#define PRIMLAB_SOFTMAX_ENTRY(NAME, THREADS, IO, CALL)                                                         \
    extern "C" __global__ void __launch_bounds__(THREADS)                                                      \
        softmax_##NAME(const IO::Elem* __restrict__ in, IO::Elem* __restrict__ out, u64 rows, u32 cols,       \
                       u64* first_nonfinite, u8* masked_rows) {                                                \
        CALL(in, out, rows, cols, first_nonfinite, masked_rows);                                               \
    }

PRIMLAB_SOFTMAX_ENTRY(three_pass_f32, kSoftmaxBlockThreads, F32Io, softmax_three_pass<F32Io>)
PRIMLAB_SOFTMAX_ENTRY(three_pass_bf16, kSoftmaxBlockThreads, Bf16Io, softmax_three_pass<Bf16Io>)
PRIMLAB_SOFTMAX_ENTRY(online_block_f32, kSoftmaxBlockThreads, F32Io, softmax_online_block<F32Io>)
PRIMLAB_SOFTMAX_ENTRY(online_block_bf16, kSoftmaxBlockThreads, Bf16Io, softmax_online_block<Bf16Io>)
PRIMLAB_SOFTMAX_ENTRY(online_warp_f32, kBlockThreads, F32Io, softmax_online_warp<F32Io>)
PRIMLAB_SOFTMAX_ENTRY(online_warp_bf16, kBlockThreads, Bf16Io, softmax_online_warp<Bf16Io>)

// RowInWarpRegisters: ITEMS = 1, 2, 4, ..., 32 floats per lane, rows of up
// to 32 * ITEMS columns (the host picks the smallest that holds the row),
// warp_register_rows(ITEMS) rows per warp at a time.
#define PRIMLAB_SOFTMAX_WARP_REG_ENTRY(ITEMS)                                                                  \
    PRIMLAB_SOFTMAX_ENTRY(row_in_warp_registers_##ITEMS##_f32, kBlockThreads, F32Io,                           \
                          (softmax_row_in_warp_registers<F32Io, ITEMS, warp_register_rows(ITEMS)>))             \
    PRIMLAB_SOFTMAX_ENTRY(row_in_warp_registers_##ITEMS##_bf16, kBlockThreads, Bf16Io,                         \
                          (softmax_row_in_warp_registers<Bf16Io, ITEMS, warp_register_rows(ITEMS)>))

PRIMLAB_SOFTMAX_WARP_REG_ENTRY(1)
PRIMLAB_SOFTMAX_WARP_REG_ENTRY(2)
PRIMLAB_SOFTMAX_WARP_REG_ENTRY(4)
PRIMLAB_SOFTMAX_WARP_REG_ENTRY(8)
PRIMLAB_SOFTMAX_WARP_REG_ENTRY(16)
PRIMLAB_SOFTMAX_WARP_REG_ENTRY(32)

// Minimum resident blocks in __launch_bounds__: 1024 / THREADS, i.e. at most
// 64 registers per thread (the whole register file at 1024 threads).
#define PRIMLAB_SOFTMAX_REG_ENTRY(NAME, THREADS, ITEMS, IO)                                                     \
    extern "C" __global__ void __launch_bounds__(THREADS, 1024 / THREADS)                                      \
        softmax_##NAME(const IO::Elem* __restrict__ in, IO::Elem* __restrict__ out, u64 rows, u32 cols,       \
                       u64* first_nonfinite, u8* masked_rows) {                                                \
        softmax_row_in_registers<IO, THREADS, ITEMS>(in, out, rows, cols, first_nonfinite, masked_rows);      \
    }

PRIMLAB_SOFTMAX_REG_ENTRY(row_in_registers_small_f32, kSoftmaxRegSmallThreads, kSoftmaxRegSmallItems, F32Io)
PRIMLAB_SOFTMAX_REG_ENTRY(row_in_registers_small_bf16, kSoftmaxRegSmallThreads, kSoftmaxRegSmallItems, Bf16Io)
PRIMLAB_SOFTMAX_REG_ENTRY(row_in_registers_medium_f32, kSoftmaxRegMediumThreads, kSoftmaxRegMediumItems, F32Io)
PRIMLAB_SOFTMAX_REG_ENTRY(row_in_registers_medium_bf16, kSoftmaxRegMediumThreads, kSoftmaxRegMediumItems, Bf16Io)
PRIMLAB_SOFTMAX_REG_ENTRY(row_in_registers_large_f32, kSoftmaxRegLargeThreads, kSoftmaxRegLargeItems, F32Io)
PRIMLAB_SOFTMAX_REG_ENTRY(row_in_registers_large_bf16, kSoftmaxRegLargeThreads, kSoftmaxRegLargeItems, Bf16Io)

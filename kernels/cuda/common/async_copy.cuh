// Asynchronous global -> shared copies (cp.async, sm_80+), for kernels that
// stage the next tile in shared memory while they compute on the current one.
// The copy completes asynchronously: the issuing thread must wait
// (cp_async_wait_all) before reading the destination, and other threads also
// need a barrier after that wait before they read it.
#pragma once
#include "common/config.cuh"

namespace primlab {

// Copies 16 bytes; both addresses must be 16-byte aligned. .cg: cached in L2
// only (the data is read once, from shared memory).
__device__ __forceinline__ void cp_async_16(void* shared_dst, const void* global_src) {
    const u32 dst = static_cast<u32>(__cvta_generic_to_shared(shared_dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(global_src) : "memory");
}

// Closes the group of copies issued so far by this thread.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// Waits until every committed copy of this thread has landed in shared memory.
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::: "memory"); }

}  // namespace primlab

// cub_bench support: error checks, device-side inputs, the read-ceiling kernel, functors,
// device facts and JSON output.
// Part of cub_bench.cu (one translation unit: nvcc compiles cub_bench.cu, which includes
// these headers in order; each includes the one it builds on).
#pragma once

#include <cub/cub.cuh>
#include <thrust/iterator/transform_iterator.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

// ------------------------------------------------------------------------------------------------
// Errors

#define CK(call)                                                                                   \
  do {                                                                                             \
    cudaError_t ck_err_ = (call);                                                                  \
    if (ck_err_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "cub_bench: CUDA error %s (%s) at %s:%d in `%s`\n",                     \
                   cudaGetErrorName(ck_err_), cudaGetErrorString(ck_err_), __FILE__, __LINE__,     \
                   #call);                                                                         \
      std::exit(2);                                                                                \
    }                                                                                              \
  } while (0)

static void die(const char* msg, const char* arg = "") {
  std::fprintf(stderr, "cub_bench: %s%s\n", msg, arg);
  std::exit(2);
}

// ------------------------------------------------------------------------------------------------
// Inputs: a counter-based hash, so that no host RNG and no host-to-device copy is needed.

static constexpr uint64_t kSeedI32 = 0x5eed0001ull;
static constexpr uint64_t kSeedF32 = 0x5eed0002ull;

__host__ __device__ inline uint64_t mix64(uint64_t z) {  // splitmix64 finaliser
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
__host__ __device__ inline int hash_i32(uint64_t i, uint64_t seed) {
  return static_cast<int>(mix64(i ^ (seed << 40) ^ seed) % 19ull) - 9;  // [-9, 9]
}
__host__ __device__ inline float hash_f32(uint64_t i, uint64_t seed) {
  // 24 random bits -> k * 2^-24 - 0.5: exactly representable, uniform in [-0.5, 0.5).
  return static_cast<float>(mix64(i ^ (seed << 40) ^ seed) >> 40) * (1.0f / 16777216.0f) - 0.5f;
}

// Fills `copies` copies of an n-element input, copy c at base + c*stride; padding gets 0.
__global__ void gen_i32_kernel(int* base, size_t n, size_t stride, size_t total, uint64_t seed) {
  for (size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x; t < total;
       t += (size_t)gridDim.x * blockDim.x) {
    size_t i = t % stride;
    base[t] = i < n ? hash_i32(i, seed) : 0;
  }
}
__global__ void gen_f32_kernel(float* base, size_t n, size_t stride, size_t total, uint64_t seed) {
  for (size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x; t < total;
       t += (size_t)gridDim.x * blockDim.x) {
    size_t i = t % stride;
    base[t] = i < n ? hash_f32(i, seed) : 0.0f;
  }
}

// ------------------------------------------------------------------------------------------------
// Read ceiling: grid-stride, 16-byte loads (4 in flight per thread), int64 block sum,
// one atomicAdd per block.

static constexpr int kReadBlock = 256;

__global__ void __launch_bounds__(kReadBlock)
    read_ceiling_kernel(const int* __restrict__ x, size_t n, unsigned long long* acc) {
  const int4* __restrict__ x4 = reinterpret_cast<const int4*>(x);  // x is 256-byte aligned
  const size_t n4 = n / 4;
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  long long s = 0;
  for (; i + 3 * stride < n4; i += 4 * stride) {
    const int4 a = x4[i], b = x4[i + stride], c = x4[i + 2 * stride], d = x4[i + 3 * stride];
    s += ((long long)a.x + a.y + a.z + a.w) + ((long long)b.x + b.y + b.z + b.w) +
         ((long long)c.x + c.y + c.z + c.w) + ((long long)d.x + d.y + d.z + d.w);
  }
  for (; i < n4; i += stride) {
    const int4 a = x4[i];
    s += (long long)a.x + a.y + a.z + a.w;
  }
  if (blockIdx.x == 0 && threadIdx.x < n - n4 * 4) s += x[n4 * 4 + threadIdx.x];  // n % 4 tail
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  __shared__ long long warp_sums[kReadBlock / 32];
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = s;
  __syncthreads();
  if (threadIdx.x < 32) {
    s = threadIdx.x < kReadBlock / 32 ? warp_sums[threadIdx.x] : 0;
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    if (threadIdx.x == 0) atomicAdd(acc, static_cast<unsigned long long>(s));  // two's complement
  }
}

// ------------------------------------------------------------------------------------------------
// Functors

struct Widen {
  __host__ __device__ long long operator()(int v) const { return static_cast<long long>(v); }
};
struct IsPositive {
  __host__ __device__ bool operator()(const int& v) const { return v > 0; }
};

// ------------------------------------------------------------------------------------------------
// Device facts

struct Device {
  int id = 0;
  std::string name;
  int sms = 0;
  long long l2_bytes = 0;
  int cc_major = 0, cc_minor = 0;
  int clock_khz = 0, mem_clock_khz = 0, bus_bits = 0;
  size_t total_mem = 0;
  int driver_api = 0, runtime = 0;
  std::string driver;
};

static std::string read_driver_string() {
  // First line, e.g. "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  ...":
  // the first word made only of digits and dots, with at least one dot.
  FILE* f = std::fopen("/proc/driver/nvidia/version", "r");
  if (!f) return "";
  char line[512] = {0};
  std::string out;
  if (std::fgets(line, sizeof line, f)) {
    const char* p = std::strchr(line, ':');
    p = p ? p + 1 : line;
    while (*p && out.empty()) {
      while (*p == ' ' || *p == '\t') ++p;
      std::string word;
      while (*p && *p != ' ' && *p != '\t' && *p != '\n') word.push_back(*p++);
      if (!word.empty() && word.find_first_not_of("0123456789.") == std::string::npos &&
          word.find('.') != std::string::npos && std::isdigit(static_cast<unsigned char>(word[0])))
        out = word;
    }
  }
  std::fclose(f);
  return out;
}

// ------------------------------------------------------------------------------------------------
// JSON helpers

static std::string jstr(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\t': o += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", c);
          o += b;
        } else {
          o += c;
        }
    }
  }
  return o + "\"";
}
static std::string jnum(double v, const char* fmt = "%.17g") {
  if (!std::isfinite(v)) return "null";
  char b[64];
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}
static std::string jint(long long v) { return std::to_string(v); }

// Builds the body of a JSON object: kv("a", "1").kv("b", jstr("x")).str() == {"a":1,"b":"x"}
struct Obj {
  std::string s;
  Obj& kv(const char* k, const std::string& json_value) {
    if (!s.empty()) s += ",";
    s += jstr(k) + ":" + json_value;
    return *this;
  }
  std::string str() const { return "{" + s + "}"; }
};

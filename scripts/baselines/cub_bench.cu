// cub_bench.cu: CUB baselines and bandwidth ceilings for primlab's `harness bench`.
//
// Build (on the GPU machine):
//   nvcc -O3 -std=c++17 -arch=sm_90 -o cub_bench cub_bench.cu
// Run:
//   cub_bench --out FILE.jsonl [--sizes 10,12,...,28] [--quick] [--ops a,b,c]
//             [--seg-lens 1024] [--bins 19]
//
// Writes one JSON object per line: first a meta line, then one record per (op, n[, param]).
// Every op is checked against a host computation once before it is timed; a failed check is
// recorded with "ok":false and no timing. See README.md beside this file for the exact
// contents of each timed region, the logical byte counts and the L2 policy.
//
// Exit status: 0 = every check passed; 1 = the file is complete but at least one check failed;
// 2 = usage or CUDA error (the file holds the lines written up to that point).

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

// ------------------------------------------------------------------------------------------------
// Options

struct Options {
  std::string out;
  std::vector<int> log2_sizes;
  bool quick = false;
  std::vector<std::string> ops;
  std::vector<long long> seg_lens{1024};
  std::vector<int> bins{19};
};

static const char* const kAllOps[] = {
    "memcpy_d2d",
    "read_ceiling_i32",
    "cub_reduce_sum_i32_i64",
    "cub_reduce_sum_f32",
    "cub_exclusive_scan_i32_i64",
    "cub_inclusive_scan_i32_i64",
    "cub_select_if_positive_i32",
    "cub_segreduce_sum_f32",
    "cub_segreduce_sum_i32_i64",
    "cub_histogram_even_i32",
    "cub_argmax_f32",
};

static std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> v;
  size_t p = 0;
  while (p <= s.size()) {
    size_t q = s.find(',', p);
    if (q == std::string::npos) q = s.size();
    if (q > p) v.push_back(s.substr(p, q - p));
    p = q + 1;
  }
  return v;
}
static long long parse_int(const std::string& s, const char* what) {
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || end == s.c_str() || *end != '\0') die("bad integer for ", what);
  return v;
}

static void usage() {
  std::fprintf(stderr,
               "usage: cub_bench --out FILE.jsonl [--sizes 10,12,...,28] [--quick] [--ops a,b,c]\n"
               "                 [--seg-lens 32,1024,65536] [--bins 19,256,4096]\n"
               "  --sizes     log2 of n (default 10,12,...,28; with --quick 10,16,20,24,28)\n"
               "  --quick     3 warm-ups and 20 runs (n < 2^24) or 10 runs (n >= 2^24)\n"
               "              instead of 5 warm-ups and 200 or 30 runs\n"
               "  --seg-lens  segment lengths for cub_segreduce_* (default 1024)\n"
               "  --bins      bin counts for cub_histogram_even_i32 over [-9, -9+bins) (default 19)\n"
               "  ops:");
  for (const char* o : kAllOps) std::fprintf(stderr, " %s", o);
  std::fprintf(stderr, "\n");
}

static Options parse_args(int argc, char** argv) {
  Options o;
  bool sizes_given = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        usage();
        die("missing value for ", a.c_str());
      }
      return argv[++i];
    };
    if (a == "--out") {
      o.out = next();
    } else if (a == "--sizes") {
      sizes_given = true;
      o.log2_sizes.clear();
      for (auto& t : split(next())) {
        long long v = parse_int(t, "--sizes");
        if (v < 0 || v > 30) die("--sizes takes log2(n) in [0, 30], got ", t.c_str());
        o.log2_sizes.push_back(static_cast<int>(v));
      }
    } else if (a == "--quick") {
      o.quick = true;
    } else if (a == "--ops") {
      o.ops = split(next());
    } else if (a == "--seg-lens") {
      o.seg_lens.clear();
      for (auto& t : split(next())) {
        long long v = parse_int(t, "--seg-lens");
        if (v < 1 || v > (1ll << 30)) die("--seg-lens takes values in [1, 2^30], got ", t.c_str());
        o.seg_lens.push_back(v);
      }
    } else if (a == "--bins") {
      o.bins.clear();
      for (auto& t : split(next())) {
        long long v = parse_int(t, "--bins");
        if (v < 1 || v > (1 << 20)) die("--bins takes values in [1, 2^20], got ", t.c_str());
        o.bins.push_back(static_cast<int>(v));
      }
    } else if (a == "-h" || a == "--help") {
      usage();
      std::exit(0);
    } else {
      usage();
      die("unknown argument ", a.c_str());
    }
  }
  if (o.out.empty()) {
    usage();
    die("--out FILE is required");
  }
  if (!sizes_given) {
    if (o.quick)
      o.log2_sizes = {10, 16, 20, 24, 28};
    else
      for (int k = 10; k <= 28; k += 2) o.log2_sizes.push_back(k);
  }
  if (o.ops.empty())
    for (const char* op : kAllOps) o.ops.push_back(op);
  for (auto& op : o.ops) {
    bool known = false;
    for (const char* k : kAllOps) known = known || op == k;
    if (!known) {
      usage();
      die("unknown op ", op.c_str());
    }
  }
  if (o.log2_sizes.empty() || o.seg_lens.empty() || o.bins.empty()) die("empty list argument");
  return o;
}

// ------------------------------------------------------------------------------------------------
// Inputs rotated across copies so that small inputs are read from DRAM, not from L2.

template <class T>
struct Rotated {
  T* base = nullptr;
  size_t n = 0, stride = 0;  // elements; stride rounded up to 64 elements (256 bytes)
  int copies = 1;
  int cursor = 0;

  void alloc(size_t n_, long long l2_bytes) {
    n = n_;
    stride = (n + 63) / 64 * 64;
    const unsigned long long bytes = stride * sizeof(T);  // one copy, padding included
    const unsigned long long need = 2ull * static_cast<unsigned long long>(l2_bytes);
    // Enough copies that copies*bytes > 2*L2; a single buffer when one copy is already >= 2*L2.
    // Footprint is then at most 2*L2 + one copy (the memory cap).
    copies = bytes >= need ? 1 : static_cast<int>(need / bytes + 1);
    CK(cudaMalloc(&base, footprint()));
  }
  size_t footprint() const { return static_cast<size_t>(copies) * stride * sizeof(T); }
  T* next() {
    T* p = base + static_cast<size_t>(cursor) * stride;
    cursor = (cursor + 1) % copies;
    return p;
  }
  std::string policy() const {
    char b[256];
    if (copies == 1)
      std::snprintf(b, sizeof b,
                    "single input buffer (%zu B >= 2 x L2); outputs and temp storage reused",
                    n * sizeof(T));
    else
      std::snprintf(b, sizeof b,
                    "inputs rotated over %d identical copies (%zu B each, %zu B in all > 2 x L2), "
                    "next copy per invocation; outputs and temp storage reused",
                    copies, n * sizeof(T), footprint());
    return b;
  }
  void release() {
    if (base) CK(cudaFree(base));
    base = nullptr;
  }
};

// ------------------------------------------------------------------------------------------------
// Results

struct Result {
  std::string op;
  size_t n = 0;
  bool ok = true;
  std::string error, check;
  std::vector<float> times_us;
  int warmups = 0;
  double logical_bytes = 0;
  std::string cache_policy, timed_region;
  Obj params;
};

struct Bench {
  Options opt;
  Device dev;
  cudaStream_t stream = nullptr;
  cudaEvent_t ev0 = nullptr, ev1 = nullptr;
  FILE* out = nullptr;
  int failures = 0;
  int done = 0, total = 0;

  int warmups() const { return opt.quick ? 3 : 5; }
  int iters(size_t n) const {
    const bool large = n >= (size_t(1) << 24);
    return opt.quick ? (large ? 10 : 20) : (large ? 30 : 200);
  }

  // Runs `launch` once, synchronises, checks with `check`; if it passed, times it.
  template <class Launch, class Check>
  void run(Result& r, Launch&& launch, Check&& check) {
    launch();
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(stream));
    std::string why;
    if (!check(why, r.check)) {
      r.ok = false;
      r.error = why;
      return;
    }
    r.warmups = warmups();
    for (int w = 0; w < r.warmups; ++w) launch();
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(stream));
    const int it = iters(r.n);
    r.times_us.reserve(it);
    for (int k = 0; k < it; ++k) {
      CK(cudaEventRecord(ev0, stream));
      launch();
      CK(cudaEventRecord(ev1, stream));
      CK(cudaEventSynchronize(ev1));
      float ms = 0.f;
      CK(cudaEventElapsedTime(&ms, ev0, ev1));
      r.times_us.push_back(ms * 1000.0f);
    }
    CK(cudaGetLastError());
  }

  void emit(Result& r) {
    Obj o;
    o.kv("impl", jstr("cub")).kv("op", jstr(r.op)).kv("n", jint(static_cast<long long>(r.n)));
    double med = 0;
    if (r.ok) {
      std::vector<float> t = r.times_us;
      std::sort(t.begin(), t.end());
      const size_t m = t.size();
      med = m % 2 ? t[m / 2] : 0.5 * (double(t[m / 2 - 1]) + double(t[m / 2]));
      o.kv("median_us", jnum(med, "%.3f"))
          .kv("min_us", jnum(t.front(), "%.3f"))
          .kv("max_us", jnum(t.back(), "%.3f"))
          .kv("iters", jint(static_cast<long long>(m)))
          .kv("warmups", jint(r.warmups));
    }
    o.kv("logical_bytes", jnum(r.logical_bytes, "%.0f"));
    if (r.ok) o.kv("gbps", jnum(r.logical_bytes / (med * 1e3), "%.2f"));
    o.kv("ok", r.ok ? "true" : "false");
    if (!r.ok) o.kv("error", jstr(r.error));
    if (!r.check.empty()) o.kv("check", jstr(r.check));
    o.kv("cache_policy", jstr(r.cache_policy))
        .kv("timed_region", jstr(r.timed_region))
        .kv("params", r.params.str());
    std::fprintf(out, "%s\n", o.str().c_str());
    std::fflush(out);
    ++done;
    if (r.ok)
      std::fprintf(stderr, "cub_bench: [%d/%d] %-28s n=%-10zu %s median %10.2f us  %8.1f GB/s\n",
                   done, total, r.op.c_str(), r.n, r.params.str().c_str(), med,
                   r.logical_bytes / (med * 1e3));
    else {
      ++failures;
      std::fprintf(stderr, "cub_bench: [%d/%d] %-28s n=%-10zu %s CHECK FAILED: %s\n", done, total,
                   r.op.c_str(), r.n, r.params.str().c_str(), r.error.c_str());
    }
  }
};

template <class T>
static void poison(T* p, size_t count, cudaStream_t s) {
  CK(cudaMemsetAsync(p, 0xff, count * sizeof(T), s));
}
// All work goes to one non-blocking stream, which does not synchronise with the legacy default
// stream: copies are therefore issued on it too and waited for explicitly.
static cudaStream_t g_stream = nullptr;
template <class T>
static std::vector<T> to_host(const T* d, size_t count) {
  std::vector<T> h(count);
  if (count)
    CK(cudaMemcpyAsync(h.data(), d, count * sizeof(T), cudaMemcpyDeviceToHost, g_stream));
  CK(cudaStreamSynchronize(g_stream));
  return h;
}
static std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
static std::string fmt(const char* f, ...) {
  char b[512];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(b, sizeof b, f, ap);
  va_end(ap);
  return b;
}

// ------------------------------------------------------------------------------------------------
// One size: inputs on the device (rotated copies) and their host images (copy 0).

struct SizeInputs {
  size_t n = 0;
  Rotated<int> xi;
  Rotated<float> xf;
  std::vector<int> hi;
  std::vector<float> hf;
};

static void make_inputs(Bench& b, SizeInputs& in, size_t n, bool need_i, bool need_f) {
  in.n = n;
  const int grid = b.dev.sms * 8, block = 256;
  if (need_i) {
    in.xi.alloc(n, b.dev.l2_bytes);
    gen_i32_kernel<<<grid, block, 0, b.stream>>>(in.xi.base, n, in.xi.stride,
                                                 in.xi.copies * in.xi.stride, kSeedI32);
    CK(cudaGetLastError());
    in.hi = to_host(in.xi.base, n);  // copy 0, after the generator (same stream)
  }
  if (need_f) {
    in.xf.alloc(n, b.dev.l2_bytes);
    gen_f32_kernel<<<grid, block, 0, b.stream>>>(in.xf.base, n, in.xf.stride,
                                                 in.xf.copies * in.xf.stride, kSeedF32);
    CK(cudaGetLastError());
    in.hf = to_host(in.xf.base, n);
  }
  CK(cudaDeviceSynchronize());
  // The last generated copies may sit in L2; the cursor starts at copy 0, written first.
}

static void free_inputs(SizeInputs& in) {
  in.xi.release();
  in.xf.release();
  in.hi = {};
  in.hf = {};
}

static constexpr double kU = 1.0 / 16777216.0;  // 2^-24

// ---- individual ops -----------------------------------------------------------------------------

static void op_memcpy(Bench& b, SizeInputs& in) {
  Result r;
  r.op = "memcpy_d2d";
  r.n = in.n;
  const size_t bytes = in.n * sizeof(int);
  r.logical_bytes = 2.0 * bytes;
  r.timed_region = "one cudaMemcpyAsync device-to-device of 4n bytes";
  r.cache_policy = in.xi.policy();
  r.params.kv("bytes_copied", jint(static_cast<long long>(bytes)));
  int* dst = nullptr;
  CK(cudaMalloc(&dst, bytes));
  poison(dst, in.n, b.stream);
  auto launch = [&] {
    CK(cudaMemcpyAsync(dst, in.xi.next(), bytes, cudaMemcpyDeviceToDevice, b.stream));
  };
  auto check = [&](std::string& why, std::string& what) {
    what = "destination equals source, all bytes";
    std::vector<int> h = to_host(dst, in.n);
    if (bytes && std::memcmp(h.data(), in.hi.data(), bytes) != 0) {
      size_t i = 0;
      while (h[i] == in.hi[i]) ++i;
      why = fmt("dst[%zu] = %d, expected %d", i, h[i], in.hi[i]);
      return false;
    }
    return true;
  };
  b.run(r, launch, check);
  CK(cudaFree(dst));
  b.emit(r);
}

static void op_read_ceiling(Bench& b, SizeInputs& in) {
  Result r;
  r.op = "read_ceiling_i32";
  r.n = in.n;
  r.logical_bytes = 4.0 * in.n;
  const size_t n4 = in.n / 4;
  const size_t want = (n4 + kReadBlock - 1) / kReadBlock;
  const int grid = static_cast<int>(std::max<size_t>(1, std::min<size_t>(want, size_t(b.dev.sms) * 8)));
  r.timed_region =
      "one launch of a grid-stride read kernel (16-byte loads, 4 in flight per thread, int64 "
      "block sum, one atomicAdd per block); the accumulator is not reset between runs";
  r.cache_policy = in.xi.policy();
  r.params.kv("block", jint(kReadBlock)).kv("grid", jint(grid));
  unsigned long long* acc = nullptr;
  CK(cudaMalloc(&acc, sizeof *acc));
  CK(cudaMemsetAsync(acc, 0, sizeof *acc, b.stream));
  auto launch = [&] {
    read_ceiling_kernel<<<grid, kReadBlock, 0, b.stream>>>(in.xi.next(), in.n, acc);
  };
  auto check = [&](std::string& why, std::string& what) {
    what = "int64 sum from the atomics equals the host sum";
    long long expect = 0;
    for (int v : in.hi) expect += v;
    long long got = static_cast<long long>(to_host(acc, 1)[0]);
    if (got != expect) {
      why = fmt("sum %lld, expected %lld", got, expect);
      return false;
    }
    return true;
  };
  b.run(r, launch, check);
  CK(cudaFree(acc));
  b.emit(r);
}

static void op_reduce_i64(Bench& b, SizeInputs& in) {
  Result r;
  r.op = "cub_reduce_sum_i32_i64";
  r.n = in.n;
  r.logical_bytes = 4.0 * in.n;
  r.timed_region =
      "one cub::DeviceReduce::Sum call over thrust::make_transform_iterator(int*, int->long "
      "long), long long output (temp storage preallocated)";
  r.cache_policy = in.xi.policy();
  const int n = static_cast<int>(in.n);
  long long* out = nullptr;
  CK(cudaMalloc(&out, sizeof *out));
  size_t temp_bytes = 0;
  CK(cub::DeviceReduce::Sum(nullptr, temp_bytes, thrust::make_transform_iterator(in.xi.base, Widen{}),
                            out, n, b.stream));
  void* temp = nullptr;
  CK(cudaMalloc(&temp, std::max<size_t>(temp_bytes, 1)));
  r.params.kv("temp_storage_bytes", jint(static_cast<long long>(temp_bytes)))
      .kv("num_items_type", jstr("int"));
  poison(out, 1, b.stream);
  auto launch = [&] {
    CK(cub::DeviceReduce::Sum(temp, temp_bytes,
                              thrust::make_transform_iterator(in.xi.next(), Widen{}), out, n,
                              b.stream));
  };
  auto check = [&](std::string& why, std::string& what) {
    what = "exact";
    long long expect = 0;
    for (int v : in.hi) expect += v;
    long long got = to_host(out, 1)[0];
    if (got != expect) {
      why = fmt("sum %lld, expected %lld", got, expect);
      return false;
    }
    return true;
  };
  b.run(r, launch, check);
  CK(cudaFree(out));
  CK(cudaFree(temp));
  b.emit(r);
}

static void op_reduce_f32(Bench& b, SizeInputs& in) {
  Result r;
  r.op = "cub_reduce_sum_f32";
  r.n = in.n;
  r.logical_bytes = 4.0 * in.n;
  r.timed_region = "one cub::DeviceReduce::Sum call over float*, float output (temp storage preallocated)";
  r.cache_policy = in.xf.policy();
  const int n = static_cast<int>(in.n);
  float* out = nullptr;
  CK(cudaMalloc(&out, sizeof *out));
  size_t temp_bytes = 0;
  CK(cub::DeviceReduce::Sum(nullptr, temp_bytes, in.xf.base, out, n, b.stream));
  void* temp = nullptr;
  CK(cudaMalloc(&temp, std::max<size_t>(temp_bytes, 1)));
  r.params.kv("temp_storage_bytes", jint(static_cast<long long>(temp_bytes)))
      .kv("num_items_type", jstr("int"));
  poison(out, 1, b.stream);
  auto launch = [&] {
    CK(cub::DeviceReduce::Sum(temp, temp_bytes, in.xf.next(), out, n, b.stream));
  };
  auto check = [&](std::string& why, std::string& what) {
    double exact = 0, sabs = 0;  // exact: the inputs are multiples of 2^-24 and n <= 2^30
    for (float v : in.hf) {
      exact += v;
      sabs += std::fabs(v);
    }
    const double got = to_host(out, 1)[0];
    const double err = std::fabs(got - exact), tol = double(in.n) * kU * sabs;
    what = fmt("|got - exact| = %.3g <= n * 2^-24 * sum|x| = %.3g", err, tol);
    if (!(err <= tol)) {
      why = fmt("sum %.9g, exact %.17g, |err| %.3g > tol %.3g", got, exact, err, tol);
      return false;
    }
    return true;
  };
  b.run(r, launch, check);
  CK(cudaFree(out));
  CK(cudaFree(temp));
  b.emit(r);
}

static void op_scan(Bench& b, SizeInputs& in, bool inclusive) {
  Result r;
  r.op = inclusive ? "cub_inclusive_scan_i32_i64" : "cub_exclusive_scan_i32_i64";
  r.n = in.n;
  r.logical_bytes = 12.0 * in.n;
  r.timed_region = inclusive
                       ? "one cub::DeviceScan::InclusiveSum call over thrust::make_transform_iterator("
                         "int*, int->long long), long long output (temp storage preallocated)"
                       : "one cub::DeviceScan::ExclusiveSum call over thrust::make_transform_iterator("
                         "int*, int->long long), long long output (temp storage preallocated)";
  r.cache_policy = in.xi.policy();
  const int n = static_cast<int>(in.n);
  long long* out = nullptr;
  CK(cudaMalloc(&out, in.n * sizeof *out));
  size_t temp_bytes = 0;
  auto it0 = thrust::make_transform_iterator(in.xi.base, Widen{});
  if (inclusive)
    CK(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, it0, out, n, b.stream));
  else
    CK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, it0, out, n, b.stream));
  void* temp = nullptr;
  CK(cudaMalloc(&temp, std::max<size_t>(temp_bytes, 1)));
  r.params.kv("temp_storage_bytes", jint(static_cast<long long>(temp_bytes)))
      .kv("num_items_type", jstr("int"));
  poison(out, in.n, b.stream);
  auto launch = [&] {
    auto it = thrust::make_transform_iterator(in.xi.next(), Widen{});
    if (inclusive)
      CK(cub::DeviceScan::InclusiveSum(temp, temp_bytes, it, out, n, b.stream));
    else
      CK(cub::DeviceScan::ExclusiveSum(temp, temp_bytes, it, out, n, b.stream));
  };
  auto check = [&](std::string& why, std::string& what) {
    what = "exact, every output";
    std::vector<long long> h = to_host(out, in.n);
    long long run = 0;
    for (size_t i = 0; i < in.n; ++i) {
      const long long expect = inclusive ? run + in.hi[i] : run;
      if (h[i] != expect) {
        why = fmt("out[%zu] = %lld, expected %lld", i, h[i], expect);
        return false;
      }
      run += in.hi[i];
    }
    return true;
  };
  b.run(r, launch, check);
  CK(cudaFree(out));
  CK(cudaFree(temp));
  b.emit(r);
}

static void op_select(Bench& b, SizeInputs& in) {
  Result r;
  r.op = "cub_select_if_positive_i32";
  r.n = in.n;
  size_t count = 0;
  for (int v : in.hi) count += v > 0;
  r.logical_bytes = 4.0 * in.n + 4.0 * count;
  r.timed_region =
      "one cub::DeviceSelect::If call (int* in, int* out, int* count, predicate x > 0; temp "
      "storage preallocated)";
  r.cache_policy = in.xi.policy();
  int* out = nullptr;
  int* d_count = nullptr;
  CK(cudaMalloc(&out, std::max<size_t>(in.n, 1) * sizeof *out));
  CK(cudaMalloc(&d_count, sizeof *d_count));
  const int64_t n = static_cast<int64_t>(in.n);
  size_t temp_bytes = 0;
  CK(cub::DeviceSelect::If(nullptr, temp_bytes, in.xi.base, out, d_count, n, IsPositive{}, b.stream));
  void* temp = nullptr;
  CK(cudaMalloc(&temp, std::max<size_t>(temp_bytes, 1)));
  r.params.kv("temp_storage_bytes", jint(static_cast<long long>(temp_bytes)))
      .kv("count", jint(static_cast<long long>(count)))
      .kv("predicate", jstr("x > 0"));
  poison(out, in.n, b.stream);
  poison(d_count, 1, b.stream);
  auto launch = [&] {
    CK(cub::DeviceSelect::If(temp, temp_bytes, in.xi.next(), out, d_count, n, IsPositive{},
                             b.stream));
  };
  auto check = [&](std::string& why, std::string& what) {
    what = "count and every kept value, in order";
    const int got = to_host(d_count, 1)[0];
    if (got < 0 || static_cast<size_t>(got) != count) {
      why = fmt("count %d, expected %zu", got, count);
      return false;
    }
    std::vector<int> h = to_host(out, count);
    size_t j = 0;
    for (size_t i = 0; i < in.n; ++i) {
      if (in.hi[i] <= 0) continue;
      if (h[j] != in.hi[i]) {
        why = fmt("out[%zu] = %d, expected %d (input index %zu)", j, h[j], in.hi[i], i);
        return false;
      }
      ++j;
    }
    return true;
  };
  b.run(r, launch, check);
  CK(cudaFree(out));
  CK(cudaFree(d_count));
  CK(cudaFree(temp));
  b.emit(r);
}

// Offsets for segments of seg_len (the last one may be shorter): offsets[s] = min(s*seg_len, n).
static int* make_offsets(size_t n, long long seg_len, size_t& num_segments) {
  num_segments = (n + seg_len - 1) / seg_len;
  std::vector<int> h(num_segments + 1);
  for (size_t s = 0; s <= num_segments; ++s)
    h[s] = static_cast<int>(std::min<size_t>(s * static_cast<size_t>(seg_len), n));
  int* d = nullptr;
  CK(cudaMalloc(&d, h.size() * sizeof(int)));
  CK(cudaMemcpyAsync(d, h.data(), h.size() * sizeof(int), cudaMemcpyHostToDevice, g_stream));
  CK(cudaStreamSynchronize(g_stream));  // h is freed on return
  return d;
}

static void op_segreduce_f32(Bench& b, SizeInputs& in, long long seg_len) {
  Result r;
  r.op = "cub_segreduce_sum_f32";
  r.n = in.n;
  r.logical_bytes = 4.0 * in.n;
  r.timed_region =
      "one cub::DeviceSegmentedReduce::Sum call (float* in, float* out, int begin/end offset "
      "arrays = offsets, offsets + 1; temp storage preallocated)";
  r.cache_policy = in.xf.policy() + "; offsets reused";
  size_t segs = 0;
  int* offs = make_offsets(in.n, seg_len, segs);
  float* out = nullptr;
  CK(cudaMalloc(&out, std::max<size_t>(segs, 1) * sizeof *out));
  const int64_t ns = static_cast<int64_t>(segs);
  size_t temp_bytes = 0;
  CK(cub::DeviceSegmentedReduce::Sum(nullptr, temp_bytes, in.xf.base, out, ns, offs, offs + 1,
                                     b.stream));
  void* temp = nullptr;
  CK(cudaMalloc(&temp, std::max<size_t>(temp_bytes, 1)));
  r.params.kv("seg_len", jint(seg_len))
      .kv("num_segments", jint(ns))
      .kv("temp_storage_bytes", jint(static_cast<long long>(temp_bytes)));
  poison(out, segs, b.stream);
  auto launch = [&] {
    CK(cub::DeviceSegmentedReduce::Sum(temp, temp_bytes, in.xf.next(), out, ns, offs, offs + 1,
                                       b.stream));
  };
  auto check = [&](std::string& why, std::string& what) {
    what = "every segment: |got - exact| <= seg_len * 2^-24 * sum|x_seg|";
    std::vector<float> h = to_host(out, segs);
    for (size_t s = 0; s < segs; ++s) {
      const size_t lo = s * seg_len, hi = std::min(in.n, lo + static_cast<size_t>(seg_len));
      double exact = 0, sabs = 0;
      for (size_t i = lo; i < hi; ++i) {
        exact += in.hf[i];
        sabs += std::fabs(in.hf[i]);
      }
      const double err = std::fabs(double(h[s]) - exact), tol = double(hi - lo) * kU * sabs;
      if (!(err <= tol)) {
        why = fmt("segment %zu: %.9g, exact %.17g, |err| %.3g > tol %.3g", s, double(h[s]), exact,
                  err, tol);
        return false;
      }
    }
    return true;
  };
  b.run(r, launch, check);
  CK(cudaFree(out));
  CK(cudaFree(temp));
  CK(cudaFree(offs));
  b.emit(r);
}

static void op_segreduce_i64(Bench& b, SizeInputs& in, long long seg_len) {
  Result r;
  r.op = "cub_segreduce_sum_i32_i64";
  r.n = in.n;
  r.logical_bytes = 4.0 * in.n;
  r.timed_region =
      "one cub::DeviceSegmentedReduce::Sum call over thrust::make_transform_iterator(int*, "
      "int->long long), long long out, int begin/end offset arrays = offsets, offsets + 1; temp "
      "storage preallocated";
  r.cache_policy = in.xi.policy() + "; offsets reused";
  size_t segs = 0;
  int* offs = make_offsets(in.n, seg_len, segs);
  long long* out = nullptr;
  CK(cudaMalloc(&out, std::max<size_t>(segs, 1) * sizeof *out));
  const int64_t ns = static_cast<int64_t>(segs);
  size_t temp_bytes = 0;
  CK(cub::DeviceSegmentedReduce::Sum(nullptr, temp_bytes,
                                     thrust::make_transform_iterator(in.xi.base, Widen{}), out, ns,
                                     offs, offs + 1, b.stream));
  void* temp = nullptr;
  CK(cudaMalloc(&temp, std::max<size_t>(temp_bytes, 1)));
  r.params.kv("seg_len", jint(seg_len))
      .kv("num_segments", jint(ns))
      .kv("temp_storage_bytes", jint(static_cast<long long>(temp_bytes)));
  poison(out, segs, b.stream);
  auto launch = [&] {
    CK(cub::DeviceSegmentedReduce::Sum(temp, temp_bytes,
                                       thrust::make_transform_iterator(in.xi.next(), Widen{}), out,
                                       ns, offs, offs + 1, b.stream));
  };
  auto check = [&](std::string& why, std::string& what) {
    what = "exact, every segment";
    std::vector<long long> h = to_host(out, segs);
    for (size_t s = 0; s < segs; ++s) {
      const size_t lo = s * seg_len, hi = std::min(in.n, lo + static_cast<size_t>(seg_len));
      long long expect = 0;
      for (size_t i = lo; i < hi; ++i) expect += in.hi[i];
      if (h[s] != expect) {
        why = fmt("segment %zu: %lld, expected %lld", s, h[s], expect);
        return false;
      }
    }
    return true;
  };
  b.run(r, launch, check);
  CK(cudaFree(out));
  CK(cudaFree(temp));
  CK(cudaFree(offs));
  b.emit(r);
}

static void op_histogram(Bench& b, SizeInputs& in, int bins) {
  Result r;
  r.op = "cub_histogram_even_i32";
  r.n = in.n;
  r.logical_bytes = 4.0 * in.n;
  const int lower = -9, upper = -9 + bins, levels = bins + 1;
  r.timed_region =
      "one cub::DeviceHistogram::HistogramEven call (int samples, int counters, int levels; temp "
      "storage preallocated; CUB zeroes the counters itself)";
  r.cache_policy = in.xi.policy();
  int* hist = nullptr;
  CK(cudaMalloc(&hist, bins * sizeof *hist));
  const int n = static_cast<int>(in.n);
  size_t temp_bytes = 0;
  CK(cub::DeviceHistogram::HistogramEven(nullptr, temp_bytes, in.xi.base, hist, levels, lower,
                                         upper, n, b.stream));
  void* temp = nullptr;
  CK(cudaMalloc(&temp, std::max<size_t>(temp_bytes, 1)));
  r.params.kv("bins", jint(bins))
      .kv("num_levels", jint(levels))
      .kv("lower_level", jint(lower))
      .kv("upper_level", jint(upper))
      .kv("temp_storage_bytes", jint(static_cast<long long>(temp_bytes)));
  poison(hist, bins, b.stream);
  auto launch = [&] {
    CK(cub::DeviceHistogram::HistogramEven(temp, temp_bytes, in.xi.next(), hist, levels, lower,
                                           upper, n, b.stream));
  };
  auto check = [&](std::string& why, std::string& what) {
    what = "every bin exact";
    std::vector<long long> expect(bins, 0);
    for (int v : in.hi)
      if (v >= lower && v < upper) ++expect[v - lower];  // unit-width bins: bin = x - lower
    std::vector<int> h = to_host(hist, bins);
    for (int k = 0; k < bins; ++k)
      if (h[k] != expect[k]) {
        why = fmt("bin %d: %d, expected %lld", k, h[k], expect[k]);
        return false;
      }
    return true;
  };
  b.run(r, launch, check);
  CK(cudaFree(hist));
  CK(cudaFree(temp));
  b.emit(r);
}

static void op_argmax(Bench& b, SizeInputs& in) {
  Result r;
  r.op = "cub_argmax_f32";
  r.n = in.n;
  r.logical_bytes = 4.0 * in.n;
  r.timed_region =
      "one cub::DeviceReduce::ArgMax call, CCCL 3 overload writing value (float*) and index "
      "(int64*) separately (temp storage preallocated)";
  r.cache_policy = in.xf.policy();
  float* d_val = nullptr;
  int64_t* d_idx = nullptr;
  CK(cudaMalloc(&d_val, sizeof *d_val));
  CK(cudaMalloc(&d_idx, sizeof *d_idx));
  const int64_t n = static_cast<int64_t>(in.n);
  size_t temp_bytes = 0;
  CK(cub::DeviceReduce::ArgMax(nullptr, temp_bytes, in.xf.base, d_val, d_idx, n, b.stream));
  void* temp = nullptr;
  CK(cudaMalloc(&temp, std::max<size_t>(temp_bytes, 1)));
  r.params.kv("temp_storage_bytes", jint(static_cast<long long>(temp_bytes)));
  poison(d_val, 1, b.stream);
  poison(d_idx, 1, b.stream);
  auto launch = [&] {
    CK(cub::DeviceReduce::ArgMax(temp, temp_bytes, in.xf.next(), d_val, d_idx, n, b.stream));
  };
  auto check = [&](std::string& why, std::string& what) {
    what = "maximum value and its lowest index";
    size_t best = 0;
    for (size_t i = 1; i < in.n; ++i)
      if (in.hf[i] > in.hf[best]) best = i;
    const float v = to_host(d_val, 1)[0];
    const int64_t idx = to_host(d_idx, 1)[0];
    if (!(v == in.hf[best]) || idx != static_cast<int64_t>(best)) {
      why = fmt("(%.9g, %lld), expected (%.9g, %zu)", double(v), static_cast<long long>(idx),
                double(in.hf[best]), best);
      return false;
    }
    return true;
  };
  b.run(r, launch, check);
  CK(cudaFree(d_val));
  CK(cudaFree(d_idx));
  CK(cudaFree(temp));
  b.emit(r);
}

// ------------------------------------------------------------------------------------------------

static bool has(const std::vector<std::string>& v, const char* s) {
  return std::find(v.begin(), v.end(), std::string(s)) != v.end();
}

int main(int argc, char** argv) {
  Bench b;
  b.opt = parse_args(argc, argv);
  const Options& o = b.opt;

  Device& d = b.dev;
  CK(cudaGetDevice(&d.id));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, d.id));
  d.name = prop.name;
  d.total_mem = prop.totalGlobalMem;
  CK(cudaDeviceGetAttribute(&d.sms, cudaDevAttrMultiProcessorCount, d.id));
  int l2 = 0;
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, d.id));
  d.l2_bytes = l2 > 0 ? l2 : 64ll << 20;
  CK(cudaDeviceGetAttribute(&d.cc_major, cudaDevAttrComputeCapabilityMajor, d.id));
  CK(cudaDeviceGetAttribute(&d.cc_minor, cudaDevAttrComputeCapabilityMinor, d.id));
  CK(cudaDeviceGetAttribute(&d.clock_khz, cudaDevAttrClockRate, d.id));
  CK(cudaDeviceGetAttribute(&d.mem_clock_khz, cudaDevAttrMemoryClockRate, d.id));
  CK(cudaDeviceGetAttribute(&d.bus_bits, cudaDevAttrGlobalMemoryBusWidth, d.id));
  CK(cudaDriverGetVersion(&d.driver_api));
  CK(cudaRuntimeGetVersion(&d.runtime));
  d.driver = read_driver_string();

  CK(cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking));
  g_stream = b.stream;
  CK(cudaEventCreate(&b.ev0));
  CK(cudaEventCreate(&b.ev1));

  b.out = std::fopen(o.out.c_str(), "w");
  if (!b.out) die("cannot open for writing: ", o.out.c_str());

  auto ver = [](int v) { return fmt("%d.%d", v / 1000, (v % 1000) / 10); };
  Obj meta;
  meta.kv("gpu", jstr(d.name))
      .kv("cc", jstr(fmt("%d.%d", d.cc_major, d.cc_minor)))
      .kv("sms", jint(d.sms))
      .kv("l2_bytes", jint(d.l2_bytes))
      .kv("total_mem_bytes", jint(static_cast<long long>(d.total_mem)))
      .kv("driver", jstr(d.driver.empty() ? "unknown" : d.driver))
      .kv("driver_cuda_version", jstr(ver(d.driver_api)))
      .kv("runtime", jstr(ver(d.runtime)))
      .kv("nvcc", jstr(fmt("%d.%d.%d", __CUDACC_VER_MAJOR__, __CUDACC_VER_MINOR__,
                           __CUDACC_VER_BUILD__)))
      .kv("cccl_version", jint(CCCL_VERSION))
      .kv("cub_version", jint(CUB_VERSION))
      .kv("clock_mhz", jint(d.clock_khz / 1000))
      .kv("mem_clock_mhz", jint(d.mem_clock_khz / 1000))
      .kv("clock_source", jstr("cudaDevAttrClockRate / cudaDevAttrMemoryClockRate: peak clocks, "
                               "not the clocks during the run"))
      .kv("mem_bus_bits", jint(d.bus_bits))
      .kv("quick", o.quick ? "true" : "false")
      .kv("warmups", jint(b.warmups()))
      .kv("iters_below_2p24", jint(b.iters(1)))
      .kv("iters_from_2p24", jint(b.iters(size_t(1) << 24)))
      .kv("timing", jstr("cudaEventRecord before and after each single invocation on one "
                         "non-blocking stream, cudaEventSynchronize after each, so the GPU is "
                         "idle when the start event is recorded and host-side launch latency "
                         "counts; median, min and max over iters"))
      .kv("input_i32", jstr("int32 in [-9, 9]: splitmix64(i ^ seed) % 19 - 9, generated on the device"))
      .kv("input_f32", jstr("float32 in [-0.5, 0.5): (splitmix64(i ^ seed) >> 40) * 2^-24 - 0.5, "
                            "generated on the device"));
  std::fprintf(b.out, "%s\n", Obj().kv("impl", jstr("cub")).kv("meta", meta.str()).str().c_str());
  std::fflush(b.out);
  std::fprintf(stderr, "cub_bench: %s, %d SMs, L2 %lld B, driver %s, runtime %s, CCCL %d\n",
               d.name.c_str(), d.sms, d.l2_bytes, d.driver.c_str(), ver(d.runtime).c_str(),
               CCCL_VERSION);

  // Count records for the progress note.
  for (size_t s = 0; s < o.log2_sizes.size(); ++s)
    for (auto& op : o.ops)
      b.total += op.rfind("cub_segreduce", 0) == 0 ? static_cast<int>(o.seg_lens.size())
                 : op == "cub_histogram_even_i32"  ? static_cast<int>(o.bins.size())
                                                   : 1;

  const bool need_f = has(o.ops, "cub_reduce_sum_f32") || has(o.ops, "cub_segreduce_sum_f32") ||
                      has(o.ops, "cub_argmax_f32");
  bool need_i = false;
  for (auto& op : o.ops)
    need_i = need_i || !(op == "cub_reduce_sum_f32" || op == "cub_segreduce_sum_f32" ||
                         op == "cub_argmax_f32");

  for (int lg : o.log2_sizes) {
    const size_t n = size_t(1) << lg;
    SizeInputs in;
    make_inputs(b, in, n, need_i, need_f);
    for (auto& op : o.ops) {
      if (op == "memcpy_d2d") op_memcpy(b, in);
      else if (op == "read_ceiling_i32") op_read_ceiling(b, in);
      else if (op == "cub_reduce_sum_i32_i64") op_reduce_i64(b, in);
      else if (op == "cub_reduce_sum_f32") op_reduce_f32(b, in);
      else if (op == "cub_exclusive_scan_i32_i64") op_scan(b, in, false);
      else if (op == "cub_inclusive_scan_i32_i64") op_scan(b, in, true);
      else if (op == "cub_select_if_positive_i32") op_select(b, in);
      else if (op == "cub_segreduce_sum_f32")
        for (long long sl : o.seg_lens) op_segreduce_f32(b, in, sl);
      else if (op == "cub_segreduce_sum_i32_i64")
        for (long long sl : o.seg_lens) op_segreduce_i64(b, in, sl);
      else if (op == "cub_histogram_even_i32")
        for (int bins : o.bins) op_histogram(b, in, bins);
      else if (op == "cub_argmax_f32") op_argmax(b, in);
    }
    free_inputs(in);
  }

  CK(cudaEventDestroy(b.ev0));
  CK(cudaEventDestroy(b.ev1));
  CK(cudaStreamDestroy(b.stream));
  if (std::fclose(b.out) != 0) die("error closing ", o.out.c_str());
  if (b.failures) {
    std::fprintf(stderr, "cub_bench: %d check(s) failed; see \"ok\":false records in %s\n",
                 b.failures, o.out.c_str());
    return 1;
  }
  std::fprintf(stderr, "cub_bench: done, %d records in %s\n", b.done, o.out.c_str());
  return 0;
}

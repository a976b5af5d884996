// cub_bench runner: rotated inputs, results, the check-then-time loop and the record
// writer shared by every op.
// Part of cub_bench.cu (one translation unit: nvcc compiles cub_bench.cu, which includes
// these headers in order; each includes the one it builds on).
#pragma once

#include "bench_options.cuh"

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
      // Every timed call in the order timed (the harness bootstraps its interval from them).
      std::string samples = "[";
      for (size_t k = 0; k < r.times_us.size(); ++k) {
        if (k) samples += ",";
        samples += jnum(r.times_us[k], "%.3f");
      }
      o.kv("samples_us", samples + "]");
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

// The shape every CUB op shares. `call(temp, temp_bytes, input)` is the two-phase CUB call:
// with temp == nullptr it only sets temp_bytes. It is sized once on copy 0 (`x.base`, which
// leaves the rotation cursor where it is) and its temp storage allocated; `setup(temp_bytes)`
// then adds the record's params and poisons the outputs; Bench::run checks and times `call` on
// the rotated copies (`x.next()`); the temp storage is freed and the record emitted. The op
// frees its own outputs afterwards.
template <class T, class Call, class Setup, class Check>
static void run_cub(Bench& b, Result& r, Rotated<T>& x, Call&& call, Setup&& setup, Check&& check) {
  size_t temp_bytes = 0;
  CK(call(nullptr, temp_bytes, x.base));
  void* temp = nullptr;
  CK(cudaMalloc(&temp, std::max<size_t>(temp_bytes, 1)));
  setup(temp_bytes);
  b.run(r, [&] { CK(call(temp, temp_bytes, x.next())); }, check);
  CK(cudaFree(temp));
  b.emit(r);
}

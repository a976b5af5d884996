// cub_bench ops: the two bandwidth ceilings and one function per CUB call, each checked once
// against a host computation and then timed (run_cub in bench_runner.cuh).
// Part of cub_bench.cu (one translation unit).
#pragma once

#include "bench_runner.cuh"

// ---- individual ops -----------------------------------------------------------------------------

// A record of `op` at n: its logical bytes, cache policy and timed region; the op adds params.
static Result start_record(const char* op, size_t n, double logical_bytes, std::string cache_policy,
                           std::string timed_region) {
  Result r;
  r.op = op;
  r.n = n;
  r.logical_bytes = logical_bytes;
  r.cache_policy = std::move(cache_policy);
  r.timed_region = std::move(timed_region);
  return r;
}

// Whether `got` is the int64 sum of `hi`; else says why.
static bool sum_matches(const std::vector<int>& hi, long long got, std::string& why) {
  long long expect = 0;
  for (int v : hi) expect += v;
  if (got != expect) {
    why = fmt("sum %lld, expected %lld", got, expect);
    return false;
  }
  return true;
}

static void op_memcpy(Bench& b, SizeInputs& in) {
  const size_t bytes = in.n * sizeof(int);
  Result r = start_record("memcpy_d2d", in.n, 2.0 * bytes,
                          in.xi.policy(),
                          "one cudaMemcpyAsync device-to-device of 4n bytes");
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
  Result r = start_record("read_ceiling_i32", in.n, 4.0 * in.n,
                          in.xi.policy(),
                          "one launch of a grid-stride read kernel (16-byte loads, 4 in flight per thread, "
                          "int64 block sum, one atomicAdd per block); the accumulator is not reset between runs");
  const size_t n4 = in.n / 4;
  const size_t want = (n4 + kReadBlock - 1) / kReadBlock;
  const int grid = static_cast<int>(std::max<size_t>(1, std::min<size_t>(want, size_t(b.dev.sms) * 8)));
  r.params.kv("block", jint(kReadBlock)).kv("grid", jint(grid));
  unsigned long long* acc = nullptr;
  CK(cudaMalloc(&acc, sizeof *acc));
  CK(cudaMemsetAsync(acc, 0, sizeof *acc, b.stream));
  auto launch = [&] {
    read_ceiling_kernel<<<grid, kReadBlock, 0, b.stream>>>(in.xi.next(), in.n, acc);
  };
  auto check = [&](std::string& why, std::string& what) {
    what = "int64 sum from the atomics equals the host sum";
    return sum_matches(in.hi, static_cast<long long>(to_host(acc, 1)[0]), why);
  };
  b.run(r, launch, check);
  CK(cudaFree(acc));
  b.emit(r);
}

// `Items` is the type of num_items: int, or int64_t for CUB's 64-bit path (the op's name
// then ends in _n64): the same sum, the path a caller past 2^31 items takes.
template <class Items>
static void op_reduce_i64(Bench& b, SizeInputs& in) {
  constexpr bool kWide = sizeof(Items) == 8;
  Result r = start_record(kWide ? "cub_reduce_sum_i32_i64_n64" : "cub_reduce_sum_i32_i64", in.n, 4.0 * in.n,
                          in.xi.policy(),
                          kWide ? "one cub::DeviceReduce::Sum call over thrust::make_transform_iterator(int*, int->long "
                                  "long), long long output, int64 num_items (temp storage preallocated)"
                                : "one cub::DeviceReduce::Sum call over thrust::make_transform_iterator(int*, int->long "
                                  "long), long long output (temp storage preallocated)");
  const Items n = static_cast<Items>(in.n);
  long long* out = nullptr;
  CK(cudaMalloc(&out, sizeof *out));
  auto call = [&](void* temp, size_t& temp_bytes, auto* x) {
    return cub::DeviceReduce::Sum(temp, temp_bytes, thrust::make_transform_iterator(x, Widen{}), out,
                                  n, b.stream);
  };
  auto setup = [&](size_t temp_bytes) {
    r.params.kv("temp_storage_bytes", jint(static_cast<long long>(temp_bytes)))
        .kv("num_items_type", jstr(kWide ? "int64" : "int"));
    poison(out, 1, b.stream);
  };
  auto check = [&](std::string& why, std::string& what) {
    what = "exact";
    return sum_matches(in.hi, to_host(out, 1)[0], why);
  };
  run_cub(b, r, in.xi, call, setup, check);
  CK(cudaFree(out));
}

// |got - exact| <= len * 2^-24 * sum|x| over hf[lo, hi): the exact sum is a double, since the
// inputs are multiples of 2^-24 and n <= 2^30. Sets `err` and `tol`; returns whether it holds.
static bool within_f32_bound(const std::vector<float>& hf, size_t lo, size_t hi, double got,
                             double& exact, double& err, double& tol) {
  double sabs = 0;
  exact = 0;
  for (size_t i = lo; i < hi; ++i) {
    exact += hf[i];
    sabs += std::fabs(hf[i]);
  }
  err = std::fabs(got - exact);
  tol = double(hi - lo) * kU * sabs;
  return err <= tol;
}

static void op_reduce_f32(Bench& b, SizeInputs& in) {
  Result r = start_record("cub_reduce_sum_f32", in.n, 4.0 * in.n,
                          in.xf.policy(),
                          "one cub::DeviceReduce::Sum call over float*, float output (temp storage preallocated)");
  const int n = static_cast<int>(in.n);
  float* out = nullptr;
  CK(cudaMalloc(&out, sizeof *out));
  auto call = [&](void* temp, size_t& temp_bytes, auto* x) {
    return cub::DeviceReduce::Sum(temp, temp_bytes, x, out, n, b.stream);
  };
  auto setup = [&](size_t temp_bytes) {
    r.params.kv("temp_storage_bytes", jint(static_cast<long long>(temp_bytes)))
        .kv("num_items_type", jstr("int"));
    poison(out, 1, b.stream);
  };
  auto check = [&](std::string& why, std::string& what) {
    const double got = to_host(out, 1)[0];
    double exact = 0, err = 0, tol = 0;
    const bool ok = within_f32_bound(in.hf, 0, in.n, got, exact, err, tol);
    what = fmt("|got - exact| = %.3g <= n * 2^-24 * sum|x| = %.3g", err, tol);
    if (!ok) {
      why = fmt("sum %.9g, exact %.17g, |err| %.3g > tol %.3g", got, exact, err, tol);
      return false;
    }
    return true;
  };
  run_cub(b, r, in.xf, call, setup, check);
  CK(cudaFree(out));
}

// CUB's reproducible float sum: the same bits on every GPU (`gpu_to_gpu` determinism, a
// reproducible-accumulator algorithm, not correctly rounded), the peer a user weighs our
// correctly rounded sum against. Only the single-phase overload takes the determinism
// requirement (in its `env`, beside the stream), and it sizes and allocates its own temporary
// storage inside the call, so the timed region holds that allocation. The overload is in CCCL
// 3.5.0 and not in 3.0.1 (CUDA 13.0's own); the releases between were not tried, so it is
// compiled from 3.5.0 on and otherwise reported absent.
#if CCCL_VERSION >= 3005000
#define CUB_BENCH_HAS_GPU_TO_GPU 1
static void op_reduce_f32_gpu_to_gpu(Bench& b, SizeInputs& in) {
  Result r = start_record("cub_reduce_sum_f32_gpu_to_gpu", in.n, 4.0 * in.n,
                          in.xf.policy(),
                          "one cub::DeviceReduce::Sum call over float*, float output, env = (the stream, "
                          "require(determinism::gpu_to_gpu)); CUB allocates its temporary storage inside the call");
  const int n = static_cast<int>(in.n);
  float* out = nullptr;
  CK(cudaMalloc(&out, sizeof *out));
  r.params.kv("determinism", jstr("gpu_to_gpu")).kv("num_items_type", jstr("int"));
  poison(out, 1, b.stream);
  const auto env = ::cuda::std::execution::env{
      ::cuda::stream_ref{b.stream}, ::cuda::execution::require(::cuda::execution::determinism::gpu_to_gpu)};
  auto launch = [&] { CK(cub::DeviceReduce::Sum(in.xf.next(), out, n, env)); };
  auto check = [&](std::string& why, std::string& what) {
    const double got = to_host(out, 1)[0];
    double exact = 0, err = 0, tol = 0;
    const bool ok = within_f32_bound(in.hf, 0, in.n, got, exact, err, tol);
    what = fmt("|got - exact| = %.3g <= n * 2^-24 * sum|x| = %.3g", err, tol);
    if (!ok) why = fmt("sum %.9g, exact %.17g, |err| %.3g > tol %.3g", got, exact, err, tol);
    return ok;
  };
  b.run(r, launch, check);
  CK(cudaFree(out));
  b.emit(r);
}
#endif

// CUB's same-type exclusive scans (int -> int, float -> float): what a user who needs no wider
// output compares with; 8n logical bytes. The int check wraps as two's complement (the
// inputs' prefix sums stay far inside int32 here, but the rule is CUB's own arithmetic); the
// float check bounds every prefix by i * 2^-24 * sum|x[0..i)| (any order of i additions).

// Whether out[i] is the exclusive prefix of `x` at every i, for int (exact, wrapping) or float
// (within i * 2^-24 * sum|x[0..i)| of the exact prefix); else says where not.
static bool same_type_prefixes_match(const std::vector<int>& x, const std::vector<int>& out, std::string& why) {
  uint32_t run = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (out[i] != static_cast<int>(run)) {
      why = fmt("out[%zu] = %d, expected %d", i, out[i], static_cast<int>(run));
      return false;
    }
    run += static_cast<uint32_t>(x[i]);
  }
  return true;
}

static bool same_type_prefixes_match(const std::vector<float>& x, const std::vector<float>& out, std::string& why) {
  double exact = 0, sabs = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double err = std::fabs(double(out[i]) - exact), tol = double(i) * kU * sabs;
    if (!(err <= tol)) {
      why = fmt("out[%zu] = %.9g, exact %.17g, |err| %.3g > tol %.3g", i, out[i], exact, err, tol);
      return false;
    }
    exact += x[i];
    sabs += std::fabs(x[i]);
  }
  return true;
}

template <class T>
static void op_scan_same_type(Bench& b, SizeInputs& in) {
  constexpr bool kInt = std::is_same_v<T, int>;
  Rotated<T>& x = [&]() -> Rotated<T>& {
    if constexpr (kInt) return in.xi; else return in.xf;
  }();
  const std::vector<T>& host = [&]() -> const std::vector<T>& {
    if constexpr (kInt) return in.hi; else return in.hf;
  }();
  Result r = start_record(kInt ? "cub_exclusive_scan_i32" : "cub_exclusive_scan_f32", in.n, 8.0 * in.n, x.policy(),
                          kInt ? "one cub::DeviceScan::ExclusiveSum call, int* in, int* out (temp storage preallocated)"
                               : "one cub::DeviceScan::ExclusiveSum call, float* in, float* out (temp storage "
                                 "preallocated)");
  const int n = static_cast<int>(in.n);
  T* out = nullptr;
  CK(cudaMalloc(&out, std::max<size_t>(in.n, 1) * sizeof *out));
  auto call = [&](void* temp, size_t& temp_bytes, auto* input) {
    return cub::DeviceScan::ExclusiveSum(temp, temp_bytes, input, out, n, b.stream);
  };
  auto setup = [&](size_t temp_bytes) {
    r.params.kv("temp_storage_bytes", jint(static_cast<long long>(temp_bytes))).kv("num_items_type", jstr("int"));
    poison(out, in.n, b.stream);
  };
  auto check = [&](std::string& why, std::string& what) {
    what = kInt ? "exact (int32, wrapping), every output"
                : "every output within i * 2^-24 * sum|x[0..i)| of the exact prefix";
    return same_type_prefixes_match(host, to_host(out, in.n), why);
  };
  run_cub(b, r, x, call, setup, check);
  CK(cudaFree(out));
}

// `Items` as for op_reduce_i64: int, or int64_t for CUB's 64-bit path (exclusive only: _n64).
template <class Items>
static void op_scan(Bench& b, SizeInputs& in, bool inclusive) {
  constexpr bool kWide = sizeof(Items) == 8;
  Result r = start_record(kWide ? "cub_exclusive_scan_i32_i64_n64"
                          : inclusive ? "cub_inclusive_scan_i32_i64"
                                      : "cub_exclusive_scan_i32_i64",
                          in.n, 12.0 * in.n,
                          in.xi.policy(),
                          inclusive
                              ? "one cub::DeviceScan::InclusiveSum call over thrust::make_transform_iterator("
                                "int*, int->long long), long long output (temp storage preallocated)"
                              : "one cub::DeviceScan::ExclusiveSum call over thrust::make_transform_iterator("
                                "int*, int->long long), long long output (temp storage preallocated)");
  const Items n = static_cast<Items>(in.n);
  long long* out = nullptr;
  CK(cudaMalloc(&out, in.n * sizeof *out));
  auto call = [&](void* temp, size_t& temp_bytes, auto* x) {
    auto it = thrust::make_transform_iterator(x, Widen{});
    return inclusive ? cub::DeviceScan::InclusiveSum(temp, temp_bytes, it, out, n, b.stream)
                     : cub::DeviceScan::ExclusiveSum(temp, temp_bytes, it, out, n, b.stream);
  };
  auto setup = [&](size_t temp_bytes) {
    r.params.kv("temp_storage_bytes", jint(static_cast<long long>(temp_bytes)))
        .kv("num_items_type", jstr(kWide ? "int64" : "int"));
    poison(out, in.n, b.stream);
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
  run_cub(b, r, in.xi, call, setup, check);
  CK(cudaFree(out));
}

static void op_select(Bench& b, SizeInputs& in) {
  size_t count = 0;
  for (int v : in.hi) count += v > 0;
  Result r = start_record("cub_select_if_positive_i32", in.n, 4.0 * in.n + 4.0 * count,
                          in.xi.policy(),
                          "one cub::DeviceSelect::If call (int* in, int* out, int* count, predicate x > 0; temp "
                          "storage preallocated)");
  int* out = nullptr;
  int* d_count = nullptr;
  CK(cudaMalloc(&out, std::max<size_t>(in.n, 1) * sizeof *out));
  CK(cudaMalloc(&d_count, sizeof *d_count));
  const int64_t n = static_cast<int64_t>(in.n);
  auto call = [&](void* temp, size_t& temp_bytes, auto* x) {
    return cub::DeviceSelect::If(temp, temp_bytes, x, out, d_count, n, IsPositive{}, b.stream);
  };
  auto setup = [&](size_t temp_bytes) {
    r.params.kv("temp_storage_bytes", jint(static_cast<long long>(temp_bytes)))
        .kv("count", jint(static_cast<long long>(count)))
        .kv("predicate", jstr("x > 0"));
    poison(out, in.n, b.stream);
    poison(d_count, 1, b.stream);
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
  run_cub(b, r, in.xi, call, setup, check);
  CK(cudaFree(out));
  CK(cudaFree(d_count));
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

// One cub::DeviceSegmentedReduce::Sum op over segments of seg_len. Out = long long reads the
// int32 input through the int->long long iterator; Out = float reads the float input. Every
// segment is checked: exact for long long, within seg_len * 2^-24 * sum|x_seg| for float.
template <class Out>
static void op_segreduce(Bench& b, SizeInputs& in, long long seg_len) {
  constexpr bool wide = std::is_same<Out, long long>::value;
  static_assert(wide || std::is_same<Out, float>::value, "long long or float sums");
  Result r = start_record(wide ? "cub_segreduce_sum_i32_i64" : "cub_segreduce_sum_f32", in.n, 4.0 * in.n,
                          (wide ? in.xi.policy() : in.xf.policy()) + "; offsets reused",
                          wide ? "one cub::DeviceSegmentedReduce::Sum call over thrust::make_transform_iterator("
                                 "int*, int->long long), long long out, int begin/end offset arrays = offsets, "
                                 "offsets + 1; temp storage preallocated"
                               : "one cub::DeviceSegmentedReduce::Sum call (float* in, float* out, int begin/end "
                                 "offset arrays = offsets, offsets + 1; temp storage preallocated)");
  size_t segs = 0;
  int* offs = make_offsets(in.n, seg_len, segs);
  Out* out = nullptr;
  CK(cudaMalloc(&out, std::max<size_t>(segs, 1) * sizeof *out));
  const int64_t ns = static_cast<int64_t>(segs);
  auto setup = [&](size_t temp_bytes) {
    r.params.kv("seg_len", jint(seg_len))
        .kv("num_segments", jint(ns))
        .kv("temp_storage_bytes", jint(static_cast<long long>(temp_bytes)));
    poison(out, segs, b.stream);
  };
  auto check = [&](std::string& why, std::string& what) {
    what = wide ? "exact, every segment" : "every segment: |got - exact| <= seg_len * 2^-24 * sum|x_seg|";
    std::vector<Out> h = to_host(out, segs);
    for (size_t s = 0; s < segs; ++s) {
      const size_t lo = s * seg_len, hi = std::min(in.n, lo + static_cast<size_t>(seg_len));
      if constexpr (wide) {
        long long expect = 0;
        for (size_t i = lo; i < hi; ++i) expect += in.hi[i];
        if (h[s] != expect) {
          why = fmt("segment %zu: %lld, expected %lld", s, h[s], expect);
          return false;
        }
      } else {
        double exact = 0, err = 0, tol = 0;
        if (!within_f32_bound(in.hf, lo, hi, double(h[s]), exact, err, tol)) {
          why = fmt("segment %zu: %.9g, exact %.17g, |err| %.3g > tol %.3g", s, double(h[s]), exact,
                    err, tol);
          return false;
        }
      }
    }
    return true;
  };
  if constexpr (wide) {
    auto call = [&](void* temp, size_t& temp_bytes, auto* x) {
      return cub::DeviceSegmentedReduce::Sum(temp, temp_bytes, thrust::make_transform_iterator(x, Widen{}),
                                             out, ns, offs, offs + 1, b.stream);
    };
    run_cub(b, r, in.xi, call, setup, check);
  } else {
    auto call = [&](void* temp, size_t& temp_bytes, auto* x) {
      return cub::DeviceSegmentedReduce::Sum(temp, temp_bytes, x, out, ns, offs, offs + 1, b.stream);
    };
    run_cub(b, r, in.xf, call, setup, check);
  }
  CK(cudaFree(out));
  CK(cudaFree(offs));
}

static void op_histogram(Bench& b, SizeInputs& in, int bins) {
  Result r = start_record("cub_histogram_even_i32", in.n, 4.0 * in.n,
                          in.xi.policy(),
                          "one cub::DeviceHistogram::HistogramEven call (int samples, int counters, int "
                          "levels; temp storage preallocated; CUB zeroes the counters itself)");
  const int lower = -9, upper = -9 + bins, levels = bins + 1;
  int* hist = nullptr;
  CK(cudaMalloc(&hist, bins * sizeof *hist));
  const int n = static_cast<int>(in.n);
  auto call = [&](void* temp, size_t& temp_bytes, auto* x) {
    return cub::DeviceHistogram::HistogramEven(temp, temp_bytes, x, hist, levels, lower, upper, n,
                                               b.stream);
  };
  auto setup = [&](size_t temp_bytes) {
    r.params.kv("bins", jint(bins))
        .kv("num_levels", jint(levels))
        .kv("lower_level", jint(lower))
        .kv("upper_level", jint(upper))
        .kv("temp_storage_bytes", jint(static_cast<long long>(temp_bytes)));
    poison(hist, bins, b.stream);
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
  run_cub(b, r, in.xi, call, setup, check);
  CK(cudaFree(hist));
}

static void op_argmax(Bench& b, SizeInputs& in) {
  Result r = start_record("cub_argmax_f32", in.n, 4.0 * in.n,
                          in.xf.policy(),
                          "one cub::DeviceReduce::ArgMax call, CCCL 3 overload writing value (float*) and index "
                          "(int64*) separately (temp storage preallocated)");
  float* d_val = nullptr;
  int64_t* d_idx = nullptr;
  CK(cudaMalloc(&d_val, sizeof *d_val));
  CK(cudaMalloc(&d_idx, sizeof *d_idx));
  const int64_t n = static_cast<int64_t>(in.n);
  auto call = [&](void* temp, size_t& temp_bytes, auto* x) {
    return cub::DeviceReduce::ArgMax(temp, temp_bytes, x, d_val, d_idx, n, b.stream);
  };
  auto setup = [&](size_t temp_bytes) {
    r.params.kv("temp_storage_bytes", jint(static_cast<long long>(temp_bytes)));
    poison(d_val, 1, b.stream);
    poison(d_idx, 1, b.stream);
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
  run_cub(b, r, in.xf, call, setup, check);
  CK(cudaFree(d_val));
  CK(cudaFree(d_idx));
}

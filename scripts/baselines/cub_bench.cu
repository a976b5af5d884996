// cub_bench.cu: CUB baselines and bandwidth ceilings for primlab's `harness bench`.
//
// Build (on the GPU machine):
//   nvcc -O3 -std=c++17 -arch=sm_90 -o cub_bench cub_bench.cu
// Run:
//   cub_bench --out FILE.jsonl [--sizes 10,12,...,28] [--quick] [--ops a,b,c]
//             [--seg-lens 1024] [--bins 19] [--topk-ks 1,50,256,2048]
//
// cub_topk_f32 (cub::DeviceTopK::MaxPairs, CCCL >= 3.2.0) runs over the --sizes from 2^20 on
// (with --quick only 2^20 and 2^24), for each k of --topk-ks (default 1,50,256,2048; with
// --quick 1,2048).
//
// Writes one JSON object per line: first a meta line, then one record per (op, n[, param]).
// Every op is checked against a host computation once before it is timed; a failed check is
// recorded with "ok":false and no timing. See README.md beside this file for the exact
// contents of each timed region, the logical byte counts and the L2 policy.
//
// Exit status: 0 = every check passed; 1 = the file is complete but at least one check failed;
// 2 = usage or CUDA error (the file holds the lines written up to that point).

// Layout: bench_support.cuh (errors, device-side inputs, read-ceiling kernel, device facts,
// JSON) <- bench_options.cuh (command line) <- bench_runner.cuh (rotation, check-then-time,
// records) <- bench_ops.cuh (one function per op); this file opens the device and runs the ops.

#include "bench_ops.cuh"

#include <functional>

// cub::DeviceTopK: <cub/device/device_topk.cuh> first ships in CCCL 3.2.0 (not in 3.0.x or 3.1.x;
// CUDA 13.0's own CCCL is 3.0.1). The two-phase MaxPairs(temp, temp_bytes, keys_in, keys_out,
// values_in, values_out, num_items, k, env) has the same parameters from 3.2.0 to 3.5.0, and every
// release so far requires env to hold require(determinism::not_guaranteed,
// output_ordering::unsorted) (a static_assert otherwise); the stream travels in the same env.
#if defined(CCCL_VERSION) && CCCL_VERSION >= 3002000
#define CUB_BENCH_HAS_TOPK 1
#include <cub/device/device_topk.cuh>
#include <cuda/stream_ref>
#endif

// ------------------------------------------------------------------------------------------------


// The CCCL release these headers are, "3.5.0" (CCCL_VERSION is major * 10^6 + minor * 10^3 + patch).
static std::string cccl_release() {
  return fmt("%d.%d.%d", CCCL_VERSION / 1000000, CCCL_VERSION / 1000 % 1000, CCCL_VERSION % 1000);
}

// Leaves out, by name, a requested op this CCCL lacks: no record, so the harness reports it absent.
[[maybe_unused]] static void drop_absent_op(Options& o, const char* op, const char* needs) {
  for (size_t k = 0; k < o.ops.size();)
    if (o.ops[k] == op) {
      std::fprintf(stderr, "cub_bench: %s needs CCCL >= %s (this build: %s); no record\n", op, needs,
                   cccl_release().c_str());
      o.ops.erase(o.ops.begin() + static_cast<long>(k));
    } else {
      ++k;
    }
}

static void drop_absent_ops(Options& o) {
#ifndef CUB_BENCH_HAS_GPU_TO_GPU
  drop_absent_op(o, "cub_reduce_sum_f32_gpu_to_gpu", "3.5.0");
#endif
#ifndef CUB_BENCH_HAS_TOPK
  drop_absent_op(o, "cub_topk_f32", "3.2.0 (cub::DeviceTopK)");
#endif
  (void)o;
}

// ------------------------------------------------------------------------------------------------
// cub_topk_f32: cub::DeviceTopK::MaxPairs over whole arrays (CUB has no batched rows of these
// widths: DeviceBatchedTopK holds a segment in one block).

static const char kTopkOp[] = "cub_topk_f32";
static constexpr int kTopkMinLog2 = 20;            // the --sizes from 2^20 on
static constexpr int kTopkQuickLog2[] = {20, 24};  // with --quick only these

// The --sizes that cub_topk_f32 runs at.
static bool topk_size(const Options& o, int lg) {
  if (!o.quick) return lg >= kTopkMinLog2;
  for (int q : kTopkQuickLog2)
    if (lg == q) return true;
  return false;
}

#ifdef CUB_BENCH_HAS_TOPK
static std::string topk_timed_region(int k) {
  return fmt("one cub::DeviceTopK::MaxPairs call, k = %d: float* keys in, float* keys out, int64_t* values in "
             "(the indices 0..n-1, written once before) and out, int num_items and k, env = (the stream, "
             "require(determinism::not_guaranteed, output_ordering::unsorted)), the only requirements CUB "
             "accepts; temp storage preallocated",
             k);
}

static void topk_params(Obj& p, int k) {
  p.kv("k", jint(k))
      .kv("largest", "true")
      .kv("sorted", "false")
      .kv("determinism", jstr("not_guaranteed"))
      .kv("output_ordering", jstr("unsorted"))
      .kv("index_type", jstr("int64"))
      .kv("num_items_type", jstr("int"));
}

__global__ void iota_i64_kernel(int64_t* p, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    p[i] = static_cast<int64_t>(i);
}

// One record per k of `ks` (k <= n): the k largest keys of the float input and their indices.
// Checked once: the k keys, sorted descending on the host, equal the k largest inputs (a host
// nth_element, once per size for the largest k); every index is in [0, n), no index repeats, and
// the input at each index is its key. CUB writes the k items in no particular order, and which
// of the inputs tied at the k-th value it returns is not fixed.
static void op_topk(Bench& b, SizeInputs& in, const std::vector<int>& ks) {
  const size_t n = in.n;
  int kmax = 0;
  for (int k : ks)
    if (static_cast<size_t>(k) <= n) kmax = std::max(kmax, k);
  if (kmax == 0) return;
  std::vector<float> top(in.hf);
  std::nth_element(top.begin(), top.begin() + (kmax - 1), top.end(), std::greater<float>());
  top.resize(kmax);
  std::sort(top.begin(), top.end(), std::greater<float>());

  int64_t* idx_in = nullptr;
  CK(cudaMalloc(&idx_in, n * sizeof *idx_in));
  iota_i64_kernel<<<b.dev.sms * 8, 256, 0, b.stream>>>(idx_in, n);
  CK(cudaGetLastError());
  CK(cudaStreamSynchronize(b.stream));
  // The stream and the requirements as separate variables: nvcc 13.0 rejects a prop{} deduced
  // inside the env{} initialiser ("missing template arguments").
  const auto topk_stream = ::cuda::std::execution::prop{::cuda::get_stream_t{}, ::cuda::stream_ref{b.stream}};
  const auto topk_requirements = ::cuda::execution::require(::cuda::execution::determinism::not_guaranteed,
                                                            ::cuda::execution::output_ordering::unsorted);
  const auto topk_env = ::cuda::std::execution::env{topk_stream, topk_requirements};
  const int num_items = static_cast<int>(n);

  for (int k : ks) {
    if (static_cast<size_t>(k) > n) continue;  // not counted in b.total
    Result r = start_record(kTopkOp, n, 4.0 * n + 12.0 * k,
                            in.xf.policy() + "; the index array (8n B) is one buffer, not rotated",
                            topk_timed_region(k));
    float* keys_out = nullptr;
    int64_t* idx_out = nullptr;
    CK(cudaMalloc(&keys_out, k * sizeof *keys_out));
    CK(cudaMalloc(&idx_out, k * sizeof *idx_out));
    auto call = [&](void* temp, size_t& temp_bytes, auto* x) {
      return cub::DeviceTopK::MaxPairs(temp, temp_bytes, x, keys_out, idx_in, idx_out, num_items, k, topk_env);
    };
    auto setup = [&](size_t temp_bytes) {
      topk_params(r.params, k);
      r.params.kv("temp_storage_bytes", jint(static_cast<long long>(temp_bytes)));
      poison(keys_out, k, b.stream);
      poison(idx_out, k, b.stream);
    };
    auto check = [&](std::string& why, std::string& what) {
      what = "the k keys, sorted descending on the host, equal the k largest inputs (host nth_element); every "
             "index in [0, n), none repeated, and the input at each index equals its key (output unordered; "
             "which of the inputs tied at the k-th value come back is not checked)";
      std::vector<float> keys = to_host(keys_out, k);
      std::vector<int64_t> idx = to_host(idx_out, k);
      for (int j = 0; j < k; ++j) {
        if (idx[j] < 0 || static_cast<size_t>(idx[j]) >= n) {
          why = fmt("index[%d] = %lld, outside [0, %zu)", j, static_cast<long long>(idx[j]), n);
          return false;
        }
        if (!(in.hf[idx[j]] == keys[j])) {
          why = fmt("key[%d] = %.9g, but the input at its index %lld is %.9g", j, double(keys[j]),
                    static_cast<long long>(idx[j]), double(in.hf[idx[j]]));
          return false;
        }
      }
      std::sort(idx.begin(), idx.end());
      for (int j = 1; j < k; ++j)
        if (idx[j] == idx[j - 1]) {
          why = fmt("index %lld comes back twice", static_cast<long long>(idx[j]));
          return false;
        }
      std::sort(keys.begin(), keys.end(), std::greater<float>());
      for (int j = 0; j < k; ++j)
        if (!(keys[j] == top[j])) {
          why = fmt("the %d-th largest key returned is %.9g, the %d-th largest input %.9g", j + 1,
                    double(keys[j]), j + 1, double(top[j]));
          return false;
        }
      return true;
    };
    run_cub(b, r, in.xf, call, setup, check);
    CK(cudaFree(keys_out));
    CK(cudaFree(idx_out));
  }
  CK(cudaFree(idx_in));
}
#endif

int main(int argc, char** argv) {
  Bench b;
  b.opt = parse_args(argc, argv);
  drop_absent_ops(b.opt);
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
      .kv("cccl", jstr(cccl_release()))
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
                         "counts; median, min and max over iters, every call in samples_us"))
      .kv("input_i32", jstr("int32 in [-9, 9]: splitmix64(i ^ seed) % 19 - 9, generated on the device"))
      .kv("input_f32", jstr("float32 in [-0.5, 0.5): (splitmix64(i ^ seed) >> 40) * 2^-24 - 0.5, "
                            "generated on the device"));
  std::fprintf(b.out, "%s\n", Obj().kv("impl", jstr("cub")).kv("meta", meta.str()).str().c_str());
  std::fflush(b.out);
  std::fprintf(stderr, "cub_bench: %s, %d SMs, L2 %lld B, driver %s, runtime %s, CCCL %s\n",
               d.name.c_str(), d.sms, d.l2_bytes, d.driver.c_str(), ver(d.runtime).c_str(),
               cccl_release().c_str());

  // Count records for the progress note.
  for (int lg : o.log2_sizes)
    for (auto& op : o.ops) {
      if (op == kTopkOp) {
        if (topk_size(o, lg))
          for (int k : o.topk_ks) b.total += (size_t(1) << lg) >= static_cast<size_t>(k);
        continue;
      }
      b.total += op.rfind("cub_segreduce", 0) == 0 ? static_cast<int>(o.seg_lens.size())
                 : op == "cub_histogram_even_i32"  ? static_cast<int>(o.bins.size())
                                                   : 1;
    }

  // The ops that read the float input; every other op reads the int input.
  static const char* const kFloatOps[] = {"cub_reduce_sum_f32", "cub_segreduce_sum_f32", "cub_argmax_f32",
                                          "cub_exclusive_scan_f32", "cub_reduce_sum_f32_gpu_to_gpu",
                                          kTopkOp};
  auto reads_float = [&](const std::string& op) {
    for (const char* f : kFloatOps)
      if (op == f) return true;
    return false;
  };
  bool need_f = false, need_i = false;
  for (auto& op : o.ops) (reads_float(op) ? need_f : need_i) = true;

  for (int lg : o.log2_sizes) {
    const size_t n = size_t(1) << lg;
    SizeInputs in;
    make_inputs(b, in, n, need_i, need_f);
    for (auto& op : o.ops) {
      if (op == "memcpy_d2d") op_memcpy(b, in);
      else if (op == "read_ceiling_i32") op_read_ceiling(b, in);
      else if (op == "cub_reduce_sum_i32_i64") op_reduce_i64<int>(b, in);
      else if (op == "cub_reduce_sum_i32_i64_n64") op_reduce_i64<int64_t>(b, in);
      else if (op == "cub_reduce_sum_f32") op_reduce_f32(b, in);
      else if (op == "cub_exclusive_scan_i32_i64") op_scan<int>(b, in, false);
      else if (op == "cub_exclusive_scan_i32_i64_n64") op_scan<int64_t>(b, in, false);
      else if (op == "cub_inclusive_scan_i32_i64") op_scan<int>(b, in, true);
      else if (op == "cub_select_if_positive_i32") op_select(b, in);
      else if (op == "cub_segreduce_sum_f32")
        for (long long sl : o.seg_lens) op_segreduce<float>(b, in, sl);
      else if (op == "cub_segreduce_sum_i32_i64")
        for (long long sl : o.seg_lens) op_segreduce<long long>(b, in, sl);
      else if (op == "cub_histogram_even_i32")
        for (int bins : o.bins) op_histogram(b, in, bins);
      else if (op == "cub_argmax_f32") op_argmax(b, in);
      else if (op == "cub_exclusive_scan_i32") op_scan_same_type<int>(b, in);
      else if (op == "cub_exclusive_scan_f32") op_scan_same_type<float>(b, in);
#ifdef CUB_BENCH_HAS_GPU_TO_GPU
      else if (op == "cub_reduce_sum_f32_gpu_to_gpu") op_reduce_f32_gpu_to_gpu(b, in);
#endif
#ifdef CUB_BENCH_HAS_TOPK
      else if (op == kTopkOp) {
        if (topk_size(o, lg)) op_topk(b, in, o.topk_ks);
      }
#endif
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

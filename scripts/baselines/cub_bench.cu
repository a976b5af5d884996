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

// Layout: bench_support.cuh (errors, device-side inputs, read-ceiling kernel, device facts,
// JSON) <- bench_options.cuh (command line) <- bench_runner.cuh (rotation, check-then-time,
// records) <- bench_ops.cuh (one function per op); this file opens the device and runs the ops.

#include "bench_ops.cuh"

// ------------------------------------------------------------------------------------------------


// The CCCL release these headers are, "3.5.0" (CCCL_VERSION is major * 10^6 + minor * 10^3 + patch).
static std::string cccl_release() {
  return fmt("%d.%d.%d", CCCL_VERSION / 1000000, CCCL_VERSION / 1000 % 1000, CCCL_VERSION % 1000);
}

// Leaves out, by name, a requested op this CCCL lacks: no record, so the harness reports it absent.
static void drop_absent_ops(Options& o) {
#ifndef CUB_BENCH_HAS_GPU_TO_GPU
  for (size_t k = 0; k < o.ops.size();)
    if (o.ops[k] == "cub_reduce_sum_f32_gpu_to_gpu") {
      std::fprintf(stderr, "cub_bench: cub_reduce_sum_f32_gpu_to_gpu needs CCCL >= 3.5.0 (this build: %s); "
                           "no record\n", cccl_release().c_str());
      o.ops.erase(o.ops.begin() + static_cast<long>(k));
    } else {
      ++k;
    }
#else
  (void)o;
#endif
}

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
  for (size_t s = 0; s < o.log2_sizes.size(); ++s)
    for (auto& op : o.ops)
      b.total += op.rfind("cub_segreduce", 0) == 0 ? static_cast<int>(o.seg_lens.size())
                 : op == "cub_histogram_even_i32"  ? static_cast<int>(o.bins.size())
                                                   : 1;

  // The ops that read the float input; every other op reads the int input.
  static const char* const kFloatOps[] = {"cub_reduce_sum_f32", "cub_segreduce_sum_f32", "cub_argmax_f32",
                                          "cub_exclusive_scan_f32", "cub_reduce_sum_f32_gpu_to_gpu"};
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

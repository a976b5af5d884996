// cub_bench command line: options, the op list and their parsing.
// Part of cub_bench.cu (one translation unit: nvcc compiles cub_bench.cu, which includes
// these headers in order; each includes the one it builds on).
#pragma once

#include "bench_support.cuh"

// ------------------------------------------------------------------------------------------------
// Options

struct Options {
  std::string out;
  std::vector<int> log2_sizes;
  bool quick = false;
  std::vector<std::string> ops;
  std::vector<long long> seg_lens{1024};
  std::vector<int> bins{19};
  std::vector<int> topk_ks;  // the k of cub_topk_f32 (default 1,50,256,2048; with --quick 1,2048)
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
    "cub_exclusive_scan_i32",
    "cub_exclusive_scan_f32",
    "cub_reduce_sum_f32_gpu_to_gpu",
    "cub_reduce_sum_i32_i64_n64",
    "cub_exclusive_scan_i32_i64_n64",
    "cub_topk_f32",
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
               "                 [--seg-lens 32,1024,65536] [--bins 19,256,4096] [--topk-ks 1,50,256,2048]\n"
               "  --sizes     log2 of n (default 10,12,...,28; with --quick 10,16,20,24,28)\n"
               "  --quick     3 warm-ups and 20 runs (n < 2^24) or 10 runs (n >= 2^24)\n"
               "              instead of 5 warm-ups and 200 or 30 runs\n"
               "  --seg-lens  segment lengths for cub_segreduce_* (default 1024)\n"
               "  --bins      bin counts for cub_histogram_even_i32 over [-9, -9+bins) (default 19)\n"
               "  --topk-ks   k of cub_topk_f32, whole arrays from 2^20 (default 1,50,256,2048;\n"
               "              with --quick 1,2048 at 2^20 and 2^24 only)\n"
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
    } else if (a == "--topk-ks") {
      o.topk_ks.clear();
      for (auto& t : split(next())) {
        long long v = parse_int(t, "--topk-ks");
        if (v < 1 || v > (1ll << 30)) die("--topk-ks takes values in [1, 2^30], got ", t.c_str());
        o.topk_ks.push_back(static_cast<int>(v));
      }
      if (o.topk_ks.empty()) die("empty list argument");
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
  if (o.topk_ks.empty()) o.topk_ks = o.quick ? std::vector<int>{1, 2048} : std::vector<int>{1, 50, 256, 2048};
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

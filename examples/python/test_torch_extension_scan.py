"""A CUDA kernel built as a PyTorch extension (torch.utils.cpp_extension.
load_inline) and checked by primlab: an int32 -> int64 exclusive scan, one
block per 1024-item tile, then the tile totals scanned and added (three
launches). FOR THE GPU MACHINE: needs torch with CUDA and nvcc; NOT RUN in
this repository's CI (no GPU there), and the tests skip without them.

    pip install target/wheels/primlab-*.whl
    pytest examples/python/test_torch_extension_scan.py -v
"""

import pytest

import primlab

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device visible to torch", allow_module_level=True)
from torch.utils.cpp_extension import load_inline  # noqa: E402

CUDA = r"""
#include <torch/extension.h>

constexpr int TILE = 1024;

// Each block scans one tile in shared memory (Hillis-Steele, int64) and
// writes the tile's exclusive prefix and its total.
__global__ void tile_scan(const int* in, long long* out, long long* totals, long long n) {
    __shared__ long long s[TILE];
    long long i = (long long)blockIdx.x * TILE + threadIdx.x;
    long long v = i < n ? in[i] : 0;
    s[threadIdx.x] = v;
    __syncthreads();
    for (int d = 1; d < TILE; d *= 2) {
        long long add = threadIdx.x >= d ? s[threadIdx.x - d] : 0;
        __syncthreads();
        s[threadIdx.x] += add;
        __syncthreads();
    }
    if (i < n) out[i] = s[threadIdx.x] - v;
    if (threadIdx.x == TILE - 1) totals[blockIdx.x] = s[TILE - 1];
}

// One thread turns the tile totals into exclusive tile offsets.
__global__ void scan_totals(long long* totals, long long tiles) {
    long long run = 0;
    for (long long t = 0; t < tiles; ++t) { long long v = totals[t]; totals[t] = run; run += v; }
}

__global__ void add_offsets(long long* out, const long long* totals, long long n) {
    long long i = (long long)blockIdx.x * TILE + threadIdx.x;
    if (i < n) out[i] += totals[blockIdx.x];
}

torch::Tensor exclusive_scan(torch::Tensor in) {
    TORCH_CHECK(in.is_cuda() && in.scalar_type() == torch::kInt32 && in.dim() == 1, "int32 CUDA vector");
    auto n = in.numel();
    auto out = torch::empty({n}, in.options().dtype(torch::kInt64));
    long long tiles = (n + TILE - 1) / TILE;
    auto totals = torch::empty({tiles}, out.options());
    tile_scan<<<tiles, TILE>>>(in.data_ptr<int>(), out.data_ptr<int64_t>(), totals.data_ptr<int64_t>(), n);
    scan_totals<<<1, 1>>>(totals.data_ptr<int64_t>(), tiles);
    add_offsets<<<tiles, TILE>>>(out.data_ptr<int64_t>(), totals.data_ptr<int64_t>(), n);
    return out;
}
"""

extension = load_inline(
    name="primlab_example_scan",
    cpp_sources="torch::Tensor exclusive_scan(torch::Tensor in);",
    cuda_sources=CUDA,
    functions=["exclusive_scan"],
)


@primlab.cases(primitive="scan", contract="exclusive.i32")
def test_extension_scan(case):
    case.check(extension.exclusive_scan, device="cuda")


def test_extension_scan_large_sizes():
    # The tile boundaries and 2^20 + 1 in one call (raises with the summary on a failure).
    primlab.check(
        extension.exclusive_scan, primitive="scan", contract="exclusive.i32", sizes=[1023, 1024, 1025, 2**20 + 1], device="cuda"
    )

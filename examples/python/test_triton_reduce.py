"""A Triton int32 -> int64 sum checked by primlab under pytest, one test per
catalogue case. FOR THE GPU MACHINE: needs torch with CUDA and triton; NOT
RUN in this repository's CI (no GPU there), and every test here skips
without them. On the H200:

    pip install target/wheels/primlab-*.whl
    pytest examples/python/test_triton_reduce.py -v                 # every case passes
    PRIMLAB_PLANT_BUG=1 pytest examples/python/test_triton_reduce.py # the planted bug fails,
        # each failure with the harness's line, the mismatch summary and
        # `rerun: pytest --primlab-seed 0x... -k '<id>'`
"""

import os

import pytest

import primlab

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device visible to torch", allow_module_level=True)

BLOCK = 1024
# Planted bug for the demonstration: the last program's mask drops the last
# element (n - 1), the classic off-by-one of a tail guard.
PLANT_BUG = os.environ.get("PRIMLAB_PLANT_BUG") == "1"


@triton.jit
def partial_sums(x_ptr, out_ptr, n, BLOCK: tl.constexpr, BUG: tl.constexpr):
    # Each program sums BLOCK consecutive items in int64.
    pid = tl.program_id(0)
    offsets = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    limit = n - 1 if BUG else n
    x = tl.load(x_ptr + offsets, mask=offsets < limit, other=0).to(tl.int64)
    tl.store(out_ptr + pid, tl.sum(x, axis=0))


def triton_sum(x: "torch.Tensor") -> "torch.Tensor":
    """The int64 sum of int32 `x` (on the GPU) as a 1-element tensor."""
    bug = PLANT_BUG
    x = x.to(torch.int64) if x.numel() == 1 else x
    while x.numel() > 1:
        blocks = triton.cdiv(x.numel(), BLOCK)
        out = torch.empty(blocks, dtype=torch.int64, device=x.device)
        partial_sums[(blocks,)](x, out, x.numel(), BLOCK=BLOCK, BUG=bug)
        bug = False  # only the first pass drops an input
        x = out
    return x.reshape(1)


@primlab.cases(primitive="reduce", contract="sum.i32")
def test_triton_sum(case):
    case.check(triton_sum, device="cuda")

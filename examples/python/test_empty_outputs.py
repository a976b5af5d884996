"""Kernels that accumulate into an output made with `torch.empty`, a Triton
one and a torch one, fail `primlab.check` every time; the same kernels with
a cleared output pass every time, under all three runs (both poisons and
the perturbed run). FOR THE GPU MACHINE: needs torch with CUDA and triton;
NOT RUN in this repository's CI (no GPU there), and every test here skips
without them. On the H200:

    pip install target/wheels/primlab-*.whl
    pytest examples/python/test_empty_outputs.py -v -s

Without the poison, `torch.empty` memory is often the zeros of a fresh
allocation or an earlier tensor's leftovers, so such a kernel passes or
fails by the luck of the allocator; primlab.check fills torch's cached free
blocks with the run's poison before each call.
"""

import os
import time

import pytest

import primlab

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device visible to torch", allow_module_level=True)

BLOCK = 1024
# Fresh seeds per kernel: "every time" is this many checks, each of the whole default catalogue.
REPEATS = int(os.environ.get("PRIMLAB_REPEATS", "5"))


@triton.jit
def sum_into(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # Each program adds its block's int64 sum into out[0] (an atomic add:
    # out[0] must start at zero).
    pid = tl.program_id(0)
    offsets = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets, mask=offsets < n, other=0).to(tl.int64)
    tl.atomic_add(out_ptr, tl.sum(x, axis=0))


def triton_sum(make_output):
    def run(x):
        out = make_output(1, dtype=torch.int64, device=x.device)
        sum_into[(triton.cdiv(x.numel(), BLOCK),)](x, out, x.numel(), BLOCK=BLOCK)
        return out

    return run


def torch_sum(make_output):
    def run(x):
        out = make_output(1, dtype=torch.int64, device=x.device)
        out += x.sum(dtype=torch.int64)  # accumulates into whatever `out` held
        return out

    return run


KERNELS = {"triton": triton_sum, "torch": torch_sum}


@pytest.mark.parametrize("framework", sorted(KERNELS))
def test_accumulating_into_torch_empty_fails_every_time(framework):
    fn = KERNELS[framework](torch.empty)
    for attempt in range(REPEATS):
        started = time.monotonic()
        with pytest.raises(AssertionError) as raised:
            primlab.check(fn, primitive="reduce", contract="sum.i32", device="cuda")
        first = str(raised.value).splitlines()
        print(f"{framework} torch.empty, check {attempt + 1}: {time.monotonic() - started:.1f} s: {first[0]}\n    {first[1]}")


@pytest.mark.parametrize("framework", sorted(KERNELS))
def test_the_same_kernel_with_a_cleared_output_passes_every_time(framework):
    fn = KERNELS[framework](torch.zeros)
    for attempt in range(REPEATS):
        started = time.monotonic()
        result = primlab.check(fn, primitive="reduce", contract="sum.i32", device="cuda")
        assert result.runs == ("first run", "second run", "perturbed run"), result
        assert result.notes == (), result
        print(f"{framework} torch.zeros, check {attempt + 1}: {time.monotonic() - started:.1f} s: {result}")

"""PyTorch's own ops checked under typed contracts (reduce, scan and arg
reduction over the type and operator they compute): `torch.cumsum` over
float32 and bfloat16 (float32 out), `torch.sum` of bfloat16 in float32,
`torch.cummax` over int32, a wrapping int32 cumsum, and `torch.argmax` over
bfloat16 under PyTorch's NaN rule, float16 cumsum (which misses a float32
accumulator's bound and is judged as a float16 accumulation) and sum, and an
argmax over uint32 data widened to int64. Float sums are judged by the order-free
bound of their accumulator. A shifted cumsum fails with a line naming the
typed contract. FOR THE GPU MACHINE: needs torch with CUDA; NOT RUN in this
repository's CI (no GPU there), and every test skips without it.

    pip install target/wheels/primlab-*.whl
    pytest examples/python/test_torch_typed.py -v
"""

import pytest

import primlab

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device visible to torch", allow_module_level=True)

SIZES = [1, 33, 1000, 4099, 262145]
SEED = 0x5EED


def test_torch_cumsum_over_float32_and_bfloat16_passes_the_order_free_bound():
    result = primlab.check(
        lambda x: torch.cumsum(x, 0), primitive="scan", contract="inclusive", op="sum", dtype_in="float32",
        sizes=SIZES, device="cuda", seed=SEED,
    )
    assert result.contract == "inclusive.sum.f32.f32"
    primlab.check(
        lambda x: torch.cumsum(x, 0, dtype=torch.float32), primitive="scan", contract="inclusive", op="sum",
        dtype_in="bfloat16", dtype_out="float32", sizes=SIZES, device="cuda", seed=SEED,
    )


def test_a_shifted_cumsum_fails_naming_the_typed_contract():
    def shifted(x):
        return torch.cat([torch.zeros(1, device=x.device), torch.cumsum(x, 0)])[1:]

    with pytest.raises(AssertionError, match=r"exclusive\.sum\.f32\.f32"):
        primlab.check(
            shifted, primitive="scan", contract="exclusive", op="sum", dtype_in="float32",
            sizes=SIZES, device="cuda", seed=SEED,
        )


def test_torch_sum_of_bfloat16_in_float32_passes():
    primlab.check(
        lambda x: torch.sum(x, dtype=torch.float32).reshape(1), primitive="reduce", op="sum", dtype_in="bfloat16",
        dtype_out="float32", sizes=SIZES, device="cuda", seed=SEED,
    )


def test_torch_integer_scans_are_exact():
    primlab.check(
        lambda x: torch.cummax(x, 0).values, primitive="scan", contract="inclusive.max.i32.i32",
        sizes=SIZES, device="cuda", seed=SEED,
    )
    primlab.check(
        lambda x: torch.cumsum(x, 0, dtype=torch.int32), primitive="scan", contract="inclusive.sum.i32.i32",
        sizes=SIZES, device="cuda", seed=SEED,
    )


def test_torch_argmax_over_bfloat16_passes_under_torchs_nan_rule():
    result = primlab.check(
        lambda x: torch.argmax(x).reshape(1), primitive="arg_reduce", contract="argmax", dtype_in="bfloat16",
        framework="torch", sizes=SIZES, device="cuda", seed=SEED,
    )
    assert result.contract == "argmax.bf16.nan_first"


def test_torch_float16_cumsum_is_not_a_float32_accumulation():
    # Seen on the H200 (torch 2.11, 2026-12-05): torch.cumsum over float16 on CUDA
    # misses the bound of a float32 accumulator rounded once to float16 (n = 33:
    # prefix 4 off by 6.1e-4 where 3.0e-4 is allowed), so it does not accumulate
    # in float32. Stated as a float16 accumulator, the order-free bound of
    # float16 holds any order of float16 adds.
    with pytest.raises(AssertionError, match=r"inclusive\.sum\.f16\.f16 .*float32 accumulator"):
        primlab.check(
            lambda x: torch.cumsum(x, 0), primitive="scan", contract="inclusive", op="sum", dtype_in="float16",
            dtype_out="float16", sizes=SIZES, device="cuda", seed=SEED,
        )
    result = primlab.check(
        lambda x: torch.cumsum(x, 0), primitive="scan", contract="inclusive", op="sum", dtype_in="float16",
        dtype_out="float16", accumulator="float16", sizes=SIZES, device="cuda", seed=SEED,
    )
    assert result.contract == "inclusive.sum.f16.f16.acc_f16"


def test_torch_sum_of_float16_passes():
    primlab.check(
        lambda x: torch.sum(x).reshape(1), primitive="reduce", op="sum", dtype_in="float16", dtype_out="float16",
        sizes=SIZES, device="cuda", seed=SEED,
    )


def test_uint32_data_reaches_torch_and_an_argmax_through_int64_passes():
    # uint32 arrives as torch.uint32; widened to int64 (which holds it) the argmax is exact.
    primlab.check(
        lambda x: torch.argmax(x.to(torch.int64)).reshape(1), primitive="arg_reduce", contract="argmax.u32",
        sizes=SIZES, device="cuda", seed=SEED,
    )

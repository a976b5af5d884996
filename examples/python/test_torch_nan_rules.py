"""The NaN rules of typed float contracts, judged on PyTorch's own ops on the
GPU: `torch.amax` and `torch.cummax` propagate NaN (they pass
`.nan_propagate`, which `framework="torch"` picks, and fail `.nan_ignored`);
a max that drops NaN (NaN filtered out first, as `fmaxf` folds) fails
PyTorch's rule; `x[x > 0]` passes `positive.<float>` while a compaction that
keeps NaN fails it; a histogram whose bin formula lets NaN into bin 0 fails.
Each failure line names the rule. FOR THE GPU MACHINE: needs torch with
CUDA; NOT RUN in this repository's CI (no GPU there), and every test skips
without it.

    pip install target/wheels/primlab-*.whl
    pytest examples/python/test_torch_nan_rules.py -v
"""

import pytest

import primlab

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device visible to torch", allow_module_level=True)

SIZES = [1, 33, 1000, 4099, 262145]
SEED = 0x4A4E


def check(fn, primitive, nan_rule=None, dtype="float32", **kw):
    return primlab.check(
        fn, primitive=primitive, dtype_in=dtype, nan_rule=nan_rule, sizes=SIZES, device="cuda", seed=SEED, **kw
    )


def amax(x):
    return torch.amax(x).reshape(1)


def nan_dropping_max(x):
    """The largest value that is not NaN (-inf when there is none): fmaxf's rule."""
    kept = x[~torch.isnan(x)]
    if kept.numel() == 0:
        return torch.full((1,), float("-inf"), dtype=x.dtype, device=x.device)
    return torch.amax(kept).reshape(1)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_torch_amax_passes_torchs_nan_rule_and_a_nan_dropping_max_fails_it(dtype):
    result = check(amax, "reduce", op="max", framework="torch", dtype=dtype)
    assert result.contract.endswith(".nan_propagate")
    with pytest.raises(AssertionError, match=r"NaN rule: nan_ignored"):
        check(amax, "reduce", "nan_ignored", op="max", dtype=dtype)
    with pytest.raises(AssertionError, match=r"NaN rule: nan_propagate"):
        check(nan_dropping_max, "reduce", "nan_propagate", op="max", dtype=dtype)
    check(nan_dropping_max, "reduce", "nan_ignored", op="max", dtype=dtype)


def test_torch_cummax_propagates_nan_through_every_later_prefix():
    check(lambda x: torch.cummax(x, 0).values, "scan", "nan_propagate", op="max", contract="inclusive")
    with pytest.raises(AssertionError, match=r"NaN rule: nan_ignored"):
        check(lambda x: torch.cummax(x, 0).values, "scan", "nan_ignored", op="max", contract="inclusive")


def positive(keep):
    def compact(x):
        kept = keep(x)
        return x[kept], torch.count_nonzero(kept).reshape(1).to(torch.int64)

    return compact


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16", "float64"])
def test_torch_compaction_keeping_nan_fails_positive(dtype):
    check(positive(lambda x: x > 0), "compact", contract="positive", dtype=dtype)
    with pytest.raises(AssertionError, match=r"NaN rule: not > 0: dropped"):
        check(positive(lambda x: ~(x <= 0)), "compact", contract="positive", dtype=dtype)


def histogram(lets_nan_in):
    """The float32 formula of the typed half-precision histogram; with
    `lets_nan_in` the range test is "not out of range", which NaN passes,
    and the NaN bin, made an integer, is clamped into bin 0."""

    def counts(x, bins, lower, upper, scale):
        xs = x.to(torch.float32)
        if lets_nan_in:
            inside = ~((xs < lower) | (xs >= upper))
        else:
            inside = (xs >= lower) & (xs < upper)
        t = (xs[inside] - lower) * scale
        at = torch.nan_to_num(t, nan=0.0).to(torch.int64).clamp(0, int(bins) - 1)
        return torch.bincount(at, minlength=int(bins)).to(torch.int32)

    return counts


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_a_histogram_that_bins_nan_fails_naming_the_rule(dtype):
    check(histogram(False), "histogram", contract="even", dtype=dtype)
    with pytest.raises(AssertionError, match=r"NaN rule: counted nowhere"):
        check(histogram(True), "histogram", contract="even", dtype=dtype)

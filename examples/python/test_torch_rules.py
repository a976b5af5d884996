"""PyTorch's own ops checked under the named rules that state PyTorch's
behaviour, and under ours: `torch.softmax` gives NaN for a row whose every
logit is -inf, `torch.histc` counts a sample equal to `max` in the last bin,
and `torch.argmax` returns the first NaN. Each passes its named rule and
fails our contract with a line naming the rule it would pass (argmax: our
contract holds finite inputs only, where both rules agree, so it passes
both). FOR THE GPU MACHINE: needs torch with CUDA; NOT RUN in this
repository's CI (no GPU there), and every test skips without it.

    pip install target/wheels/primlab-*.whl
    pytest examples/python/test_torch_rules.py -v
"""

import pytest

import primlab

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device visible to torch", allow_module_level=True)

SIZES = [1, 33, 1000, 4099]


def softmax(x, rows, cols):
    return torch.softmax(x.view(rows, cols), dim=-1).view(-1)


def histc_i32(x, bins, lower, upper):
    # torch.histc takes floats; every int32 sample of these cases is exact in float64.
    return torch.histc(x.double(), bins=int(bins), min=int(lower), max=int(upper)).to(torch.int32)


def argmax(x):
    return torch.argmax(x).reshape(1)


def test_torch_softmax_passes_its_rule_and_fails_ours_naming_it():
    primlab.check(softmax, primitive="softmax", contract="rows.f32.all_masked_nan", device="cuda", seed=0x5EED)
    with pytest.raises(AssertionError) as raised:
        primlab.check(softmax, primitive="softmax", contract="rows.f32", device="cuda", seed=0x5EED)
    assert "would pass under rows.f32.all_masked_nan" in str(raised.value)


def test_torch_histc_passes_the_closed_last_bin_and_fails_ours_naming_it():
    primlab.check(histc_i32, primitive="histogram", contract="even.i32.last_bin_closed", sizes=SIZES, device="cuda", seed=0x5EED)
    with pytest.raises(AssertionError) as raised:
        primlab.check(histc_i32, primitive="histogram", contract="even.i32", sizes=SIZES, device="cuda", seed=0x5EED)
    assert "would pass under even.i32.last_bin_closed" in str(raised.value)


def test_torch_argmax_passes_nan_first_and_ours():
    primlab.check(argmax, primitive="arg_reduce", contract="argmax.f32.nan_first", sizes=SIZES, device="cuda", seed=0x5EED)
    primlab.check(argmax, primitive="arg_reduce", contract="argmax.f32", sizes=SIZES, device="cuda", seed=0x5EED)

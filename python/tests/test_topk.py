"""Top-k from Python: a NumPy top-k that keeps equal values in index order (a
stable sort) passes the contracts, largest and smallest, float32 and bfloat16;
one whose equal values come out highest index first fails with a line that
names the contract and the case. A NumPy top-k sampler in float32 (PyTorch's
recipe) passes both sampler contracts; one whose temperature divides the
exponential instead of the logit fails, naming the row whose draw moved."""

import numpy as np
import pytest

import primlab

SEED = 0x7E57
SIZES = [1, 33, 1000]


def stable_topk(largest, ties_high_first=False):
    """A NumPy top-k of each row: a stable argsort of the row (negated for
    the largest), so equal values keep their index order; with
    `ties_high_first` the row is reversed first, which puts the HIGHEST index
    first among equals (the bug)."""

    def topk(x, rows, cols, k):
        m = x.reshape(rows, cols)
        wide = m.astype(np.float32) if m.dtype == np.float32 else (m.astype(np.uint32) << 16).view(np.float32)
        keys = -wide if largest else wide
        if ties_high_first:
            order = cols - 1 - np.argsort(keys[:, ::-1], axis=1, kind="stable")[:, :k]
        else:
            order = np.argsort(keys, axis=1, kind="stable")[:, :k]
        values = np.take_along_axis(m, order, axis=1)
        return values.reshape(-1), order.reshape(-1).astype(np.int64)

    return topk


@pytest.mark.parametrize("contract, largest", [("largest.f32", True), ("smallest.f32", False), ("largest.bf16", True)])
def test_a_stable_numpy_topk_passes(contract, largest):
    result = primlab.check(stable_topk(largest), primitive="topk", contract=contract, sizes=SIZES, seed=SEED)
    assert result.contract == contract
    assert result.cases_passed > 100, str(result)


def test_equal_values_highest_index_first_fail_naming_the_contract():
    with pytest.raises(AssertionError, match=r"topk/user\.largest\.f32 .*family=topk_(ties|signed_zeros|all_equal)"):
        primlab.check(
            stable_topk(True, ties_high_first=True), primitive="topk", contract="largest.f32", sizes=SIZES, seed=SEED
        )


def numpy_sampler(temperature_after_exp=False, with_probability=True):
    """A NumPy top-k sampler, as PyTorch's recipe: a stable argsort of the negated row for the
    k largest, weights exp((v - max) / T) in float32, a running sum, and the first survivor
    whose running sum exceeds u * total; with `temperature_after_exp` the weights are
    exp(v - max) / T (the bug: T cancels)."""

    def sample(x, uniforms, rows, cols, k, temperature):
        m = x.reshape(rows, cols).astype(np.float32)
        order = np.argsort(-m, axis=1, kind="stable")[:, :k]
        top = np.take_along_axis(m, order, axis=1)
        shift = (top - top[:, :1]).astype(np.float32)
        t = np.float32(temperature)
        w = np.exp(shift) / t if temperature_after_exp else np.exp(shift / t)
        running = np.cumsum(w, axis=1, dtype=np.float32)
        total = running[:, -1:]
        j = np.minimum((running <= uniforms.reshape(rows, 1) * total).sum(axis=1), k - 1)
        samples = order[np.arange(rows), j].astype(np.int64)
        if not with_probability:
            return samples
        return samples, (w[np.arange(rows), j] / total[:, 0]).astype(np.float32)

    return sample


@pytest.mark.parametrize("contract", ["sample.f32", "sample_with_probability.f32"])
def test_a_numpy_sampler_passes(contract):
    fn = numpy_sampler(with_probability=contract.startswith("sample_with"))
    result = primlab.check(fn, primitive="topk", contract=contract, sizes=SIZES, seed=SEED)
    assert result.cases_passed > 20, str(result)


def test_a_sampler_whose_temperature_cancels_fails_naming_the_row():
    with pytest.raises(AssertionError, match=r"topk/user\.sample\.f32 .*check=draw of row \d+"):
        primlab.check(
            numpy_sampler(temperature_after_exp=True, with_probability=False),
            primitive="topk",
            contract="sample.f32",
            sizes=SIZES,
            seed=SEED,
        )

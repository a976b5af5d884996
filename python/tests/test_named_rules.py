"""Named rules from Python: numpy's own functions follow the frameworks'
rules (NaN wins an argmax, an all-masked softmax row is NaN, the last bin
of a histogram is closed), so each passes the contract named for its rule
and fails ours with a line that names the rule it would pass."""

import numpy as np
import pytest

import primlab

SEED = 0x5EED
SIZES = [1, 33, 1000]


def numpy_argmax(x):
    return np.array([np.argmax(x)], dtype=np.int64)


def numpy_nanargmax(x):
    """NaN skipped (numpy.nanargmax), not NaN first."""
    if np.isnan(x).all():
        return np.array([0], dtype=np.int64)
    return np.array([np.nanargmax(x)], dtype=np.int64)


def numpy_softmax(x, rows, cols):
    """In float64, as numpy computes it: a row of -inf logits gives NaN (-inf - -inf)."""
    s = x.astype(np.float64).reshape(rows, cols)
    with np.errstate(invalid="ignore"):
        e = np.exp(s - s.max(axis=1, keepdims=True))
        return (e / e.sum(axis=1, keepdims=True)).astype(np.float32).reshape(-1)


def numpy_histogram(x, bins, lower, upper):
    counts, _ = np.histogram(x, bins=int(bins), range=(int(lower), int(upper)))
    return counts.astype(np.int32)


def test_numpy_argmax_passes_nan_first_and_nanargmax_fails_it_by_name():
    result = primlab.check(numpy_argmax, primitive="arg_reduce", contract="argmax.f32.nan_first", sizes=SIZES, seed=SEED)
    assert result.cases_passed > 0
    with pytest.raises(AssertionError) as raised:
        primlab.check(numpy_nanargmax, primitive="arg_reduce", contract="argmax.f32.nan_first", sizes=SIZES, seed=SEED)
    message = str(raised.value)
    assert "FAIL arg_reduce/user.argmax.f32.nan_first" in message
    assert "family=nan_" in message


def test_numpy_nanargmin_passes_nan_ignored_and_argmin_fails_it():
    def numpy_nanargmin(x):
        return np.array([np.nanargmin(x)], dtype=np.int64)

    def numpy_argmin(x):
        return np.array([np.argmin(x)], dtype=np.int64)

    result = primlab.check(numpy_nanargmin, primitive="arg_reduce", contract="argmin.f32.nan_ignored", sizes=SIZES, seed=SEED)
    assert result.cases_passed > 0
    with pytest.raises(AssertionError) as raised:
        primlab.check(numpy_argmin, primitive="arg_reduce", contract="argmin.f32.nan_ignored", sizes=SIZES, seed=SEED)
    assert "FAIL arg_reduce/user.argmin.f32.nan_ignored" in str(raised.value)


def test_numpy_softmax_passes_the_nan_rule_and_fails_ours_naming_it():
    sizes = [1, 33]
    result = primlab.check(numpy_softmax, primitive="softmax", contract="rows.f32.all_masked_nan", sizes=sizes, seed=SEED)
    assert result.cases_passed > 0
    with pytest.raises(AssertionError) as raised:
        primlab.check(numpy_softmax, primitive="softmax", contract="rows.f32", sizes=sizes, seed=SEED)
    assert "would pass under rows.f32.all_masked_nan" in str(raised.value)


def test_numpy_histogram_passes_the_closed_last_bin_and_fails_ours_naming_it():
    result = primlab.check(numpy_histogram, primitive="histogram", contract="even.i32.last_bin_closed", sizes=SIZES, seed=SEED)
    assert result.cases_passed > 0
    with pytest.raises(AssertionError) as raised:
        primlab.check(numpy_histogram, primitive="histogram", contract="even.i32", sizes=SIZES, seed=SEED)
    assert "would pass under even.i32.last_bin_closed" in str(raised.value)


def test_a_framework_checks_the_contract_as_it_states_it():
    result = primlab.check(numpy_argmax, primitive="arg_reduce", contract="argmax.f32", framework="numpy", sizes=SIZES, seed=SEED)
    assert result.contract == "argmax.f32.nan_first"
    with pytest.raises(AssertionError) as raised:
        primlab.check(numpy_nanargmax, primitive="arg_reduce", contract="argmax.f32", framework="numpy", sizes=SIZES, seed=SEED)
    assert "primlab: arg_reduce argmax.f32.nan_first:" in str(raised.value)
    assert "contract='argmax.f32.nan_first'" in str(raised.value)
    with pytest.raises(ValueError) as refused:
        primlab.check(numpy_argmax, primitive="arg_reduce", contract="argmax.f32", framework="jax", sizes=SIZES, seed=SEED)
    assert "unknown framework 'jax'" in str(refused.value)

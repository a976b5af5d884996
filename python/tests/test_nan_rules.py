"""NaN rules of typed float contracts from Python: NumPy's max (NaN
propagates) passes `.nan_propagate` and fails `.nan_ignored`; its fmax and
nanmax (NaN skipped) the other way round; `x[x > 0]` passes `positive.<float>`
and a compaction that keeps NaN fails it; a half-precision histogram that
bins NaN fails. Each failure line names the rule."""

import warnings

import numpy as np
import pytest

import primlab

SEED = 0x4A4E
SIZES = [1, 33, 1000]


def bf16_to_f32(bits):
    """bfloat16 raw bits (as the harness stores them) to float32, exactly."""
    return (bits.astype(np.uint32) << 16).view(np.float32)


def nanmax(x):
    """numpy.nanmax, quiet about inputs of NaN only (it gives NaN there)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmax(x)


def reduce_by(fold):
    return lambda x: np.array([fold(x)], dtype=x.dtype)


def exclusive_by(accumulate, identity):
    def scan(x):
        running = accumulate(x)
        return np.concatenate([np.array([identity], dtype=x.dtype), running[:-1]]).astype(x.dtype)

    return scan


def segments_by(fold, identity):
    def segmented(x, offsets, segments):
        out = [fold(x[offsets[s] : offsets[s + 1]]) if offsets[s + 1] > offsets[s] else identity for s in range(int(segments))]
        return np.array(out, dtype=x.dtype)

    return segmented


def check(fn, primitive, nan_rule, dtype="float32", contract=None, op="max"):
    return primlab.check(
        fn, primitive=primitive, contract=contract, op=op, dtype_in=dtype, nan_rule=nan_rule, sizes=SIZES, seed=SEED
    )


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
def test_numpy_max_propagates_nan_and_fmax_ignores_it(dtype):
    result = check(reduce_by(np.max), "reduce", "nan_propagate", dtype)
    assert result.contract.endswith(".nan_propagate")
    with pytest.raises(AssertionError, match=r"NaN rule: nan_ignored"):
        check(reduce_by(np.max), "reduce", "nan_ignored", dtype)
    check(reduce_by(np.fmax.reduce), "reduce", "nan_ignored", dtype)
    check(reduce_by(nanmax), "reduce", "nan_ignored", dtype)
    with pytest.raises(AssertionError, match=r"NaN rule: nan_propagate"):
        check(reduce_by(nanmax), "reduce", "nan_propagate", dtype)


def test_running_and_segment_maxima_follow_the_same_rules():
    check(np.maximum.accumulate, "scan", "nan_propagate", contract="inclusive")
    check(np.fmax.accumulate, "scan", "nan_ignored", contract="inclusive")
    with pytest.raises(AssertionError, match=r"NaN rule: nan_ignored"):
        check(np.maximum.accumulate, "scan", "nan_ignored", contract="inclusive")
    check(exclusive_by(np.minimum.accumulate, np.inf), "scan", "nan_propagate", contract="exclusive", op="min")
    with pytest.raises(AssertionError, match=r"NaN rule: nan_propagate"):
        check(exclusive_by(np.fmin.accumulate, np.inf), "scan", "nan_propagate", contract="exclusive", op="min")
    check(segments_by(np.max, -np.inf), "segmented_reduce", "nan_propagate", dtype="float64")
    check(segments_by(np.fmax.reduce, -np.inf), "segmented_reduce", "nan_ignored", dtype="float64")
    with pytest.raises(AssertionError, match=r"NaN rule: nan_ignored"):
        check(segments_by(np.max, -np.inf), "segmented_reduce", "nan_ignored", dtype="float64")


def test_framework_numpy_makes_a_float_max_nan_propagating():
    result = primlab.check(
        reduce_by(np.max), primitive="reduce", op="max", dtype_in="float64", framework="numpy", sizes=SIZES, seed=SEED
    )
    assert result.contract == "max.f64.f64.nan_propagate"


def positive(keep):
    def compact(x):
        values = bf16_to_f32(x) if x.dtype == np.uint16 else x
        kept = keep(values)
        return x[kept], np.array([np.count_nonzero(kept)], dtype=np.int64)

    return compact


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "bfloat16"])
def test_numpy_compaction_by_x_gt_0_passes_positive_and_one_keeping_nan_fails(dtype):
    result = primlab.check(
        positive(lambda v: v > 0), primitive="compact", contract="positive", dtype_in=dtype, sizes=SIZES, seed=SEED
    )
    assert result.contract.startswith("positive.")
    with pytest.raises(AssertionError, match=r"NaN rule: not > 0: dropped"):
        primlab.check(
            positive(lambda v: ~(v <= 0)), primitive="compact", contract="positive", dtype_in=dtype, sizes=SIZES, seed=SEED
        )


def histogram(lets_nan_in):
    """The float32 formula of the typed float16 histogram; `lets_nan_in`
    tests "not out of range", which NaN passes (it then lands in bin 0)."""

    def counts(x, bins, lower, upper, scale):
        xs = x.astype(np.float32)
        with np.errstate(invalid="ignore"):
            inside = ~((xs < lower) | (xs >= upper)) if lets_nan_in else (xs >= lower) & (xs < upper)
            t = (xs[inside] - np.float32(lower)) * np.float32(scale)
            at = np.clip(np.nan_to_num(t, nan=0.0).astype(np.int64), 0, int(bins) - 1)
        return np.bincount(at, minlength=int(bins)).astype(np.int32)

    return counts


def test_a_float16_histogram_that_bins_nan_fails_naming_the_rule():
    primlab.check(histogram(False), primitive="histogram", contract="even", dtype_in="float16", sizes=SIZES, seed=SEED)
    with pytest.raises(AssertionError, match=r"NaN rule: counted nowhere"):
        primlab.check(histogram(True), primitive="histogram", contract="even", dtype_in="float16", sizes=SIZES, seed=SEED)

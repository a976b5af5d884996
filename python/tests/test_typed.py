"""Typed contracts from Python: NumPy's own functions over float32, int32,
float64 and bfloat16 pass the contract their parts name (float sums judged
by the order-free bound of their accumulator), and planted bugs fail with a
line that names the contract checked."""

import numpy as np
import pytest

import primlab

SEED = 0x7E57
SIZES = [1, 33, 1000]


def bf16_to_f32(bits):
    """bfloat16 raw bits (as the harness stores them) to float32, exactly."""
    return (bits.astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16(x):
    """float32 to bfloat16 raw bits, rounded to nearest even."""
    b = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def test_a_float32_cumsum_passes_the_order_free_bound_and_a_shifted_one_fails():
    result = primlab.check(
        lambda x: np.cumsum(x, dtype=np.float32),
        primitive="scan",
        contract="inclusive",
        op="sum",
        dtype_in="float32",
        sizes=SIZES,
        seed=SEED,
    )
    assert result.contract == "inclusive.sum.f32.f32"
    assert "% of its bound" in result.closest and "closest to the bound" in str(result)
    with pytest.raises(AssertionError, match=r"scan/user\.exclusive\.sum\.f32\.f32 .*within the order-free bound"):
        primlab.check(
            lambda x: np.cumsum(x, dtype=np.float32),
            primitive="scan",
            contract="exclusive",
            op="sum",
            dtype_in="float32",
            sizes=SIZES,
            seed=SEED,
        )


def test_float16_and_uint32_contracts_judge_numpys_own_functions():
    # float16 in and out, accumulated in float32 and rounded once: passes the
    # order-free bound of its float32 accumulator (plus the output's rounding).
    result = primlab.check(
        lambda x: np.cumsum(x, dtype=np.float32).astype(np.float16),
        primitive="scan",
        contract="inclusive",
        op="sum",
        dtype_in="float16",
        dtype_out="float16",
        sizes=SIZES,
        seed=SEED,
    )
    assert result.contract == "inclusive.sum.f16.f16"
    # Accumulated in float16 itself: far outside a float32 accumulator's bound.
    with pytest.raises(AssertionError, match=r"scan/user\.inclusive\.sum\.f16\.f16 .*order-free bound"):
        primlab.check(
            lambda x: np.cumsum(x, dtype=np.float16),
            primitive="scan",
            contract="inclusive",
            op="sum",
            dtype_in="float16",
            dtype_out="float16",
            sizes=SIZES,
            seed=SEED,
        )
    # Stated as a float16 accumulator, the same function passes its bound.
    result = primlab.check(
        lambda x: np.cumsum(x, dtype=np.float16),
        primitive="scan",
        contract="inclusive",
        op="sum",
        dtype_in="float16",
        dtype_out="float16",
        accumulator="float16",
        sizes=SIZES,
        seed=SEED,
    )
    assert result.contract == "inclusive.sum.f16.f16.acc_f16"
    # uint32 sums wrap modulo 2^32; one saturated at 2^32 - 1 does not.
    primlab.check(
        lambda x: np.array([x.sum(dtype=np.uint32)], dtype=np.uint32),
        primitive="reduce",
        op="sum",
        dtype_in="uint32",
        sizes=SIZES,
        seed=SEED,
    )
    with pytest.raises(AssertionError, match=r"reduce/user\.sum\.u32\.u32 "):
        primlab.check(
            lambda x: np.array([min(int(x.sum(dtype=np.uint64)), 2**32 - 1)], dtype=np.uint32),
            primitive="reduce",
            op="sum",
            dtype_in="uint32",
            sizes=SIZES,
            seed=SEED,
        )


def test_an_int32_running_max_passes_and_a_wrapping_sum_is_exact():
    result = primlab.check(
        lambda x: np.maximum.accumulate(x),
        primitive="scan",
        contract="inclusive.max.i32.i32",
        sizes=SIZES,
        seed=SEED,
    )
    assert result.contract == "inclusive.max.i32.i32"
    primlab.check(
        lambda x: np.array([x.sum(dtype=np.int32)], dtype=np.int32),
        primitive="reduce",
        op="sum",
        dtype_in="int32",
        dtype_out="int32",
        sizes=SIZES,
        seed=SEED,
    )
    # Summed in int64 and clamped: not the wrapping sum the contract states.
    with pytest.raises(AssertionError, match=r"reduce/user\.sum\.i32\.i32 "):
        primlab.check(
            lambda x: np.array([np.clip(x.sum(dtype=np.int64), -(2**31), 2**31 - 1)], dtype=np.int32),
            primitive="reduce",
            op="sum",
            dtype_in="int32",
            dtype_out="int32",
            sizes=SIZES,
            seed=SEED,
        )


def test_a_bfloat16_sum_in_float32_passes_and_one_accumulated_in_bfloat16_fails():
    primlab.check(
        lambda x: np.array([bf16_to_f32(x).sum(dtype=np.float32)], dtype=np.float32),
        primitive="reduce",
        op="sum",
        dtype_in="bfloat16",
        dtype_out="float32",
        sizes=SIZES,
        seed=SEED,
    )

    def bf16_accumulator(x):
        acc = np.float32(0)
        for v in bf16_to_f32(x):
            acc = bf16_to_f32(f32_to_bf16(np.array([acc + v], dtype=np.float32)))[0]
        return np.array([acc], dtype=np.float32)

    with pytest.raises(AssertionError, match=r"sum\.bf16\.f32 .*float32 accumulator"):
        primlab.check(
            bf16_accumulator, primitive="reduce", op="sum", dtype_in="bfloat16", dtype_out="float32", sizes=SIZES, seed=SEED
        )


def test_numpys_argmax_over_float64_is_checked_under_its_nan_rule():
    result = primlab.check(
        lambda x: np.array([np.argmax(x)], dtype=np.int64),
        primitive="arg_reduce",
        contract="argmax",
        dtype_in="float64",
        framework="numpy",
        sizes=SIZES,
        seed=SEED,
    )
    assert result.contract == "argmax.f64.nan_first"


def test_bad_parts_raise_a_value_error_naming_them():
    with pytest.raises(ValueError, match=r"keeps ints or floats"):
        primlab.check(lambda x: x, primitive="scan", contract="inclusive", op="sum", dtype_in="float32", dtype_out="int32")
    with pytest.raises(ValueError, match=r"or a typed one by its parts"):
        primlab.check(lambda x: x, primitive="reduce")


def test_numpy_segment_sums_compaction_and_histograms_pass_their_typed_contracts():
    def segment_sums(x, offsets, segments):
        return np.array([x[offsets[s] : offsets[s + 1]].sum(dtype=np.float64) for s in range(int(segments))])

    primlab.check(segment_sums, primitive="segmented_reduce", op="sum", dtype_in="float64", sizes=SIZES, seed=SEED)
    primlab.check(
        lambda x, flags: (x[flags != 0], np.array([np.count_nonzero(flags)], dtype=np.int64)),
        primitive="compact",
        contract="flagged",
        dtype_in="float64",
        sizes=SIZES,
        seed=SEED,
    )

    def histogram(x, bins, lower, upper):
        counts, _ = np.histogram(x, bins=int(bins), range=(int(lower), int(upper)))
        return counts.astype(np.int32)

    # numpy.histogram closes the last bin. It bins in float64: over the wide int64 range (4096
    # bins of 2^52) a sample within about 2^11 of an edge could land in the next bin; the seed
    # is fixed and small sizes keep every sample far from one.
    result = primlab.check(
        histogram, primitive="histogram", contract="even", dtype_in="int64", framework="numpy", sizes=[1, 33], seed=SEED
    )
    assert result.contract == "even.i64.last_bin_closed"


def test_a_float64_histogram_by_the_double_formula_passes_and_one_binning_in_float32_fails():
    def histogram(x, bins, lower, upper, scale, in_float32=False):
        x = np.asarray(x, dtype=np.float64)
        inside = (lower <= x) & (x < upper)
        if in_float32:
            t = (x[inside].astype(np.float32) - np.float32(lower)) * np.float32(scale)
        else:
            t = (x[inside] - lower) * scale
        b = np.minimum(t.astype(np.int64), int(bins) - 1)
        return np.bincount(b, minlength=int(bins)).astype(np.int32)

    result = primlab.check(
        histogram, primitive="histogram", contract="even", dtype_in="float64", sizes=SIZES, seed=SEED
    )
    assert result.contract == "even.f64"
    assert result.cases_passed >= 12, str(result)
    # Rounding the samples to float32 moves those within float32's reach of an edge.
    with pytest.raises(AssertionError, match=r"histogram/user\.even\.f64 .*check=bin counts"):
        primlab.check(
            lambda x, bins, lower, upper, scale: histogram(x, bins, lower, upper, scale, in_float32=True),
            primitive="histogram",
            contract="even",
            dtype_in="float64",
            sizes=SIZES,
            seed=SEED,
        )


def test_a_numpy_softmax_of_strided_bfloat16_rows_passes_and_one_reading_the_padding_fails():
    def softmax(x, rows, cols, stride, contiguous=False):
        logits = bf16_to_f32(x).astype(np.float64)
        step = cols if contiguous else stride
        out = np.zeros((rows, cols))
        for r in range(int(rows)):
            row = logits[r * step : r * step + cols]
            m = row.max()
            if m == -np.inf:
                continue
            e = np.exp(row - m)
            out[r] = e / e.sum()
        return out.astype(np.float32).reshape(-1)

    primlab.check(softmax, primitive="softmax", contract="strided_rows", dtype_in="bfloat16", dtype_out="float32", seed=SEED)
    with pytest.raises(AssertionError, match=r"strided_rows\.bf16\.f32"):
        primlab.check(
            lambda x, rows, cols, stride: softmax(x, rows, cols, stride, contiguous=True),
            primitive="softmax",
            contract="strided_rows",
            dtype_in="bfloat16",
            dtype_out="float32",
            seed=SEED,
        )

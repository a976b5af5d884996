"""primlab.check against the real harness: correct numpy kernels pass,
planted bugs fail with the harness's failure line, a mismatch summary and a
rerun line, and bad input is refused by name."""

import re

import numpy as np
import pytest

import kernels
import primlab
from conftest import harness_cases

SEED = 0x5EED

def count(primitive, contract, sizes, seed=SEED):
    """Cases in the harness's own export (its data families per size may grow)."""
    return len(harness_cases(primitive, contract, sizes, seed))


def test_a_correct_exclusive_scan_passes_every_case():
    result = primlab.check(kernels.exclusive_scan, primitive="scan", contract="exclusive.i32", sizes=[1, 31, 32, 33, 513], seed=SEED)
    assert result.cases_passed == count("scan", "exclusive.i32", [1, 31, 32, 33, 513]) >= 5 * 5
    assert result.seed == SEED
    assert result.sizes == (1, 31, 32, 33, 513)
    assert f"{result.cases_passed} cases passed (seed 0x5eed)" in str(result)


def test_default_sizes_and_a_fresh_seed_that_is_returned():
    result = primlab.check(kernels.inclusive_scan, primitive="scan", contract="inclusive.i32")
    # The sweep's boundary sizes up to 2^20 are all there.
    assert {1, 31, 32, 33, 255, 256, 257, 511, 512, 513, 4099, 262144, 262145} <= set(result.sizes)
    assert max(result.sizes) <= 2**20
    assert result.cases_passed == count("scan", "inclusive.i32", result.sizes, result.seed)
    assert 0 <= result.seed < 2**64


def test_a_correct_sum_passes():
    result = primlab.check(kernels.sum_i32, primitive="reduce", contract="sum.i32", sizes=[1, 33, 4099], seed=SEED)
    assert result.cases_passed == count("reduce", "sum.i32", [1, 33, 4099])
    one = primlab.check(kernels.sum_i32, primitive="reduce", contract="sum.i32", sizes=33, seed=SEED)
    assert (one.sizes, one.cases_passed) == ((33,), count("reduce", "sum.i32", [33]))


def fields(line):
    return dict(re.findall(r"(\w+)=(\S+)", line))


def test_an_off_by_one_at_the_end_fails_with_the_line_the_summary_and_a_rerun():
    with pytest.raises(AssertionError) as raised:
        primlab.check(kernels.scan_off_by_one_at_the_end, primitive="scan", contract="exclusive.i32", sizes=[33], seed=SEED)
    message = str(raised.value)
    lines = message.splitlines()
    total = count("scan", "exclusive.i32", [33])
    assert lines[0] == f"primlab: scan exclusive.i32: {total} of {total} cases failed (run seed 0x5eed); the first:"
    assert lines[1].startswith("FAIL scan/user.exclusive.i32 n=33 seed=0x")
    f = fields(lines[1])
    assert (f["check"], f["index"], f["family"]) == ("prefix", "32", "small_ints")
    assert int(f["got"]) == int(f["expected"]) + 1
    # The harness's mismatch summary, under its line.
    assert lines[2] == "     mismatched elements of out: 1 / 33 (3.0%)"
    assert lines[3] == f"     first mismatches: [32] expected {f['expected']} got {f['got']}"
    assert lines[4] == "     greatest absolute difference: 1 at index 32"
    assert lines[-1] == "     rerun: primlab.check(fn, primitive='scan', contract='exclusive.i32', sizes=[33], seed=0x5eed)"
    # The rerun reproduces the same failure, input seed included.
    with pytest.raises(AssertionError) as again:
        primlab.check(kernels.scan_off_by_one_at_the_end, primitive="scan", contract="exclusive.i32", sizes=[33], seed=SEED)
    assert str(again.value) == message


def test_an_unwritten_last_element_fails_at_the_last_index():
    with pytest.raises(AssertionError) as raised:
        primlab.check(kernels.scan_last_element_unwritten, primitive="scan", contract="exclusive.i32", sizes=[1, 257, 4099], seed=SEED)
    lines = str(raised.value).splitlines()
    f = fields(lines[1])
    n = int(f["n"])
    assert n in (257, 4099), "n = 1 has no element past the loop's end"
    assert f["index"] == str(n - 1) and f["got"] == "0"
    assert lines[2] == f"     mismatched elements of out: 1 / {n} ({100 / n:.1f}%)"
    assert lines[3] == f"     first mismatches: [{n - 1}] expected {f['expected']} got 0"
    assert "seed=0x5eed)" in lines[-1]


def test_a_float_sum_within_the_bound_passes_and_one_percent_off_fails_with_its_error():
    primlab.check(kernels.float_sum_f32, primitive="float_reduce", contract="sum.f32", sizes=[1, 33, 4099], seed=SEED)
    with pytest.raises(AssertionError) as raised:
        primlab.check(kernels.float_sum_one_percent_high, primitive="float_reduce", contract="sum.f32", sizes=[33, 4099], seed=SEED)
    lines = str(raised.value).splitlines()
    assert lines[1].startswith("FAIL float_reduce/user.sum.f32 n=")
    assert lines[2] == "     mismatched elements of out: 1 / 1 (100.0%)"
    rel = float(re.search(r"greatest relative difference: (\S+) at index 0", "\n".join(lines)).group(1))
    assert abs(rel - 0.01) < 1e-5, lines  # 1.01 x, rounded once to float32
    assert any(line.startswith("     greatest absolute difference: ") for line in lines)


def test_a_two_output_contract_takes_a_tuple_and_params_arrive_by_name():
    def compact_positive(x):
        kept = x[x > 0]
        return kept, np.int64(len(kept))

    primlab.check(compact_positive, primitive="compact", contract="positive.i32", sizes=[1, 33, 513], seed=SEED)

    def segment_sums(x, offsets, segments):
        assert len(offsets) == segments + 1
        return np.array([x[offsets[s] : offsets[s + 1]].sum(dtype=np.int64) for s in range(segments)], dtype=np.int64)

    primlab.check(segment_sums, primitive="segmented_reduce", contract="sum.i32", sizes=[1, 33, 513], seed=SEED)


class DLPackOnly:
    """An array of another framework: only the DLPack protocol."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def test_inputs_through_convert_and_outputs_through_dlpack():
    seen = []

    def scan(x):
        seen.append(type(x))
        return DLPackOnly(kernels.exclusive_scan(np.from_dlpack(x)))

    # Device arrays (convert=) with no CUDA device through torch: neither defence could be
    # applied, so the check fails naming both, unless they are accepted by name.
    with pytest.raises(AssertionError) as raised:
        primlab.check(scan, primitive="scan", contract="exclusive.i32", sizes=[33], seed=SEED, convert=DLPackOnly)
    assert "poison (free device memory poisoned before each call): not applied to" in str(raised.value)
    assert "perturb (the perturbed run" in str(raised.value) and "no CUDA device" in str(raised.value)
    seen.clear()
    with pytest.warns(primlab.DefenceWarning, match=r"(poison|perturb) not applied \(allowed"):
        result = primlab.check(
            scan, primitive="scan", contract="exclusive.i32", sizes=[33], seed=SEED, convert=DLPackOnly,
            allow_missing_defences=("poison", "perturb"),
        )
    # Every case twice (both poisons); no CUDA device here, so no perturbed run, and the result says so.
    assert seen == [DLPackOnly] * 2 * count("scan", "exclusive.i32", [33])
    assert result.runs == ("first run", "second run")
    assert any(n.startswith("perturb not applied (allowed by allow_missing_defences)") and "no CUDA device" in n for n in result.notes)
    assert any(n.startswith("poison not applied (allowed by allow_missing_defences)") for n in result.notes)


def test_an_unknown_primitive_or_contract_is_refused_with_the_valid_names():
    with pytest.raises(ValueError, match=r"(?s)primitive='scanx'.*possible values: reduce, scan"):
        primlab.check(kernels.exclusive_scan, primitive="scanx", contract="exclusive.i32")
    with pytest.raises(ValueError, match=r"unknown contract 'exclusive\.f32' for primitive scan: choose from exclusive\.i32, inclusive\.i32"):
        primlab.check(kernels.exclusive_scan, primitive="scan", contract="exclusive.f32")
    with pytest.raises(ValueError, match=r"(?s)sizes=\[0\].*0 is not a size"):
        primlab.check(kernels.exclusive_scan, primitive="scan", contract="exclusive.i32", sizes=[0])


def test_a_wrong_dtype_is_named_with_the_case():
    with pytest.raises(TypeError) as raised:
        primlab.check(lambda x: kernels.exclusive_scan(x).astype(np.int32), primitive="scan", contract="exclusive.i32", sizes=[33], seed=SEED)
    message = str(raised.value)
    assert "scan exclusive.i32 case c00000 (n=33, family=small_ints, input seed 0x" in message
    assert "run seed 0x5eed): output 'out' is int32[33] where the contract's output is int64 (33 elements" in message


def test_a_wrong_shape_or_output_count_is_named():
    with pytest.raises(ValueError, match=r"output 'out' has shape \(1, 33\); the contract's output is 1-D \(33 elements\)"):
        primlab.check(lambda x: kernels.exclusive_scan(x).reshape(1, -1), primitive="scan", contract="exclusive.i32", sizes=[33], seed=SEED)
    with pytest.raises(TypeError, match=r"compact positive\.i32 .*the contract has 2 output\(s\), returned in this order: out, count"):
        primlab.check(lambda x: x[x > 0], primitive="compact", contract="positive.i32", sizes=[33], seed=SEED)
    with pytest.raises(TypeError, match=r"returned str; return a NumPy array"):
        primlab.check(lambda x: "0", primitive="reduce", contract="sum.i32", sizes=[33], seed=SEED)


def test_a_wrong_length_is_a_failure_the_harness_reports():
    with pytest.raises(AssertionError) as raised:
        primlab.check(lambda x: np.append(kernels.exclusive_scan(x), 0), primitive="scan", contract="exclusive.i32", sizes=[33], seed=SEED)
    lines = str(raised.value).splitlines()
    assert "index=- expected=33 elements got=34 elements" in lines[1]


def test_an_exception_in_the_function_names_the_case():
    def broken(x):
        raise RuntimeError("kernel launch failed")

    with pytest.raises(RuntimeError, match="kernel launch failed") as raised:
        primlab.check(broken, primitive="scan", contract="exclusive.i32", sizes=[33], seed=SEED)
    assert any("raised on scan exclusive.i32 case c00000 (n=33" in note for note in raised.value.__notes__)


def test_a_missing_harness_named_by_the_environment_is_an_error(monkeypatch, tmp_path):
    monkeypatch.setenv("PRIMLAB_HARNESS", str(tmp_path / "nothing"))
    with pytest.raises(primlab.HarnessError, match="PRIMLAB_HARNESS names .*nothing, which is not an executable file"):
        primlab.check(kernels.exclusive_scan, primitive="scan", contract="exclusive.i32", sizes=[33], seed=SEED)

"""The pytest plugin, run in a pytester session: one test per catalogue case
with ids `<primitive>-<contract>-n<size>-<family>-<run seed>`, `-k` selects
one, a failure shows the harness's line and a rerun command."""

import importlib.metadata
import os
import pathlib
import re

import pytest

import primlab

from conftest import harness_cases


def expected_ids(seed):
    """The ids the harness's own export of the marker's cases implies."""
    cases = harness_cases("scan", "exclusive.i32", [1, 33], seed)
    return [f"scan-exclusive.i32-n{c['size']}-{c['family']}-{seed:#x}" for c in cases]


N = len(expected_ids(0x5EED))


# The sessions run in a subprocess in another folder: the paths this one
# was given are made absolute here, at import, in the folder pytest started in.
PYTHONPATH = os.pathsep.join(
    str(p)
    for p in [pathlib.Path(primlab.__file__).resolve().parents[1]]
    + [pathlib.Path(p).resolve() for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
)
HARNESS = os.environ.get("PRIMLAB_HARNESS") and str(pathlib.Path(os.environ["PRIMLAB_HARNESS"]).resolve())


@pytest.fixture
def plugin(monkeypatch):
    """Options that load the plugin: none when the installed wheel's entry point already does."""
    monkeypatch.setenv("PYTHONPATH", PYTHONPATH)
    if HARNESS:
        monkeypatch.setenv("PRIMLAB_HARNESS", HARNESS)
    installed = any(ep.name == "primlab" for ep in importlib.metadata.entry_points(group="pytest11"))
    return [] if installed else ["-p", "primlab.pytest_plugin"]


CORRECT = """
import numpy as np
import primlab

def exclusive_scan(x):
    out = np.zeros(len(x), dtype=np.int64)
    out[1:] = np.cumsum(x[:-1], dtype=np.int64)
    return out

@primlab.cases(primitive="scan", contract="exclusive.i32", sizes=[1, 33]{seed})
def test_scan(case):
    case.check({fn})
"""


def write(pytester, seed=", seed=0x5eed", fn="exclusive_scan"):
    if fn == "off_by_one":
        extra = "\n\ndef off_by_one(x):\n    out = exclusive_scan(x)\n    out[-1] += 1\n    return out\n"
    elif fn == "kept_buffer":
        # Accumulates into an output kept per input and never cleared: right once, wrong the second time.
        extra = (
            "\n\nKEPT = {}\n\ndef kept_buffer(x):\n"
            "    out = KEPT.setdefault(x.tobytes(), np.zeros(len(x), dtype=np.int64))\n"
            "    out[1:] += np.cumsum(x[:-1], dtype=np.int64)\n    return out.copy()\n"
        )
    else:
        extra = ""
    pytester.makepyfile(test_kernel=CORRECT.replace("{seed}", seed).replace("{fn}", fn) + extra)


def collected_ids(result):
    return [m.group(1) for line in result.outlines if (m := re.match(r"test_kernel\.py::test_scan\[(.*)\]$", line))]


def test_collection_makes_one_test_per_case_with_the_case_and_seed_in_its_id(pytester, plugin):
    write(pytester)
    result = pytester.runpytest_subprocess("--collect-only", "-q", *plugin)
    assert collected_ids(result) == expected_ids(0x5EED)
    assert "scan-exclusive.i32-n33-small_ints-0x5eed" in collected_ids(result)


def test_every_case_passes_and_k_reruns_one(pytester, plugin):
    write(pytester)
    pytester.runpytest_subprocess(*plugin).assert_outcomes(passed=N)
    pytester.runpytest_subprocess("-k", "scan-exclusive.i32-n33-small_ints-0x5eed", *plugin).assert_outcomes(passed=1, deselected=N - 1)


def test_a_planted_bug_fails_every_case_with_the_line_and_a_rerun(pytester, plugin):
    write(pytester, fn="off_by_one")
    result = pytester.runpytest_subprocess(*plugin)
    result.assert_outcomes(failed=N)
    result.stdout.fnmatch_lines(
        [
            "*FAIL scan/user.exclusive.i32 n=33 seed=0x* family=many_ties check=prefix index=32 expected=* got=* (case c*)",
            "*mismatched elements of out: 1 / 33 (3.0%)",
            "*rerun: pytest -k 'scan-exclusive.i32-n33-many_ties-0x5eed'",
        ]
    )


def test_each_case_runs_twice_and_state_kept_between_calls_fails_the_second_run(pytester, plugin):
    write(pytester, fn="kept_buffer")
    result = pytester.runpytest_subprocess("-k", "n33-sorted", *plugin)
    result.assert_outcomes(failed=1, deselected=N - 1)
    result.stdout.fnmatch_lines(
        [
            "*primlab: scan exclusive.i32: 1 of 1 cases failed on the second run (the same inputs again, *",
            "*FAIL scan/user.exclusive.i32 n=33 seed=0x* family=sorted check=prefix *",
        ]
    )


def test_the_seed_comes_from_the_option_and_the_rerun_names_it(pytester, plugin):
    write(pytester, seed="", fn="off_by_one")
    result = pytester.runpytest_subprocess("--primlab-seed", "0x1234", "-k", "n33-sorted", *plugin)
    result.assert_outcomes(failed=1, deselected=N - 1)
    result.stdout.fnmatch_lines(
        ["primlab: run seed 0x1234 (rerun with --primlab-seed 0x1234); harness *", "*rerun: pytest --primlab-seed 0x1234 -k 'scan-exclusive.i32-n33-sorted-0x1234'"]
    )


def test_without_a_seed_a_fresh_one_is_printed_and_names_the_ids(pytester, plugin):
    write(pytester, seed="")
    result = pytester.runpytest_subprocess("--collect-only", *plugin)
    text = "\n".join(result.outlines)
    seed = re.search(r"^primlab: run seed (0x[0-9a-f]+) \(rerun with --primlab-seed \1\)", text, re.M)
    assert seed is not None, text
    ids = re.findall(r"<Function test_scan\[(.*)\]>", text)
    assert ids == expected_ids(int(seed.group(1), 16))


def test_a_bad_marker_is_a_collection_error_that_names_it(pytester, plugin):
    pytester.makepyfile(
        test_kernel="""
import primlab

@primlab.cases(primitive="scan", contract="exclusive.f32")
def test_scan(case):
    pass
"""
    )
    result = pytester.runpytest_subprocess(*plugin)
    result.stdout.fnmatch_lines(
        [
            "E   ValueError: test_kernel.py::test_scan: @primlab.cases(primitive='scan', contract='exclusive.f32', sizes=None, seed=0x*): harness cases export exited 2:",
            "E     error: unknown contract 'exclusive.f32' for primitive scan: choose from exclusive.i32, inclusive.i32; or a typed contract such as *",
        ]
    )


def test_a_marked_test_without_a_case_argument_is_refused(pytester, plugin):
    pytester.makepyfile(
        test_kernel="""
import primlab

@primlab.cases(primitive="scan", contract="exclusive.i32")
def test_no_case_argument():
    pass
"""
    )
    result = pytester.runpytest_subprocess(*plugin)
    result.stdout.fnmatch_lines(["E   TypeError: test_kernel.py::test_no_case_argument: a @primlab.cases test takes a `case` argument"])


def test_a_framework_in_the_marker_checks_the_contract_as_it_states_it(pytester, plugin):
    pytester.makepyfile(
        test_argmax="""
import numpy as np
import primlab

@primlab.cases(primitive="arg_reduce", contract="argmax.f32", framework="numpy", sizes=[33], seed=0x5eed)
def test_argmax(case):
    case.check(lambda x: np.array([np.argmax(x)], dtype=np.int64))
"""
    )
    result = pytester.runpytest_subprocess("-v", *plugin)
    assert result.ret == 0, result.stdout.str()
    # numpy's rule over argmax.f32: NaN first, with its own NaN families.
    assert any("arg_reduce-argmax.f32.nan_first-n33-nan_late-0x5eed" in line for line in result.outlines), result.stdout.str()


def test_a_typed_contract_by_its_parts_makes_one_passing_test_per_case(pytester, plugin):
    pytester.makepyfile(
        test_kernel="""
import numpy as np
import primlab

@primlab.cases(primitive="scan", contract="inclusive", op="max", dtype_in="int32", sizes=[1, 33], seed=0x5eed)
def test_scan(case):
    case.check(lambda x: np.maximum.accumulate(x))
"""
    )
    ids = collected_ids(pytester.runpytest_subprocess("--collect-only", "-q", *plugin))
    assert ids and all(i.startswith("scan-inclusive.max.i32.i32-n") for i in ids), ids
    pytester.runpytest_subprocess(*plugin).assert_outcomes(passed=len(ids))


# A CUDA device as the plugin's runs see it, without one: the harness's
# poisons, and a holding kernel that will not start (`FAIL_HOLD`).
FAKE_GPU = """
import types

import numpy as np
import primlab
from primlab import _defences, _torch_cuda

_real_load = _defences.load


def _load(arch=None, sm_count=1, cases=0):
    plan = {"max_len": 300, "cases": [{"sms_held": 5, "stagger_ns": 5000}] * cases}
    return {**_real_load(), "perturbation": plan, "perturbation_missing": None}


class _Held:
    def __init__(self, plan, gpu):
        self.plan = plan

    def hold(self, share):
        raise RuntimeError("cuLaunchKernel returned 1 (invalid argument)")

    def release(self):
        pass


_props = types.SimpleNamespace(major=9, minor=0, multi_processor_count=132)
_torch = types.SimpleNamespace(cuda=types.SimpleNamespace(get_device_properties=lambda gpu: _props))
_torch_cuda.cuda_device = lambda device: 0
_torch_cuda.torch_if_imported = lambda: _torch
_torch_cuda.poison_free_blocks = lambda gpu, pattern: (len(pattern), None)
_torch_cuda.HeldSMs = _Held
_defences.load = _load


def exclusive_scan(x):
    out = np.zeros(len(x), dtype=np.int64)
    out[1:] = np.cumsum(x[:-1], dtype=np.int64)
    return out


@primlab.cases(primitive="scan", contract="exclusive.i32", sizes=[1, 33], seed=0x5eed{allow})
def test_scan(case):
    case.check(exclusive_scan)
"""


def test_a_case_whose_perturbation_was_lost_fails_naming_the_defence_every_case_after_too(pytester, plugin):
    pytester.makepyfile(test_kernel=FAKE_GPU.replace("{allow}", ""))
    result = pytester.runpytest_subprocess(*plugin)
    result.assert_outcomes(failed=N)
    text = result.stdout.str()
    # The case where the holding kernel would not start, and each later case, fails by name:
    # once in each failure's traceback (the short summary repeats it in full only where the
    # CI variable is set, so it is not counted).
    raised = [line for line in text.splitlines() if line.startswith("E ") and "AssertionError: primlab:" in line]
    assert sum("a defence could not be applied, so a pass here may be by accident" in line for line in raised) == N, text
    assert text.count("perturbed run: stopped at scan exclusive.i32 case c00000") >= N, text
    result.stdout.fnmatch_lines(["*to accept this, pass allow_missing_defences=('perturb',)"])


def test_a_missing_defence_allowed_by_the_marker_passes_and_each_case_says_so(pytester, plugin):
    pytester.makepyfile(test_kernel=FAKE_GPU.replace("{allow}", ', allow_missing_defences=("perturb",)'))
    result = pytester.runpytest_subprocess("-W", "always::primlab.DefenceWarning", *plugin)
    result.assert_outcomes(passed=N, warnings=N)
    text = result.stdout.str()
    assert text.count("perturb not applied (allowed by allow_missing_defences) to 1 case(s)") == N, text


def test_an_unknown_defence_in_the_marker_is_a_collection_error(pytester, plugin):
    pytester.makepyfile(test_kernel=FAKE_GPU.replace("{allow}", ', allow_missing_defences=("perturbation",)'))
    result = pytester.runpytest_subprocess(*plugin)
    assert "allow_missing_defences names ['perturbation']; the defences are 'poison'" in result.stdout.str()
    assert result.ret != 0

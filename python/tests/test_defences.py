"""The runs primlab.check gives every case (both poisons, then perturbed)
and the pieces that need no GPU: the harness's poisons, the pattern a case's
outputs get, the free blocks of a torch memory snapshot, the CUDA device a
function's memory lives on."""

import sys
import types

import pytest

import kernels
import primlab
from conftest import harness_cases


def count(primitive, contract, sizes):
    return len(harness_cases(primitive, contract, sizes, SEED))
from primlab import _defences, _torch_cuda

SEED = 0x5EED


def test_the_harness_gives_both_poisons_in_run_order():
    defences = _defences.load()
    runs = _defences.runs(defences)
    assert [r.name for r in runs] == ["first run", "second run", "perturbed run"]
    assert [r.perturbed for r in runs] == [False, False, True]
    assert runs[0].poison["bytes"] == "a5" and runs[1].poison["bytes"] == "5a"
    assert runs[2].poison == runs[0].poison, "the perturbed run is under the first poison, as in harness check"
    assert defences["perturbation"] is None and "--arch" in defences["perturbation_missing"]


def test_a_float_output_gets_its_nan_and_integers_the_byte():
    first = _defences.runs(_defences.load())[0].poison
    assert _defences.pattern_for(first, ["int64"]) == b"\xa5"
    assert _defences.pattern_for(first, ["float32"]) == bytes.fromhex("a5a5a57f")  # 0x7fa5a5a5, a signalling NaN
    # A value and its index (arg_reduce): the float's NaN, which no integer result equals either.
    assert _defences.pattern_for(first, ["int32", "float32"]) == bytes.fromhex("a5a5a57f")
    assert len(_defences.pattern_for(first, ["float64"])) == 8
    assert len(_defences.pattern_for(first, ["bfloat16"])) == 2


def test_a_function_that_keeps_its_output_between_calls_fails_on_the_second_run():
    with pytest.raises(AssertionError) as raised:
        primlab.check(kernels.scan_into_a_kept_buffer, primitive="scan", contract="exclusive.i32", sizes=[33, 257], seed=SEED)
    lines = str(raised.value).splitlines()
    assert " failed on the second run (the same inputs again, " in lines[0], lines[0]
    assert lines[1].startswith("FAIL scan/user.exclusive.i32 n=")
    assert lines[-1] == "     rerun: primlab.check(fn, primitive='scan', contract='exclusive.i32', sizes=[33, 257], seed=0x5eed)"


def test_a_host_function_passes_both_runs_and_notes_why_it_was_not_perturbed():
    result = primlab.check(kernels.exclusive_scan, primitive="scan", contract="exclusive.i32", sizes=[33], seed=SEED)
    assert result.runs == ("first run", "second run")
    assert len(result.notes) == 1 and "perturbed run: not run (no CUDA device" in result.notes[0]
    assert "runs: first run, second run" in str(result) and "note: perturbed run: not run" in str(result)


def test_deep_and_sizes_together_are_refused_by_name():
    with pytest.raises(ValueError, match=r"(?s)deep=True.*--deep"):
        primlab.check(kernels.exclusive_scan, primitive="scan", contract="exclusive.i32", sizes=[33], deep=True)


SNAPSHOT = [
    {"device": 0, "address": 0x1000, "is_expandable": False, "blocks": [
        {"size": 512, "state": "active_allocated"},
        {"size": 1024, "state": "inactive"},
        {"size": 512, "state": "active_pending_free"},
        {"size": 2048, "state": "inactive"},
    ]},
    {"device": 1, "address": 0x90000, "blocks": [{"size": 512, "state": "inactive"}]},
    {"device": 0, "address": 0x50000, "blocks": [{"address": 0x50000, "size": 4096, "state": "inactive"}]},
    # A CUDA graph's private pool: its replays own the memory, it is never poisoned.
    {"device": 0, "address": 0x70000, "segment_pool_id": (1, 0), "blocks": [{"size": 512, "state": "inactive"}]},
]


def test_free_blocks_are_found_by_their_place_in_the_segment():
    ranges, left_out = _torch_cuda.free_ranges(SNAPSHOT, 0)
    assert ranges == [(0x1000 + 512, 1024), (0x1000 + 512 + 1024 + 512, 2048), (0x50000, 4096)]
    assert left_out is None
    assert _torch_cuda.free_ranges(SNAPSHOT, 1) == ([(0x90000, 512)], None)


def test_expandable_segments_are_left_out_and_said_so():
    expandable = [{"device": 0, "address": 0x1000, "is_expandable": True, "blocks": [{"size": 512, "state": "inactive"}]}]
    ranges, left_out = _torch_cuda.free_ranges(expandable, 0)
    assert ranges == [] and "expandable segments" in left_out


class _FakeCuda:
    def __init__(self, initialised):
        self.initialised = initialised

    def is_available(self):
        return True

    def is_initialized(self):
        return self.initialised

    def current_device(self):
        return 3


class _FakeDevice:
    def __init__(self, spec):
        kind, _, index = str(spec).partition(":")
        if kind not in ("cpu", "cuda"):
            raise RuntimeError(f"bad device {spec}")
        self.type, self.index = kind, int(index) if index else None


@pytest.fixture
def fake_torch(monkeypatch):
    def install(initialised):
        torch = types.SimpleNamespace(device=_FakeDevice, cuda=_FakeCuda(initialised))
        monkeypatch.setitem(sys.modules, "torch", torch)
    return install


def test_the_device_is_the_named_cuda_device_or_torchs_current_one(fake_torch, monkeypatch):
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    assert _torch_cuda.cuda_device("cuda") is None, "without torch imported there is no CUDA device to poison"
    fake_torch(initialised=False)
    assert _torch_cuda.cuda_device("cuda:1") == 1
    assert _torch_cuda.cuda_device("cuda") == 3
    assert _torch_cuda.cuda_device(None) is None and _torch_cuda.cuda_device("cpu") is None
    fake_torch(initialised=True)
    assert _torch_cuda.cuda_device(None) == 3, "a host function that moved its arrays to the GPU itself"
    assert _torch_cuda.cuda_device("numpy") == 3


class _FakeHeld:
    """Stands in for the SM-holding kernel: records what the runs asked of it."""

    log = []
    fail_hold = False

    def __init__(self, plan, gpu):
        self.plan = plan

    def hold(self, share):
        if _FakeHeld.fail_hold:
            raise RuntimeError("cuLaunchKernel returned 1 (invalid argument)")
        _FakeHeld.log.append(("hold", share["sms_held"]))

    def release(self):
        _FakeHeld.log.append(("release",))


@pytest.fixture
def fake_gpu(monkeypatch):
    """A CUDA device as the runs see it, without one: the poison and the
    holding kernel are recorded, the plan is the harness's poisons plus a
    perturbation of 5 SMs per case up to 300 elements."""
    poisoned = []
    real_load = _defences.load

    def load(arch=None, sm_count=1, cases=0):
        defences = real_load()
        plan = {"max_len": 300, "cases": [{"sms_held": 5, "stagger_ns": 5000}] * cases}
        return {**defences, "perturbation": plan, "perturbation_missing": None}

    def poison(gpu, pattern):
        poisoned.append(pattern)
        return len(pattern) * 100, None

    props = types.SimpleNamespace(major=9, minor=0, multi_processor_count=132)
    torch = types.SimpleNamespace(cuda=types.SimpleNamespace(get_device_properties=lambda gpu: props))
    monkeypatch.setattr(_torch_cuda, "cuda_device", lambda device: 0)
    monkeypatch.setattr(_torch_cuda, "torch_if_imported", lambda: torch)
    monkeypatch.setattr(_torch_cuda, "poison_free_blocks", poison)
    monkeypatch.setattr(_torch_cuda, "HeldSMs", _FakeHeld)
    monkeypatch.setattr(_defences, "load", load)
    _FakeHeld.log, _FakeHeld.fail_hold = [], False
    return poisoned


def test_on_a_gpu_each_call_is_poisoned_and_small_cases_run_perturbed(fake_gpu):
    sizes = [33, 257, 4099]
    result = primlab.check(kernels.exclusive_scan, primitive="scan", contract="exclusive.i32", sizes=sizes, seed=SEED)
    assert result.runs == ("first run", "second run", "perturbed run") and result.notes == ()
    n = result.cases_passed
    small = sum(1 for c in harness_cases("scan", "exclusive.i32", sizes, SEED) if c["n"] <= 300)
    # Every call of the first and perturbed runs under the first poison, of the second under the second.
    assert fake_gpu == [b"\xa5"] * n + [b"\x5a"] * n + [b"\xa5"] * small
    assert _FakeHeld.log == [("hold", 5), ("release",)] * small, "held around each case up to max_len, let go after"


def test_a_holding_kernel_that_will_not_start_fails_the_check_naming_the_defence(fake_gpu):
    _FakeHeld.fail_hold = True
    with pytest.raises(AssertionError) as raised:
        primlab.check(kernels.exclusive_scan, primitive="scan", contract="exclusive.i32", sizes=[33, 257], seed=SEED)
    text = str(raised.value)
    n = count("scan", "exclusive.i32", [33, 257])
    assert "a defence could not be applied, so a pass here may be by accident" in text, text
    # Every case the perturbed run would have covered lacks it, not only the one where it stopped.
    assert f"perturb (the perturbed run (a kernel holding a share of the SMs while the function runs)): not applied to {n} of {n} case(s)" in text, text
    assert "perturbed run: stopped at scan exclusive.i32 case c00000" in text and "invalid argument" in text, text
    assert text.endswith("to accept this, pass allow_missing_defences=('perturb',)"), text


def test_a_missing_perturbation_allowed_by_name_passes_and_names_every_case(fake_gpu):
    _FakeHeld.fail_hold = True
    with pytest.warns(primlab.DefenceWarning, match=r"perturb not applied \(allowed by allow_missing_defences\) to \d+ case\(s\) \(c00000, c00001"):
        result = primlab.check(
            kernels.exclusive_scan, primitive="scan", contract="exclusive.i32", sizes=[33], seed=SEED,
            allow_missing_defences=("perturb",),
        )
    assert result.runs == ("first run", "second run")
    n = count("scan", "exclusive.i32", [33])
    names = ", ".join(f"c{i:05d}" for i in range(n))
    assert len(result.notes) == 1, result.notes
    assert result.notes[0].startswith(f"perturb not applied (allowed by allow_missing_defences) to {n} case(s) ({names}): ")
    assert "perturbed run: stopped at scan exclusive.i32 case c00000 (n=33" in result.notes[0], result.notes


def test_an_allocator_that_cannot_be_poisoned_fails_the_check_unless_allowed(fake_gpu, monkeypatch):
    def refuse(gpu, pattern):
        raise RuntimeError("torch's cudaMallocAsync allocator keeps no list of free blocks to poison")

    monkeypatch.setattr(_torch_cuda, "poison_free_blocks", refuse)
    with pytest.raises(AssertionError, match=r"(?s)poison \(free device memory poisoned before each call\): not applied to \d+ of \d+ case\(s\).*cudaMallocAsync"):
        primlab.check(kernels.exclusive_scan, primitive="scan", contract="exclusive.i32", sizes=[33], seed=SEED)
    with pytest.warns(primlab.DefenceWarning, match="poison not applied"):
        result = primlab.check(
            kernels.exclusive_scan, primitive="scan", contract="exclusive.i32", sizes=[33], seed=SEED,
            allow_missing_defences="poison",
        )
    assert result.runs == ("first run", "second run", "perturbed run")
    assert len(result.notes) == 1 and result.notes[0].startswith("poison not applied (allowed by allow_missing_defences) to ")
    assert result.notes[0].endswith("free device memory not poisoned (RuntimeError: torch's cudaMallocAsync allocator keeps no list of free blocks to poison)")


def test_memory_poisoned_only_in_part_is_a_missing_defence(fake_gpu, monkeypatch):
    monkeypatch.setattr(_torch_cuda, "poison_free_blocks", lambda gpu, pattern: (100, "expandable segments left out"))
    with pytest.raises(AssertionError, match="free device memory partly poisoned: expandable segments left out"):
        primlab.check(kernels.exclusive_scan, primitive="scan", contract="exclusive.i32", sizes=[33], seed=SEED)


def test_an_unknown_defence_name_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match=r"allow_missing_defences names \['poisson'\]; the defences are 'poison' .*'perturb'"):
        primlab.check(kernels.exclusive_scan, primitive="scan", contract="exclusive.i32", sizes=[33], allow_missing_defences=("poisson",))


def test_the_holding_kernels_parameters_point_at_their_values():
    import ctypes

    args, params = _torch_cuda.kernel_params([0x7F00_1234_5678, 2_000_000_000, 5000])
    read = [ctypes.c_uint64.from_address(params[i]).value for i in range(3)]
    assert read == [0x7F00_1234_5678, 2_000_000_000, 5000]
    assert len(args) == 3

"""`primlab.check`: every case of a contract's catalogue through a Python
function, judged by the harness."""

from __future__ import annotations

import dataclasses
import secrets
import tempfile

from . import _tensors
from ._cases import Case, Export
from ._harness import HarnessRefused


@dataclasses.dataclass(frozen=True)
class CheckResult:
    """A passing check: how many cases passed, and the run seed that regenerates them."""

    primitive: str
    contract: str
    cases_passed: int
    seed: int
    sizes: tuple

    def __str__(self) -> str:
        return f"primlab.check: {self.primitive} {self.contract}: {self.cases_passed} cases passed (seed {self.seed:#x})"


def call_on_case(fn, export: Export, case: Case, device=None, convert=None) -> list:
    """Calls `fn(*inputs, **params)` on `case` and returns its outputs as
    NumPy arrays of the contract's types, written where the harness reads them.
    An exception from `fn` propagates with a note naming the case."""
    inputs = export.inputs(case)
    params = export.params(case)
    args = [_tensors.to_framework(a, b.dtype, device, convert) for a, b in zip(inputs, case.inputs)]
    try:
        result = fn(*args, **params)
    except Exception as error:
        if hasattr(error, "add_note"):  # Python 3.11+; older ones show the traceback alone
            error.add_note(f"primlab: raised on {case.describe()}")
        raise
    if len(case.outputs) == 1 and not isinstance(result, (tuple, list)):
        result = (result,)
    if not isinstance(result, (tuple, list)) or len(result) != len(case.outputs):
        roles = ", ".join(b.role for b in case.outputs)
        raise TypeError(
            f"primlab: {case.describe()}: the function returned {type(result).__name__}"
            f"{'' if not isinstance(result, (tuple, list)) else f' of {len(result)}'}; the contract has "
            f"{len(case.outputs)} output(s), returned in this order: {roles}"
        )
    arrays = [_tensors.to_numpy(v, b, case, params) for v, b in zip(result, case.outputs)]
    export.write_outputs(case, arrays)
    return arrays


def failure_message(export: Export, failures: dict, checked: int, rerun: str) -> str:
    """The AssertionError text: how many cases failed, the harness's failure
    line of the first and its mismatch summary (both as the harness printed
    them), and one command that reruns it."""
    first = next(c for c in export.cases if c.name in failures)
    line, summary = failures[first.name]
    lines = [
        f"primlab: {first.primitive} {first.contract}: {len(failures)} of {checked} cases failed "
        f"(run seed {export.seed:#x}); the first:",
        f"FAIL {line} (case {first.name})",
    ]
    lines += [f"     {s}" for s in summary]
    lines.append(f"     rerun: {rerun}")
    return "\n".join(lines)


def check(fn, primitive: str, contract: str, sizes=None, seed=None, device=None, convert=None) -> CheckResult:
    """Checks `fn` on every case of `primitive`'s `contract`.

    The harness exports the catalogue (the sweep's sizes up to 2^20 by
    default, or `sizes`; every data family; inputs drawn from `seed`, a fresh
    one when None). `fn(*inputs, **params)` is called once per case with the
    contract's inputs in order (NumPy arrays; torch tensors on `device`, e.g.
    "cuda"; or `convert(array)` for other frameworks) and its scalar
    parameters by name (rows, cols, segments, bins, ...), and returns the
    outputs (one array, or a tuple in the contract's order). The harness
    judges them by the contract's rule. Raises AssertionError with the
    harness's failure line, a mismatch summary and a rerun line when any
    case fails; returns a CheckResult when all pass."""
    if not callable(fn):
        raise TypeError(f"primlab.check: fn must be callable, got {type(fn).__name__}")
    if contract is None:
        raise ValueError(f"primlab.check: name the contract of primitive {primitive!r} (contract=...)")
    seed = secrets.randbits(64) if seed is None else int(seed)
    with tempfile.TemporaryDirectory(prefix="primlab-check-") as folder:
        try:
            export = Export.create(folder, primitive, contract, sizes, seed)
        except HarnessRefused as error:
            raise ValueError(
                f"primlab.check(primitive={primitive!r}, contract={contract!r}, sizes={sizes!r}, seed={seed:#x}): {error}"
            ) from None
        # One case's arrays at a time: its outputs stay in the folder only.
        for case in export.cases:
            call_on_case(fn, export, case, device, convert)
        failures = export.verify()
        if failures:
            sizes_arg = "" if sizes is None else f", sizes={list(sizes)!r}"
            rerun = (
                f"primlab.check(fn, primitive={primitive!r}, contract={contract!r}{sizes_arg}, seed={seed:#x})"
            )
            raise AssertionError(failure_message(export, failures, len(export.cases), rerun))
        return CheckResult(primitive, contract, len(export.cases), seed, tuple(export.sizes))

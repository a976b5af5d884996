"""`primlab.check`: every case of a contract's catalogue through a Python
function, judged by the harness."""

from __future__ import annotations

import dataclasses
import secrets
import tempfile

import numpy as np

from . import _tensors
from ._cases import Case, Export
from ._harness import HarnessRefused

# Indices of mismatching elements shown per output.
FIRST_SHOWN = 5


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


def _float_view(array: np.ndarray, dtype: str):
    """The values of a float buffer as float64 (bfloat16 from its bits: the
    high half of a float32), or None for an integer buffer."""
    if dtype == "bfloat16":
        return (array.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if array.dtype.kind == "f":
        return array.astype(np.float64)
    return None


def _same(expected: np.ndarray, got: np.ndarray) -> np.ndarray:
    """Element-wise equality as the exact rule states it: floats bit for bit."""
    if expected.dtype.kind == "f" and expected.dtype == got.dtype:
        width = {2: np.uint16, 4: np.uint32, 8: np.uint64}[expected.dtype.itemsize]
        return expected.view(width) == got.view(width)
    return expected == got


def _value(array: np.ndarray, floats, i: int) -> str:
    """Element i as text: a float's value (and a bfloat16's bits), an integer as is."""
    if floats is None:
        return str(array[i].item())
    if array.dtype == np.uint16:
        return f"{floats[i]!r} (bits {array[i]:#06x})"
    return repr(floats[i].item())


def mismatch_summary(case: Case, expected: list, got: list) -> list:
    """Lines describing how `got` differs from the model's outputs: the
    mismatched elements out of the total, the first indices, and for floats
    the largest absolute and relative error. A description beside the
    harness's verdict, which alone decides pass or fail (for a tolerance
    rule, differing from the exact value is allowed within the bound)."""
    lines = []
    for buffer, e, g in zip(case.outputs, expected, got):
        total = len(e)
        head = f"  {buffer.role} ({buffer.dtype}): "
        if len(g) != total:
            lines.append(head + f"{len(g)} elements where the model has {total}; compared over the first {min(len(g), total)}")
        m = min(len(g), total)
        e, g = e[:m], g[:m]
        tolerance = case.tolerance != "exact"
        ef = e.astype(np.float64) if tolerance else _float_view(e, buffer.dtype)
        gf = _float_view(g, buffer.dtype)
        if tolerance:
            differ = ~((ef == gf) | (np.isnan(ef) & np.isnan(gf)))
        else:
            differ = ~_same(e, g)
        count = int(np.count_nonzero(differ))
        if count == 0:
            lines.append(head + f"all {m} elements equal the model's")
            continue
        where = np.flatnonzero(differ)[:FIRST_SHOWN]
        shown = ", ".join(f"[{i}] expected {_value(e, ef, i)} got {_value(g, gf, i)}" for i in where)
        what = "differ from the exact value (the tolerance allows some)" if tolerance else "mismatched"
        text = head + f"{count} of {total} elements {what}; first: {shown}"
        if gf is not None:
            both = np.isfinite(ef) & np.isfinite(gf) & differ
            if np.any(both):
                abs_err = np.abs(gf[both] - ef[both])
                with np.errstate(divide="ignore", invalid="ignore"):
                    rel_err = abs_err / np.abs(ef[both])
                k = int(np.argmax(abs_err))
                index = int(np.flatnonzero(both)[k])
                text += f"; largest abs error {abs_err[k]:.6g} at [{index}]; largest rel error {np.nanmax(rel_err):.6g}"
            nonfinite = int(np.count_nonzero(differ & ~(np.isfinite(ef) & np.isfinite(gf))))
            if nonfinite:
                text += f"; {nonfinite} with a NaN or infinity on one side"
        lines.append(text)
    return lines


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
    """The AssertionError text: how many cases failed, the harness's line of
    the first, its mismatch summary (from the outputs written for it), and
    one command that reruns it."""
    first = next(c for c in export.cases if c.name in failures)
    lines = [
        f"primlab: {first.primitive} {first.contract}: {len(failures)} of {checked} cases failed "
        f"(run seed {export.seed:#x}); the first:",
        f"FAIL {failures[first.name]} (case {first.name})",
    ]
    lines += mismatch_summary(first, export.expected(first), export.outputs(first))
    lines.append(f"     rerun: {rerun.format(case=first)}")
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

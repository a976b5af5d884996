"""Calling the user's function on one case: its inputs in the framework it
takes, its outputs back as the contract's arrays, written for the verdict."""

from __future__ import annotations

from . import _tensors
from ._cases import Case, Export


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

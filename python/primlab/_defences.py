"""The runs each case gets, as `harness check` gives a kernel it launches
itself: the first under one poison, the second under the other, the third
under the first poison while a kernel holds a share of the GPU's SMs (the
schedule perturbation). The poisons and the holding kernel come from the
harness (`harness cases defences`); this module restates none of them.

A run passes only when the harness accepts its outputs, so a function that
keeps state from one call to the next, accumulates into memory it did not
clear, or depends on the order its blocks run in cannot pass all three by
luck."""

from __future__ import annotations

import dataclasses
import json

from . import _harness

FORMAT = "primlab-defences/1"

# The element types of index.json whose poison is a NaN of their width: a
# float output gets its own, since a byte pattern reads as a tiny finite
# float that every tolerance absorbs.
_FLOAT_TYPES = ("float32", "float64", "bfloat16", "float16")


@dataclasses.dataclass(frozen=True)
class Run:
    """One run of every case."""

    name: str
    """`first run`, `second run` or `perturbed run`: how failures name it."""
    poison: dict
    """The harness's patterns for this run by element type (little-endian hex)."""
    perturbed: bool
    """Whether a kernel holds a share of the SMs while the function runs."""
    meaning: str
    """What the run adds, for failure messages."""


def load(arch: str | None = None, sm_count: int = 1, cases: int = 0) -> dict:
    """`harness cases defences` as a dict: the poisons in run order and, when
    `arch` (e.g. "compute_90") is given and the holding kernel compiled, the
    perturbation plan for `cases` cases on a GPU of `sm_count` SMs."""
    args = ["cases", "defences", "--sm-count", str(max(1, int(sm_count))), "--cases", str(int(cases))]
    if arch is not None:
        args += ["--arch", arch]
    done = _harness.run(args)
    try:
        defences = json.loads(done.stdout)
    except json.JSONDecodeError as error:
        raise _harness.HarnessError(f"harness cases defences printed no JSON ({error}):\n{done.stdout}") from None
    if defences.get("format") != FORMAT:
        raise _harness.HarnessError(f"harness cases defences printed format {defences.get('format')!r}, not {FORMAT!r}")
    return defences


def runs(defences: dict) -> list[Run]:
    """The three runs, in order: both poisons, then the first again, perturbed."""
    first, second = defences["poison"]
    return [
        Run("first run", first, False, "free device memory poisoned with the first pattern"),
        Run(
            "second run",
            second,
            False,
            "the same inputs again, free device memory poisoned with the second pattern; the first run passed",
        ),
        Run(
            "perturbed run",
            first,
            True,
            "a kernel held a share of the SMs while the function ran, so its blocks ran in another order; "
            "both poisoned runs passed",
        ),
    ]


def pattern_for(poison: dict, output_dtypes) -> bytes:
    """The bytes that fill free device memory before a call whose outputs
    have `output_dtypes`: the NaN of the first float output when there is
    one (it is also far from any integer result), else the byte."""
    floats = [d for d in output_dtypes if d in _FLOAT_TYPES]
    return bytes.fromhex(poison[floats[0]] if floats else poison["bytes"])

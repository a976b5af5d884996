"""`primlab.check`: every case of a contract's catalogue through a Python
function, judged by the harness."""

from __future__ import annotations

import dataclasses
import secrets
import tempfile

from ._case_runs import CaseRuns, PerturbationLost, allowed_defences
from ._cases import Export
from ._harness import HarnessRefused


@dataclasses.dataclass(frozen=True)
class CheckResult:
    """A passing check: how many cases passed, and the run seed that regenerates them."""

    primitive: str
    contract: str
    cases_passed: int
    seed: int
    sizes: tuple
    runs: tuple = ()
    """The runs every case passed: first run, second run, perturbed run
    (the perturbed run covers the cases up to the harness's size limit)."""
    notes: tuple = ()
    """What did not apply to this function (e.g. no perturbation for a host
    function), and each missing defence the caller allowed, with its cases."""
    closest: str | None = None
    """For float sums (typed contracts): the passing element that came
    closest to its bound, with its error and its share of the bound."""

    def __str__(self) -> str:
        text = f"primlab.check: {self.primitive} {self.contract}: {self.cases_passed} cases passed (seed {self.seed:#x})"
        if self.runs:
            text += f"; runs: {', '.join(self.runs)}"
        if self.closest:
            text += f"\n  closest to the bound: {self.closest}"
        return text + "".join(f"\n  note: {n}" for n in self.notes)


def failure_message(export: Export, failures: dict, checked: int, rerun: str, run=None) -> str:
    """The AssertionError text: how many cases failed (and on which run, when
    not the first), the harness's failure line of the first and its mismatch
    summary (both as the harness printed them), and one command that reruns it."""
    first = next(c for c in export.cases if c.name in failures)
    line, summary = failures[first.name]
    on_run = "" if run is None or run.name == "first run" else f" on the {run.name} ({run.meaning})"
    lines = [
        f"primlab: {first.primitive} {first.contract}: {len(failures)} of {checked} cases failed{on_run} "
        f"(run seed {export.seed:#x}); the first:",
        f"FAIL {line} (case {first.name})",
    ]
    lines += [f"     {s}" for s in summary]
    lines.append(f"     rerun: {rerun}")
    return "\n".join(lines)


def check(
    fn,
    primitive: str,
    contract: str | None = None,
    sizes=None,
    seed=None,
    device=None,
    convert=None,
    deep: bool = False,
    framework: str | None = None,
    op: str | None = None,
    dtype_in: str | None = None,
    dtype_out: str | None = None,
    accumulator: str | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    ulp: int | None = None,
    nan_rule: str | None = None,
    allow_missing_defences=None,
) -> CheckResult:
    """Checks `fn` on every case of `primitive`'s `contract`.

    The harness exports the catalogue (the sweep's sizes up to 2^20 by
    default; with `deep=True` also 2^24, 2^28 and 2^28+1, as a default
    `harness check`; or `sizes`; every data family; inputs drawn from `seed`,
    a fresh one when None). `fn(*inputs, **params)` is called with the
    contract's inputs in order (NumPy arrays; torch tensors on `device`, e.g.
    "cuda"; or `convert(array)` for other frameworks) and its scalar
    parameters by name (rows, cols, segments, bins, ...), and returns the
    outputs (one array, or a tuple in the contract's order). The harness
    judges them by the contract's rule.

    Every case runs three times, as `harness check` runs a kernel: under two
    poisons (torch's free CUDA memory is filled with each before a call, so
    an output made with `torch.empty` never starts as zeros), then once more
    while a kernel holds a share of the SMs, so that blocks run in another
    order. Each run is judged on its own. Raises AssertionError with the run,
    the harness's failure line, a mismatch summary and a rerun line when any
    case fails; returns a CheckResult when all pass (its `notes` say what
    did not apply, e.g. no perturbation for a NumPy function, which has no
    device schedule).

    A defence that applies but could not be applied to a case (`poison`:
    torch's free memory could not be poisoned, or only partly; `perturb`:
    the holding kernel could not run, or the function takes device arrays
    that torch does not manage) fails the check with an AssertionError
    naming the defence and the cases, since a pass without it may be by
    accident; `allow_missing_defences=("perturb",)` (names from
    primlab._case_runs.DEFENCES) accepts that, and the result's notes and a
    DefenceWarning name every case that went without.

    `framework="torch"` (or "numpy") checks the contract as that framework
    states it: its named rule over the contract where one is the
    framework's (rows.f32 -> rows.f32.all_masked_nan), else the contract
    itself; the result and every message name the contract checked.

    A typed contract (reduce, scan, arg_reduce, segmented_reduce, compact,
    histogram and softmax over int32, int64, uint32, bfloat16, float16,
    float32, float64, as each shape takes them) is named by its parts: `op` ("sum", "min", "max"),
    `dtype_in`, `dtype_out`, for a float sum its `accumulator` and a
    tolerance (`rtol`, `atol`, `ulp`; default the order-free bound), for a
    float arg reduction its `nan_rule` ("nan_first", "nan_ignored"), for a
    float min or max (reduce, scan, segmented) its `nan_rule`
    ("nan_propagate": a NaN in the fold gives NaN, as numpy.max and
    torch.amax; "nan_ignored": NaN is skipped, as numpy.fmax.reduce and
    numpy.nanmax; default: no case holds NaN; framework="torch" or "numpy"
    picks nan_propagate);
    `contract` then names the kind ("inclusive"/"exclusive" for scan,
    "argmax"/"argmin" for arg_reduce, None for reduce). Or by its full name
    (contract="inclusive.sum.f32.f32").

    Row contracts: `primitive="layernorm"`, "rmsnorm" or "cross_entropy"
    with the contract's name (contract="layernorm.bf16.bf16.affine.stats",
    "rmsnorm.f32.f32.eps_opmath", "cross_entropy.f32.f32.mean") or its parts
    (dtype_in, dtype_out, accumulator, rtol, atol; a cross-entropy composed
    so takes the mean). `fn(x, [gamma, beta,] rows=, cols=, eps=)` returns
    the normalised rows (and mean, rstd with `.stats`);
    `fn(logits, target, rows=, cols=, ignore_index=)` the losses.
    `framework="torch"` gives an RMS norm torch's default eps: float32's
    machine epsilon for every input type (F.rms_norm computes in float32
    and takes that type's epsilon, 2^-23, for bfloat16 and float16 too,
    though its documentation says torch.finfo(dtype).eps)."""
    if not callable(fn):
        raise TypeError(f"primlab.check: fn must be callable, got {type(fn).__name__}")
    allowed = allowed_defences(allow_missing_defences, "primlab.check")
    parts = {
        "op": op,
        "dtype_in": dtype_in,
        "dtype_out": dtype_out,
        "accumulator": accumulator,
        "rtol": rtol,
        "atol": atol,
        "ulp": ulp,
        "nan_rule": nan_rule,
    }
    parts = {k: v for k, v in parts.items() if v is not None}
    if contract is None and not parts:
        raise ValueError(
            f"primlab.check: name the contract of primitive {primitive!r} (contract=...), "
            "or a typed one by its parts (op=..., dtype_in=...)"
        )
    seed = secrets.randbits(64) if seed is None else int(seed)
    with tempfile.TemporaryDirectory(prefix="primlab-check-") as folder:
        try:
            export = Export.create(
                folder, primitive, contract, sizes, seed, deep=deep, framework=framework, parts=parts
            )
        except HarnessRefused as error:
            raise ValueError(
                f"primlab.check(primitive={primitive!r}, contract={contract!r}, framework={framework!r}, "
                f"{''.join(f'{k}={v!r}, ' for k, v in parts.items())}sizes={sizes!r}, deep={deep!r}, "
                f"seed={seed:#x}): {error}"
            ) from None
        # The contract the framework or the parts state (the export's own), named from here on.
        if (framework is not None or parts) and export.contracts:
            contract = export.contracts[0]
        case_runs = CaseRuns(export, device, convert)
        passed = []
        closest = None
        for run in case_runs.runs():
            cases = case_runs.cases_of(run)
            if not cases:
                continue
            # One case's arrays at a time: its outputs stay in the folder only.
            try:
                for case in cases:
                    case_runs.call(fn, case, run)
            except PerturbationLost:
                case_runs.perturbation_lost(cases)  # a run that did not happen is not judged or counted
                continue
            failures = export.verify(None if len(cases) == len(export.cases) else cases)
            # The first run covers every case: its closest approach to a bound is the one reported.
            closest = export.closest if closest is None else closest
            if failures:
                options = ("" if sizes is None else f", sizes={list(sizes)!r}") + (", deep=True" if deep else "")
                rerun = f"primlab.check(fn, primitive={primitive!r}, contract={contract!r}{options}, seed={seed:#x})"
                raise AssertionError(failure_message(export, failures, len(cases), rerun, run))
            passed.append(run.name)
        subject = f"{primitive} {contract}"
        allowed_lines = case_runs.judge_defences(subject, export.cases, allowed, len(export.cases))
        return CheckResult(
            primitive,
            contract,
            len(export.cases),
            seed,
            tuple(export.sizes),
            tuple(passed),
            tuple(n for n in case_runs.notes if not n.startswith(("poison: ", "perturb: "))) + tuple(allowed_lines),
            closest,
        )

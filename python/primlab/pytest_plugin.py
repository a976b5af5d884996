"""pytest plugin (entry point `pytest11`): `@primlab.cases(primitive=...,
contract=...)` on a test that takes `case` makes one test per catalogue
case, with ids `<primitive>-<contract>-n<size>-<family>-<run seed>`:

    @primlab.cases(primitive="scan", contract="exclusive.i32")
    def test_my_scan(case):
        case.check(my_scan)            # or case.check(fn, device="cuda")

A case whose function could not get a defence that applies to it (`poison`,
`perturb`: see primlab.check) fails, naming the defence, unless the marker or
`case.check` accepts it by name (`allow_missing_defences=("perturb",)`); an
accepted one is a DefenceWarning naming the case.

The run seed is the marker's `seed`, else `--primlab-seed` (or
$PRIMLAB_SEED), else a fresh one printed in the report header; the same seed
regenerates the same cases and ids, so `pytest --primlab-seed S -k ID` reruns
one case. Each test's outputs are judged by `harness cases verify --case`.
Without the installed wheel, load it with `-p primlab.pytest_plugin`.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile

import pytest

from ._cases import Case, Export
from ._case_runs import CaseRuns, PerturbationLost, allowed_defences
from ._check import failure_message
from ._harness import HarnessError, HarnessRefused, harness_path

SEED_ENV = "PRIMLAB_SEED"


class CatalogueCase:
    """The `case` argument of a `@primlab.cases` test: one catalogue case."""

    def __init__(self, export: Export, case: Case, seed_pinned: bool, runs: dict, allowed=frozenset()):
        self.export = export
        self.case = case
        self.seed_pinned = seed_pinned
        self._runs = runs  # CaseRuns by (device, convert), shared by the export's cases
        self._allowed = allowed  # the marker's allow_missing_defences

    def __repr__(self) -> str:
        return f"<primlab case {self.case.id} ({self.case.name})>"

    @property
    def inputs(self) -> list:
        """The inputs as NumPy arrays, in the contract's order."""
        return self.export.inputs(self.case)

    @property
    def params(self) -> dict:
        """The scalar parameters by name."""
        return self.export.params(self.case)

    def rerun(self) -> str:
        seed = "" if self.seed_pinned else f" --primlab-seed {self.case.run_seed:#x}"
        return f"pytest{seed} -k '{self.case.id}'"

    def check(self, fn, device=None, convert=None, allow_missing_defences=None) -> None:
        """Runs `fn` on this case as primlab.check does (under both poisons,
        then perturbed where a CUDA device is in play) and has the harness
        judge each run; AssertionError with the run, the failure line, the
        mismatch summary and the rerun command when one fails, and naming
        the defence when one that applies could not be applied to this case
        (unless this call's or the marker's `allow_missing_defences` names
        it: then a DefenceWarning names the case)."""
        allowed = self._allowed | allowed_defences(allow_missing_defences, f"case.check ({self.case.id})")
        key = (repr(device), id(convert))
        if key not in self._runs:
            self._runs[key] = CaseRuns(self.export, device, convert)
        case_runs = self._runs[key]
        for run in case_runs.runs():
            if self.case not in case_runs.cases_of(run):
                continue
            try:
                case_runs.call(fn, self.case, run)
            except PerturbationLost:
                continue  # this case lacks the perturbed run: judged below
            failures = self.export.verify([self.case])
            if failures:
                raise AssertionError(failure_message(self.export, failures, 1, self.rerun(), run))
        case_runs.judge_defences(self.case.describe(), [self.case], allowed, 1)


class _State:
    def __init__(self, seed: int | None):
        self.seed = seed if seed is not None else secrets.randbits(64)
        self.seed_given = seed is not None
        self.folder = None
        self.exports = {}

    def export(self, primitive, contract, sizes, seed, deep=False, framework=None, parts=None) -> Export:
        parts = dict(parts or {})
        key = (primitive, contract, None if sizes is None else tuple(sizes), seed, bool(deep), framework, tuple(sorted(parts.items())))
        if key not in self.exports:
            if self.folder is None:
                self.folder = tempfile.mkdtemp(prefix="primlab-pytest-")
            folder = os.path.join(self.folder, f"export{len(self.exports)}")
            self.exports[key] = Export.create(
                folder, primitive, contract, sizes, seed, deep=bool(deep), framework=framework, parts=parts
            )
        return self.exports[key]


def _parse_seed(text):
    if text is None or text == "":
        return None
    try:
        return int(text, 0)
    except ValueError:
        raise pytest.UsageError(f"--primlab-seed / ${SEED_ENV}: {text!r} is not a number (0x5eed or 24301)") from None


def pytest_addoption(parser):
    group = parser.getgroup("primlab")
    group.addoption(
        "--primlab-seed",
        default=None,
        help=f"run seed of @primlab.cases tests without a seed of their own (default ${SEED_ENV}, else a fresh one)",
    )


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "primlab_cases(primitive, contract, sizes=None, seed=None, deep=False, allow_missing_defences=None): one "
        "test per primlab catalogue case (the test takes `case`)",
    )
    seed = _parse_seed(config.getoption("--primlab-seed") or os.environ.get(SEED_ENV))
    config.stash[_STATE] = _State(seed)


_STATE = pytest.StashKey[_State]()


def pytest_report_header(config):
    state = config.stash.get(_STATE, None)
    if state is None:
        return None
    try:
        binary = str(harness_path())
    except HarnessError as error:
        binary = str(error)
    return f"primlab: run seed {state.seed:#x} (rerun with --primlab-seed {state.seed:#x}); harness {binary}"


def pytest_unconfigure(config):
    state = config.stash.get(_STATE, None)
    if state is not None and state.folder is not None:
        shutil.rmtree(state.folder, ignore_errors=True)


# The keywords that name a typed contract's parts (as primlab.check takes them).
_TYPED_PARTS = ("op", "dtype_in", "dtype_out", "accumulator", "rtol", "atol", "ulp", "nan_rule")


def pytest_generate_tests(metafunc):
    marker = metafunc.definition.get_closest_marker("primlab_cases")
    if marker is None:
        return
    where = metafunc.definition.nodeid
    if "case" not in metafunc.fixturenames:
        raise TypeError(f"{where}: a @primlab.cases test takes a `case` argument")
    if marker.args:
        raise TypeError(f"{where}: @primlab.cases takes keywords only (primitive=..., contract=...)")
    options = {k: v for k, v in marker.kwargs.items() if not (k == "contract" and v is None)}
    # A typed contract's parts (op=, dtype_in=, ...) may name it instead of, or beside, its kind.
    parts = {k: options.pop(k) for k in _TYPED_PARTS if options.get(k) is not None}
    allowed = allowed_defences(options.pop("allow_missing_defences", None), f"{where}: @primlab.cases")
    unknown = set(options) - {"primitive", "contract", "sizes", "seed", "deep", "framework"} - set(_TYPED_PARTS)
    if unknown or "primitive" not in options or ("contract" not in options and not parts):
        raise TypeError(
            f"{where}: @primlab.cases(primitive=..., contract=..., sizes=None, seed=None, deep=False, "
            f"framework=None, allow_missing_defences=None, or a typed contract's op=, dtype_in=, ...) got "
            f"{sorted(set(options) | set(parts))}"
        )
    state = metafunc.config.stash[_STATE]
    pinned = options.get("seed") is not None
    seed = int(options["seed"]) if pinned else state.seed
    try:
        export = state.export(
            options["primitive"],
            options.get("contract"),
            options.get("sizes"),
            seed,
            options.get("deep", False),
            options.get("framework"),
            parts,
        )
    except HarnessRefused as error:
        raise ValueError(
            f"{where}: @primlab.cases(primitive={options['primitive']!r}, contract={options.get('contract')!r}, "
            f"{''.join(f'{k}={v!r}, ' for k, v in parts.items())}"
            f"sizes={options.get('sizes')!r}, seed={seed:#x}): {error}"
        ) from None
    shared = {}
    runs = [CatalogueCase(export, c, pinned, shared, allowed) for c in export.cases]
    ids = [c.id for c in export.cases]
    # Two cases with one id (a size listed twice) keep apart by their export names.
    ids = [i if ids.count(i) == 1 else f"{i}-{r.case.name}" for i, r in zip(ids, runs)]
    metafunc.parametrize("case", runs, ids=ids)

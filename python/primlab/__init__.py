"""primlab from Python: check a kernel written in any framework against the
exact model, on every case of a contract's catalogue.

    import primlab
    primlab.check(my_scan, primitive="scan", contract="exclusive.i32")

The `harness` binary generates every case and judges every output
(`harness cases export` / `harness cases verify`); this package calls your
function and moves arrays. Under pytest, `@primlab.cases(...)` turns every
case into a test (see primlab.pytest_plugin).
"""

from ._case_runs import DefenceWarning
from ._cases import Case
from ._check import CheckResult, check
from ._harness import HarnessError, harness_path

__all__ = ["Case", "CheckResult", "DefenceWarning", "HarnessError", "cases", "check", "harness_path"]


def cases(
    primitive: str,
    contract: str | None = None,
    sizes=None,
    seed=None,
    deep: bool = False,
    framework=None,
    allow_missing_defences=None,
    **parts,
):
    """A pytest marker: the test (which takes a `case` argument) runs once
    per catalogue case, with ids like `scan-exclusive.i32-n33-small_ints-0x5eed`.
    `seed` pins the run seed; otherwise `--primlab-seed`, else a fresh one
    printed in the report header. `deep=True` adds the large sizes (2^24,
    2^28, 2^28+1). `framework="torch"` checks the contract as that framework
    states it, as in primlab.check. A typed contract may be named by its
    parts, as in primlab.check (`op=`, `dtype_in=`, `dtype_out=`,
    `accumulator=`, `rtol=`, `atol=`, `ulp=`, `nan_rule=`; `contract` then
    names its kind). A case that could not get a defence that applies to it
    fails, naming it, unless `allow_missing_defences` names it ("poison",
    "perturb"; as in primlab.check)."""
    import pytest

    return pytest.mark.primlab_cases(
        primitive=primitive,
        contract=contract,
        sizes=sizes,
        seed=seed,
        deep=deep,
        framework=framework,
        allow_missing_defences=allow_missing_defences,
        **parts,
    )

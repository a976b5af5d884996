"""The case catalogue as the harness exports it (`harness cases export`:
inputs and the model's outputs as .npy files plus index.json), and the
harness's verdict on outputs written beside it (`harness cases verify`)."""

from __future__ import annotations

import dataclasses
import json
import numbers
import pathlib

import numpy as np

from . import _harness

# The element types of index.json (harness/src/cases/index.rs) as NumPy
# reads them; bfloat16 is stored as its raw bits, little-endian uint16.
DTYPES = {
    "int32": np.dtype("<i4"),
    "int64": np.dtype("<i8"),
    "float32": np.dtype("<f4"),
    "float64": np.dtype("<f8"),
    "bfloat16": np.dtype("<u2"),
    "float16": np.dtype("<f2"),
    "uint32": np.dtype("<u4"),
    "uint8": np.dtype("u1"),
}



@dataclasses.dataclass(frozen=True)
class Buffer:
    """One input or output buffer of a case, as index.json lists it."""

    role: str
    file: str
    dtype: str
    len: int


@dataclasses.dataclass(frozen=True)
class Case:
    """One case of the catalogue: its place in the export, the id parts the
    harness's failure line uses, its buffers and scalar parameters."""

    name: str
    primitive: str
    contract: str
    variant: str
    n: int
    size: str
    family: str
    seed: int
    """The case's input seed (the failure line's `seed=`), derived by the
    harness from the run seed, the primitive, the size and the family."""
    run_seed: int
    """The seed of the whole run: passing it again with this size
    regenerates this case's input (`seed=` of check, `--primlab-seed`)."""
    inputs: tuple
    params: tuple
    expected: tuple
    outputs: tuple
    tolerance: str
    rule: str

    @property
    def id(self) -> str:
        """`<primitive>-<contract>-n<size>-<family>-<run seed>`, the pytest id."""
        return f"{self.primitive}-{self.contract}-n{self.size}-{self.family}-{self.run_seed:#x}"

    def describe(self) -> str:
        """primitive, contract, size, family and both seeds, for messages."""
        return (
            f"{self.primitive} {self.contract} case {self.name} (n={self.size}, family={self.family}, "
            f"input seed {self.seed:#x}, run seed {self.run_seed:#x})"
        )


def _buffers(entries) -> tuple:
    return tuple(Buffer(e["role"], e["file"], e["dtype"], int(e["len"])) for e in entries)


class Export:
    """A folder written by `harness cases export`."""

    def __init__(self, folder: pathlib.Path):
        self.closest = None  # set by verify (typed float sums)
        self.folder = pathlib.Path(folder)
        index = json.loads((self.folder / "index.json").read_text())
        self.primitive = index["primitive"]
        self.contracts = list(index["contracts"])
        self.seed = int(index["seed"], 16)
        self.sizes = list(index["sizes"])
        self.cases = [
            Case(
                name=c["case"],
                primitive=c["primitive"],
                contract=c["contract"],
                variant=c["variant"],
                n=int(c["n"]),
                size=str(c["size"]),
                family=c["family"],
                seed=int(c["seed"], 16),
                run_seed=self.seed,
                inputs=_buffers(c["inputs"]),
                params=tuple((p["name"], p["dtype"], p["value"]) for p in c["params"]),
                expected=_buffers(c["expected"]),
                outputs=_buffers(c["outputs"]),
                tolerance=c["tolerance"],
                rule=c["rule"],
            )
            for c in index["cases"]
        ]

    @classmethod
    def create(
        cls,
        folder: pathlib.Path,
        primitive: str,
        contract: str | None,
        sizes,
        seed: int,
        deep: bool = False,
        framework: str | None = None,
        parts: dict | None = None,
    ) -> "Export":
        """Runs `harness cases export` into `folder` (new or empty). `parts`
        names a typed contract's parts (op, dtype_in, dtype_out, accumulator,
        rtol, atol, ulp, nan_rule; `contract` then names its kind). An
        unknown primitive, contract or size raises HarnessError with the
        harness's message, which lists the valid values."""
        if isinstance(sizes, numbers.Integral):
            sizes = [sizes]  # one size, written as a number
        args = ["cases", "export", "--primitive", str(primitive), "--seed", f"{seed:#x}"]
        if contract is not None:
            args += ["--contract", str(contract)]
        if framework is not None:
            args += ["--framework", str(framework)]
        for name, value in (parts or {}).items():
            if value is not None:
                args += ["--" + name.replace("_", "-"), str(value)]
        if deep:
            args.append("--deep")
        if sizes:
            # A string passes through in the harness's size grammar ("2^20+1").
            args += ["--sizes", ",".join(n if isinstance(n, str) else str(int(n)) for n in sizes)]
        done = _harness.run(args + [str(folder)])
        if done.returncode != 0:
            raise _harness.HarnessError(
                f"harness cases export wrote no case for primitive={primitive!r} contract={contract!r} "
                f"sizes={sizes!r} seed={seed:#x}: {done.stdout.strip()} {done.stderr.strip()}"
            )
        return cls(folder)

    def inputs(self, case: Case) -> list:
        """The case's input arrays (NumPy, 1-D, in the contract's order)."""
        arrays = []
        for b in case.inputs:
            a = np.load(self.folder / b.file)
            if a.dtype != DTYPES[b.dtype] or a.shape != (b.len,):
                raise _harness.HarnessError(f"{b.file} holds {a.dtype}{a.shape}, index.json says {b.dtype}[{b.len}]")
            arrays.append(a)
        return arrays

    def params(self, case: Case) -> dict:
        """The case's scalar parameters by name (ints, or floats for float32 ones)."""
        return {name: (float(v) if dtype.startswith("float") else int(v)) for name, dtype, v in case.params}

    def expected(self, case: Case) -> list:
        """The model's outputs as exported (the harness regenerates them for
        its verdict and never reads these files)."""
        return [np.load(self.folder / b.file) for b in case.expected]

    def write_outputs(self, case: Case, arrays) -> None:
        for b, a in zip(case.outputs, arrays):
            np.save(self.folder / b.file, a, allow_pickle=False)

    def verify(self, cases=None) -> dict:
        """The harness's verdict: {case name: (failure line, summary lines)}
        for every failing case among `cases` (all when None); an empty dict
        when all passed. The line and the summary lines (mismatched elements,
        first indices, largest differences) are the harness's own
        (`cases verify --json`); a case the harness skipped fails with its reason."""
        args = ["cases", "verify", str(self.folder), "--json"]
        if cases is not None:
            args += ["--case", ",".join(c.name for c in cases)]
        done = _harness.run(args)
        try:
            report = json.loads(done.stdout)
        except json.JSONDecodeError as error:
            raise _harness.HarnessError(
                f"harness cases verify printed no JSON ({error}):\n{done.stdout}{done.stderr}"
            ) from None
        # The passing float sums' closest approach to their bound (typed contracts), if any.
        self.closest = report.get("closest")
        failures = {}
        for c in report["cases"]:
            if c["verdict"] == "fail":
                failures[c["case"]] = (c["failure"], list(c["summary"]))
            elif c["verdict"] == "skipped":
                failures[c["case"]] = (f"skipped: {c['reason']}", [])
        checked = len(self.cases) if cases is None else len(cases)
        if report["total"] != checked:
            raise _harness.HarnessError(f"harness cases verify checked {report['total']} of {checked} cases:\n{done.stderr}")
        if (done.returncode == 0) != (not failures):
            raise _harness.HarnessError(
                f"harness cases verify exited {done.returncode} with {len(failures)} failure(s) listed:\n{done.stderr}"
            )
        return failures

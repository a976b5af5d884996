"""The tests of the primlab package: they run the real harness binary
(`$PRIMLAB_HARNESS`, or this checkout's newest `target/*/harness`) on small
sizes, with numpy functions as the kernels under test."""

import json
import subprocess
import tempfile

import primlab

pytest_plugins = ["pytester"]


def harness_cases(primitive, contract, sizes, seed):
    """The case list (index.json entries) of an export made by the harness
    binary directly, without primlab's code: what counts and ids are checked against."""
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run(
            [str(primlab.harness_path()), "cases", "export", "--primitive", primitive, "--contract", contract,
             "--sizes", ",".join(map(str, sizes)), "--seed", hex(seed), folder],
            check=True, capture_output=True,
        )
        with open(f"{folder}/index.json") as index:
            return json.load(index)["cases"]

"""primlab from Python with NumPy only: runs anywhere (no GPU), and is run by
`make verify`. Either as a script:

    python3 examples/python/test_numpy_scan.py

or under pytest, one test per catalogue case (the plugin is loaded by the
installed wheel's entry point; from a checkout add `-p primlab.pytest_plugin`
and PYTHONPATH=python):

    pytest examples/python/test_numpy_scan.py -k 'n33-sorted'
"""

import numpy as np

import primlab


def exclusive_scan(x: np.ndarray) -> np.ndarray:
    """int32 in[n] -> int64 out[n], out[i] = x[0] + ... + x[i-1] (out[0] = 0)."""
    out = np.zeros(len(x), dtype=np.int64)
    out[1:] = np.cumsum(x[:-1], dtype=np.int64)
    return out


def test_the_whole_catalogue_in_one_call():
    result = primlab.check(exclusive_scan, primitive="scan", contract="exclusive.i32", sizes=[1, 33, 4099])
    assert result.cases_passed > 0


@primlab.cases(primitive="scan", contract="exclusive.i32", sizes=[1, 33, 4099])
def test_each_case(case):
    case.check(exclusive_scan)


if __name__ == "__main__":
    # The default sizes (the sweep's boundary and random sizes up to 2^20),
    # a fresh seed: printed, so a failure reruns with seed=...
    print(primlab.check(exclusive_scan, primitive="scan", contract="exclusive.i32"))

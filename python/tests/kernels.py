"""Reference-free kernels for the tests: each is written from the contract's
definition (an exclusive scan's out[i] is the int64 sum of x[0..i); a sum
is the int64 sum), with numpy's own cumulative sum, never with primlab."""

import numpy as np


def exclusive_scan(x):
    out = np.zeros(len(x), dtype=np.int64)
    out[1:] = np.cumsum(x[:-1], dtype=np.int64)
    return out


def inclusive_scan(x):
    return np.cumsum(x, dtype=np.int64)


def sum_i32(x):
    return np.array([x.sum(dtype=np.int64)], dtype=np.int64)


def scan_off_by_one_at_the_end(x):
    """Planted bug: the last prefix is one too large."""
    out = exclusive_scan(x)
    out[-1] += 1
    return out


def scan_last_element_unwritten(x):
    """Planted bug: the loop stops one short, so out[n-1] keeps the 0 it started with."""
    out = np.zeros(len(x), dtype=np.int64)
    out[1:-1] = np.cumsum(x[:-2], dtype=np.int64) if len(x) > 2 else 0
    return out


def float_sum_f32(x):
    # The float64 sum of float32 inputs rounded once to float32: within the
    # order-free bound (n-1) u/(1+u) sum|x| that float_reduce sum.f32 states.
    return np.array([np.sum(x, dtype=np.float64)], dtype=np.float32)


def float_sum_one_percent_high(x):
    """Planted bug: a 1 % scale error, far past the bound on any sum whose terms don't cancel."""
    return np.array([np.sum(x, dtype=np.float64) * 1.01], dtype=np.float32)


_kept_outputs = {}


def scan_into_a_kept_buffer(x):
    """Planted bug: an output buffer kept between calls (one per input, as a
    memo table would) and accumulated into without being cleared, as a
    kernel that adds into an output it never zeroes: right on the buffer's
    first use, wrong on the same input's second call."""
    out = _kept_outputs.setdefault(x.tobytes(), np.zeros(len(x), dtype=np.int64))
    out[1:] += np.cumsum(x[:-1], dtype=np.int64)
    return out.copy()

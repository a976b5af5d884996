"""Moving a case's arrays to the framework the user's function takes, and
its results back to NumPy arrays of the contract's types."""

from __future__ import annotations

import numbers

import numpy as np

from ._cases import DTYPES, Buffer, Case


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch


def to_framework(array: np.ndarray, dtype: str, device, convert):
    """`array` (index dtype `dtype`) as the function receives it: NumPy by
    default; a torch tensor on `device` ("cpu", "cuda", "cuda:1", a
    torch.device); or whatever `convert(array)` returns (CuPy, JAX, ...)."""
    if convert is not None:
        return convert(array)
    if device is None or device == "numpy":
        return array
    torch = _torch()
    if torch is None:
        raise ImportError(f"primlab: device={device!r} asks for torch tensors, but torch is not importable")
    if dtype == "bfloat16":
        # The file holds bfloat16's raw bits; torch reinterprets them in place.
        tensor = torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
    else:
        tensor = torch.from_numpy(array)
    return tensor.to(device)


def _is_torch_tensor(value) -> bool:
    torch = _torch()
    return torch is not None and isinstance(value, torch.Tensor)


def _torch_to_numpy(tensor) -> np.ndarray:
    torch = _torch()
    tensor = tensor.detach()
    if tensor.dtype == torch.bfloat16:
        # NumPy has no bfloat16: its raw bits, as the harness stores it.
        return tensor.view(torch.int16).cpu().contiguous().numpy().view(np.uint16)
    return tensor.cpu().contiguous().numpy()


def to_numpy(value, buffer: Buffer, case: Case, params: dict) -> np.ndarray:
    """The function's result for output `buffer` as a 1-D C-ordered NumPy
    array of the contract's type. A wrong type or shape raises TypeError or
    ValueError naming the case; the length is left to the harness (a
    compaction's output is as long as its count, and a wrong length is a
    wrong answer the harness reports)."""
    where = f"primlab: {case.describe()}: output '{buffer.role}'"
    wanted = DTYPES[buffer.dtype]
    if _is_torch_tensor(value):
        array = _torch_to_numpy(value)
    elif isinstance(value, (np.ndarray, np.generic)):
        array = np.asarray(value)
    elif isinstance(value, numbers.Number) and not isinstance(value, bool):
        # A plain Python number has no type of its own: it is taken as the
        # contract's type only when that holds it exactly.
        array = np.asarray(value, dtype=wanted)
        if array.item() != value:
            raise TypeError(f"{where}: the Python number {value!r} is not exactly a {buffer.dtype}")
    elif hasattr(value, "__dlpack__"):
        try:
            array = np.from_dlpack(value)
        except (BufferError, RuntimeError, TypeError, ValueError) as host_error:
            torch = _torch()
            if torch is None:
                raise TypeError(
                    f"{where}: NumPy cannot read this DLPack array ({host_error}); return a host array"
                ) from host_error
            array = _torch_to_numpy(torch.from_dlpack(value))
    else:
        raise TypeError(
            f"{where}: the function returned {type(value).__name__}; return a NumPy array, a torch tensor, "
            f"an array with __dlpack__, or (for a one-element output) a number"
        )
    if buffer.dtype == "bfloat16" and array.dtype.name == "bfloat16":
        array = array.view(np.uint16)  # ml_dtypes' bfloat16: its raw bits
    if array.dtype != wanted:
        raise TypeError(
            f"{where} is {array.dtype.name}{list(array.shape)} where the contract's output is {buffer.dtype} "
            f"({buffer.len} elements for this case)"
        )
    rows, cols = params.get("rows"), params.get("cols")
    if array.ndim == 0:
        array = array.reshape(1)
    elif array.ndim == 2 and rows is not None and array.shape == (rows, cols):
        array = array.reshape(-1)  # a softmax output as rows x cols is the flat buffer in C order
    elif array.ndim == 2 and rows is not None and array.shape == (rows, 1):
        array = array.reshape(-1)  # a per-row statistic as rows x 1 (torch's saved mean and rstd)
    elif array.ndim != 1:
        raise ValueError(
            f"{where} has shape {tuple(array.shape)}; the contract's output is 1-D ({buffer.len} elements"
            + (f", or {rows} x {cols}, or {rows} x 1" if rows is not None else "")
            + ")"
        )
    return np.ascontiguousarray(array)

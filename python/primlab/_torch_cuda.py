"""The defences that need a CUDA device, through torch (which Triton and
most Python kernels allocate with):

* poisoning torch's cached free blocks before each call, so that an output
  made with `torch.empty` (memory the caching allocator hands back from an
  earlier tensor) holds the run's poison, never the zeros of fresh memory,
  and a kernel that accumulates into it fails every time;
* the schedule perturbation: the harness's holding kernel, loaded into
  torch's context through the driver API and launched on a stream of its
  own while the function runs.

Nothing here imports torch unless the caller already did: a NumPy function
gets neither defence (its runs still differ by being run twice)."""

from __future__ import annotations

import ctypes
import sys

# Blocks of torch's snapshot that nobody holds; `active_pending_free` ones
# still have work queued on them and are left alone.
_FREE = "inactive"

# The widths torch can fill in one call, by pattern length: a signed
# integer view of the block, filled with the pattern's value.
_FILL_TYPES = {1: "<i1", 2: "<i2", 4: "<i4", 8: "<i8"}


def torch_if_imported():
    """torch, when the program imported it already; None otherwise."""
    return sys.modules.get("torch")


def cuda_device(device):
    """The torch CUDA device index the function's memory lives on: `device`
    when it names a CUDA device, else torch's current device when the program
    has already initialised CUDA through torch (a function taking NumPy
    arrays that moves them itself), else None."""
    torch = torch_if_imported()
    if torch is None:
        return None
    if device is not None and not (isinstance(device, str) and device == "numpy"):
        try:
            named = torch.device(device)
        except (RuntimeError, TypeError):
            named = None
        if named is not None and named.type == "cuda":
            return named.index if named.index is not None else torch.cuda.current_device()
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        return torch.cuda.current_device()
    return None


def free_ranges(snapshot, device_index: int) -> tuple[list, str | None]:
    """The (address, bytes) of every free block of `device_index` in a
    `torch.cuda.memory_snapshot()`, and why some memory was left out (None
    when nothing was). A segment lists its blocks in address order from the
    segment's address; expandable segments are left out (their free tail
    may be unmapped address space), and so are private pools (a CUDA graph's
    memory, which its replays own)."""
    ranges, left_out = [], None
    for segment in snapshot:
        if segment.get("device") != device_index:
            continue
        if tuple(segment.get("segment_pool_id") or (0, 0)) != (0, 0):
            continue
        if segment.get("is_expandable"):
            left_out = "expandable segments (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True) are not poisoned"
            continue
        address = segment["address"]
        for block in segment["blocks"]:
            start = block.get("address", address)
            if block["state"] == _FREE and block["size"] > 0:
                ranges.append((start, block["size"]))
            address = start + block["size"]
    return ranges, left_out


class _RawMemory:
    """Device memory torch does not own, seen as a 1-D array (the CUDA array
    interface), so torch can fill it on its current stream."""

    def __init__(self, address: int, count: int, typestr: str):
        self.__cuda_array_interface__ = {
            "shape": (count,),
            "typestr": typestr,
            "data": (address, False),
            "version": 3,
            "strides": None,
        }


def poison_free_blocks(device_index: int, pattern: bytes) -> tuple[int, str | None]:
    """Fills every free block of torch's caching allocator on `device_index`
    with `pattern` (repeated) and waits for it; returns the bytes filled and
    what was left out (None when nothing). Raises RuntimeError when the
    allocator cannot list its blocks (the cudaMallocAsync backend)."""
    torch = torch_if_imported()
    typestr = _FILL_TYPES[len(pattern)]
    value = int.from_bytes(pattern, "little", signed=True)
    with torch.cuda.device(device_index):
        if torch.cuda.get_allocator_backend() != "native":
            raise RuntimeError(
                f"torch's {torch.cuda.get_allocator_backend()} allocator keeps no list of free blocks to poison"
            )
        torch.cuda.synchronize()
        ranges, left_out = free_ranges(torch.cuda.memory_snapshot(), device_index)
        filled = 0
        for address, size in ranges:
            count = size // len(pattern)
            torch.as_tensor(_RawMemory(address, count, typestr), device=f"cuda:{device_index}").fill_(value)
            filled += count * len(pattern)
        torch.cuda.synchronize()
    return filled, left_out


# CUfunction_attribute CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (cuda.h).
_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8


class _Driver:
    """The few CUDA driver calls the holding kernel needs, through ctypes."""

    def __init__(self):
        names = ["libcuda.so.1", "libcuda.so"] if sys.platform != "win32" else ["nvcuda.dll"]
        errors = []
        for name in names:
            try:
                self.lib = ctypes.CDLL(name)
                break
            except OSError as error:
                errors.append(f"{name}: {error}")
        else:
            raise RuntimeError("the CUDA driver library could not be loaded (" + "; ".join(errors) + ")")

    def call(self, what: str, name: str, *args) -> None:
        result = getattr(self.lib, name)(*args)
        if result != 0:
            text = ctypes.c_char_p()
            self.lib.cuGetErrorString(result, ctypes.byref(text))
            raise RuntimeError(f"{what}: {name} returned {result} ({(text.value or b'?').decode()})")


def kernel_params(values):
    """cuLaunchKernel's `kernelParams` for 64-bit arguments `values`: an
    array of pointers, one to each value. Returns the values' ctypes objects
    too, which must stay alive until the launch returns."""
    args = [ctypes.c_uint64(v) for v in values]
    params = (ctypes.c_void_p * len(args))(*[ctypes.addressof(a) for a in args])
    return args, params


class HeldSMs:
    """The harness's holding kernel, loaded on one device: `hold(share)`
    starts it on its own stream, `release()` lets it go once the function's
    work on the current stream has finished, and waits for it."""

    def __init__(self, plan: dict, device_index: int):
        torch = torch_if_imported()
        self.torch, self.plan, self.device_index = torch, plan, device_index
        self.driver = _Driver()
        with torch.cuda.device(device_index):
            torch.cuda.synchronize()  # torch's primary context is current on this thread
            context = ctypes.c_void_p()
            self.driver.call("finding torch's CUDA context", "cuCtxGetCurrent", ctypes.byref(context))
            if not context.value:
                raise RuntimeError("no CUDA context is current after torch.cuda.synchronize()")
            self.module = ctypes.c_void_p()
            image = ctypes.c_char_p(plan["ptx"].encode() + b"\0")
            self.driver.call("loading the holding kernel's PTX", "cuModuleLoadData", ctypes.byref(self.module), image)
            self.function = ctypes.c_void_p()
            self.driver.call(
                "finding the holding kernel", "cuModuleGetFunction", ctypes.byref(self.function), self.module,
                plan["kernel"].encode(),
            )
            self.shared = torch.cuda.get_device_properties(device_index).shared_memory_per_block_optin
            self.driver.call(
                "giving the holding kernel a whole SM's shared memory", "cuFuncSetAttribute", self.function,
                ctypes.c_int(_MAX_DYNAMIC_SHARED_SIZE_BYTES), ctypes.c_int(self.shared),
            )
            self.stream = torch.cuda.Stream(device=device_index)
            self.flag = torch.zeros(1, dtype=torch.int32, device=f"cuda:{device_index}")

    def hold(self, share: dict) -> None:
        """Clears the release flag and starts the holding kernel, both on its
        stream, so that it holds `share["sms_held"]` SMs while the function runs."""
        torch = self.torch
        with torch.cuda.device(self.device_index):
            with torch.cuda.stream(self.stream):
                self.flag.zero_()
            args, params = kernel_params([self.flag.data_ptr(), self.plan["hold_cap_ns"], share["stagger_ns"]])
            self.driver.call(
                "launching the holding kernel", "cuLaunchKernel", self.function,
                ctypes.c_uint(share["sms_held"]), ctypes.c_uint(1), ctypes.c_uint(1),
                ctypes.c_uint(self.plan["threads"]), ctypes.c_uint(1), ctypes.c_uint(1),
                ctypes.c_uint(self.shared), ctypes.c_void_p(self.stream.cuda_stream), params, None,
            )

    def release(self) -> None:
        """Sets the flag on the current stream (after the function's kernels)
        and waits for both streams."""
        torch = self.torch
        with torch.cuda.device(self.device_index):
            self.flag.fill_(1)
            torch.cuda.current_stream().synchronize()
            self.stream.synchronize()

#!/usr/bin/env python3
"""Compiles reduce.cu to reduce.ptx with NVRTC (through ctypes; no CUDA toolkit
needed, only libnvrtc, e.g. from the nvidia-cuda-nvrtc wheel).

usage: make_ptx.py [LIBNVRTC]   (default: libnvrtc.so.13 on the loader path)
The PTX targets compute_80, so any GPU of compute capability 8.0 or newer
(the H200 is 9.0) JIT-compiles it when the module is loaded."""
import ctypes
import pathlib
import sys

here = pathlib.Path(__file__).resolve().parent
lib = ctypes.CDLL(sys.argv[1] if len(sys.argv) > 1 else "libnvrtc.so.13")
source = (here / "reduce.cu").read_bytes()
program = ctypes.c_void_p()


def check(status, what):
    if status != 0:
        log_size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(program, ctypes.byref(log_size))
        log = ctypes.create_string_buffer(log_size.value)
        lib.nvrtcGetProgramLog(program, log)
        sys.exit(f"make_ptx.py: {what} failed with status {status}:\n{log.value.decode()}")


check(lib.nvrtcCreateProgram(ctypes.byref(program), source, b"reduce.cu", 0, None, None), "nvrtcCreateProgram")
options = [b"-std=c++17", b"-lineinfo", b"--gpu-architecture=compute_80"]
check(lib.nvrtcCompileProgram(program, len(options), (ctypes.c_char_p * len(options))(*options)), "nvrtcCompileProgram")
size = ctypes.c_size_t()
check(lib.nvrtcGetPTXSize(program, ctypes.byref(size)), "nvrtcGetPTXSize")
ptx = ctypes.create_string_buffer(size.value)
check(lib.nvrtcGetPTX(program, ptx), "nvrtcGetPTX")
(here / "reduce.ptx").write_bytes(ptx.value)
print(f"make_ptx.py: wrote {here / 'reduce.ptx'} ({len(ptx.value)} bytes)")

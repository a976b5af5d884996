#!/usr/bin/env python3
"""Compile-checks the gallery without a GPU and without the harness binary:
each <nn>_<name>/kernel.cu is compiled by NVRTC (compute_90, -std=c++17,
-lineinfo, the include path of kernels/cuda, as `harness check` does) and
every [[launch]] of its check.toml must name an entry point of the PTX whose
parameters match the arguments in number and size (buffers, n and int64
parameters 8 bytes; bins, lower, upper, scale, rows, cols, n32, k, temperature, eps 4
bytes).
`harness check --manifest M --validate-only` is the full check (it also
evaluates every expression at every size); use this when no binary is built.

    python3 examples/check/bugs/nvrtc_check.py [GALLERY_DIR]

libnvrtc.so.13 is looked for in $NVRTC_LIB_DIR, then <repo>/.nvrtc/nvidia/cu13/lib
(scripts/install_nvrtc.sh), then the loader's path.
"""
import ctypes
import glob
import os
import re
import sys
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))


def lib_dir():
    for d in (os.environ.get("NVRTC_LIB_DIR", ""), os.path.join(ROOT, ".nvrtc/nvidia/cu13/lib")):
        if d and os.path.exists(os.path.join(d, "libnvrtc.so.13")):
            return d
    return None


d = lib_dir()
if d and d not in os.environ.get("LD_LIBRARY_PATH", "").split(":"):
    # libnvrtc loads its builtins library through the loader's path: re-run with it.
    os.environ["LD_LIBRARY_PATH"] = d + ":" + os.environ.get("LD_LIBRARY_PATH", "")
    os.execv(sys.executable, [sys.executable] + sys.argv)
try:
    lib = ctypes.CDLL(os.path.join(d, "libnvrtc.so.13") if d else "libnvrtc.so.13")
except OSError as e:
    sys.exit(f"nvrtc_check: cannot load libnvrtc.so.13 ({e}); set NVRTC_LIB_DIR or run scripts/install_nvrtc.sh")
FOUR = {"bins", "lower", "upper", "scale", "rows", "cols", "n32", "k", "temperature", "eps"}


def compile_cuda(src, name):
    prog = ctypes.c_void_p()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), name.encode(), 0, None, None) != 0:
        return 1, "nvrtcCreateProgram failed", None
    opts = [b"--gpu-architecture=compute_90", b"-std=c++17", b"-lineinfo",
            ("-I" + os.path.join(ROOT, "kernels", "cuda")).encode()]
    r = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    ptx = None
    if r == 0:
        lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetPTX(prog, buf)
        ptx = buf.value.decode()
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return r, log.value.decode(), ptx


def main():
    gallery = sys.argv[1] if len(sys.argv) > 1 else HERE
    ok = True
    for folder in sorted(glob.glob(os.path.join(gallery, "[0-9][0-9]_*/"))):
        name = os.path.basename(folder.rstrip("/"))
        with open(os.path.join(folder, "check.toml"), "rb") as f:
            m = tomllib.load(f)
        with open(os.path.join(folder, m["module"]["cuda"])) as f:
            r, log, ptx = compile_cuda(f.read(), m["module"]["cuda"])
        problems = []
        if r != 0:
            problems.append("compile error:\n" + log)
        else:
            entries = {e.group(1): [int(w) // 8 for w in re.findall(r"\.param\s+\.[a-z](\d+)", e.group(2))]
                       for e in re.finditer(r"\.entry\s+(\w+)\s*\((.*?)\)", ptx, re.S)}
            for launch in m["launch"]:
                want = [4 if a in FOUR else 8 for a in launch["args"]]
                got = entries.get(launch["kernel"])
                if got is None:
                    problems.append(f"no entry point {launch['kernel']} (found {', '.join(entries)})")
                elif got != want:
                    problems.append(f"{launch['kernel']}: args {launch['args']} pass {want} bytes, it takes {got}")
        first = [l for l in open(os.path.join(folder, "check.toml")).read().splitlines()[:2]]
        if not (first and (first[0].startswith("# BUG:") or first[0].startswith("# CONTROL:"))
                and first[1].startswith("# expected catcher: ")):
            problems.append("check.toml must start with '# BUG: ...' or '# CONTROL: ...' and '# expected catcher: ...'")
        if m.get("name") != name.split("_", 1)[1]:
            problems.append(f"name = {m.get('name')!r}, the folder says {name.split('_', 1)[1]!r}")
        print(f"{name}: {'ok' if not problems else 'FAIL'}")
        for p in problems:
            print("    " + p)
        ok &= not problems
    sys.exit(0 if ok else 1)


main()

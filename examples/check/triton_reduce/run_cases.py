#!/usr/bin/env python3
"""Runs a Triton int32 -> int64 sum on every case of a `harness cases export`
folder and writes each case's output file for `harness cases verify`.

usage: run_cases.py DIR
Needs numpy, torch with CUDA and triton. Exits nonzero on any error (a
missing package, no GPU, a case of another contract, a kernel failure).
"""
import json
import pathlib
import sys

import numpy as np
import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def partial_sums(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # Each program sums BLOCK consecutive items in int64.
    pid = tl.program_id(0)
    offsets = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets, mask=offsets < n, other=0).to(tl.int64)
    tl.store(out_ptr + pid, tl.sum(x, axis=0))


def triton_sum(x: torch.Tensor) -> torch.Tensor:
    """The int64 sum of `x` (int32 or int64, on the GPU), as a 1-element tensor."""
    x = x.to(torch.int64) if x.numel() == 1 else x
    while x.numel() > 1:
        blocks = triton.cdiv(x.numel(), BLOCK)
        out = torch.empty(blocks, dtype=torch.int64, device=x.device)
        partial_sums[(blocks,)](x, out, x.numel(), BLOCK=BLOCK)
        x = out
    return x.reshape(1)


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    folder = pathlib.Path(sys.argv[1])
    if not torch.cuda.is_available():
        print("run_cases.py: no CUDA device visible to torch", file=sys.stderr)
        return 1
    index = json.loads((folder / "index.json").read_text())
    if index.get("format") != "primlab-cases/2":
        print(f"run_cases.py: {folder}/index.json is not a primlab-cases/2 index", file=sys.stderr)
        return 1
    for case in index["cases"]:
        if (case["primitive"], case["contract"]) != ("reduce", "sum.i32"):
            print(f"run_cases.py: case {case['case']} is {case['primitive']} {case['contract']}, not reduce sum.i32", file=sys.stderr)
            return 1
        (source,) = case["inputs"]
        x = np.load(folder / source["file"])
        if x.dtype != np.int32 or x.shape != (case["n"],):
            print(f"run_cases.py: {source['file']} holds {x.dtype}{x.shape}, not int32[{case['n']}]", file=sys.stderr)
            return 1
        got = triton_sum(torch.from_numpy(x).cuda())
        torch.cuda.synchronize()
        np.save(folder / case["outputs"][0]["file"], got.cpu().numpy())
    print(f"run_cases.py: wrote {len(index['cases'])} outputs into {folder}")
    return 0 if index["cases"] else 1


if __name__ == "__main__":
    sys.exit(main())

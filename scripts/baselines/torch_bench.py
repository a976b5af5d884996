#!/usr/bin/env python3
"""PyTorch baselines for primlab's `harness bench`.

    python3 torch_bench.py --out FILE.jsonl [--sizes 10,12,...,28] [--quick] [--ops a,b,c]
                           [--shapes 4096x1024,...] [--seg-lens 1024] [--bins 19]
                           [--topk-shapes 1x32000,...] [--topk-ks 1,50,256,2048]

Writes one JSON object per line: a meta line, then one record per (op, size or shape[, param]).
Each op is checked once against a float64/int64 reference (CPU torch, or float64 on the GPU for
softmax) before it is timed; a failed check is recorded with "ok": false and no timing.
The top-k ops run torch.topk over the rows of --topk-shapes and over whole 1-D arrays of the
--sizes from 2^20 on, for each k of --topk-ks; their check is against torch.sort. The top-k
sampler (torch_topk_sample_f32, rows only) is the usual PyTorch recipe: torch.topk, softmax of
the values over a temperature, cumsum, searchsorted of one uniform per row, gather; its check is
against a float64 softmax of the sorted row.
If torch or CUDA cannot be used, the file holds the single line
{"impl": "torch", "unavailable": "<reason>"} and the exit status is 0.

Exit status: 0 = every check passed (or torch/CUDA unavailable); 1 = the file is complete but at
least one check failed or an op raised; 2 = usage error. See README.md beside this file.
"""

import argparse
import json
import os
import platform
import re
import sys

OPS_1D = [
    "torch_sum_i32_i64",
    "torch_cumsum_i32_i64",
    "torch_sum_f32",
    "torch_argmax_f32",
    "torch_nonzero_positive_i32",
    "torch_segsum_f32",
    "torch_histc_f32",
]
OPS_ROWS = ["torch_softmax_f32", "torch_softmax_bf16", "torch_argmax_rows_f32"]
# torch.topk over the rows of --topk-shapes and over whole 1-D arrays (--sizes from 2^20 on)
OPS_TOPK = ["torch_topk_f32", "torch_topk_bf16"]
# top-k, softmax with a temperature, one draw per row from a given uniform (rows of --topk-shapes)
OPS_SAMPLE = ["torch_topk_sample_f32"]
ALL_OPS = OPS_1D + OPS_ROWS + OPS_TOPK + OPS_SAMPLE
DEFAULT_SHAPES = [(4096, 1024), (4096, 4096), (8192, 32000), (1024, 131072), (65536, 33)]
DEFAULT_TOPK_SHAPES = [(r, c) for r in (1, 8, 64, 256) for c in (32000, 128256, 256000)]
QUICK_TOPK_SHAPES = [(1, 32000), (64, 128256)]
DEFAULT_TOPK_KS = [1, 50, 256, 2048]
QUICK_TOPK_KS = [1, 2048]
TOPK_MIN_LOG2 = 20  # whole-array top-k: the --sizes from 2^20 on
QUICK_TOPK_LOG2 = (20, 24)  # ... and with --quick only these two
SAMPLE_TEMPERATURE = 1.0  # the sampler's temperature (primlab's bench entry uses the same)
SEED_UNIFORMS = 4

U32 = 2.0 ** -24  # float32 unit roundoff
U16 = 2.0 ** -8  # bfloat16 unit roundoff
SEED_I32 = 1
SEED_F32 = 2
SEED_SOFTMAX = 3
PAD = 64  # copies start on 256-byte boundaries (64 elements of 4 bytes)


def log(msg):
    print("torch_bench: " + msg, file=sys.stderr, flush=True)


def int_list(s, what, lo, hi):
    out = []
    for t in s.split(","):
        t = t.strip()
        if not t:
            continue
        try:
            v = int(t)
        except ValueError:
            raise SystemExit(f"torch_bench: bad integer {t!r} for {what}") from None
        if not lo <= v <= hi:
            raise SystemExit(f"torch_bench: {what} takes values in [{lo}, {hi}], got {v}")
        out.append(v)
    if not out:
        raise SystemExit(f"torch_bench: empty list for {what}")
    return out


def parse_args(argv):
    p = argparse.ArgumentParser(prog="torch_bench.py", description="PyTorch baselines (JSONL)")
    p.add_argument("--out", required=True, help="output JSONL file")
    p.add_argument("--sizes", help="log2 of n, comma separated (default 10,12,...,28; "
                   "with --quick 10,16,20,24,28)")
    p.add_argument("--quick", action="store_true",
                   help="3 warm-ups and 20 runs (< 2^24 elements) or 10 runs, instead of 5 and 200 or 30")
    p.add_argument("--ops", help="comma separated, from: " + ",".join(ALL_OPS))
    p.add_argument("--shapes", help="ROWSxCOLS,... for the row ops (default "
                   + ",".join(f"{r}x{c}" for r, c in DEFAULT_SHAPES) + ")")
    p.add_argument("--seg-lens", default="1024", help="segment lengths for torch_segsum_f32 (default 1024)")
    p.add_argument("--bins", default="19", help="bin counts for torch_histc_f32 over [-9, -9+bins] (default 19)")
    p.add_argument("--topk-shapes", help="ROWSxCOLS,... for the top-k ops' rows (default "
                   + ",".join(f"{r}x{c}" for r, c in DEFAULT_TOPK_SHAPES) + "; with --quick "
                   + ",".join(f"{r}x{c}" for r, c in QUICK_TOPK_SHAPES) + ")")
    p.add_argument("--topk-ks", help="k values for the top-k ops (default "
                   + ",".join(map(str, DEFAULT_TOPK_KS)) + "; with --quick "
                   + ",".join(map(str, QUICK_TOPK_KS)) + "); the whole-array top-k takes the --sizes "
                   f"from 2^{TOPK_MIN_LOG2} on (with --quick only "
                   + " and ".join(f"2^{v}" for v in QUICK_TOPK_LOG2) + ")")
    a = p.parse_args(argv)
    if a.sizes:
        a.sizes = int_list(a.sizes, "--sizes", 0, 30)
    else:
        a.sizes = [10, 16, 20, 24, 28] if a.quick else list(range(10, 29, 2))
    if a.ops:
        a.ops = [o.strip() for o in a.ops.split(",") if o.strip()]
        bad = [o for o in a.ops if o not in ALL_OPS]
        if bad:
            p.error(f"unknown op(s) {', '.join(bad)}; known: {', '.join(ALL_OPS)}")
    else:
        a.ops = list(ALL_OPS)
    def shape_list(s):
        shapes = []
        for t in s.split(","):
            try:
                r, c = (int(v) for v in t.lower().split("x"))
            except ValueError:
                p.error(f"bad shape {t!r}; expected ROWSxCOLS")
            if r < 1 or c < 1:
                p.error(f"bad shape {t!r}")
            shapes.append((r, c))
        return shapes

    if a.shapes:
        a.shapes = shape_list(a.shapes)
    else:
        a.shapes = list(DEFAULT_SHAPES)
    if a.topk_shapes:
        a.topk_shapes = shape_list(a.topk_shapes)
    else:
        a.topk_shapes = list(QUICK_TOPK_SHAPES if a.quick else DEFAULT_TOPK_SHAPES)
    if a.topk_ks:
        a.topk_ks = int_list(a.topk_ks, "--topk-ks", 1, 1 << 30)
    else:
        a.topk_ks = list(QUICK_TOPK_KS if a.quick else DEFAULT_TOPK_KS)
    a.topk_sizes = [lg for lg in a.sizes if (lg in QUICK_TOPK_LOG2 if a.quick else lg >= TOPK_MIN_LOG2)]
    a.seg_lens = int_list(a.seg_lens, "--seg-lens", 1, 1 << 30)
    a.bins = int_list(a.bins, "--bins", 1, 1 << 20)
    return a


def driver_string():
    # First line, e.g. "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  ...":
    # the first word made only of digits and dots, with at least one dot.
    try:
        with open("/proc/driver/nvidia/version") as f:
            line = f.readline()
    except OSError:
        return "unknown"
    m = re.search(r"(?<![\w.])(\d+(?:\.\d+)+)(?![\w.])", line.partition(":")[2])
    return m.group(1) if m else "unknown"


class Writer:
    def __init__(self, path):
        self.f = open(path, "w")

    def line(self, obj):
        self.f.write(json.dumps(obj, separators=(",", ":")) + "\n")
        self.f.flush()

    def close(self):
        self.f.close()


def main(argv):
    args = parse_args(argv)
    try:
        w = Writer(args.out)
    except OSError as e:
        print(f"torch_bench: cannot open {args.out!r} for writing: {e}", file=sys.stderr)
        return 2
    try:
        return run(args, w)
    finally:
        w.close()


def unavailable(w, reason):
    log("unavailable: " + reason)
    w.line({"impl": "torch", "unavailable": reason})
    return 0


def run(args, w):
    try:
        import torch
    except Exception as e:  # ImportError, or a broken install raising something else
        return unavailable(w, f"import torch failed: {type(e).__name__}: {e}")
    try:
        if not torch.cuda.is_available():
            return unavailable(w, f"torch {torch.__version__} (CUDA {torch.version.cuda}): "
                               "torch.cuda.is_available() is False")
        dev = torch.device("cuda", torch.cuda.current_device())
        props = torch.cuda.get_device_properties(dev)
        torch.empty(1, device=dev)  # create the context now
    except Exception as e:
        return unavailable(w, f"CUDA initialisation failed: {type(e).__name__}: {e}")

    l2 = int(getattr(props, "L2_cache_size", 0) or 0)
    l2_known = l2 > 0
    if not l2_known:
        l2 = 64 << 20
    q = args.quick
    warmups = 3 if q else 5

    def iters_for(elems):
        large = elems >= (1 << 24)
        return (10 if large else 20) if q else (30 if large else 200)

    meta = {
        "gpu": props.name,
        "cc": f"{props.major}.{props.minor}",
        "sms": props.multi_processor_count,
        "l2_bytes": l2 if l2_known else None,
        "total_mem_bytes": props.total_memory,
        "driver": driver_string(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "python": platform.python_version(),
        "quick": q,
        "warmups": warmups,
        "iters_below_2p24": iters_for(1),
        "iters_from_2p24": iters_for(1 << 24),
        "timing": "torch.cuda.Event(enable_timing=True) recorded before and after each single call on "
                  "the current stream, end.synchronize() after each, so the GPU is idle when the start "
                  "event is recorded and Python/dispatcher/launch latency counts; median, min and max "
                  "over iters",
        "input_i32": f"torch.randint(-9, 10, dtype=int32) on the device, torch.Generator seed {SEED_I32}",
        "input_f32": f"torch.rand(dtype=float32) - 0.5 on the device (uniform in [-0.5, 0.5)), seed {SEED_F32}",
    }
    w.line({"impl": "torch", "meta": meta})
    log(f"{props.name}, {props.multi_processor_count} SMs, L2 {l2} B, torch {torch.__version__}, "
        f"CUDA {torch.version.cuda}")

    state = {"fail": 0, "done": 0}
    total = 0
    for op in args.ops:
        if op in OPS_ROWS:
            total += len(args.shapes)
        elif op in OPS_TOPK:
            # a k above the row length is skipped (no record)
            total += sum(k <= c for _, c in args.topk_shapes for k in args.topk_ks)
            total += sum(k <= (1 << lg) for lg in args.topk_sizes for k in args.topk_ks)
        elif op in OPS_SAMPLE:
            total += sum(k <= c for _, c in args.topk_shapes for k in args.topk_ks)
        else:
            k = len(args.seg_lens) if op == "torch_segsum_f32" else len(args.bins) if op == "torch_histc_f32" else 1
            total += k * len(args.sizes)
    state["total"] = total

    def gen(seed):
        g = torch.Generator(device=dev)
        g.manual_seed(seed)
        return g

    class Rotated:
        """Identical copies of one input so that small inputs are read from DRAM, not L2."""

        def __init__(self, x):
            self.n = x.numel()
            self.shape = x.shape
            stride = (self.n + PAD - 1) // PAD * PAD
            one = stride * x.element_size()  # one copy, padding included
            need = 2 * l2
            self.copies = 1 if one >= need else need // one + 1
            self.stride = stride
            self.nbytes = self.n * x.element_size()
            flat = torch.empty(self.copies * stride, dtype=x.dtype, device=dev)
            # one broadcast copy fills every copy; padding is left unwritten and never read
            flat.view(self.copies, stride)[:, : self.n].copy_(x.reshape(1, self.n).expand(self.copies, self.n))
            self.flat = flat
            self.cursor = 0

        def next(self):
            # slicing happens before the start event is recorded, outside the timed region
            c = self.cursor
            self.cursor = (c + 1) % self.copies
            return self.flat[c * self.stride: c * self.stride + self.n].view(self.shape)

        def policy(self):
            if self.copies == 1:
                return (f"single input buffer ({self.nbytes} B >= 2 x L2); outputs come from "
                        "PyTorch's caching allocator and reuse the same blocks")
            return (f"inputs rotated over {self.copies} identical copies ({self.nbytes} B each, "
                    f"{self.copies * self.stride * self.flat.element_size()} B in all > 2 x L2), next "
                    "copy per invocation; outputs come from PyTorch's caching allocator and reuse "
                    "the same blocks")

    def time_it(fn, rot, elems):
        for _ in range(warmups):
            fn(rot.next())
        torch.cuda.synchronize()
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        ts = []
        for _ in range(iters_for(elems)):
            x = rot.next()
            s.record()
            fn(x)
            e.record()
            e.synchronize()
            ts.append(s.elapsed_time(e) * 1000.0)
        samples = [round(t, 3) for t in ts]  # in the order timed, for the harness's noise estimate
        ts.sort()
        m = len(ts)
        med = ts[m // 2] if m % 2 else 0.5 * (ts[m // 2 - 1] + ts[m // 2])
        return med, ts[0], ts[-1], m, samples

    def record(op, n, rot, fn, check, logical, timed_region, params, shape=None):
        """check(result) -> (ok, what, why); logical: number or function of the result."""
        rec = {"impl": "torch", "op": op, "n": n}
        if shape is not None:
            rec["shape"] = list(shape)
        res_ok, what, why = False, "", ""
        try:
            res = fn(rot.next())
            torch.cuda.synchronize()
            res_ok, what, why = check(res)
            lb = logical(res) if callable(logical) else logical
            del res
            if res_ok:
                med, mn, mx, it, samples = time_it(fn, rot, n)
                rec.update(median_us=round(med, 3), min_us=round(mn, 3), max_us=round(mx, 3),
                           iters=it, warmups=warmups, samples_us=samples)
            rec["logical_bytes"] = lb
            if res_ok:
                rec["gbps"] = round(lb / (med * 1e3), 2)
        except Exception as ex:  # an op that raises (e.g. out of memory) is recorded, not fatal
            res_ok, why = False, f"{type(ex).__name__}: {ex}"
            torch.cuda.empty_cache()
        rec["ok"] = bool(res_ok)
        if not res_ok:
            rec["error"] = why
        if what:
            rec["check"] = what
        rec["cache_policy"] = rot.policy()
        rec["timed_region"] = timed_region
        rec["params"] = params
        w.line(rec)
        state["done"] += 1
        tag = f"[{state['done']}/{state['total']}] {op:<28} " + (
            f"shape={shape[0]}x{shape[1]}" if shape is not None else f"n={n:<10}")
        if res_ok:
            log(f"{tag} {json.dumps(params)} median {rec['median_us']:10.2f} us  {rec['gbps']:8.1f} GB/s")
        else:
            state["fail"] += 1
            log(f"{tag} {json.dumps(params)} CHECK FAILED: {why}")

    def first_mismatch(got, exp):
        i = int((got != exp).nonzero()[0, 0])
        return i, got[i].item(), exp[i].item()

    # ---------------------------------------------------------------- 1-D ops over n = 2^k
    ops_1d = [o for o in args.ops if o in OPS_1D]
    need_i = any(o in ops_1d for o in ("torch_sum_i32_i64", "torch_cumsum_i32_i64",
                                       "torch_nonzero_positive_i32", "torch_histc_f32"))
    need_f = any(o in ops_1d for o in ("torch_sum_f32", "torch_argmax_f32", "torch_segsum_f32"))
    for lg in args.sizes if ops_1d else []:
        n = 1 << lg
        xi = torch.randint(-9, 10, (n,), dtype=torch.int32, device=dev, generator=gen(SEED_I32)) if need_i else None
        xf = (torch.rand(n, dtype=torch.float32, device=dev, generator=gen(SEED_F32)) - 0.5) if need_f else None
        hi = xi.cpu() if need_i else None
        hf = xf.cpu() if need_f else None
        ri = Rotated(xi) if need_i else None
        rf = Rotated(xf) if need_f else None
        del xi, xf
        pin = {"input": "int32 in [-9, 9]"}
        pfn = {"input": "float32 uniform in [-0.5, 0.5)"}
        for op in ops_1d:
            if op == "torch_sum_i32_i64":
                exp = int(hi.to(torch.int64).sum())

                def chk(r, exp=exp):
                    got = int(r)
                    return got == exp, "exact", f"sum {got}, expected {exp}"
                record(op, n, ri, lambda x: x.sum(dtype=torch.int64), chk, 4 * n,
                       "one call x.sum(dtype=torch.int64) on int32 x (int64 scalar output)", dict(pin))
            elif op == "torch_cumsum_i32_i64":
                def chk(r):
                    got = r.cpu()
                    exp = torch.cumsum(hi.to(torch.int64), 0)
                    if torch.equal(got, exp):
                        return True, "exact, every output", ""
                    i, g, e = first_mismatch(got, exp)
                    return False, "", f"out[{i}] = {g}, expected {e}"
                record(op, n, ri, lambda x: torch.cumsum(x, 0, dtype=torch.int64), chk, 12 * n,
                       "one call torch.cumsum(x, 0, dtype=torch.int64) on int32 x (inclusive; int64 output "
                       "allocated by the caching allocator)", dict(pin))
            elif op == "torch_sum_f32":
                exact = float(hf.to(torch.float64).sum())  # exact: multiples of 2^-24, n <= 2^30
                tol = n * U32 * float(hf.to(torch.float64).abs().sum())

                def chk(r, exact=exact, tol=tol):
                    got = float(r)
                    err = abs(got - exact)
                    return (err <= tol, f"|got - exact| = {err:.3g} <= n * 2^-24 * sum|x| = {tol:.3g}",
                            f"sum {got!r}, exact {exact!r}, |err| {err:.3g} > tol {tol:.3g}")
                record(op, n, rf, lambda x: x.sum(), chk, 4 * n, "one call x.sum() on float32 x", dict(pfn))
            elif op == "torch_argmax_f32":
                m = hf.max()
                best = int((hf == m).nonzero()[0, 0])
                mv = float(m)

                def chk(r, best=best, mv=mv):
                    got = int(r)
                    return (got == best, "index of the maximum, lowest index on ties",
                            f"index {got} (value {float(hf[got])!r}), expected {best} (value {mv!r})")
                record(op, n, rf, lambda x: x.argmax(), chk, 4 * n,
                       "one call x.argmax() on float32 x (int64 scalar output)", dict(pfn))
            elif op == "torch_nonzero_positive_i32":
                def chk(r):
                    got = r.cpu()
                    exp = hi[hi > 0]
                    if got.numel() != exp.numel():
                        return False, "", f"count {got.numel()}, expected {exp.numel()}"
                    if torch.equal(got, exp):
                        return True, "count and every kept value, in order", ""
                    i, g, e = first_mismatch(got, exp)
                    return False, "", f"out[{i}] = {g}, expected {e}"
                record(op, n, ri, lambda x: x[x > 0], chk, lambda r: 4 * n + 4 * r.numel(),
                       "one call x[x > 0] on int32 x (compare kernel, nonzero with its device-to-host "
                       "count synchronisation, gather)",
                       dict(pin, predicate="x > 0", count=int((hi > 0).sum())))
            elif op == "torch_segsum_f32":
                for L in args.seg_lens:
                    if n % L:
                        log(f"skip {op} n={n} seg_len={L}: n is not a multiple of seg_len")
                        state["total"] -= 1
                        continue
                    segs = hf.to(torch.float64).view(-1, L)
                    exact = segs.sum(-1)
                    tol = L * U32 * segs.abs().sum(-1)
                    del segs

                    def chk(r, exact=exact, tol=tol):
                        err = (r.cpu().to(torch.float64) - exact).abs()
                        bad = (err > tol).nonzero()
                        if bad.numel() == 0:
                            return True, "every segment: |got - exact| <= seg_len * 2^-24 * sum|x_seg|", ""
                        s = int(bad[0, 0])
                        return False, "", (f"segment {s}: {float(r[s])!r}, exact {float(exact[s])!r}, "
                                           f"|err| {float(err[s]):.3g} > tol {float(tol[s]):.3g}")
                    record(op, n, rf, lambda x, L=L: x.view(-1, L).sum(-1), chk, 4 * n,
                           f"one call x.view(-1, {L}).sum(-1) on float32 x", dict(pfn, seg_len=L, num_segments=n // L))
                    del exact, tol
            elif op == "torch_histc_f32":
                rh = Rotated(hi.to(device=dev, dtype=torch.float32))
                for B in args.bins:
                    lo, up = -9, -9 + B
                    # torch.histc bins [min, max] with x == max in the last bin; with bins >= 19 no
                    # input equals max, so this is the same as unit bins over [-9, -9 + bins)
                    v = hi.to(torch.int64)
                    v = v[(v >= lo) & (v <= up)]
                    exp = torch.bincount((v - lo).clamp_(max=B - 1), minlength=B)
                    del v

                    def chk(r, exp=exp):
                        got = r.cpu()
                        ok = torch.equal(got.to(torch.int64), exp) and bool((got == got.round()).all())
                        if ok:
                            return True, "every bin exact", ""
                        k = int((got.to(torch.int64) != exp).nonzero()[0, 0]) if not torch.equal(
                            got.to(torch.int64), exp) else 0
                        return False, "", (f"bin {k}: {float(got[k])!r}, expected {int(exp[k])} (float32 counts "
                                           "are exact only below 2^24)")
                    record(op, n, rh, lambda x, B=B, lo=lo, up=up: torch.histc(x, bins=B, min=lo, max=up), chk,
                           4 * n, f"one call torch.histc(x, bins={B}, min={lo}, max={up}) on float32 x (float32 "
                           "counts)", {"input": "float32 holding the int32 inputs, integers in [-9, 9]",
                                       "bins": B, "min": lo, "max": up})
                del rh
        del ri, rf, hi, hf
        torch.cuda.empty_cache()

    # ---------------------------------------------------------------- row ops over [rows, cols]
    ops_rows = [o for o in args.ops if o in OPS_ROWS]
    for rows, cols in args.shapes if ops_rows else []:
        elems = rows * cols
        s32 = torch.randn(rows, cols, dtype=torch.float32, device=dev, generator=gen(SEED_SOFTMAX)) * 4.0
        pin = {"input": f"torch.randn(rows, cols, float32) * 4, seed {SEED_SOFTMAX}", "rows": rows, "cols": cols}
        for op in ops_rows:
            if op in ("torch_softmax_f32", "torch_softmax_bf16"):
                bf = op.endswith("bf16")
                x = s32.to(torch.bfloat16) if bf else s32
                esz = x.element_size()
                rot = Rotated(x)
                ref = torch.softmax(x.to(torch.float64), dim=-1)
                rel = (U16 if bf else 0.0) + (cols + 4) * U32

                def chk(r, ref=ref, rel=rel):
                    err = (r.to(torch.float64) - ref).abs()
                    excess = err - (rel * ref + 1e-37)
                    k = int(excess.argmax())
                    worst = float(excess.view(-1)[k])
                    rmax = float((err / ref.clamp_min(1e-300)).max())
                    what = (f"every element: |got - ref| <= ({'2^-8 + ' if bf else ''}(cols + 4) * 2^-24) * ref + 1e-37"
                            f" (max relative error {rmax:.3g}), ref = float64 softmax of the same input")
                    if worst <= 0:
                        return True, what, ""
                    return False, "", (f"element {k // cols},{k % cols}: {float(r.view(-1)[k])!r}, "
                                       f"ref {float(ref.view(-1)[k])!r}, |err| {float(err.view(-1)[k]):.3g}")
                params = dict(pin, dtype="bfloat16" if bf else "float32")
                if bf:
                    params["input"] += ", cast to bfloat16"
                record(op, elems, rot, lambda t: torch.softmax(t, dim=-1), chk, 2 * esz * elems,
                       f"one call torch.softmax(s, dim=-1) on {'bfloat16' if bf else 'float32'} s "
                       f"[{rows}, {cols}] (same-dtype output)", params, shape=(rows, cols))
                del rot, ref, x
            elif op == "torch_argmax_rows_f32":
                rot = Rotated(s32)
                rmax = s32.amax(dim=-1, keepdim=True)
                ar = torch.arange(cols, dtype=torch.int32, device=dev)
                first = torch.where(s32 == rmax, ar, cols).amin(dim=-1).to(torch.int64)
                del rmax, ar

                def chk(r, first=first):
                    if torch.equal(r, first):
                        return True, "every row: index of the maximum, lowest index on ties", ""
                    i = int((r != first).nonzero()[0, 0])
                    return False, "", f"row {i}: {int(r[i])}, expected {int(first[i])}"
                record(op, elems, rot, lambda t: t.argmax(dim=-1), chk, 4 * elems,
                       f"one call s.argmax(dim=-1) on float32 s [{rows}, {cols}] (int64 output)",
                       dict(pin), shape=(rows, cols))
                del rot, first
            torch.cuda.empty_cache()
        del s32
        torch.cuda.empty_cache()

    # ---------------------------------------------------------------- top-k over rows and whole arrays
    ops_topk = [o for o in args.ops if o in OPS_TOPK]

    def topk_cases(op, x, pin, shape):
        """Checks and times torch.topk(x, k, dim=-1) for every k of --topk-ks on x, a [rows, cols]
        tensor (shape given) or a whole 1-D array (shape None)."""
        bf = op.endswith("bf16")
        dt = "bfloat16" if bf else "float32"
        elems = x.numel()
        cols = x.shape[-1]
        rows = elems // cols
        esz = x.element_size()
        ks = [k for k in args.topk_ks if k <= cols]
        for k in args.topk_ks:
            if k > cols:
                log(f"skip {op} " + (f"shape={rows}x{cols}" if shape is not None else f"n={elems}")
                    + f" k={k}: k exceeds the row length")
        if not ks:
            return
        rot = Rotated(x)
        # the exact k largest per row, in descending order, for the largest k; every smaller k is a prefix
        ref = torch.sort(x, dim=-1, descending=True).values[..., : max(ks)].clone()
        torch.cuda.empty_cache()
        what = ("every row: values equal the k largest in descending order (torch.sort reference; tied "
                "values equal, their order among indices not checked), indices int64 in [0, cols) and "
                "distinct, x.gather(-1, indices) == values")
        for k in ks:
            exp = ref[..., :k]

            def chk(r, exp=exp, k=k):
                vals, idx = r.values, r.indices
                if tuple(vals.shape) != tuple(exp.shape) or tuple(idx.shape) != tuple(exp.shape):
                    return False, "", (f"output shapes {tuple(vals.shape)} and {tuple(idx.shape)}, expected "
                                       f"{tuple(exp.shape)}")
                if vals.dtype != x.dtype or idx.dtype != torch.int64:
                    return False, "", f"output dtypes {vals.dtype} and {idx.dtype}, expected {x.dtype} and int64"
                if not torch.equal(vals, exp):
                    pos = tuple((vals != exp).nonzero()[0].tolist())
                    return False, "", (f"values{list(pos)} = {vals[pos].item()!r}, expected {exp[pos].item()!r} "
                                       "(the k largest in descending order)")
                out = (idx < 0) | (idx >= cols)
                if bool(out.any()):
                    pos = tuple(out.nonzero()[0].tolist())
                    return False, "", f"indices{list(pos)} = {idx[pos].item()}, outside [0, {cols})"
                got = x.gather(-1, idx)
                if not torch.equal(got, vals):
                    pos = tuple((got != vals).nonzero()[0].tolist())
                    return False, "", (f"indices{list(pos)} = {idx[pos].item()} points at {got[pos].item()!r}, "
                                       f"but values{list(pos)} = {vals[pos].item()!r}")
                if k > 1:
                    srt = idx.sort(dim=-1).values
                    dup = srt[..., 1:] == srt[..., :-1]
                    if bool(dup.any()):
                        pos = tuple(dup.nonzero()[0].tolist())
                        return False, "", f"a row holds index {srt[pos].item()} twice (row position {list(pos)})"
                return True, what, ""
            params = dict(pin, k=k, largest=True, sorted=True, dtype=dt)
            if bf:
                params["input"] += ", cast to bfloat16"
            if shape is not None:
                timed = (f"one call torch.topk(s, {k}, dim=-1, largest=True, sorted=True) on {dt} s [{rows}, {cols}] "
                         f"(values in {dt} and int64 indices, both from the caching allocator)")
            else:
                timed = (f"one call torch.topk(x, {k}, largest=True, sorted=True) on 1-D {dt} x (values in {dt} "
                         "and int64 indices, both from the caching allocator)")
            record(op, elems, rot, lambda t, k=k: torch.topk(t, k, dim=-1, largest=True, sorted=True), chk,
                   elems * esz + rows * k * (esz + 8), timed, params, shape=shape)
        del rot, ref
        torch.cuda.empty_cache()

    for rows, cols in args.topk_shapes if ops_topk else []:
        s32 = torch.randn(rows, cols, dtype=torch.float32, device=dev, generator=gen(SEED_SOFTMAX)) * 4.0
        pin = {"input": f"torch.randn(rows, cols, float32) * 4, seed {SEED_SOFTMAX}", "rows": rows, "cols": cols}
        for op in ops_topk:
            topk_cases(op, s32.to(torch.bfloat16) if op.endswith("bf16") else s32, pin, (rows, cols))
        del s32
        torch.cuda.empty_cache()

    for lg in args.topk_sizes if ops_topk else []:
        n = 1 << lg
        xf = torch.rand(n, dtype=torch.float32, device=dev, generator=gen(SEED_F32)) - 0.5
        pin = {"input": "float32 uniform in [-0.5, 0.5)"}
        for op in ops_topk:
            topk_cases(op, xf.to(torch.bfloat16) if op.endswith("bf16") else xf, pin, None)
        del xf
        torch.cuda.empty_cache()

    # ---------------------------------------------------------------- the top-k sampler over rows
    def sample_cases(op, x, pin):
        """Checks and times the PyTorch top-k sampler on x [rows, cols] for every k of --topk-ks."""
        rows, cols = x.shape
        u = torch.rand(rows, dtype=torch.float32, device=dev, generator=gen(SEED_UNIFORMS))
        rot = Rotated(x)
        order = torch.sort(x.double(), dim=-1, descending=True).values
        for k in [k for k in args.topk_ks if k <= cols]:
            top = order[:, :k]
            w = torch.exp((top - top[:, :1]) / SAMPLE_TEMPERATURE)
            cum = torch.cumsum(w, dim=-1) / w.sum(dim=-1, keepdim=True)

            def sampler(t, k=k):
                v, i = torch.topk(t, k, dim=-1)
                p = torch.softmax(v / SAMPLE_TEMPERATURE, dim=-1)
                j = torch.searchsorted(torch.cumsum(p, dim=-1), u.unsqueeze(-1), right=True).clamp_(max=k - 1)
                return i.gather(-1, j).squeeze(-1), p.gather(-1, j).squeeze(-1)

            def chk(r, k=k, top=top, w=w, cum=cum):
                col, prob = r
                if (tuple(col.shape) != (rows,) or col.dtype != torch.int64 or tuple(prob.shape) != (rows,)
                        or prob.dtype != torch.float32):
                    return False, "", (f"outputs {tuple(col.shape)} {col.dtype} and {tuple(prob.shape)} {prob.dtype}, "
                                       f"expected ({rows},) int64 and ({rows},) float32")
                # the drawn column's value (range checked first: on CUDA an index out of range in gather
                # is a device-side assert); torch.topk orders tied values in no set way, so the drawn
                # column's ranks are those of every survivor of its value, and its interval of the f64
                # CDF spans them
                inside = (col >= 0) & (col < cols)
                val = x.gather(-1, torch.where(inside, col, 0).unsqueeze(-1)).double()
                found = inside & (val.squeeze(-1) >= top[:, -1])
                if not bool(found.all()):
                    r0 = int((~found).nonzero()[0, 0])
                    return False, "", f"row {r0}: column {int(col[r0])} is not among its {k} largest"
                first = (top > val).sum(dim=-1)
                last = (top >= val).sum(dim=-1) - 1
                hi = cum.gather(-1, last.unsqueeze(-1)).squeeze(-1)
                lo = torch.where(first > 0, cum.gather(-1, (first - 1).clamp(min=0).unsqueeze(-1)).squeeze(-1),
                                 torch.zeros_like(hi))
                slack = 1e-5  # float32 softmax and cumsum
                bad = (u.double() < lo - slack) | (u.double() >= hi + slack)
                if bool(bad.any()):
                    r0 = int(bad.nonzero()[0, 0])
                    return False, "", (f"row {r0}: u = {float(u[r0])!r} outside the drawn column's CDF interval "
                                       f"[{float(lo[r0])}, {float(hi[r0])})")
                # its probability: float32 softmax, a sum of k terms and v / T rounded
                exact = w.gather(-1, first.unsqueeze(-1)).squeeze(-1) / w.sum(dim=-1)
                tol = (k + 4 + 3 * top.abs().amax(dim=-1) / SAMPLE_TEMPERATURE) * U32 * exact
                bad = ~((prob.double() - exact).abs() <= tol)  # a NaN fails
                if bool(bad.any()):
                    r0 = int(bad.nonzero()[0, 0])
                    return False, "", (f"row {r0}: probability {float(prob[r0])!r} of column {int(col[r0])}, "
                                       f"exact {float(exact[r0])!r}, tol {float(tol[r0]):.3g}")
                return True, ("every row: the drawn column is among its k largest and u lies in its interval of "
                              "the float64 CDF (to 1e-5; tied values' order not checked), its probability is the "
                              "float64 softmax's to (k + 4 + 3 max|v| / T) * 2^-24 relative"), ""
            params = dict(pin, k=k, temperature=SAMPLE_TEMPERATURE, dtype="float32")
            timed = (f"topk(s, {k}), softmax(values / {SAMPLE_TEMPERATURE}), cumsum, searchsorted of one uniform "
                     f"per row, two gathers, on float32 s [{rows}, {cols}] (outputs from the caching allocator)")
            record(op, rows * cols, rot, sampler, chk, rows * cols * 4 + rows * 16, timed, params, shape=(rows, cols))
        del rot, order
        torch.cuda.empty_cache()

    for rows, cols in args.topk_shapes if any(o in OPS_SAMPLE for o in args.ops) else []:
        s32 = torch.randn(rows, cols, dtype=torch.float32, device=dev, generator=gen(SEED_SOFTMAX)) * 4.0
        pin = {"input": f"torch.randn(rows, cols, float32) * 4, seed {SEED_SOFTMAX}; uniforms torch.rand(rows), "
                        f"seed {SEED_UNIFORMS}", "rows": rows, "cols": cols}
        sample_cases("torch_topk_sample_f32", s32, pin)
        del s32
        torch.cuda.empty_cache()

    if state["fail"]:
        log(f"{state['fail']} record(s) failed; see \"ok\":false records in {args.out}")
        return 1
    log(f"done, {state['done']} records in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

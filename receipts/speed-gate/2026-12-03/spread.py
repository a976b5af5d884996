"""Spread of each record of ours across the six quick processes of this trial.

Reads the gzipped receipts beside this file (u1, u2, u3, slow, c1, c2: one
process each, same kernel sources; the planted build differs only in the
reduction kernel, so its reduce_sum records are left out) and prints, per
octave of the record's median time, the spread max / min of that record's
median across the processes: how far a record moves between processes of
unchanged code, which one receipt's interval cannot show.

    python3 spread.py
"""
import collections
import gzip
import json
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
RUNS = ["u1", "u2", "u3", "slow", "c1-no-baselines", "c2-no-baselines"]
PLANTED = ("slow", "reduce_sum_i32_i64")


def medians(run):
    with gzip.open(os.path.join(HERE, f"quick-{run}.json.gz"), "rt") as f:
        records = json.load(f)["details"]["records"]
    out = {}
    for r in records:
        if r["impl"] == "primlab" and r.get("ok") and r.get("samples_us"):
            key = (r["op"], r["variant"], r["n"], json.dumps(r.get("params", {}), sort_keys=True), r.get("timing_mode"))
            out[key] = r["median_us"]
    return out


def main():
    runs = {run: medians(run) for run in RUNS}
    octaves = collections.defaultdict(list)
    for key in runs["u1"]:
        times = [m[key] for run, m in runs.items() if key in m and (run, key[0]) != PLANTED]
        if len(times) >= 5:
            octaves[min(int(math.log2(min(times))), 10)].append(max(times) / min(times))
    print("median time   records  spread max/min: median   p90    max")
    for o in sorted(octaves):
        s = sorted(octaves[o])
        label = f"{2**o}-{2**(o + 1)} us" if o < 10 else ">= 1024 us"
        print(f"{label:>12}  {len(s):7d}  {s[len(s) // 2]:22.3f} {s[int(0.9 * (len(s) - 1))]:6.3f} {s[-1]:6.3f}")


if __name__ == "__main__":
    main()

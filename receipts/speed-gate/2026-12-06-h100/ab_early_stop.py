"""Replays the planted pair's `bench ab` rounds (ab-planted-rounds/) round by
round, with `bench ab`'s paired rule: per record of ours, the geometric mean of
the rounds' NEW / OLD medians and its 95 % Student's t interval over the rounds.
Prints, after each round from the third, the records whose interval lies wholly
above 1.03 (REGRESSION) and how many are still undecided: where the early stop
on a proven regression would have ended the run. Run from this folder."""
import gzip, json, math

T_975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447]


def medians(path):
    out = {}
    for r in json.load(gzip.open(path))["details"]["records"]:
        if r.get("median_us") and r.get("ok", True):
            key = (r["impl"], r.get("primitive"), r["op"], r.get("variant"), r.get("n"),
                   json.dumps(r.get("params")), r.get("dtype"), r.get("timing_mode"))
            out[key] = r["median_us"]
    return out


rounds = [(medians(f"ab-planted-rounds/round{i}-old.json.gz"), medians(f"ab-planted-rounds/round{i}-new.json.gz"))
          for i in range(1, 7)]
for done in range(3, 7):
    regressions, undecided = [], 0
    for key in rounds[0][1]:
        if key[0] != "primlab":
            continue
        logs = [math.log(new[key] / old[key]) for old, new in rounds[:done] if key in old and key in new]
        mean = sum(logs) / len(logs)
        var = sum((x - mean) ** 2 for x in logs) / (len(logs) - 1)
        half = T_975[len(logs) - 2] * math.sqrt(var / len(logs))
        low, high = math.exp(mean - half), math.exp(mean + half)
        if low > 1.03:
            regressions.append(f"{key[3]} {key[2]} n={key[4]} low={low:.3f}")
        elif high >= 1.03:
            undecided += 1
    print(f"after {done} rounds: REGRESSION {regressions}; undecided {undecided}")

"""Summary of scripts/bench-lat14.sh: per collective and size, the median
over rounds of strata minus host (microseconds, each run's medians per
call, slowest rank), for 8155f74, main (b03a104) and the branch."""
import glob, json, statistics as st, sys

d = sys.argv[1] if len(sys.argv) > 1 else "bench/results/lat14"
tags = ("before", "main", "branch")
runs = {t: [{(x["collective"], x["bytes"]): x for x in json.load(open(p))["results"]}
            for p in sorted(glob.glob(f"{d}/{t}.r*.json"))] for t in tags}
print("rounds: " + ", ".join(f"{t} {len(runs[t])}" for t in tags))
print("| row | host us (branch runs) | before | main | branch | branch - before |")
print("| --- | --- | --- | --- | --- | --- |")
keys = [k for k in runs["branch"][0]] if runs["branch"] else []
for k in keys:
    def med(t, f):
        v = [f(r[k]) for r in runs[t] if k in r and r[k].get("strata")]
        return st.median(v) if v else float("nan")
    diff = lambda x: x["strata"]["median"] - x["native"]["median"]
    m = {t: med(t, diff) for t in tags}
    host = med("branch", lambda x: x["native"]["median"])
    print(f"| {k[0]} {k[1]} B | {host:.3f} | {m['before']:+.3f} | {m['main']:+.3f} | "
          f"{m['branch']:+.3f} | {m['branch'] - m['before']:+.3f} |")

#!/usr/bin/env python3
"""Summary of scripts/bench-issue16.sh against issue 16's targets.

Per file (one MPI, rank count and pattern) and collective: strata's median call time over the
host's in the same run, at each size, and the worst ratio in the ranges the issue names:
  reduce_scatter(_block) 64 KiB-16 MiB at most 0.75; the v-collectives at most 1.0 everywhere
  and 0.8 from 64 KiB; scan/exscan at most 1.0 everywhere.
At 2 ranks the "best host" is the faster of Open MPI and MPICH in their own runs: strata on
either MPI is also compared with that."""
import glob, json, os, sys

d = sys.argv[1] if len(sys.argv) > 1 else "bench/results/issue16"
lab = lambda b: f"{b} B" if b < 1024 else (f"{b >> 10} KiB" if b < 1 << 20 else f"{b >> 20} MiB")
runs = {}
for p in sorted(glob.glob(os.path.join(d, "*.json"))):
    name = os.path.basename(p)[:-5]
    r = json.load(open(p))
    runs[name] = {(x["collective"], x["bytes"]): x for x in r["results"]}

def target(coll, size):
    if coll.startswith("reduce_scatter"):
        return 0.75 if size >= 65536 else None
    if coll in ("scan", "exscan"):
        return 1.0
    return 0.8 if size >= 65536 else 1.0

def table(name, rows, best=None):
    colls = sorted({c for c, _ in rows}, key=lambda c: list(dict.fromkeys(c for c, _ in rows)).index(c))
    sizes = sorted({s for _, s in rows})
    print(f"\n### {name}" + (" (against the faster host at 2 ranks)" if best else ""))
    print("| collective | worst ratio where targeted (size, target) | misses | " +
          " | ".join(lab(s) for s in sizes if s in (8, 1024, 65536, 1 << 20, 16 << 20) or len(sizes) < 8) + " |")
    shown = [s for s in sizes if s in (8, 1024, 65536, 1 << 20, 16 << 20) or len(sizes) < 8]
    print("| --- | --- | --- |" + " --- |" * len(shown))
    for c in colls:
        worst, misses, cells = None, 0, []
        for s in sizes:
            x = rows.get((c, s))
            if not x: continue
            host = best[(c, s)] if best else x["native"]["median"]
            ratio = x["strata"]["median"] / host if host > 0 else float("inf")
            t = target(c, s)
            if t is not None:
                if worst is None or ratio / t > worst[0] / worst[2]: worst = (ratio, s, t)
                misses += ratio > t
            if s in shown: cells.append(f"{ratio:.2f}")
        w = f"{worst[0]:.2f} ({lab(worst[1])}, {worst[2]})" if worst else "-"
        print(f"| {c} | {w} | {misses} | " + " | ".join(cells) + " |")

for name, rows in runs.items():
    table(name, rows)
for kind in ("sweep", "empty", "skewed"):
    o, m = runs.get(f"openmpi-np2-{kind}"), runs.get(f"mpich-np2-{kind}")
    if not (o and m): continue
    best = {k: min(o[k]["native"]["median"], m[k]["native"]["median"]) for k in o if k in m}
    table(f"openmpi-np2-{kind}", {k: v for k, v in o.items() if k in best}, best)
    table(f"mpich-np2-{kind}", {k: v for k, v in m.items() if k in best}, best)

#!/usr/bin/env python3
"""Issue 14: before (8155f74) vs after, several alternating rounds of strata-bench --sweep.
Per row: median over rounds of strata/host (each run alternates them in one process); the table
shows median(after) / median(before).  At 8 B: strata minus host in the same run (us), median
over rounds, before and after."""
import json, sys, glob, statistics as st
cfg = sys.argv[1]; d = sys.argv[2] if len(sys.argv) > 2 else "."
def runs(tree):
    out = []
    for p in sorted(glob.glob(f"{d}/{tree}-{cfg}*.json")):
        r = json.load(open(p))
        out.append({(x["collective"], x["bytes"]): x for x in r["results"]})
    return out
B, A = runs("before"), runs("after")
order = ["bcast","reduce","allreduce","allgather","gather","scatter","alltoall"]
sizes = [8, 1024, 65536, 1 << 20, 4 << 20, 16 << 20]
lab = lambda b: f"{b} B" if b < 1024 else (f"{b>>10} KiB" if b < 1 << 20 else f"{b>>20} MiB")
med = lambda rs, k, f: st.median(f(r[k]) for r in rs if k in r)
ratio = lambda x: x["ratio"]
print(f"{cfg}: {len(B)} runs before, {len(A)} after")
print("| collective | " + " | ".join(lab(s) for s in sizes) + " |")
print("| --- |" + " --- |" * len(sizes))
rows = []
for c in order:
    cells = []
    for s in sizes:
        k = (c, s); rr = med(A, k, ratio) / med(B, k, ratio); cells.append(f"{rr:.2f}")
    print(f"| {c} | " + " | ".join(cells) + " |")
for k in A[0]:
    if k[1] >= 1024 and k[0] in order: rows.append((med(A, k, ratio) / med(B, k, ratio), k))
rows.sort(); rr = [r for r, _ in rows]
print(f"\nrows >= 1 KiB: {len(rows)}; median {st.median(rr):.3f}; geometric mean "
      f"{st.geometric_mean(rr):.3f}; within 5%: {sum(0.95 <= r <= 1.05 for r in rr)}; "
      f"worst: " + ", ".join(f"{c} {lab(b)} {r:.2f}" for r, (c, b) in rows[-4:]))
delta = lambda x: x["strata"]["median"] - x["native"]["median"]
print("8 B, strata - host (us, median over runs), before -> after: " + "; ".join(
    f"{c} {med(B, (c, 8), delta):+.2f} -> {med(A, (c, 8), delta):+.2f}" for c in order))

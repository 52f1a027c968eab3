#!/usr/bin/env python3
"""The table of scripts/bench-current.sh's runs: per configuration (MPI, ranks), per collective
and size, the median over rounds of strata's time over the host's (each run alternates them in
one process), and the rows slower than the host by more than 5%.
    scripts/bench-current.py DIR      (DIR holds <mpi>-np<N>-r<round>.json)"""
import collections
import glob
import json
import os
import re
import statistics
import sys

SIZES = [8, 1024, 65536, 1 << 20, 4 << 20]


def label(b):
    if b < 1024:
        return f"{b} B"
    return f"{b >> 10} KiB" if b < 1 << 20 else f"{b >> 20} MiB"


def main(d):
    runs = collections.defaultdict(list)  # (mpi, ranks) -> [ {(coll, bytes): row} ]
    for path in sorted(glob.glob(os.path.join(d, "*-np*-r*.json"))):
        m = re.match(r"(.+)-np(\d+)-r\d+\.json$", os.path.basename(path))
        with open(path) as f:
            res = json.load(f)["results"]
        runs[(m.group(1), int(m.group(2)))].append({(x["collective"], x["bytes"]): x for x in res})
    losing_total = rows_total = 0
    for (mpi, ranks), rs in sorted(runs.items()):
        colls = list(dict.fromkeys(k[0] for r in rs for k in r))
        print(f"\n### {mpi}, {ranks} ranks ({len(rs)} runs): strata / host, median over runs\n")
        print("| collective | " + " | ".join(label(s) for s in SIZES) + " |")
        print("| --- |" + " --- |" * len(SIZES))
        losing = []
        for c in colls:
            cells = []
            for s in SIZES:
                # The Barrier has one row, of 0 bytes: shown in the first column.
                key = (c, 0 if c == "barrier" else s)
                vals = [r[key]["ratio"] for r in rs if key in r] if c != "barrier" or s == 8 else []
                if not vals:
                    cells.append("")
                    continue
                ratio = statistics.median(vals)
                rows_total += 1
                paths = {r[key].get("path") for r in rs if key in r}
                mark = "" if paths == {"strata"} else " (host)"
                cells.append(f"{ratio:.2f}{mark}")
                if ratio > 1.05:
                    losing.append(f"{c} {label(s)} {ratio:.2f}")
            print(f"| {c} | " + " | ".join(cells) + " |")
        losing_total += len(losing)
        print(f"\nslower than the host by more than 5%: {len(losing)}"
              + (": " + ", ".join(losing) if losing else ""))
    print(f"\nall configurations: {losing_total} of {rows_total} rows slower by more than 5%")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")

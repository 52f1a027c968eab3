import json, glob, statistics as st, sys
d = sys.argv[1] if len(sys.argv) > 1 else "bench/results/issue14-final"
for n in (2, 4):
    def runs(tag):
        return [{(x["collective"], x["bytes"]): x for x in json.load(open(p))["results"]}
                for p in sorted(glob.glob(f"{d}/{tag}-np{n}-openmpi.r*.json"))]
    B, A = runs("before"), runs("after")
    print(f"np{n}: {len(B)} before, {len(A)} after runs")
    print("| row | before strata/host | after strata/host | after/before | before strata-host us | after strata-host us |")
    print("| --- | --- | --- | --- | --- | --- |")
    for k in A[0]:
        mb = st.median(r[k]["ratio"] for r in B); ma = st.median(r[k]["ratio"] for r in A)
        def diff(r):
            s, h = r[k]["strata"], r[k]["native"]
            s = s["median"]
            h = h["median"]
            return s - h
        db = st.median(diff(r) for r in B); da = st.median(diff(r) for r in A)
        print(f"| {k[0]} {k[1]} B | {mb:.3f} | {ma:.3f} | {ma/mb:.3f} | {db:+.3f} | {da:+.3f} |")

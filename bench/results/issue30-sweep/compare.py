import sys, json, glob, statistics, collections
def load(f):
    d=json.load(open(f)); return {(r['collective'],r['bytes']):r for r in d['results'] if r.get('ratio')}
rows=collections.defaultdict(lambda: collections.defaultdict(list))
for f in glob.glob(sys.argv[1] + '/*.json' if len(sys.argv) > 1 else '/tmp/sweep/*.json'):
    base=f.split('/')[-1][:-5]; which,mpi,np,rnd=base.split('-')
    for k,r in load(f).items():
        rows[(mpi,np)+k][which].append((r['ratio'], r['native']['median'], r['strata']['median']))
worse=[]; n=0; rr=[]
for k in sorted(rows):
    b=rows[k]['before']; a=rows[k]['after']
    if not a or not b: continue
    rb=statistics.median(x[0] for x in b); ra=statistics.median(x[0] for x in a)
    sb=statistics.median(x[2] for x in b); sa=statistics.median(x[2] for x in a)
    n+=1; q=ra/rb; rr.append(q)
    slower = (k[3] >= 1024 and q > 1.05) or (k[3] < 1024 and sa - sb > 0.05 and q>1.05)
    if slower: worse.append((k,rb,ra,q,sb,sa))
print(f"rows {n}; ratio of ratios (after/before) median {statistics.median(rr):.3f}, "
      f"quartiles {statistics.quantiles(rr,n=4)}")
print(f"slower beyond noise (5% from 1 KiB, 0.05 us and 5% below): {len(worse)}")
for k,rb,ra,q,sb,sa in worse: print(f"  {k[0]} {k[1]} {k[2]} {k[3]} B: before {rb:.3f} after {ra:.3f} (x{q:.2f}; strata {sb:.2f} -> {sa:.2f} us)")

#!/usr/bin/env python3
"""strata/host per row, median over the runs, base against new (run.sh's files)."""
import glob, os, re, statistics, sys
d = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
row = re.compile(r'^(\w+)\s+(\d+[KM]?)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s')
for host in ('impi-2021.19.0', 'openmpi-5.0.11'):
    ratios = {}
    chosen = {}
    for side in ('base', 'new'):
        for f in sorted(glob.glob(f'{d}/{host}-{side}-*.txt')):
            for line in open(f):
                m = row.match(line)
                if m:
                    ratios.setdefault((m[1], m[2]), {}).setdefault(side, []).append(float(m[8]))
                if 'settled on the host MPI' in line and side == 'new':
                    k = re.search(r'(MPI_\w+) of (\d+)-byte', line)
                    chosen.setdefault((k[1], int(k[2])), 0)
                    chosen[(k[1], int(k[2]))] += 1
    if not ratios:
        continue
    n = max(len(v.get('base', [])) for v in ratios.values())
    print(f'\n{host}, 2 ranks: strata / host, median of {n} runs (base 8fe084e -> new)\n')
    print('| collective | size | base | new |')
    print('| --- | --- | --- | --- |')
    for (c, s), v in ratios.items():
        b = statistics.median(v['base']) if v.get('base') else float('nan')
        w = statistics.median(v['new']) if v.get('new') else float('nan')
        print(f'| {c} | {s} | {b:.2f} | {w:.2f} |')
    print('\nruns in which a row settled on the host (new):',
          ', '.join(f'{k[0]} {k[1]} B: {c}' for k, c in sorted(chosen.items())) or 'none')

import glob,statistics,re,sys,collections
d=collections.defaultdict(list)
blk=collections.defaultdict(list); nbt=collections.defaultdict(list)
for f in glob.glob(sys.argv[1]+'/*.txt'):
    mpi,p,b,r=f.split('/')[-1][:-4].split('-')
    for line in open(f):
        m=re.match(r'(I\w+)\s+(\S+)\s+\|\s+(\S+)\s+(\S+)\s+(\S+)',line)
        if m:
            k=(mpi,p,b,m.group(1),m.group(2))
            d[k].append(float(m.group(5))); blk[k].append(float(m.group(3))); nbt[k].append(float(m.group(4)))
rows=sorted(set((k[3],k[4]) for k in d),key=lambda x:(['Ibcast','Ireduce','Iallreduce','Igather','Ialltoallv'].index(x[0]),x[1]!='8'))
for mpi in ['openmpi','mpich']:
    print(f'\n{mpi}: nb/blk median of the runs (blk us / nb us medians), before -> after')
    print('| call | off: before | off: after | thread: before | thread: after |')
    print('| --- | --- | --- | --- | --- |')
    for c,s in rows:
        cells=[]
        for p in ['off','thread']:
            for b in ['base','nb']:
                k=(mpi,p,b,c,s)
                cells.append(f'{statistics.median(d[k]):.2f} ({statistics.median(blk[k]):.2f} / {statistics.median(nbt[k]):.2f})')
        print(f'| {c} {s} B | '+' | '.join(cells)+' |')

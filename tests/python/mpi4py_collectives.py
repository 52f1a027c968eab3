"""strata under mpi4py: each collective strata intercepts, called through
mpi4py's buffer methods (Bcast, Reduce, Allreduce, Allgather, Gather,
Scatter, Alltoall, Barrier) ROUNDS times, results checked against values
computed here; with --objects, mpi4py's object methods (bcast, allreduce,
gather of pickles) instead.  Rank 0 prints the MPI library mpi4py runs on
("library ..."), what it called, one line "called MPI_Bcast 3" per
collective (per rank; the final barrier not included), and "PASS mpi4py".

    python3 mpi4py_collectives.py ROUNDS [--objects]
"""
import sys
from array import array

from mpi4py import MPI

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
objects = "--objects" in sys.argv[2:]
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
called = {}


def count(name, n=1):
    called[name] = called.get(name, 0) + n


def check(ok, what):
    if not ok:
        sys.stderr.write("FAIL rank %d: %s\n" % (rank, what))
        sys.stderr.flush()
        comm.Abort(3)


for r in range(rounds):
    n = 1 + 1000 * r + 7 * r * r           # odd sizes, 1 to a few thousand
    root = r % size

    buf = array("d", [i + 0.5 * root if rank == root else -1.0 for i in range(n)])
    comm.Bcast(buf, root=root)
    count("MPI_Bcast")
    check(all(buf[i] == i + 0.5 * root for i in range(n)), "Bcast from %d" % root)

    mine = array("l", [rank * 1000 + i for i in range(n)])
    total = array("l", [0] * n)
    comm.Reduce(mine, total, op=MPI.SUM, root=root)
    count("MPI_Reduce")
    if rank == root:
        want = [1000 * size * (size - 1) // 2 + size * i for i in range(n)]
        check(list(total) == want, "Reduce to %d" % root)

    best = array("d", [0.0] * n)
    comm.Allreduce(array("d", [float(rank + i) for i in range(n)]), best, op=MPI.MAX)
    count("MPI_Allreduce")
    check(all(best[i] == size - 1 + i for i in range(n)), "Allreduce MAX")
    inplace = array("i", [rank + 1] * n)
    comm.Allreduce(MPI.IN_PLACE, inplace, op=MPI.SUM)
    count("MPI_Allreduce")
    check(all(v == size * (size + 1) // 2 for v in inplace), "Allreduce in place")

    block = array("i", [rank * 10 + i for i in range(n)])
    every = array("i", [0] * (n * size))
    comm.Allgather(block, every)
    count("MPI_Allgather")
    check(list(every) == [q * 10 + i for q in range(size) for i in range(n)], "Allgather")

    gathered = array("i", [0] * (n * size))
    comm.Gather(block, gathered, root=root)
    count("MPI_Gather")
    if rank == root:
        check(list(gathered) == list(every), "Gather to %d" % root)

    part = array("i", [0] * n)
    comm.Scatter(every if rank == root else None, part, root=root)
    count("MPI_Scatter")
    check(list(part) == [rank * 10 + i for i in range(n)], "Scatter from %d" % root)

    send = array("i", [rank * 100 + q for q in range(size) for _ in range(n)])
    recv = array("i", [0] * (n * size))
    comm.Alltoall(send, recv)
    count("MPI_Alltoall")
    check(list(recv) == [q * 100 + rank for q in range(size) for _ in range(n)], "Alltoall")

    comm.Barrier()
    count("MPI_Barrier")

# Object methods (pickled): mpi4py decides which calls each takes, so they
# are not counted here.
if objects:
    obj = comm.bcast({"round": rounds} if rank == 0 else None, root=0)
    check(obj == {"round": rounds}, "bcast of an object")
    check(comm.allreduce(rank, op=MPI.SUM) == size * (size - 1) // 2, "allreduce of an object")
    names = comm.gather("rank%d" % rank, root=0)
    if rank == 0:
        check(names == ["rank%d" % q for q in range(size)], "gather of objects")

comm.Barrier()
if rank == 0:
    print("library " + MPI.Get_library_version().replace("\x00", "").splitlines()[0].strip())
    for name in sorted(called):
        print("called %s %d" % (name, called[name]))
    print("PASS mpi4py")

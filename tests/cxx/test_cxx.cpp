// A C++ program (mpicxx) calling strata's collectives through the C API, as
// C++ codes do: std::vector buffers, MPI_IN_PLACE, a few types and roots,
// each result compared with the host MPI's own (PMPI_) on the same input,
// and STRATA_STATS showing the calls served (libstrata's counters).
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <vector>

extern "C" {
#include "util/colls.h"  // enum strata_coll: the numbers of strata's counters
unsigned long long strata_stats_local_calls(int coll, int served);
}

namespace {

int rank_, size_;

[[noreturn]] void fail(const char *what, std::size_t i)
{
    std::fprintf(stderr, "FAIL rank %d: %s differs from the host MPI at element %zu\n", rank_,
                 what, i);
    MPI_Abort(MPI_COMM_WORLD, 3);
    std::abort();
}

template <typename T>
void same(const std::vector<T> &got, const std::vector<T> &want, const char *what)
{
    for (std::size_t i = 0; i < want.size(); i++)
        if (got[i] != want[i]) fail(what, i);
}

// Calls strata served, all collectives together (libstrata's counters).
unsigned long long served_total()
{
    unsigned long long n = 0;
    for (int c = 0; c < STRATA_NCOLLS; c++) n += strata_stats_local_calls(c, 1);
    return n;
}

}  // namespace

int main(int argc, char **argv)
{
    setenv("STRATA_STATS", "/dev/null", 0);  // count the routes
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    unsigned long long before = served_total();
    int calls = 0;

    for (int n : {1, 17, 4099, 100000}) {
        std::vector<double> x(n), y(n), ref(n);
        for (int i = 0; i < n; i++) x[i] = 0.5 * i + rank_ * 3.25 - (i % 7);
        for (int root = 0; root < size_; root++) {
            std::vector<double> b = x, pb = x;
            MPI_Bcast(b.data(), n, MPI_DOUBLE, root, MPI_COMM_WORLD);
            PMPI_Bcast(pb.data(), n, MPI_DOUBLE, root, MPI_COMM_WORLD);
            same(b, pb, "MPI_Bcast");
            MPI_Reduce(x.data(), y.data(), n, MPI_DOUBLE, MPI_MAX, root, MPI_COMM_WORLD);
            PMPI_Reduce(x.data(), ref.data(), n, MPI_DOUBLE, MPI_MAX, root, MPI_COMM_WORLD);
            if (rank_ == root) same(y, ref, "MPI_Reduce");
            calls += 2;
        }
        std::vector<long> li(n), lo(n), lref(n);
        std::iota(li.begin(), li.end(), 1000L * rank_);
        MPI_Allreduce(li.data(), lo.data(), n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        PMPI_Allreduce(li.data(), lref.data(), n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        same(lo, lref, "MPI_Allreduce");
        MPI_Allreduce(MPI_IN_PLACE, li.data(), n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        same(li, lref, "MPI_Allreduce in place");
        std::vector<int> mine(n, rank_ + 1), all(static_cast<std::size_t>(n) * size_),
            allref(all.size());
        MPI_Allgather(mine.data(), n, MPI_INT, all.data(), n, MPI_INT, MPI_COMM_WORLD);
        PMPI_Allgather(mine.data(), n, MPI_INT, allref.data(), n, MPI_INT, MPI_COMM_WORLD);
        same(all, allref, "MPI_Allgather");
        MPI_Barrier(MPI_COMM_WORLD);
        calls += 4;
    }
    unsigned long long served = served_total() - before;
    if (served != static_cast<unsigned long long>(calls)) {
        std::fprintf(stderr, "FAIL rank %d: strata served %llu of %d calls\n", rank_, served,
                     calls);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank_ == 0) std::printf("PASS cxx (%d calls served)\n", calls);
    MPI_Finalize();
    return 0;
}

/* Selection that corrects itself (coll/learn.h), on MPI_Allgather.
 *
 * Run with a deliberately mispriced model (tests/data/model-mispriced.conf:
 * every copy priced near zero), under which every measured call is far
 * slower than any candidate's prediction, so the search must try
 * STRATA_LEARN_TRIES candidates, one after the other, whatever the
 * machine's speed, then settle on the fastest it measured.  Checked, on
 * every call, with no timing in any assertion:
 *
 *  - the result, against the host MPI's PMPI_Allgather of the same input
 *    and against the values every rank computes on its own;
 *  - every rank uses the same algorithm, has switched as often and is in
 *    the same state (searching or settled) after the call;
 *  - the search settles within STRATA_LEARN_BOUND calls, having tried
 *    exactly STRATA_LEARN_TRIES candidates, on the one whose agreed
 *    measured price is the lowest of those measured;
 *  - the host MPI was timed once in the search (STRATA_LEARN_SAMPLES + 1
 *    calls, each result checked like the others), every rank at the same
 *    calls;
 *  - STRATA_STATS' switch count of this rank matches the entry's;
 *  - with --expect-host=1 (run with STRATA_TEST_HOST_TIME_PERCENT=1, the
 *    host's measured time taken at 1%): the entry settles on the host MPI,
 *    every rank alike, and from that call on every call goes to the host
 *    (STRATA_STATS: chosen by selection, or timed at a watch), results
 *    checked as before; with --expect-host=0 (the host's time taken at
 *    1000x) no call is ever handed to it.
 *
 *   --bytes=N    block bytes per rank (default 1 MiB)
 *   --calls=N    calls in all (default STRATA_LEARN_BOUND + 40)
 *   --off        STRATA_LEARN=0: no call may be measured (results still checked)
 *   --print      rank 0 prints the candidates' ratios at the first call
 *                ("SEEDED algo ratio") and at the end ("LEARNED algo ratio"),
 *                for tests/scripts/learn_cache.sh
 *   --expect-switches=N  the switches to new candidates before settling
 *                (default TRIES - 1; -1: do not check)
 *   --expect-host=0|1  whether the search must settle on the host MPI
 *                (default: not checked) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/algorithm.h"
#include "coll/learn.h"
#include "coll/select.h"
#include "context/context.h"
#include "util/colls.h"
#include "util/stats.h"
#include "testutil.h"

static unsigned char value(int call, int src, size_t i)
{
    return (unsigned char)(call * 131 + src * 37 + i * 7 + (i >> 9));
}

static const struct strata_learn_entry *entry_of(MPI_Comm comm, size_t bytes)
{
    struct strata_ctx *ctx = strata_ctx_get(comm);
    CHECK(ctx && ctx->plane && !ctx->net, "strata serves the communicator on one node");
    return strata_learn_entry(ctx->plane, STRATA_COLL_ALLGATHER, bytes);
}

/* Every rank holds the same value: min and max agree. */
static void same_everywhere(long v, const char *what, int call)
{
    long in[2] = {v, -v}, out[2];
    MPI_Allreduce(in, out, 2, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    CHECK(out[0] == -out[1], "call %d: ranks differ on %s (%ld to %ld)", call, what, -out[1],
          out[0]);
}

static double price_of(const struct strata_plane *p, const struct strata_learn_cand *c, size_t b)
{
    return strata_select_predict(p, strata_algorithm((enum strata_algo)c->algo), c->k, b) * c->ratio;
}

static void print_ratios(const struct strata_learn_entry *e, const char *tag)
{
    for (int i = 0; i < e->ncand; i++)
        if (e->cand[i].ratio >= 0)
            printf("%s %s %.4g\n", tag, strata_algorithm((enum strata_algo)e->cand[i].algo)->name,
                   e->cand[i].ratio);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    size_t bytes = 1 << 20;
    int calls = STRATA_LEARN_BOUND + 40, print = 0, expect = STRATA_LEARN_TRIES - 1, off = 0;
    int expect_host = -1;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--bytes=", 8)) bytes = strtoull(argv[i] + 8, NULL, 0);
        else if (!strncmp(argv[i], "--calls=", 8)) calls = atoi(argv[i] + 8);
        else if (!strcmp(argv[i], "--print")) print = 1;
        else if (!strcmp(argv[i], "--off")) off = 1;
        else if (!strncmp(argv[i], "--expect-switches=", 18)) expect = atoi(argv[i] + 18);
        else if (!strncmp(argv[i], "--expect-host=", 14)) expect_host = atoi(argv[i] + 14);
        else {
            fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
    }
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(strata_select_learning() == !off, "STRATA_LEARN is %s", off ? "off" : "on");
    unsigned char *send = malloc(bytes), *recv = malloc(bytes * size), *host = malloc(bytes * size);
    CHECK(send && recv && host, "memory");
    int settled_at = 0, switches_at = 0, first_algo = -1;
    unsigned long long stats_before = strata_stats_local_switches(STRATA_COLL_ALLGATHER);
    for (int call = 1; call <= calls; call++) {
        for (size_t i = 0; i < bytes; i++) send[i] = value(call, rank, i);
        memset(recv, 0xee, bytes * size);
        memset(host, 0xdd, bytes * size);
        CHECK(MPI_Allgather(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE,
                            MPI_COMM_WORLD) == MPI_SUCCESS, "call %d: MPI_Allgather", call);
        CHECK(PMPI_Allgather(send, (int)bytes, MPI_BYTE, host, (int)bytes, MPI_BYTE,
                             MPI_COMM_WORLD) == MPI_SUCCESS, "call %d: PMPI_Allgather", call);
        CHECK(!memcmp(recv, host, bytes * size), "call %d: strata's result differs from the host's",
              call);
        for (int src = 0; src < size; src++)
            for (size_t i = 0; i < bytes; i += 4093)
                CHECK(recv[src * bytes + i] == value(call, src, i), "call %d: byte %zu of rank %d",
                      call, i, src);
        const struct strata_learn_entry *e = entry_of(MPI_COMM_WORLD, bytes);
        if (off) {
            CHECK(!e, "call %d: STRATA_LEARN=0, yet the call was measured", call);
            continue;
        }
        CHECK(e && e->ncand >= 2, "call %d: the call is measured (an entry with candidates)", call);
        if (call == 1) {
            first_algo = e->cand[e->cur].algo;
            if (print && rank == 0) print_ratios(e, "SEEDED");
        }
        same_everywhere(e->cand[e->cur].algo, "the algorithm", call);
        same_everywhere(e->switches, "the switches", call);
        same_everywhere(e->settled, "settled", call);
        same_everywhere(e->host_chosen, "settled on the host", call);
        if (expect_host == 0) CHECK(!e->host_chosen, "call %d: settled on the host MPI", call);
        if (e->settled && !settled_at) {
            settled_at = call;
            switches_at = e->switches;
            /* The choice is the cheapest of those measured, by the agreed
             * ratios every rank holds. */
            const struct strata_plane *p = strata_ctx_get(MPI_COMM_WORLD)->plane;
            double chosen = price_of(p, &e->cand[e->cur], bytes);
            for (int i = 0; i < e->ncand; i++) {
                if (e->cand[i].ratio < 0) continue;
                same_everywhere((long)(e->cand[i].ratio * 1e6), "a measured ratio", call);
                CHECK(chosen <= price_of(p, &e->cand[i], bytes),
                      "call %d: settled on %s although %s measured cheaper", call,
                      strata_algorithm((enum strata_algo)e->cand[e->cur].algo)->name,
                      strata_algorithm((enum strata_algo)e->cand[i].algo)->name);
            }
            if (expect >= 0) {
                /* The last switch may go back to an earlier candidate: the
                 * tries are the switches up to the last one tried. */
                int tried = 0;
                for (int i = 0; i < e->ncand; i++) tried += e->cand[i].tried;
                CHECK(tried == expect + 1, "call %d: %d candidates tried, expected %d", call,
                      tried, expect + 1);
            }
            /* The host MPI was timed once, every rank at the same calls. */
            CHECK(e->host_ratio >= 0, "call %d: the host MPI was not timed", call);
            same_everywhere((long)(e->host_ratio * 1e6), "the host's ratio", call);
            if (strata_stats_enabled() && expect >= 0)
                CHECK(strata_stats_local_algorithm(STRATA_COLL_ALLGATHER, STRATA_STATS_HOST_SAMPLE) ==
                          STRATA_LEARN_SAMPLES + 1,
                      "call %d: %llu calls timed the host MPI, expected %d", call,
                      strata_stats_local_algorithm(STRATA_COLL_ALLGATHER, STRATA_STATS_HOST_SAMPLE),
                      STRATA_LEARN_SAMPLES + 1);
            if (expect_host == 1)
                CHECK(e->host_chosen, "call %d: settled on %s, not on the host MPI (measured at "
                      "1%% of its time)", call,
                      strata_algorithm((enum strata_algo)e->cand[e->cur].algo)->name);
            CHECK(e->calls_to_settle <= STRATA_LEARN_BOUND,
                  "settled after %d calls, more than the bound %d", e->calls_to_settle,
                  STRATA_LEARN_BOUND);
        }
        if (strata_stats_enabled())
            CHECK(strata_stats_local_switches(STRATA_COLL_ALLGATHER) - stats_before ==
                      (unsigned long long)e->switches,
                  "call %d: STRATA_STATS counts %llu switches, the entry %d", call,
                  strata_stats_local_switches(STRATA_COLL_ALLGATHER) - stats_before, e->switches);
    }
    if (off) {
        test_pass("learn off");
        MPI_Finalize();
        return 0;
    }
    CHECK(settled_at > 0, "the search settled within %d calls", calls);
    const struct strata_learn_entry *e = entry_of(MPI_COMM_WORLD, bytes);
    if (rank == 0)
        printf("first algorithm %s; settled at call %d after %d switches; now %s, %d switches "
               "in all over %d calls\n", strata_algorithm((enum strata_algo)first_algo)->name,
               settled_at, switches_at,
               e->host_chosen ? "the host MPI"
                              : strata_algorithm((enum strata_algo)e->cand[e->cur].algo)->name,
               e->switches, calls);
    if (print && rank == 0) print_ratios(e, "LEARNED");
    if (expect_host == 1) {
        CHECK(e->host_chosen, "the entry left the host MPI (measured at 1%% of its time)");
        /* From the settling call on, each call went to the host: chosen,
         * or timed at a watch (the search's own samples came before). */
        if (strata_stats_enabled()) {
            unsigned long long chosen =
                strata_stats_local_algorithm(STRATA_COLL_ALLGATHER, STRATA_STATS_HOST_CHOSEN);
            unsigned long long timed =
                strata_stats_local_algorithm(STRATA_COLL_ALLGATHER, STRATA_STATS_HOST_SAMPLE);
            CHECK(chosen + timed - (STRATA_LEARN_SAMPLES + 1) ==
                      (unsigned long long)(calls - settled_at + 1),
                  "%llu calls chosen for the host and %llu timed, expected %d from call %d on",
                  chosen, timed - (STRATA_LEARN_SAMPLES + 1), calls - settled_at + 1, settled_at);
            CHECK(chosen > 0, "no call was handed to the host MPI");
        }
    }
    if (expect_host == 0 && strata_stats_enabled())
        CHECK(!strata_stats_local_algorithm(STRATA_COLL_ALLGATHER, STRATA_STATS_HOST_CHOSEN),
              "calls were handed to the host MPI although it measured 1000 times slower");
    free(send);
    free(recv);
    free(host);
    test_pass("learn");
    MPI_Finalize();
    return 0;
}

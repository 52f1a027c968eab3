/* Unit tests of algorithm selection without an MPI launch: the names users
 * write (strata_algorithm_parse), the cost model's choice for a fixed model
 * file (strata_select_explain on shapes built by hand), and the tuning file
 * reader (good files, and a message for every kind of mistake).
 *
 *   test_select DATA_DIR     (DATA_DIR: tests/data of the source tree)
 *
 * The expected choices are derived by hand in the comments from the
 * formulas of src/coll/model.c and the numbers of model-contention.conf; if
 * the formulas change, re-derive them.  Prints every failure, then
 * "N passed, N failed"; exits non-zero if anything failed. */
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll/algorithm.h"
#include "coll/model.h"
#include "coll/select.h"
#include "coll/tuning_file.h"
#include "route/route.h"

static int passed, failed;
static const char *data_dir;

static void report(int ok, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void report(int ok, int line, const char *fmt, ...)
{
    if (ok) {
        passed++;
        return;
    }
    failed++;
    fprintf(stderr, "FAIL test_select.c:%d: ", line);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

#define EXPECT(cond, ...) report((cond) != 0, __LINE__, __VA_ARGS__)
#define EXPECT_INT(what, got, want)                                                       \
    do {                                                                                  \
        long long got_ = (long long)(got), want_ = (long long)(want);                     \
        report(got_ == want_, __LINE__, "%s: got %lld, expected %lld", what, got_, want_); \
    } while (0)
#define EXPECT_STR(what, got, want)                                                    \
    do {                                                                               \
        const char *got_ = (got), *want_ = (want);                                     \
        report(got_ && !strcmp(got_, want_), __LINE__, "%s: got \"%s\", expected \"%s\"", \
               what, got_ ? got_ : "(null)", want_);                                   \
    } while (0)
#define EXPECT_CONTAINS(what, got, needle)                                              \
    do {                                                                                \
        const char *got_ = (got), *needle_ = (needle);                                  \
        report(got_ && strstr(got_, needle_), __LINE__, "%s: \"%s\" does not contain \"%s\"", \
               what, got_ ? got_ : "(null)", needle_);                                  \
    } while (0)

/* ------------------------------------------------- the algorithm table */

/* Every value of enum strata_algo has its entry (a hole of the designated
 * initializers would have no name and no function), at its own index, for a
 * collective that exists, and no collective has two algorithms of one name. */
static void test_algorithm_table(void)
{
    for (int id = 0; id < STRATA_NALGOS; id++) {
        const struct strata_algorithm *al = strata_algorithm((enum strata_algo)id);
        report(al->name && al->run && al->summary, __LINE__, "algorithm %d has no entry", id);
        if (!al->name) continue;
        EXPECT_INT(al->name, (int)al->id, id);
        report(al->coll >= 0 && al->coll < STRATA_NCOLLS, __LINE__, "%s: collective %d", al->name,
               al->coll);
        report(strata_algorithm_find(al->coll, al->name) == al, __LINE__,
               "%s is not found under its own name", al->name);
    }
}

/* ------------------------------------------------- strata_algorithm_parse */

static void test_algorithm_parse(void)
{
    const struct strata_algorithm *al = NULL;
    int k = 0;
    char err[512];

    EXPECT_INT("parse throttled-read:4", strata_algorithm_parse(STRATA_COLL_SCATTER,
               "throttled-read:4", &al, &k, err, sizeof err), 0);
    EXPECT_INT("throttled-read:4 is", al ? (int)al->id : -1, STRATA_ALGO_SCATTER_THROTTLED_READ);
    EXPECT_INT("throttled-read:4 k", k, 4);
    EXPECT_INT("parse THROTTLED-READ:1 (any case)", strata_algorithm_parse(STRATA_COLL_SCATTER,
               "THROTTLED-READ:1", &al, &k, err, sizeof err), 0);
    EXPECT_INT("THROTTLED-READ:1 k", k, 1);
    /* Without a factor: the algorithm's default (the registry says 4). */
    EXPECT_INT("parse throttled-write", strata_algorithm_parse(STRATA_COLL_GATHER,
               "throttled-write", &al, &k, err, sizeof err), 0);
    EXPECT_INT("throttled-write k", k,
               strata_algorithm(STRATA_ALGO_GATHER_THROTTLED_WRITE)->k_default);
    EXPECT_INT("parse copy-in-copy-out", strata_algorithm_parse(STRATA_COLL_ALLTOALL,
               "copy-in-copy-out", &al, &k, err, sizeof err), 0);
    EXPECT_INT("copy-in-copy-out is", al ? (int)al->id : -1, STRATA_ALGO_ALLTOALL_CICO);
    EXPECT_INT("copy-in-copy-out k", k, 1);
    EXPECT_INT("parse ring-neighbour:3", strata_algorithm_parse(STRATA_COLL_ALLGATHER,
               "ring-neighbour:3", &al, &k, err, sizeof err), 0);
    EXPECT_INT("ring-neighbour:3 k", k, 3);

    static const struct {
        int coll;
        const char *text, *message;
    } bad[] = {
        {STRATA_COLL_SCATTER, "parallel-read:2", "this algorithm takes no factor"},
        {STRATA_COLL_SCATTER, "throttled-read:0", "an integer from 1 to 4096"},
        {STRATA_COLL_SCATTER, "throttled-read:4097", "an integer from 1 to 4096"},
        {STRATA_COLL_SCATTER, "throttled-read:2x", "an integer from 1 to 4096"},
        {STRATA_COLL_SCATTER, "throttled-read:", "an integer from 1 to 4096"},
        {STRATA_COLL_SCATTER, "bogus", "\"bogus\" is not an algorithm of MPI_Scatter"},
        {STRATA_COLL_SCATTER, "bogus", "throttled-read[:k]"}, /* names what is accepted */
        /* A name of another collective's algorithm. */
        {STRATA_COLL_GATHER, "throttled-read", "is not an algorithm of MPI_Gather"},
        {STRATA_COLL_BCAST, "", "is not an algorithm of MPI_Bcast"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        char what[96];
        snprintf(what, sizeof what, "parse \"%s\"", bad[i].text);
        EXPECT(strata_algorithm_parse(bad[i].coll, bad[i].text, &al, &k, err, sizeof err) == -1,
               "%s was accepted", what);
        EXPECT_CONTAINS(what, err, bad[i].message);
    }
}

/* ------------------------------------------------------ the model's choice */

static struct strata_model model;

static struct strata_model_shape one_group(int ranks, int single_copy)
{
    return (struct strata_model_shape){ranks, 1, ranks, single_copy, 2 * 16384, 0, 0};
}

static int explain(int coll, int ranks, int single_copy, size_t block, struct strata_prediction *all)
{
    struct strata_model_shape shape = one_group(ranks, single_copy);
    int n = strata_select_explain(&model, &shape, coll, block, all, STRATA_NALGOS);
    /* Whatever the model: fastest first, refused ones last with a reason. */
    for (int i = 0; i < n; i++) {
        if (all[i].us < 0) {
            EXPECT(all[i].refusal != NULL, "%s refused without a reason", all[i].al->name);
            EXPECT(i == n - 1 || all[i + 1].us < 0, "%s (refused) listed before %s",
                   all[i].al->name, i == n - 1 ? "nothing" : all[i + 1].al->name);
        } else if (i > 0) {
            EXPECT(all[i - 1].us >= 0 && all[i - 1].us <= all[i].us,
                   "%s (%.1f us) listed after %s (%.1f us)", all[i].al->name, all[i].us,
                   all[i - 1].al->name, all[i - 1].us);
        }
    }
    EXPECT(n > 0 && all[0].us >= 0, "%s on %d ranks: no algorithm can run",
           strata_coll_name(coll), ranks);
    return n;
}

static const struct strata_prediction *find(const struct strata_prediction *all, int n,
                                            const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(all[i].al->name, name)) return &all[i];
    report(0, __LINE__, "no prediction for %s", name);
    return &all[0];
}

static void load_model(void)
{
    char path[4096], err[1024];
    snprintf(path, sizeof path, "%s/model-contention.conf", data_dir);
    strata_model_defaults(&model);
    int rc = strata_model_load(&model, path, err, sizeof err);
    EXPECT(rc == 0, "loading %s: %s", path, err);
    EXPECT_INT("model gammas", model.ngamma, 16);
    EXPECT(model.gamma[3] == 8 && model.flag == 0.2, "model-contention.conf read wrongly");
}

/* With n = 1 MiB and the fixture's numbers, one CMA copy with c ranks at
 * the same process costs
 *   cma(c) = alpha + n beta + l gamma_c ceil(n/s) = 1.5 + 33.55 + 51.2 gamma_c
 *   cma(1) = 86.3, cma(2) = 91.4, cma(4) = 444.7, cma(8) = 1571, cma(15) = 5155
 * and a flag hand-off costs 0.2 (reading p flags: 0.2 + (p-2) 0.1). */
static void test_contention(void)
{
    struct strata_prediction all[STRATA_NALGOS];
    size_t MiB = 1 << 20;

    /* Scatter of 1 MiB blocks on 16 ranks:
     *  parallel-read: 15 readers at once, ~ cma(15) = 5155;
     *  sequential-write: memcpy 52.4 + 15 cma(1) = 1346;
     *  throttled-read k: ceil(15/k) steps of cma(k) plus a flag each:
     *    k=1 1297, k=2 8 x 91.4 = 733, k=4 1780, k=8 3143, k=15 5155;
     *  copy-in-copy-out: the root's 16 blocks and a region through the
     *    segment, 16.03 MiB x 5e-5 = 840, its own memcpy 52, and 512 rounds
     *    of one flag 102: 995.
     * So throttled-read, k=2, and parallel-read is slower. */
    int n = explain(STRATA_COLL_SCATTER, 16, 1, MiB, all);
    EXPECT_STR("scatter 1M x16: chosen", all[0].al->name, "throttled-read");
    EXPECT_INT("scatter 1M x16: throttled-read k", all[0].k, 2);
    EXPECT(find(all, n, "throttled-read")->us < find(all, n, "parallel-read")->us,
           "scatter 1M x16: parallel-read predicted faster than throttled-read");
    EXPECT(find(all, n, "throttled-read")->us < find(all, n, "sequential-write")->us,
           "scatter 1M x16: sequential-write predicted faster than throttled-read");

    /* Gather is Scatter's mirror: the same copies the other way. */
    n = explain(STRATA_COLL_GATHER, 16, 1, MiB, all);
    EXPECT_STR("gather 1M x16: chosen", all[0].al->name, "throttled-write");
    EXPECT_INT("gather 1M x16: throttled-write k", all[0].k, 2);
    EXPECT(find(all, n, "throttled-write")->us < find(all, n, "parallel-write")->us,
           "gather 1M x16: parallel-write predicted faster than throttled-write");

    /* Bcast of 1 MiB on 16 ranks: direct-read has 15 readers of the root at
     * once (~5155); the k-nomial tree with k=2 has readers of one source 2
     * at a time: ceil(log3 16) = 3 steps of cma(2) + flag = 275; the model
     * must prefer it to direct-read, and pick k=2 for it (k=1: 4 steps of
     * 86.5 = 346; k=4: 2 steps of 445 = 890). */
    n = explain(STRATA_COLL_BCAST, 16, 1, MiB, all);
    EXPECT_INT("bcast 1M x16: knomial k", find(all, n, "knomial")->k, 2);
    EXPECT(find(all, n, "knomial")->us < find(all, n, "direct-read")->us,
           "bcast 1M x16: direct-read predicted faster than knomial");

    /* Alltoall of 1 MiB blocks on 4 ranks: pairwise moves each byte once
     * (memcpy 52.4 + 3 cma(1) = 259, plus flags); copy-in-copy-out moves 7
     * blocks through the segment (367) plus the memcpy (52) and 128 rounds
     * of flags (51): single copy wins. */
    n = explain(STRATA_COLL_ALLTOALL, 4, 1, MiB, all);
    EXPECT_STR("alltoall 1M x4: chosen", all[0].al->name, "pairwise");
}

/* Transport map against cma (strata_model_map_wins), and calls priced as
 * copies through mappings (shape.mapped).  The fixture: alpha 1.5, beta
 * 3.2e-5, l 0.2 per 4 KiB page, memcpy 5e-5, map_alpha the built-in 0.02. */
static void test_mapped(void)
{
    char why[256];
    struct strata_model m = model;
    EXPECT(strata_model_map_wins(&m, why, sizeof why), "map should win with the fixture: %s", why);
    m.map_alpha = 2 * m.alpha;
    EXPECT(!strata_model_map_wins(&m, why, sizeof why), "map_alpha above alpha: map won");
    EXPECT_CONTAINS("slow start-up", why, "starts slower");
    m = model;
    m.memcpy_beta = 1e-3;
    EXPECT(!strata_model_map_wins(&m, why, sizeof why), "memcpy slower than CMA: map won");
    EXPECT_CONTAINS("slow memcpy", why, "per byte");
    m = model;
    m.map_lookup = 0.5; /* half of what a mapped copy saves (1.48) */
    EXPECT(!strata_model_map_wins(&m, why, sizeof why), "costly lookup: map won");
    EXPECT_CONTAINS("costly lookup", why, "lookup");

    /* Bcast of 1 MiB on 16 ranks through mappings: no pinning, so 15
     * readers of the root at once cost one memcpy each (~52 + flags): the
     * choice reads the root in one step (direct-read, or knomial with
     * k = 15, which is the same reads), where by CMA 15 readers at once are
     * the slowest (~5155, test_contention). */
    struct strata_prediction all[STRATA_NALGOS];
    struct strata_model_shape shape = one_group(16, 1);
    shape.mapped = 1;
    int n = strata_select_explain(&model, &shape, STRATA_COLL_BCAST, 1 << 20, all, STRATA_NALGOS);
    EXPECT(all[0].us > 52 && all[0].us < 60, "bcast 1M x16 mapped: %s at %.1f us, expected one "
           "memcpy of 1 MiB (52.4) plus flags", all[0].al->name, all[0].us);
    EXPECT(!strcmp(all[0].al->name, "direct-read") ||
               (!strcmp(all[0].al->name, "knomial") && all[0].k >= 15),
           "bcast 1M x16 mapped: chose %s k=%d, not a one-step read", all[0].al->name, all[0].k);
    EXPECT(find(all, n, "direct-read")->us < 60, "bcast 1M x16 mapped: direct-read %.1f us",
           find(all, n, "direct-read")->us);
    shape.mapped = 0;
    n = strata_select_explain(&model, &shape, STRATA_COLL_BCAST, 1 << 20, all, STRATA_NALGOS);
    EXPECT(strcmp(all[0].al->name, "direct-read") != 0, "bcast 1M x16 by CMA chose direct-read");
}

/* What the registry refuses, whatever the numbers. */
static void test_refusals(void)
{
    struct strata_prediction all[STRATA_NALGOS];
    static const struct {
        int coll;
        const char *only;
    } no_cma[] = {
        {STRATA_COLL_BCAST, "pipelined"},          {STRATA_COLL_SCATTER, "copy-in-copy-out"},
        {STRATA_COLL_GATHER, "copy-in-copy-out"},  {STRATA_COLL_ALLGATHER, "copy-in-copy-out"},
        {STRATA_COLL_ALLTOALL, "copy-in-copy-out"},
    };
    /* With CMA off only the shared-memory algorithm can run: every other
     * one is refused for it, at any size. */
    for (size_t c = 0; c < sizeof no_cma / sizeof no_cma[0]; c++) {
        for (size_t block = 64; block <= (8u << 20); block *= 64) {
            int n = explain(no_cma[c].coll, 5, 0, block, all);
            char what[128];
            snprintf(what, sizeof what, "%s of %zu bytes without CMA: chosen",
                     strata_coll_name(no_cma[c].coll), block);
            EXPECT_STR(what, all[0].al->name, no_cma[c].only);
            for (int i = 1; i < n; i++) {
                /* The same rounds through the segment as pipelined, priced alike. */
                if (!strcmp(all[i].al->name, "segment-pipeline")) {
                    EXPECT(all[i].us == all[0].us, "segment-pipeline without CMA: %.2f us, "
                           "pipelined %.2f us", all[i].us, all[0].us);
                    continue;
                }
                EXPECT(all[i].us < 0, "%s can run without CMA", all[i].al->name);
                EXPECT_CONTAINS(all[i].al->name, all[i].refusal, "single-copy transport");
            }
        }
    }

    /* Allgather on 6 ranks: recursive-doubling needs a power of two;
     * ring-neighbour's distance must be coprime with 6, and of the factors
     * tried (1, 2, 4, 6) only 1 is. */
    int n = explain(STRATA_COLL_ALLGATHER, 6, 1, 64 << 10, all);
    const struct strata_prediction *rd = find(all, n, "recursive-doubling");
    EXPECT(rd->us < 0, "recursive-doubling can run on 6 ranks");
    EXPECT_CONTAINS("recursive-doubling on 6 ranks", rd->refusal, "power-of-two");
    EXPECT_INT("ring-neighbour on 6 ranks: k", find(all, n, "ring-neighbour")->k, 1);
    EXPECT(find(all, n, "ring-neighbour")->us >= 0, "ring-neighbour refused on 6 ranks");
    n = explain(STRATA_COLL_ALLGATHER, 8, 1, 64 << 10, all);
    EXPECT(find(all, n, "recursive-doubling")->us >= 0, "recursive-doubling refused on 8 ranks");
    /* On 5 ranks every factor but 5 is coprime: k is a real choice. */
    n = explain(STRATA_COLL_ALLGATHER, 5, 1, 64 << 10, all);
    EXPECT(find(all, n, "ring-neighbour")->k % 5 != 0, "ring-neighbour on 5 ranks with k=5");

    /* The refusals behind those, directly. */
    const struct strata_algorithm *ring = strata_algorithm(STRATA_ALGO_ALLGATHER_RING_NEIGHBOUR);
    EXPECT(strata_algorithm_refusal(ring, 6, 1, 3) != NULL, "ring-neighbour k=3 on 6 ranks runs");
    EXPECT(strata_algorithm_refusal(ring, 6, 1, 5) == NULL, "ring-neighbour k=5 on 6 refused");
    EXPECT(strata_algorithm_refusal(strata_algorithm(STRATA_ALGO_SCATTER_CICO), 6, 0, 1) == NULL,
           "copy-in-copy-out refused without CMA");
}

/* ----------------------------------------------------------- tuning files */

/* Writes text to a temporary file; its path in out. */
static void write_temp(const char *text, char *out, size_t outlen)
{
    const char *dir = getenv("TMPDIR");
    snprintf(out, outlen, "%s/strata-test-select-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(out);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
        fprintf(stderr, "cannot write a temporary file %s\n", out);
        exit(2);
    }
    close(fd);
}

/* The first rule that matches, as tuning_file.h documents it (select.c
 * applies the same): collective, inclusive bounds; -1 if none. */
static int first_match(const struct strata_rule *rules, int n, int coll, size_t block, int ranks)
{
    for (int i = 0; i < n; i++)
        if (rules[i].coll == coll && block >= rules[i].min_bytes && block <= rules[i].max_bytes &&
            ranks >= rules[i].min_ranks && ranks <= rules[i].max_ranks)
            return i;
    return -1;
}

static void test_good_files(void)
{
    struct strata_rule rules[STRATA_MAX_RULES];
    char path[4096], err[1024] = "";
    snprintf(path, sizeof path, "%s/tuning-good.json", data_dir);
    int n = strata_tuning_file_load(path, rules, err, sizeof err);
    EXPECT_INT("tuning-good.json rules", n, 8);
    if (n != 8) {
        fprintf(stderr, "  %s\n", err);
        return;
    }
    /* Rule 1: only max_bytes "64K"; the rest match anything. */
    EXPECT_INT("rule 1 collective", rules[0].coll, STRATA_COLL_SCATTER);
    EXPECT_INT("rule 1 algorithm", rules[0].algo, STRATA_ALGO_SCATTER_CICO);
    EXPECT_INT("rule 1 k", rules[0].k, 1);
    EXPECT_INT("rule 1 min_bytes", rules[0].min_bytes, 0);
    EXPECT(rules[0].max_bytes == 65536, "rule 1 max_bytes: %zu", rules[0].max_bytes);
    EXPECT_INT("rule 1 min_ranks", rules[0].min_ranks, 0);
    EXPECT_INT("rule 1 max_ranks", rules[0].max_ranks, INT_MAX);
    /* Rule 2: "MPI_Scatter", every bound, a factor. */
    EXPECT_INT("rule 2 collective", rules[1].coll, STRATA_COLL_SCATTER);
    EXPECT_INT("rule 2 algorithm", rules[1].algo, STRATA_ALGO_SCATTER_THROTTLED_READ);
    EXPECT_INT("rule 2 k", rules[1].k, 2);
    EXPECT(rules[1].min_bytes == 65537 && rules[1].max_bytes == (4u << 20),
           "rule 2 bytes: %zu..%zu", rules[1].min_bytes, rules[1].max_bytes);
    EXPECT(rules[1].min_ranks == 3 && rules[1].max_ranks == 64, "rule 2 ranks: %d..%d",
           rules[1].min_ranks, rules[1].max_ranks);
    EXPECT(rules[2].max_bytes == SIZE_MAX, "rule 3: no max_bytes is not SIZE_MAX");
    /* Rule 5: a factor on ring-neighbour; rule 6: the default factor, "1m". */
    EXPECT_INT("rule 5 k", rules[4].k, 3);
    EXPECT_INT("rule 6 algorithm", rules[5].algo, STRATA_ALGO_BCAST_KNOMIAL);
    EXPECT_INT("rule 6 k (default)", rules[5].k,
               strata_algorithm(STRATA_ALGO_BCAST_KNOMIAL)->k_default);
    EXPECT(rules[5].min_bytes == (1u << 20), "rule 6 min_bytes: %zu", rules[5].min_bytes);
    EXPECT(rules[7].max_bytes == (size_t)INT64_MAX, "rule 8 max_bytes: %zu", rules[7].max_bytes);

    /* Which rule decides, first match winning, bounds inclusive. */
    static const struct {
        int coll;
        size_t block;
        int ranks, rule; /* 1-based; 0: none, the model decides */
    } cases[] = {
        {STRATA_COLL_SCATTER, 0, 4, 1},        {STRATA_COLL_SCATTER, 65536, 4, 1},
        {STRATA_COLL_SCATTER, 65537, 4, 2},    {STRATA_COLL_SCATTER, 4 << 20, 64, 2},
        {STRATA_COLL_SCATTER, 65537, 2, 3},    /* below rule 2's min_ranks */
        {STRATA_COLL_SCATTER, 65537, 65, 3},   {STRATA_COLL_SCATTER, (4 << 20) + 1, 4, 3},
        {STRATA_COLL_ALLGATHER, 1, 3, 0},      {STRATA_COLL_ALLGATHER, 1, 4, 5},
        {STRATA_COLL_BCAST, (1 << 20) - 1, 4, 0}, {STRATA_COLL_BCAST, 1 << 20, 4, 6},
        {STRATA_COLL_GATHER, 1 << 20, 2, 7},   {STRATA_COLL_GATHER, 1 << 20, 3, 0},
        {STRATA_COLL_ALLTOALL, 0, 3, 8},       {STRATA_COLL_REDUCE, 100, 4, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char what[128];
        snprintf(what, sizeof what, "rule for %s of %zu bytes on %d ranks",
                 strata_coll_name(cases[i].coll), cases[i].block, cases[i].ranks);
        EXPECT_INT(what, first_match(rules, n, cases[i].coll, cases[i].block, cases[i].ranks) + 1,
                   cases[i].rule);
    }

    snprintf(path, sizeof path, "%s/tuning-empty.json", data_dir);
    EXPECT_INT("tuning-empty.json rules", strata_tuning_file_load(path, rules, err, sizeof err), 0);

    /* Exactly STRATA_MAX_RULES rules are fine. */
    char text[8192] = "{\"rules\": [";
    for (int i = 0; i < STRATA_MAX_RULES; i++)
        strcat(text, i ? ",{\"collective\":\"bcast\",\"algorithm\":\"pipelined\"}"
                       : "{\"collective\":\"bcast\",\"algorithm\":\"pipelined\"}");
    strcat(text, "]}");
    write_temp(text, path, sizeof path);
    EXPECT_INT("64 rules", strata_tuning_file_load(path, rules, err, sizeof err), STRATA_MAX_RULES);
    unlink(path);
}

/* Each mistake: the text (rule 1 is always fine), and what the message must
 * say besides the file's path. */
static const struct {
    const char *text;
    const char *says[3];
} mistakes[] = {
    {"{\"rules\": [{\"collective\": \"scatter\", \"algorithm\": \"sequential-write\"},\n"
     "            {\"collective\": \"scatter\", \"algorithm\": \"throttled-read\", \"k\": 0}]}",
     {"rule 2 (line 2, column 70)", "\"k\" must be an integer from 1 to 4096, not 0"}},
    {"{\"rules\": [{\"collective\": \"bcast\", \"algorithm\": \"pipelined\"},\n"
     " {\"collective\": \"scatter\", \"algorithm\": \"parallel-read\", \"k\": 2}]}",
     {"rule 2", "\"k\" given, but MPI_Scatter's parallel-read takes no factor"}},
    {"{\"rules\": [{\"collective\": \"bcast\", \"algorithm\": \"pipelined\"},"
     " {\"collective\": \"scatter\", \"algorithm\": \"throttled-read\", \"k\": 2.5}]}",
     {"rule 2", "not 2.5"}},
    {"{\"rules\": [{\"collective\": \"bcast\", \"algorithm\": \"pipelined\"},"
     " {\"collective\": \"scatter\", \"algorithm\": \"throttled-read\", \"k\": \"4\"}]}",
     {"rule 2", "\"k\" must be an integer", "not a string"}},
    {"{\"rules\": [{\"collective\": \"bcast\", \"algorithm\": \"pipelined\"},"
     " {\"collective\": \"scatter\", \"algoritm\": \"parallel-read\"}]}",
     {"rule 2", "unknown key \"algoritm\"", "collective, algorithm, k, min_bytes"}},
    {"{\"rules\": [{\"collective\": \"bcast\", \"algorithm\": \"pipelined\"},"
     " {\"collective\": \"alltoallx\", \"algorithm\": \"parallel-read\"}]}",
     {"rule 2", "\"alltoallx\" is not a collective", "scatter"}},
    {"{\"rules\": [{\"collective\": \"bcast\", \"algorithm\": \"pipelined\"},"
     " {\"collective\": \"MPI_Reduce\", \"algorithm\": \"pipelined\"}]}",
     {"rule 2", "MPI_Reduce has no algorithms to choose from", "allgather"}},
    {"{\"rules\": [{\"collective\": \"bcast\", \"algorithm\": \"pipelined\"},"
     " {\"collective\": \"gather\", \"algorithm\": \"throttled-read\"}]}",
     {"rule 2", "\"throttled-read\" is not an algorithm of MPI_Gather", "throttled-write"}},
    {"{\"rules\": [{\"collective\": \"bcast\", \"algorithm\": \"pipelined\"},"
     " {\"collective\": \"scatter\", \"algorithm\": \"throttled-read:4\"}]}",
     {"rule 2", "give a factor as \"k\""}},
    {"{\"rules\": [{\"collective\": \"bcast\", \"algorithm\": \"pipelined\"},"
     " {\"collective\": \"scatter\"}]}",
     {"rule 2", "\"algorithm\" is missing"}},
    {"{\"rules\": [{\"collective\": \"bcast\", \"algorithm\": \"pipelined\"},"
     " {\"algorithm\": \"pipelined\"}]}",
     {"rule 2", "\"collective\" is missing"}},
    {"{\"rules\": [{\"collective\": \"bcast\", \"algorithm\": \"pipelined\"},"
     " {\"collective\": 3, \"algorithm\": \"pipelined\"}]}",
     {"rule 2", "\"collective\" must be a string, not a number"}},
    {"{\"rules\": [{\"collective\": \"bcast\", \"algorithm\": \"pipelined\"},"
     " {\"collective\": \"bcast\", \"algorithm\": \"pipelined\", \"min_bytes\": \"64Q\"}]}",
     {"rule 2", "\"min_bytes\": \"64Q\" is not a byte count"}},
    {"{\"rules\": [{\"collective\": \"bcast\", \"algorithm\": \"pipelined\"},"
     " {\"collective\": \"bcast\", \"algorithm\": \"pipelined\", \"max_bytes\": -1}]}",
     {"rule 2", "\"max_bytes\" must be a byte count", "not -1"}},
    {"{\"rules\": [{\"collective\": \"bcast\", \"algorithm\": \"pipelined\"},"
     " {\"collective\": \"bcast\", \"algorithm\": \"pipelined\", \"max_ranks\": \"8\"}]}",
     {"rule 2", "\"max_ranks\" must be an integer from 0 to 2147483647, not a string"}},
    {"{\"rules\": [{\"collective\": \"bcast\", \"algorithm\": \"pipelined\"},"
     " {\"collective\": \"bcast\", \"algorithm\": \"pipelined\", \"min_bytes\": \"1M\","
     " \"max_bytes\": \"64K\"}]}",
     {"rule 2", "min_bytes (1048576) is above max_bytes (65536)"}},
    {"{\"rules\": [{\"collective\": \"bcast\", \"algorithm\": \"pipelined\"},"
     " {\"collective\": \"bcast\", \"algorithm\": \"pipelined\", \"min_ranks\": 9,"
     " \"max_ranks\": 8}]}",
     {"rule 2", "min_ranks (9) is above max_ranks (8)"}},
    {"{\"rules\": [{\"collective\": \"bcast\", \"algorithm\": \"pipelined\"}, \"scatter\"]}",
     {"rule 2", "a rule must be an object, not a string"}},
    /* The file as a whole. */
    {"[]", {"line 1, column 1", "must hold an object {\"rules\": [...]}, not an array"}},
    {"{}", {"\"rules\" is missing"}},
    {"{\"rules\": {}}", {"\"rules\" must be an array of rules, not an object"}},
    {"{\"rules\": [], \"comment\": \"x\"}", {"line 1, column 15", "unknown key \"comment\""}},
    /* JSON mistakes, with their place. */
    {"{\"rules\": [\n  {\"collective\": \"bcast\", \"algorithm\": \"pipelined\"},\n]}",
     {"line 3, column 1", "trailing comma"}},
    {"{\"rules\": [\n  {\"collective\": 'bcast'}]}", {"line 2, column 18", "unexpected '''"}},
    {"{\"rules\": [] // none\n}", {"line 1, column 14", "unexpected '/'"}},
    {"", {"line 1, column 1", "unexpected end of text"}},
};

static void test_bad_files(void)
{
    struct strata_rule rules[STRATA_MAX_RULES];
    char path[4096], err[1024];
    for (size_t i = 0; i < sizeof mistakes / sizeof mistakes[0]; i++) {
        write_temp(mistakes[i].text, path, sizeof path);
        err[0] = 0;
        int n = strata_tuning_file_load(path, rules, err, sizeof err);
        char what[64];
        snprintf(what, sizeof what, "mistake %zu", i + 1);
        EXPECT(n == -1, "%s accepted (%d rules):\n%s", what, n, mistakes[i].text);
        EXPECT(!strncmp(err, path, strlen(path)) && err[strlen(path)] == ':',
               "%s: the message does not start with the path: %s", what, err);
        for (int w = 0; w < 3 && mistakes[i].says[w]; w++)
            EXPECT_CONTAINS(what, err, mistakes[i].says[w]);
        unlink(path);
    }

    /* More than STRATA_MAX_RULES rules. */
    char text[8192] = "{\"rules\": [";
    for (int i = 0; i <= STRATA_MAX_RULES; i++)
        strcat(text, i ? ",\n{\"collective\":\"bcast\",\"algorithm\":\"pipelined\"}"
                       : "{\"collective\":\"bcast\",\"algorithm\":\"pipelined\"}");
    strcat(text, "]}");
    write_temp(text, path, sizeof path);
    EXPECT_INT("65 rules", strata_tuning_file_load(path, rules, err, sizeof err), -1);
    EXPECT_CONTAINS("65 rules", err, "rule 65 (line 65, column 1): more than 64 rules");
    unlink(path);

    EXPECT_INT("no such file", strata_tuning_file_load("/nonexistent/tuning.json", rules, err,
                                                       sizeof err), -1);
    EXPECT_CONTAINS("no such file", err, "/nonexistent/tuning.json: cannot be opened");

    snprintf(path, sizeof path, "%s/tuning-bad-rule.json", data_dir);
    EXPECT_INT("tuning-bad-rule.json", strata_tuning_file_load(path, rules, err, sizeof err), -1);
    EXPECT_CONTAINS("tuning-bad-rule.json", err, "rule 2 (line 3, column ");
}

/* The model file's "measured" lines (coll/model_measured.c): read, a
 * repeated record replacing the earlier one, written back and read again
 * alike, found by shape; and bad ones refused with file:line. */
static void test_measured_lines(void)
{
    char path[4096], err[1024] = "";
    write_temp("flag_us 0.2\n"
               "measured allgather 2 1 1 21 ring-source-read 0.5\n"
               "measured allgather 2 1 1 21 ring-neighbour:1 1.25\n"
               "measured allgather 2 1 1 21 ring-source-read 0.75 # measured again\n"
               "measured bcast 4 2 0 17 knomial:3 2\n",
               path, sizeof path);
    struct strata_model m;
    strata_model_defaults(&m);
    EXPECT(strata_model_load(&m, path, err, sizeof err) == 0, "measured lines: %s", err);
    unlink(path);
    EXPECT_INT("measured records", m.nmeasured, 3);
    struct strata_model_shape two = {2, 1, 2, 1, 32768, 0, 0}, four = {4, 2, 2, 0, 32768, 0, 0};
    const struct strata_model_measured *r = strata_model_find_measured(
        &m, &two, STRATA_COLL_ALLGATHER, 21, STRATA_ALGO_ALLGATHER_RING_SOURCE_READ, 1);
    EXPECT(r && r->ratio == 0.75, "the later ring-source-read record replaces the earlier");
    EXPECT(!strata_model_find_measured(&m, &four, STRATA_COLL_ALLGATHER, 21,
                                       STRATA_ALGO_ALLGATHER_RING_SOURCE_READ, 1),
           "a record found for another shape");
    r = strata_model_find_measured(&m, &four, STRATA_COLL_BCAST, 17, STRATA_ALGO_BCAST_KNOMIAL, 3);
    EXPECT(r && r->ratio == 2, "knomial:3 on 4 ranks in 2 groups without single copy");
    /* Written and read back: the same records. */
    write_temp("", path, sizeof path);
    EXPECT(strata_model_save(&m, path) == 0, "saving the model");
    struct strata_model back;
    strata_model_defaults(&back);
    EXPECT(strata_model_load(&back, path, err, sizeof err) == 0, "reading it back: %s", err);
    unlink(path);
    EXPECT_INT("records read back", back.nmeasured, m.nmeasured);
    for (int i = 0; i < m.nmeasured && i < back.nmeasured; i++) {
        const struct strata_model_measured *a = &m.measured[i], *b = &back.measured[i];
        EXPECT(a->coll == b->coll && a->ranks == b->ranks && a->groups == b->groups &&
                   a->single_copy == b->single_copy && a->cls == b->cls && a->algo == b->algo &&
                   a->k == b->k && a->ratio == b->ratio,
               "record %d differs once written and read back", i);
    }
    static const struct {
        const char *line, *says;
    } bad[] = {
        {"measured allgather 2 1 1 21 ring-source-read", "measured takes 7 values"},
        {"measured allgather 2 1 1 21 ring-source-read 0.5 9", "measured takes 7 values"},
        {"measured nosuch 2 1 1 21 ring-source-read 0.5", "\"nosuch\" is not a collective"},
        {"measured allgather 0 1 1 21 ring-source-read 0.5", "RANKS and GROUPS"},
        {"measured allgather 2 1 2 21 ring-source-read 0.5", "SINGLE_COPY 0 or 1"},
        {"measured allgather 2 1 1 65 ring-source-read 0.5", "CLASS 0 to 64"},
        {"measured allgather 2 1 1 21 pipelined 0.5", "is not an algorithm of MPI_Allgather"},
        {"measured allgather 2 1 1 21 ring-source-read:2 0.5", "takes no factor"},
        {"measured allgather 2 1 1 21 ring-source-read 0", "RATIO must be a number above 0"},
        {"measured allgather 2 1 1 21 ring-source-read fast", "RATIO must be a number above 0"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[256], what[64];
        snprintf(text, sizeof text, "flag_us 0.2\n%s\n", bad[i].line);
        snprintf(what, sizeof what, "bad measured line %zu", i + 1);
        write_temp(text, path, sizeof path);
        strata_model_defaults(&m);
        EXPECT(strata_model_load(&m, path, err, sizeof err) == -1, "%s accepted: %s", what,
               bad[i].line);
        EXPECT_CONTAINS(what, err, ":2: ");
        EXPECT_CONTAINS(what, err, bad[i].says);
        unlink(path);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DATA_DIR (tests/data of the source tree)\n", argv[0]);
        return 2;
    }
    data_dir = argv[1];
    test_algorithm_table();
    test_algorithm_parse();
    load_model();
    test_contention();
    test_mapped();
    test_refusals();
    test_good_files();
    test_bad_files();
    test_measured_lines();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

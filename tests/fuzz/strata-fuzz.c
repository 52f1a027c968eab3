/* strata-fuzz: thousands of random collective calls, each run through the
 * host MPI (PMPI_*) and through strata (MPI_*) on copies of the same
 * inputs, every output byte compared (see fuzz.h for the parts).
 *
 *   --seed=N          the run's seed (decimal or 0x...); every rank draws the
 *                     same calls from it (default 1)
 *   --calls=N         calls to draw and run (default 500)
 *   --max-bytes=S     largest buffer of a call on a rank, K/M/G suffixes
 *                     (default 1M)
 *   --forms=LIST      the forms strata's side of a call is drawn from:
 *                     blocking, nonblocking (MPI_I<coll> + MPI_Wait),
 *                     persistent (MPI_<coll>_init + MPI_Start + MPI_Wait +
 *                     MPI_Request_free); the first eight collectives, valid
 *                     calls (default blocking; the host side is always its
 *                     blocking PMPI_ form, the reference)
 *   --colls=LIST      bcast, reduce, allreduce, allgather, gather, scatter,
 *                     alltoall, barrier, scan, exscan, reduce_scatter_block,
 *                     reduce_scatter, gatherv, scatterv, allgatherv, alltoallv
 *                     (default all)
 *   --only=I          run call I alone (with the same --seed, --max-bytes,
 *                     --colls, --no-errors, --erroneous and --forms as the
 *                     run that drew it)
 *   --elements=N      with --only: N base elements per block instead of the
 *                     drawn number (what the shrinker prints)
 *   --replay=S:I[:N]  the same as --seed=S --only=I [--elements=N]
 *   --no-errors       draw no calls with invalid arguments
 *   --no-shrink       report a mismatch without looking for a smaller one
 *   --keep-going      go on after a mismatch (default: stop at the first)
 *   --require-strata  fail unless strata served some of the calls
 *   --expect-all      check the result of every call that moves data against
 *                     the bytes expected from the inputs (by default only when
 *                     strata and the host MPI differ, to tell who is wrong)
 *   --call-timeout=S  a call that has not returned after S seconds is a hang:
 *                     the job ends with status 124 (default 120; 0: never)
 *   -v, -vv           name every call (world rank 0); -vv adds its outcome
 *   --self-test=corrupt:N  pretend strata damages its output from N elements
 *                     on: the run must catch it and shrink it to exactly the
 *                     smallest such count (then it passes)
 *   --self-test=hang  world rank 1 skips strata's MPI_Barrier: the watchdog
 *                     must end the job with "HANG" (ctest matches it)
 *   --erroneous       erroneous programs (issue 29): each call gets one rank
 *                     (drawn) whose count differs from the others' (half,
 *                     double, a few elements more or fewer, or 0) and runs
 *                     through strata alone, never the host MPI, every buffer
 *                     between guard zones; each rank must find the zones and
 *                     the buffers it only sends from unchanged, the error
 *                     class docs/TESTING.md ("Bad arguments") states, and the
 *                     call returned (--call-timeout); then the same call with
 *                     agreeing counts runs as usual (host and strata
 *                     compared) and must be served by strata.  Draws bcast,
 *                     reduce, allreduce, allgather, gather, scatter,
 *                     alltoall, gatherv, scatterv, allgatherv, alltoallv (the
 *                     v-collectives blocking only: --forms applies to the
 *                     others), no invalid arguments (fuzz_erroneous.c)
 *   --odd-first       with --erroneous: every rank but the odd one starts the
 *                     erroneous call once the odd rank's has returned (or
 *                     after half a second, where it cannot return alone):
 *                     the odd rank runs, and judges, before any other rank
 *                     has published anything of the call (a timing the
 *                     plain mode meets only now and then)
 *   --self-test=erroneous-class  with --erroneous: expect MPI_SUCCESS where
 *                     MPI_ERR_TRUNCATE is due; the run must report it (then
 *                     it passes)
 *   --self-test=erroneous-guard  with --erroneous: the odd rank changes a
 *                     byte of a guard zone after the call; the run must
 *                     report it (then it passes)
 *
 * Exit status: 0 when strata and the host MPI agreed on every call, 1 on a
 * mismatch, 124 on a hang, 2 on a bad option. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fuzz.h"
#include "testutil.h"

extern char **environ;

struct fuzz_opts fuzz_opt = {
    .seed = 1,
    .calls = 500,
    .max_bytes = 1 << 20,
    .colls = FUZZ_COLLS,
    .only = -1,
    .elements = -1,
    .errors = 1,
    .shrink = 1,
    .call_timeout = 120,
    .forms = 1,
};

static const char *prog;

/* ---- Options ------------------------------------------------------------------ */

static void usage_error(const char *what, const char *value)
{
    if (fuzz_opt.world_rank == 0)
        fprintf(stderr, "strata-fuzz: %s \"%s\" (the options are listed at the top of "
                "tests/fuzz/strata-fuzz.c)\n", what, value);
    MPI_Finalize();
    exit(2);
}

static unsigned long long parse_number(const char *s, const char *what)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 0);
    if (end == s) usage_error(what, s);
    if (*end == 'k' || *end == 'K') v <<= 10, end++;
    else if (*end == 'm' || *end == 'M') v <<= 20, end++;
    else if (*end == 'g' || *end == 'G') v <<= 30, end++;
    if (*end) usage_error(what, s);
    return v;
}

static void parse_colls(const char *list)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    fuzz_opt.colls = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int c = strata_coll_parse(t);
        if (c < 0) usage_error("unknown collective", t);
        if (!((FUZZ_COLLS >> c) & 1)) usage_error("collective not drawn by the fuzzer yet", t);
        fuzz_opt.colls |= 1u << c;
    }
    if (!fuzz_opt.colls) usage_error("no collective in", list);
}

/* --forms=LIST: blocking, nonblocking, persistent. */
static void parse_forms(const char *val)
{
    static const char *names[3] = {"blocking", "nonblocking", "persistent"};
    char copy[128];
    snprintf(copy, sizeof copy, "%s", val);
    fuzz_opt.forms = 0;
    for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int f = 0;
        while (f < 3 && strcmp(t, names[f])) f++;
        if (f == 3) usage_error("--forms takes blocking, nonblocking, persistent, not", t);
        fuzz_opt.forms |= 1 << f;
    }
    if (!fuzz_opt.forms) usage_error("--forms names no form:", val);
}

static void parse_options(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *eq = strchr(a, '=');
        char name[64];
        snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - a) : (int)strlen(a), a);
        const char *val = eq ? eq + 1 : NULL;
        int flag = !strcmp(name, "-v") || !strcmp(name, "-vv") || !strcmp(name, "--no-errors") ||
                   !strcmp(name, "--no-shrink") || !strcmp(name, "--keep-going") ||
                   !strcmp(name, "--require-strata") || !strcmp(name, "--expect-all") ||
                   !strcmp(name, "--erroneous") || !strcmp(name, "--odd-first");
        if (!flag && !val) {
            if (i + 1 >= argc) usage_error("missing value after", a);
            val = argv[++i];
        }
        if (!strcmp(name, "-v")) fuzz_opt.verbose++;
        else if (!strcmp(name, "-vv")) fuzz_opt.verbose += 2;
        else if (!strcmp(name, "--no-errors")) fuzz_opt.errors = 0;
        else if (!strcmp(name, "--no-shrink")) fuzz_opt.shrink = 0;
        else if (!strcmp(name, "--keep-going")) fuzz_opt.keep_going = 1;
        else if (!strcmp(name, "--require-strata")) fuzz_opt.require_strata = 1;
        else if (!strcmp(name, "--expect-all")) fuzz_opt.expect_all = 1;
        else if (!strcmp(name, "--erroneous")) fuzz_opt.erroneous = 1;
        else if (!strcmp(name, "--odd-first")) fuzz_opt.odd_first = 1;
        else if (!strcmp(name, "--seed")) fuzz_opt.seed = parse_number(val, "bad seed");
        else if (!strcmp(name, "--calls")) fuzz_opt.calls = (long)parse_number(val, "bad count");
        else if (!strcmp(name, "--max-bytes"))
            fuzz_opt.max_bytes = (size_t)parse_number(val, "bad size");
        else if (!strcmp(name, "--colls")) parse_colls(val);
        else if (!strcmp(name, "--forms")) parse_forms(val);
        else if (!strcmp(name, "--only")) fuzz_opt.only = (long)parse_number(val, "bad index");
        else if (!strcmp(name, "--elements"))
            fuzz_opt.elements = (long)parse_number(val, "bad element count");
        else if (!strcmp(name, "--call-timeout"))
            fuzz_opt.call_timeout = (unsigned)parse_number(val, "bad timeout");
        else if (!strcmp(name, "--self-test")) {
            if (!strcmp(val, "hang")) fuzz_opt.self_hang = 1;
            else if (!strcmp(val, "erroneous-class")) fuzz_opt.self_erroneous = 1;
            else if (!strcmp(val, "erroneous-guard")) fuzz_opt.self_erroneous = 2;
            else if (!strncmp(val, "corrupt:", 8))
                fuzz_opt.self_corrupt = (size_t)parse_number(val + 8, "bad self-test count");
            else usage_error("--self-test takes corrupt:N, hang, erroneous-class or "
                             "erroneous-guard, not", val);
        } else if (!strcmp(name, "--replay")) {
            unsigned long long s, i2, n;
            int got = sscanf(val, "%lli:%lli:%lli", &s, &i2, &n);
            if (got < 2) usage_error("--replay takes SEED:INDEX[:ELEMENTS], not", val);
            fuzz_opt.seed = s;
            fuzz_opt.only = (long)i2;
            if (got == 3) fuzz_opt.elements = (long)n;
        } else usage_error("unknown option", a);
    }
    if (fuzz_opt.max_bytes < 64) usage_error("--max-bytes below 64", "");
    if (fuzz_opt.self_erroneous && !fuzz_opt.erroneous)
        usage_error("this self-test needs", "--erroneous");
    if (fuzz_opt.odd_first && !fuzz_opt.erroneous) usage_error("--odd-first needs", "--erroneous");
    if (fuzz_opt.erroneous) {
        fuzz_opt.errors = 0;
        fuzz_opt.colls &= FUZZ_ERRONEOUS_COLLS;
        if (!fuzz_opt.colls) usage_error("--erroneous draws none of", "--colls");
    }
}

/* ---- Reports ------------------------------------------------------------------ */

static struct {
    long calls, no_member, ran, served, invalid, host_rejected, host_accepted_invalid, host_wrong;
    long erroneous, erred; /* --erroneous: calls strata ran with a count differing, and in
                              which some rank got an error */
} stats[STRATA_NCOLLS];

/* --erroneous: the correct call after an erroneous one on this rank's
 * communicator must be served by strata. */
static int must_serve;

/* The command that runs `c` alone with `elems` elements. */
static void replay_line(const struct fuzz_call *c, size_t elems, char *out, size_t len)
{
    int n = 0;
    for (char **e = environ; *e; e++) {
        const char *eq = strchr(*e, '=');
        if (strncmp(*e, "STRATA_", 7) || !eq || n + strlen(*e) + 4 >= len) continue;
        if (strchr(eq, ' ')) /* STRATA_TOPOLOGY="pack:2 numa:2 ..." */
            n += snprintf(out + n, len - (size_t)n, "%.*s\"%s\" ", (int)(eq + 1 - *e), *e, eq + 1);
        else
            n += snprintf(out + n, len - (size_t)n, "%s ", *e);
    }
    n += snprintf(out + n, len - (size_t)n,
                  "strata-run --native -n %d %s --seed 0x%llx --only %ld --elements %zu "
                  "--max-bytes %zu", fuzz_opt.world_size, prog,
                  (unsigned long long)fuzz_opt.seed, c->index, elems, fuzz_opt.max_bytes);
    if (fuzz_opt.colls != (fuzz_opt.erroneous ? FUZZ_ERRONEOUS_COLLS : FUZZ_COLLS)) {
        n += snprintf(out + n, len - (size_t)n, " --colls ");
        const char *sep = "";
        for (int k = 0; k < STRATA_NCOLLS; k++)
            if ((fuzz_opt.colls >> k) & 1) {
                n += snprintf(out + n, len - (size_t)n, "%s%s", sep,
                              strata_coll_name((enum strata_coll)k) + 4);
                sep = ",";
            }
    }
    if (!fuzz_opt.errors && !fuzz_opt.erroneous)
        n += snprintf(out + n, len - (size_t)n, " --no-errors");
    /* The form of strata's side is drawn from the forms given. */
    if (fuzz_opt.forms != 1) {
        static const char *names[3] = {"blocking", "nonblocking", "persistent"};
        const char *sep = " --forms=";
        for (int f = 0; f < 3; f++)
            if ((fuzz_opt.forms >> f) & 1) {
                n += snprintf(out + n, len - (size_t)n, "%s%s", sep, names[f]);
                sep = ",";
            }
    }
    if (fuzz_opt.erroneous) snprintf(out + n, len - (size_t)n, " --erroneous");
}

/* The call as this rank's group sees it. */
static void call_text(const struct fuzz_call *c, size_t elems, const struct fuzz_comm *fc,
                      char *out, size_t len)
{
    char d[1024], members[512] = "";
    int n = 0;
    for (int i = 0; i < fc->size && n + 12 < (int)sizeof members; i++)
        n += snprintf(members + n, sizeof members - (size_t)n, "%s%d", i ? " " : "",
                      fc->members[i]);
    fuzz_describe(c, elems, fc->size, d, sizeof d);
    if (fc->comm == MPI_COMM_NULL)
        snprintf(out, len, "call %ld: %s (this rank is not in slot %d: %s)", c->index, d,
                 c->slot, fc->how);
    else
        snprintf(out, len, "call %ld: %s; on %s, size %d: world ranks [%s]", c->index, d,
                 fc->how, fc->size, members);
}

static void print_reports(const struct fuzz_outcome *o, const struct fuzz_comm *fc,
                          const char *text);

/* Runs the call; returns 1 (on every rank) if strata disagreed with the host
 * MPI anywhere.  `report`: print what differed (world rank 0 gathers it). */
static int run_call(const struct fuzz_call *c, size_t elems, int report)
{
    struct fuzz_comm *fc = fuzz_comm_slot(c->slot);
    char text[2048], replay[2048];
    call_text(c, elems, fc, text, sizeof text);
    replay_line(c, elems, replay, sizeof replay);
    char armed[4200];
    snprintf(armed, sizeof armed, "%s\n  replay: %s", text, replay);
    fuzz_watchdog_context(armed);
    if (fuzz_opt.verbose && fuzz_opt.world_rank == 0 && report) {
        printf("%s\n", text);
        fflush(stdout);
    }
    struct fuzz_outcome o;
    fuzz_run(c, elems, fc, &o);
    if (must_serve && o.member && o.ran_strata && !o.served && !o.mismatch) {
        snprintf(o.report, sizeof o.report, "the correct call after the erroneous one was not "
                 "served by strata");
        o.mismatch = 1;
    }
    int local[5] = {o.mismatch, o.ran_strata && o.member, o.served, o.member, o.host_wrong};
    int any[5];
    PMPI_Allreduce(local, any, 5, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (o.host_wrong && report && (fuzz_opt.verbose || !stats[c->coll].host_wrong)) {
        /* Each rank's first such call per collective, or all of them with -v. */
        printf("note: the host MPI is wrong, strata right (world rank %d): %s\n    %s\n",
               fuzz_opt.world_rank, text, o.report);
        fflush(stdout);
    }
    if (report) {
        stats[c->coll].calls++;
        if (!any[3]) {
            stats[c->coll].no_member++;
        } else if (c->error) {
            if (any[1]) stats[c->coll].invalid++;
            else stats[c->coll].host_accepted_invalid++;
        } else if (any[1]) {
            stats[c->coll].ran++;
            stats[c->coll].served += any[2];
            stats[c->coll].host_wrong += any[4];
        } else {
            stats[c->coll].host_rejected++;
        }
        if (fuzz_opt.verbose && o.member && fc->rank == 0 && !c->error && o.host_rc) {
            printf("note: the host MPI rejected a valid call (%s), not given to strata: %s\n",
                   o.host_error, text);
            fflush(stdout);
        }
        if (fuzz_opt.verbose > 1 && fuzz_opt.world_rank == 0)
            printf("  -> %s%s\n", any[1] ? "compared" : "not given to strata",
                   any[2] ? ", strata serves the communicator" : "");
    }
    if (!any[0] || !report) return any[0];
    print_reports(&o, fc, text);
    return 1;
}

/* Every rank's report, in world rank order (collective over the world). */
static void print_reports(const struct fuzz_outcome *o, const struct fuzz_comm *fc,
                          const char *text)
{
    char line[4096] = "";
    if (o->mismatch)
        snprintf(line, sizeof line, "  world rank %d (rank %d of %d): %s\n    %s\n",
                 fuzz_opt.world_rank, fc->rank, fc->size, text, o->report);
    char *all = fuzz_opt.world_rank == 0 ? malloc(sizeof line * (size_t)fuzz_opt.world_size)
                                         : NULL;
    PMPI_Gather(line, sizeof line, MPI_CHAR, all, sizeof line, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (all) {
        for (int r = 0; r < fuzz_opt.world_size; r++) fputs(all + (size_t)r * sizeof line, stdout);
        fflush(stdout);
        free(all);
    }
}

/* --erroneous: the call with one rank's count changed, through strata
 * alone (fuzz_erroneous.c), then with agreeing counts through both.
 * Returns 1 (on every rank) on a failure of either. */
static int run_erroneous(const struct fuzz_call *c)
{
    struct fuzz_comm *fc = fuzz_comm_slot(c->slot);
    struct fuzz_wrong w;
    fuzz_draw_wrong(c, fc->size, &w);
    char text[2300], replay[2048], armed[4400];
    call_text(c, c->elems, fc, text, sizeof text);
    size_t n = strlen(text);
    snprintf(text + n, sizeof text - n, "; erroneous: rank %d passes %zu base elements (%s)",
             w.odd, w.odd_elems, w.how);
    replay_line(c, c->elems, replay, sizeof replay);
    snprintf(armed, sizeof armed, "%s\n  replay: %s", text, replay);
    fuzz_watchdog_context(armed);
    if (fuzz_opt.verbose && fuzz_opt.world_rank == 0) {
        printf("%s\n", text);
        fflush(stdout);
    }
    struct fuzz_outcome o;
    fuzz_run_erroneous(c, &w, fc, &o);
    int local[3] = {o.mismatch, o.ran_strata, o.ran_strata && o.strata_rc != MPI_SUCCESS};
    int any[3];
    PMPI_Allreduce(local, any, 3, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    stats[c->coll].erroneous += any[1];
    stats[c->coll].erred += any[2];
    if (fuzz_opt.verbose > 1 && fuzz_opt.world_rank == 0)
        printf("  -> %s\n", any[1] ? any[2] ? "strata reported an error" : "strata succeeded"
                                  : "not erroneous here (not strata's, or one rank)");
    if (any[0]) {
        if (fuzz_opt.world_rank == 0) printf("ERRONEOUS CALL FAILED (each rank's report):\n");
        print_reports(&o, fc, text);
    }
    int failed = any[0];
    if (!any[0] || !fuzz_opt.self_erroneous) {
        must_serve = o.ran_strata;
        failed |= run_call(c, c->elems, 1);
        must_serve = 0;
    }
    if (failed && fuzz_opt.world_rank == 0) {
        printf("FAIL: seed 0x%llx, call %ld (%s)\nreplay: %s\n",
               (unsigned long long)fuzz_opt.seed, c->index,
               any[0] ? "the erroneous call" : "the correct call after it", replay);
        fflush(stdout);
    }
    return failed;
}

/* The smallest element count (a multiple of the call's unit) at which the
 * call still fails: tries counts from small to large below the current
 * failing one, restarting from each new failure. */
static size_t shrink(const struct fuzz_call *c, size_t failing)
{
    int tries = 0, npassed = 0;
    size_t passed[320]; /* counts already seen to pass: never tried twice */
    for (;;) {
        size_t cand[96], u = c->unit;
        int n = 0;
        for (size_t k = 0; k <= 8; k++) cand[n++] = k * u;
        for (int s = 1; s < 40; s++) {
            cand[n++] = (failing >> s) / u * u;
            cand[n++] = (failing - (failing >> s)) / u * u;
        }
        cand[n++] = failing >= u ? failing - u : 0;
        /* Ascending, unique, below the failing count. */
        for (int i = 1; i < n; i++)
            for (int j = i; j > 0 && cand[j - 1] > cand[j]; j--) {
                size_t t = cand[j];
                cand[j] = cand[j - 1];
                cand[j - 1] = t;
            }
        int found = 0;
        for (int i = 0; i < n && !found; i++) {
            int known = 0;
            for (int p = 0; p < npassed; p++) known |= passed[p] == cand[i];
            if (cand[i] >= failing || known || (i && cand[i] == cand[i - 1])) continue;
            if (++tries > 300) return failing;
            if (run_call(c, cand[i], 0)) {
                failing = cand[i];
                found = 1;
            } else {
                passed[npassed++] = cand[i];
            }
        }
        if (!found) return failing;
    }
}

/* --self-test=corrupt:N: whether the shrinker found the count the damage
 * starts at (N rounded up to the call's unit), and the call failed again. */
static int self_test_verdict(const struct fuzz_call *c, size_t minimal, int again)
{
    size_t want = (fuzz_opt.self_corrupt + c->unit - 1) / c->unit * c->unit;
    int ok = again && minimal == want;
    if (fuzz_opt.world_rank == 0)
        printf("%s strata-fuzz self-test: the damage starts at %zu elements, the shrinker "
               "found %zu%s\n", ok ? "PASS" : "FAIL", want, minimal,
               again ? "" : " and the call did not fail again");
    return !ok;
}

static int handle_mismatch(const struct fuzz_call *c, size_t elems)
{
    int again = 1;
    char text[2048], replay[2048];
    struct fuzz_comm *fc = fuzz_comm_slot(c->slot);
    size_t minimal = elems;
    if (fuzz_opt.world_rank == 0) {
        printf("MISMATCH: seed 0x%llx, call %ld (strata and the host MPI disagree; each "
               "rank's first difference is above)\n", (unsigned long long)fuzz_opt.seed,
               c->index);
        fflush(stdout);
    }
    if (fuzz_opt.shrink && !c->error && c->coll != STRATA_COLL_BARRIER) {
        minimal = shrink(c, elems);
        if (fuzz_opt.world_rank == 0)
            printf("shrinking: the smallest failing count found is %zu elements (drawn: %zu); "
                   "that call again:\n", minimal, elems);
        fflush(stdout);
        again = run_call(c, minimal, 1);
        if (!again && fuzz_opt.world_rank == 0)
            printf("  it did not fail this time: the mismatch is intermittent\n");
    }
    call_text(c, minimal, fc, text, sizeof text);
    replay_line(c, minimal, replay, sizeof replay);
    if (fuzz_opt.world_rank == 0) {
        printf("minimal call: %s\nreplay: %s\n", text, replay);
        fflush(stdout);
    }
    return fuzz_opt.self_corrupt ? self_test_verdict(c, minimal, again) : 1;
}

static void summary(int failed)
{
    if (fuzz_opt.world_rank != 0) return;
    printf("strata-fuzz: seed 0x%llx, %d ranks, %s\n", (unsigned long long)fuzz_opt.seed,
           fuzz_opt.world_size,
#if defined(OPEN_MPI)
           "Open MPI"
#elif defined(MPICH_VERSION)
           "MPICH"
#elif defined(MPI_ABI_VERSION)
           "the MPI 5.0 standard ABI"
#else
           "an MPI"
#endif
    );
    printf("  %-24s %6s %9s %14s %8s %14s %11s%s\n", "collective", "calls", "compared",
           "strata served", "invalid", "host rejected", "host wrong",
           fuzz_opt.erroneous ? "  erroneous (an error)" : "");
    for (int k = 0; k < STRATA_NCOLLS; k++) {
        if (!stats[k].calls) continue;
        printf("  %-24s %6ld %9ld %14ld %8ld %14ld %11ld", strata_coll_name((enum strata_coll)k),
               stats[k].calls, stats[k].ran, stats[k].served, stats[k].invalid,
               stats[k].host_rejected, stats[k].host_wrong);
        if (fuzz_opt.erroneous) printf("  %9ld (%ld)", stats[k].erroneous, stats[k].erred);
        printf("\n");
        if (stats[k].host_accepted_invalid)
            printf("    (%ld invalid calls the host MPI accepted were not given to strata)\n",
                   stats[k].host_accepted_invalid);
    }
    long none = 0;
    for (int k = 0; k < STRATA_NCOLLS; k++) none += stats[k].no_member;
    if (none) printf("  (%ld calls fell on a split that left every rank out)\n", none);
    printf("%s\n", failed ? "FAIL strata-fuzz" : "PASS strata-fuzz");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    prog = argv[0];
    /* --erroneous reads strata's route counters, which count only then. */
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--erroneous")) setenv("STRATA_STATS", "/dev/null", 0);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &fuzz_opt.world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &fuzz_opt.world_size);
    parse_options(argc, argv);
    if (fuzz_opt.erroneous && !test_errors_return()) {
        /* Each erroneous call must come back with its error class. */
        test_skip_errors("--erroneous");
        MPI_Finalize();
        return FUZZ_SKIPPED;
    }
    if (fuzz_opt.errors && !test_errors_return()) {
        /* Invalid calls would end the job whatever the handler. */
        fuzz_opt.errors = 0;
        test_skip_errors("the fuzzer's calls with invalid arguments (as --no-errors)");
    }
    CHECK(fuzz_opt.world_size <= FUZZ_MAX_WORLD, "at most %d ranks", FUZZ_MAX_WORLD);
    /* Invalid calls must come back as error codes, from both paths. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    fuzz_types_init();
    fuzz_draw_init();
    fuzz_watchdog_install();
    int failed = 0;
    if (fuzz_opt.only >= 0) {
        struct fuzz_call c;
        fuzz_draw(fuzz_opt.only, &c);
        fuzz_comms_init(fuzz_opt.only, c.slot);
        size_t elems = fuzz_opt.elements >= 0 ? (size_t)fuzz_opt.elements : c.elems;
        if (elems % c.unit) {
            /* Every datatype of the call must hold whole elements. */
            elems -= elems % c.unit;
            if (fuzz_opt.world_rank == 0)
                printf("--elements: %zu, a multiple of %zu as this call needs\n", elems, c.unit);
        }
        fuzz_opt.shrink = fuzz_opt.shrink && fuzz_opt.elements < 0;
        c.elems = elems;
        if (fuzz_opt.erroneous) failed = run_erroneous(&c);
        else if (run_call(&c, elems, 1)) failed = handle_mismatch(&c, elems);
    } else {
        fuzz_comms_init(0, -1);
        int caught = 0;
        for (long i = 0; i < fuzz_opt.calls && !caught && (!failed || fuzz_opt.keep_going);
             i++) {
            fuzz_comms_event(i);
            struct fuzz_call c;
            fuzz_draw(i, &c);
            if (fuzz_opt.erroneous) {
                failed |= run_erroneous(&c);
                caught = failed && fuzz_opt.self_erroneous; /* one caught fault is the test */
            } else if (run_call(&c, c.elems, 1)) {
                failed |= handle_mismatch(&c, c.elems);
                caught = fuzz_opt.self_corrupt != 0; /* one caught damage is the test */
            }
        }
        if (fuzz_opt.self_erroneous) {
            if (fuzz_opt.world_rank == 0)
                printf("%s strata-fuzz self-test: the planted %s was %s\n",
                       caught ? "PASS" : "FAIL",
                       fuzz_opt.self_erroneous == 1 ? "wrong expected class" : "guard change",
                       caught ? "reported" : "never reported");
            failed = !caught;
        } else if ((fuzz_opt.self_corrupt && !caught) || fuzz_opt.self_hang) {
            if (fuzz_opt.world_rank == 0)
                printf("FAIL strata-fuzz self-test: the simulated %s went unnoticed\n",
                       fuzz_opt.self_hang ? "hang" : "damage");
            failed = 1;
        }
    }
    long served = 0;
    for (int k = 0; k < STRATA_NCOLLS; k++) served += stats[k].served;
    if (fuzz_opt.require_strata && !served && !fuzz_opt.self_corrupt &&
        !fuzz_opt.self_erroneous) {
        if (fuzz_opt.world_rank == 0)
            printf("strata served none of the calls (--require-strata)\n");
        failed = 1;
    }
    summary(failed);
    fuzz_watchdog_context("the end of the run");
    fuzz_watchdog_arm("MPI_Finalize");
    fuzz_comms_free();
    fuzz_types_free();
    MPI_Finalize();
    return failed ? 1 : 0;
}

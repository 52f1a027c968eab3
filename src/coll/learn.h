/* Selection that corrects itself (issue 31): the cost model predicts, and
 * strata also measures what it chose.
 *
 * Per plane (a communicator's shape), collective and size class (the bit
 * length of the block), a blocking call the agreement already makes every
 * rank wait for (coll/agree.h: a full call, more than one region per rank)
 * is timed on each rank: two clock reads around the algorithm, no message.
 * Each rank publishes the median of its measurements, as a ratio to the
 * model's prediction, in its signature of the next such call; once every
 * rank reports STRATA_LEARN_SAMPLES of the candidate in use, every rank
 * reads the same reports after the same agreement and takes the same
 * decision from them, the slowest rank's ratio being the call's:
 *
 *  - the candidates are the model's runnable algorithms, fastest predicted
 *    first; each is priced at its prediction times its measured ratio once
 *    measured (1 before);
 *  - once per search, right after the first candidate, the host MPI is
 *    timed instead for as many calls (every rank calls it at the same
 *    calls);
 *  - the next untried candidate is tried when its price, or the host's, is
 *    below the best measured one's by more than STRATA_LEARN_MARGIN (the
 *    choice measures worse than the runner-up's prediction or than the
 *    host), at most STRATA_LEARN_TRIES candidates in all;
 *  - otherwise the entry settles on the fastest measured, which is timed
 *    again now and then (STRATA_LEARN_WATCH); if it then measures worse
 *    than another candidate's price, the search opens again;
 *  - if the host measured faster than that fastest candidate by more than
 *    the margin, the entry settles on the host instead: its blocking calls
 *    go to the host MPI's collective (the same bytes), which is timed again
 *    now and then; once it no longer measures faster than the fastest
 *    candidate's price, that candidate serves again.  Nonblocking and
 *    persistent calls keep the fastest candidate (their host forms are
 *    other calls, never timed).
 *
 * No rank decides from its own clock alone, and the decision takes effect
 * at the call whose agreement carried the reports, on every rank at once.
 * Calls of the entry between decisions (nonblocking ones included) use the
 * candidate in use, the same on every rank.  Small calls are never timed:
 * their path is untouched.
 *
 * What a plane learned goes into the model's cache at MPI_Finalize (world
 * rank 0's, when the cache is the model in use): the next job's planes of
 * the same shape start from those ratios.  STRATA_LEARN=0 turns it off. */
#ifndef STRATA_COLL_LEARN_H
#define STRATA_COLL_LEARN_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include "coll/block.h"
#include "coll/plane.h"
#include "coll/select.h"

/* Measured calls per candidate before the ranks compare (after one call
 * left out: the first run of an algorithm touches pages and lines cold).
 * Each rank reports their median: on a machine shared with other jobs one
 * call in a few takes ten times the others (measured: 8 ms against 0.2
 * for an Allgather of 1 MiB at 2 ranks beside two other builds). */
#define STRATA_LEARN_SAMPLES 5
/* Candidates tried per entry at most, the model's first one included. */
#define STRATA_LEARN_TRIES 4
/* A candidate is tried only if priced this much below the best measured:
 * less is within this machine's run-to-run noise. */
#define STRATA_LEARN_MARGIN 0.05
/* Candidates kept per entry (more than any collective has algorithms). */
#define STRATA_LEARN_MAX_CAND 12
/* A settled entry is timed again every STRATA_LEARN_WATCH calls, twice as
 * seldom each time the choice holds, at most every STRATA_LEARN_WATCH_MAX:
 * conditions change (other jobs, caches), and a few clock reads every so
 * many large calls cost nothing measurable.  Each search a recheck opens
 * again also doubles the interval the next settling starts from: on a
 * machine whose load swings (this one's, shared by other builds), a fresh
 * measurement often beats an old one by chance, and the searches must
 * thin out rather than repeat every few dozen calls. */
#define STRATA_LEARN_WATCH 16
#define STRATA_LEARN_WATCH_MAX 4096
/* Entries per plane. */
#define STRATA_LEARN_ENTRIES 32

/* A report's candidate while the host MPI is timed instead. */
#define STRATA_LEARN_HOST (-2)

/* Calls of one entry until its search settles, at most: each candidate and
 * the host once, each for one call left out, the samples and the deciding
 * call. */
#define STRATA_LEARN_BOUND ((STRATA_LEARN_TRIES + 1) * (STRATA_LEARN_SAMPLES + 2))

struct strata_learn_cand {
    int algo, k;
    double ratio;   /* agreed measured / predicted; < 0: not measured */
    int tried;      /* measured in this search */
    int measured;   /* measured in this job (what the cache keeps) */
};

struct strata_learn_entry {
    int coll, cls;
    int ncand;
    struct strata_learn_cand cand[STRATA_LEARN_MAX_CAND];
    int cur;        /* the candidate in use */
    int settled;
    int tries;
    int switches;   /* decisions that changed the candidate */
    int calls;      /* blocking calls of the entry */
    int calls_to_settle; /* calls until it first settled (0: not yet) */
    int watch_every, since; /* settled: timed every watch_every calls */
    int watch_base;     /* watch_every after a search: doubles at each search reopened */
    int host_pending;   /* the host MPI is to be timed in this search */
    int sampling_host;  /* the calls timed now are the host MPI's */
    double host_ratio;  /* the host's time over cand[0]'s prediction; < 0: not timed */
    int host_chosen;    /* settled on the host MPI: blocking calls go to it */
    /* This rank's measurements of cand[cur] since the last decision, as
     * ratios to the prediction. */
    int skipped, n;
    double sample[STRATA_LEARN_SAMPLES];
};

struct strata_learn {
    int nentries;
    struct strata_learn_entry e[STRATA_LEARN_ENTRIES];
    uint64_t armed_call;              /* the call p->learn_armed is for */
    MPI_Comm comm;                    /* the communicator of that call (host samples) */
    double host_pred;                 /* a host sample's reference prediction */
};

/* The size class of a block: its bit length. */
static inline int strata_learn_class(size_t block)
{
    return block ? 64 - __builtin_clzll((unsigned long long)block) : 0;
}

/* The lookups learn_report.c shares with learn.c: p's entry of coll and
 * size class cls, or NULL; what a report of e is about (its candidate in
 * use, or STRATA_LEARN_HOST); the median of a full sample. */
struct strata_learn_entry *strata_learn_find(const struct strata_learn *l, int coll, int cls);
int strata_learn_measured(const struct strata_learn_entry *e);
double strata_learn_median(const double *sample);

/* Writes this rank's report of the plane's next call, whose signature s is
 * about to be stamped, into m, the rest of s's slot (agree.c, before the
 * stamp's release). */
void strata_learn_fill(const struct strata_plane *p, const struct strata_call_sig *s,
                       struct strata_call_sig_more *m);

/* A blocking call of coll with `block` bytes per rank on communicator comm
 * that the cost model decides, on plane p whose call is open (checked
 * here): creates the entry, takes the decision every rank takes when the
 * reports are in, and arms the timing of this call.  After the agreement,
 * before the choice.  Returns 1 if the call runs the host MPI's collective
 * (strata_learn_run does so): timed (strata_learn_host_sample) or chosen. */
int strata_learn_decide(struct strata_plane *p, int coll, size_t block, MPI_Comm comm);

/* Whether the armed call runs the host MPI instead (every rank alike): the
 * host's time, sampled once per search. */
int strata_learn_host_sample(const struct strata_plane *p);

/* Whether strata_learn_host_run serves coll; and runs the host MPI's
 * collective on a's bytes (MPI_BYTE counts, block.h's conventions). */
int strata_learn_host_serves(int coll);
int strata_learn_host_run(MPI_Comm comm, int coll, const struct strata_block_args *a);

/* The candidate in use for (coll, block) on p, if an entry exists: 1 with
 * *out filled, else 0 (the model's own choice stands). */
int strata_learn_choice(const struct strata_plane *p, int coll, size_t block,
                        struct strata_choice *out);

/* Runs the chosen algorithm of a blocking call, or the host MPI's
 * collective where selection said so (ch->host), timing it if the call is
 * armed (a call past one region that is measuring: the rest pay a load and
 * a branch). */
int strata_learn_run_timed(struct strata_plane *p, const struct strata_choice *ch,
                           struct strata_block_args *a);
static inline int strata_learn_run(struct strata_plane *p, const struct strata_choice *ch,
                                   struct strata_block_args *a)
{
    if (__builtin_expect(p->learn_armed != NULL || ch->host != STRATA_CHOICE_STRATA, 0))
        return strata_learn_run_timed(p, ch, a);
    return ch->al->run(p, a);
}

/* The entry of (coll, block) on p, or NULL (tests, strata-info). */
const struct strata_learn_entry *strata_learn_entry(const struct strata_plane *p, int coll,
                                                    size_t block);

/* At the plane's end: keeps what it learned for the cache, frees it. */
void strata_learn_release(struct strata_plane *p);

/* At MPI_Finalize on world rank 0 (strata_select_save_learned): writes what
 * this process's planes learned, with what earlier jobs did (`base`, the
 * model in use), into the learned file beside the model cache `cache_path`;
 * cache_state is strata_select_cache_path's answer (2: the cache still holds
 * "measured" lines an earlier build wrote, which then leave it). */
void strata_learn_save(const char *cache_path, int cache_state, const struct strata_model *base);

/* What learning asks of selection.  Learning sits below selection, which
 * calls it on every measured call; selection hands these over once
 * (strata_learn_use, at strata_select_init) rather than learn.c calling
 * select.c, which made the two files a loop. */
struct strata_learn_pricing {
    double (*predict)(const struct strata_plane *p, const struct strata_algorithm *al, int k,
                      size_t block);
    int (*predictions)(const struct strata_plane *p, int coll, size_t block,
                       struct strata_prediction *out, int max);
    void (*shape)(const struct strata_plane *p, struct strata_model_shape *shape);
    const struct strata_model *(*model)(void);
};
void strata_learn_use(const struct strata_learn_pricing *pricing);

/* The learned file (coll/learn_file.c): what selection measured, kept
 * beside the per-host model cache so that the cache itself stays readable
 * by strata builds that do not learn.  The path of the sibling of
 * MODEL_PATH (model-HOST.conf -> learned-HOST.conf): 0, or -1 if it is not
 * a cache's name or does not fit. */
int strata_learn_file_path(const char *model_path, char *out, size_t outlen);
struct strata_model;
/* Adds the file's "measured" records to m: 0, 1 if there is no file, -1
 * with err set if it is not this user's alone or a line is wrong (m then
 * holds the records before that line: load into a copy). */
int strata_learn_file_load(struct strata_model *m, const char *path, char *err, size_t errlen);
/* Writes m's "measured" records as the file, atomically: 0, or -1 with why. */
int strata_learn_file_save(const struct strata_model *m, const char *path, char *why,
                           size_t whylen);

#endif

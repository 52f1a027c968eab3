/* Choosing the algorithm of each call: a forced choice (tests), then the
 * STRATA_<COLL>_ALGORITHM override, then the first matching rule of the
 * tuning file (STRATA_TUNING_FILE), then the cost model's fastest
 * prediction.  A forced, overridden or ruled choice that cannot run
 * correctly on the communicator is refused with a message and the model
 * decides instead.  Every input is world rank 0's (broadcast at MPI_Init),
 * so every rank of a communicator chooses alike. */
#ifndef STRATA_SELECT_H
#define STRATA_SELECT_H

#include <stddef.h>

#include <mpi.h>

#include "coll/model.h"
#include "coll/plane.h"

/* Whether a blocking call runs the host MPI's collective instead of al
 * (coll/learn.h): to time it, or because it measured fastest. */
enum strata_choice_host {
    STRATA_CHOICE_STRATA = 0,  /* al runs */
    STRATA_CHOICE_HOST_TIMED,  /* the host runs, timed by selection */
    STRATA_CHOICE_HOST_CHOSEN, /* the host runs: it measured faster than every candidate */
};

struct strata_choice {
    const struct strata_algorithm *al;
    int k;
    double predicted_us;  /* < 0: not the model's choice */
    const char *why;      /* "cost model", "STRATA_SCATTER_ALGORITHM", "tuning file rule ", ... */
    int rule;             /* the tuning file rule (1, 2, ...) that chose, or 0 */
    enum strata_choice_host host; /* a blocking call the host MPI runs instead (learn.h) */
};

/* One algorithm's prediction, as --explain prints it. */
struct strata_prediction {
    const struct strata_algorithm *al;
    int k;              /* the best factor for it */
    double us;          /* predicted time; < 0 if it cannot run */
    const char *refusal;/* why it cannot run, or NULL */
};

/* Sets up selection at MPI_Init: world rank 0 loads the model, the tuning
 * file and the overrides and broadcasts them.  A bad file or override ends
 * the job with a message (like a bad STRATA_ variable); 0 on success. */
int strata_select_init(char *err, size_t errlen);

/* The model in use (after strata_select_init; defaults before). */
const struct strata_model *strata_select_model(void);

/* Chooses for one call on plane p; identical on every rank. */
void strata_select(struct strata_plane *p, int coll, size_t block, struct strata_choice *out);

/* strata_select for a blocking call whose plane's agreement is open: the
 * cost model's choice may first be corrected by what the ranks measured
 * (coll/learn.h), every rank deciding alike. */
void strata_select_blocking(struct strata_plane *p, int coll, size_t block, MPI_Comm comm,
                            struct strata_choice *out);

/* STRATA_LEARN, world rank 0's: selection corrects itself. */
int strata_select_learning(void);

/* The per-host model cache the model in use was read from: 1 with its path
 * in out, 2 if that file itself held "measured" lines (a cache written
 * before they moved beside it, coll/learn_file.c), or 0 (STRATA_MODEL names
 * a file, or the built-in figures). */
int strata_select_cache_path(char *out, size_t outlen);

/* The model's predictions for a call on plane p (strata_select_explain with
 * the plane's shape), and one algorithm's. */
int strata_select_predictions(const struct strata_plane *p, int coll, size_t block,
                              struct strata_prediction *out, int max);
double strata_select_predict(const struct strata_plane *p, const struct strata_algorithm *al, int k,
                             size_t block);

/* The model's view of every algorithm of coll (best k for each), fastest
 * first; returns how many were written (at most max). */
int strata_select_explain(const struct strata_model *m, const struct strata_model_shape *shape,
                          int coll, size_t block, struct strata_prediction *out, int max);

/* The shape of a plane's communicator, as the model sees it. */
void strata_select_shape(const struct strata_plane *p, struct strata_model_shape *shape);

/* At MPI_Finalize on world rank 0: what the planes measured, kept beside
 * the model cache when the cache is the model in use (coll/learn.h). */
void strata_select_save_learned(void);

/* Which calls the model prices as copies through peers' mappings (transport
 * map): those whose block is at least min_bytes (0: none).  The runtime sets
 * it at MPI_Init from values agreed over the world (the shared heap on at
 * every rank, its threshold), so every rank prices a call alike without
 * looking at anyone's buffer: the algorithm must be chosen before ranks see
 * where the others' buffers lie.  A buffer that is not in an arena after all
 * (a large stack array) is still copied correctly, by CMA: only the choice
 * may then be slower than the best. */
void strata_select_set_mapped(size_t min_bytes);
size_t strata_select_mapped(void);

/* Tests and benchmarks: from now on, calls of coll use "name[:k]" (NULL:
 * back to normal selection).  Collective in spirit: every rank must force
 * the same thing before the same call.  -1 with a message if unknown. */
int strata_select_force(int coll, const char *name_k, char *err, size_t errlen);

#endif

/* The tuning file (STRATA_TUNING_FILE): JSON rules that override the cost
 * model's choice.  The first rule that matches a call wins; a call no rule
 * matches is left to the model.  Format (docs/USAGE.md):
 *
 *   {"rules": [
 *     {"collective": "scatter", "min_bytes": 65536, "max_bytes": 4194304,
 *      "min_ranks": 2, "max_ranks": 64, "algorithm": "throttled-read", "k": 4},
 *     {"collective": "allgather", "algorithm": "ring-source-read"}
 *   ]}
 *
 * Bytes are per rank block (Bcast: the payload), bounds inclusive; omitted
 * bounds match anything.  Algorithms are named (algorithm.h). */
#ifndef STRATA_TUNING_FILE_H
#define STRATA_TUNING_FILE_H

#include <stddef.h>

#define STRATA_MAX_RULES 64

struct strata_rule {
    int coll;                    /* enum strata_coll */
    size_t min_bytes, max_bytes;
    int min_ranks, max_ranks;
    int algo;                    /* enum strata_algo */
    int k;
};

/* Reads up to STRATA_MAX_RULES rules from path.  Returns how many, or -1
 * with a message naming the file, the rule and the problem in err. */
int strata_tuning_file_load(const char *path, struct strata_rule *rules, char *err,
                            size_t errlen);

#endif

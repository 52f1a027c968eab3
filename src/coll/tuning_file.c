/* The tuning file reader (tuning_file.h): the JSON tree, checked rule by
 * rule.  Every mistake is an error naming the file, the rule and the place,
 * never a rule silently dropped: a rule that quietly did nothing would make
 * the user believe a choice was tried when it was not. */
#include "coll/tuning_file.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "coll/algorithm.h"
#include "util/colls.h"
#include "util/json.h"

#define RULE_KEYS "collective, algorithm, k, min_bytes, max_bytes, min_ranks, max_ranks"

struct checker {
    const char *path;
    int rule;   /* 1-based; 0 outside the rules */
    char *err;
    size_t errlen;
};

static int bad(const struct checker *ck, const struct strata_json *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Writes "path: rule N (line L, column C): problem"; returns -1. */
static int bad(const struct checker *ck, const struct strata_json *at, const char *fmt, ...)
{
    int n;
    if (ck->rule)
        n = snprintf(ck->err, ck->errlen, "%s: rule %d (line %d, column %d): ", ck->path,
                     ck->rule, at->line, at->column);
    else
        n = snprintf(ck->err, ck->errlen, "%s: line %d, column %d: ", ck->path, at->line,
                     at->column);
    if (n >= 0 && (size_t)n < ck->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ck->err + n, ck->errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* What a value is, for messages: "a string", "-3", "2.5". */
static const char *shown(const struct strata_json *v, char *buf, size_t len)
{
    if (v->type != STRATA_JSON_NUMBER) return strata_json_type_name(v->type);
    if (v->is_integer) snprintf(buf, len, "%lld", v->integer);
    else snprintf(buf, len, "%g", v->number);
    return buf;
}

static int has_algorithms(int coll)
{
    for (int id = 0; id < STRATA_NALGOS; id++)
        if (strata_algorithm(id)->coll == coll) return 1;
    return 0;
}

/* "bcast, allgather, ..." (the collectives with algorithms). */
static void list_collectives(char *out, size_t len)
{
    size_t used = 0;
    out[0] = 0;
    for (int c = 0; c < STRATA_NCOLLS && used + 16 < len; c++) {
        if (!has_algorithms(c)) continue;
        if (used) used += (size_t)snprintf(out + used, len - used, ", ");
        for (const char *s = strata_coll_name(c) + 4; *s; s++) /* after "MPI_" */
            out[used++] = (char)tolower((unsigned char)*s);
        out[used] = 0;
    }
}

/* The algorithm names of coll, comma-separated. */

static void list_algorithms(int coll, char *out, size_t len)
{
    size_t used = 0;
    out[0] = 0;
    for (int id = 0; id < STRATA_NALGOS && used < len; id++)
        if (strata_algorithm(id)->coll == coll)
            used += (size_t)snprintf(out + used, len - used, "%s%s", used ? ", " : "",
                                     strata_algorithm(id)->name);
}

/* "65536", "64K", "4M", "1G" (suffixes case-insensitive, powers of 1024). */
static int parse_size_text(const char *s, size_t *out)
{
    if (*s < '0' || *s > '9') return -1;
    uint64_t v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (v > (UINT64_MAX - 9) / 10) return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    int shift = 0;
    if (*s == 'k' || *s == 'K') shift = 10, s++;
    else if (*s == 'm' || *s == 'M') shift = 20, s++;
    else if (*s == 'g' || *s == 'G') shift = 30, s++;
    if (*s || v > (SIZE_MAX >> shift)) return -1;
    *out = (size_t)(v << shift);
    return 0;
}

static int read_bytes(const struct checker *ck, const struct strata_json *v, size_t *out)
{
    char buf[64];
    if (v->type == STRATA_JSON_NUMBER && v->is_integer && v->integer >= 0 &&
        (unsigned long long)v->integer <= SIZE_MAX) {
        *out = (size_t)v->integer;
        return 0;
    }
    if (v->type == STRATA_JSON_STRING && !parse_size_text(v->string, out)) return 0;
    if (v->type == STRATA_JSON_STRING)
        return bad(ck, v, "\"%s\": \"%s\" is not a byte count: write an integer such as "
                   "65536, or a string such as \"64K\", \"4M\" or \"1G\"", v->key, v->string);
    return bad(ck, v, "\"%s\" must be a byte count (an integer such as 65536, or a string such "
               "as \"64K\", \"4M\" or \"1G\"), not %s", v->key, shown(v, buf, sizeof buf));
}

/* An integer member in [lo, hi]. */
static int read_int(const struct checker *ck, const struct strata_json *v, long lo, long hi,
                    int *out)
{
    char buf[64];
    if (v->type != STRATA_JSON_NUMBER || !v->is_integer || v->integer < lo || v->integer > hi)
        return bad(ck, v, "\"%s\" must be an integer from %ld to %ld, not %s", v->key, lo, hi,
                   shown(v, buf, sizeof buf));
    *out = (int)v->integer;
    return 0;
}

static int read_string(const struct checker *ck, const struct strata_json *rule,
                       const char *key, const struct strata_json **out)
{
    *out = strata_json_get(rule, key);
    if (!*out) return bad(ck, rule, "\"%s\" is missing", key);
    if ((*out)->type != STRATA_JSON_STRING)
        return bad(ck, *out, "\"%s\" must be a string, not %s", key,
                   strata_json_type_name((*out)->type));
    return 0;
}

static int read_rule(const struct checker *ck, const struct strata_json *rule,
                     struct strata_rule *r)
{
    char names[512];
    if (rule->type != STRATA_JSON_OBJECT)
        return bad(ck, rule, "a rule must be an object, not %s",
                   strata_json_type_name(rule->type));
    for (const struct strata_json *m = rule->child; m; m = m->next) {
        static const char *const keys[] = {"collective", "algorithm", "k", "min_bytes",
                                           "max_bytes", "min_ranks", "max_ranks"};
        int known = 0;
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) known |= !strcmp(m->key, keys[i]);
        if (!known) return bad(ck, m, "unknown key \"%s\": a rule accepts " RULE_KEYS, m->key);
    }

    const struct strata_json *coll, *algo, *v;
    if (read_string(ck, rule, "collective", &coll)) return -1;
    r->coll = strata_coll_parse(coll->string);
    list_collectives(names, sizeof names);
    if (r->coll < 0)
        return bad(ck, coll, "\"%s\" is not a collective with algorithms: rules accept %s "
                   "(or MPI_Bcast, ...)", coll->string, names);
    if (!has_algorithms(r->coll))
        return bad(ck, coll, "%s has no algorithms to choose from: rules accept %s",
                   strata_coll_name(r->coll), names);

    if (read_string(ck, rule, "algorithm", &algo)) return -1;
    const struct strata_algorithm *al = strata_algorithm_find(r->coll, algo->string);
    if (!al) {
        list_algorithms(r->coll, names, sizeof names);
        return bad(ck, algo, "\"%s\" is not an algorithm of %s: it has %s%s", algo->string,
                   strata_coll_name(r->coll), names,
                   strchr(algo->string, ':') ? " (give a factor as \"k\", not after ':')" : "");
    }
    r->algo = (int)al->id;
    r->k = al->k_default;
    if ((v = strata_json_get(rule, "k"))) {
        if (!al->k_meaning)
            return bad(ck, v, "\"k\" given, but %s's %s takes no factor",
                       strata_coll_name(r->coll), al->name);
        if (read_int(ck, v, 1, 4096, &r->k)) return -1;
    }

    r->min_bytes = 0;
    r->max_bytes = SIZE_MAX;
    r->min_ranks = 0;
    r->max_ranks = INT_MAX;
    if ((v = strata_json_get(rule, "min_bytes")) && read_bytes(ck, v, &r->min_bytes)) return -1;
    if ((v = strata_json_get(rule, "max_bytes")) && read_bytes(ck, v, &r->max_bytes)) return -1;
    if ((v = strata_json_get(rule, "min_ranks")) && read_int(ck, v, 0, INT_MAX, &r->min_ranks))
        return -1;
    if ((v = strata_json_get(rule, "max_ranks")) && read_int(ck, v, 0, INT_MAX, &r->max_ranks))
        return -1;
    if (r->min_bytes > r->max_bytes)
        return bad(ck, rule, "min_bytes (%zu) is above max_bytes (%zu): the rule can never match",
                   r->min_bytes, r->max_bytes);
    if (r->min_ranks > r->max_ranks)
        return bad(ck, rule, "min_ranks (%d) is above max_ranks (%d): the rule can never match",
                   r->min_ranks, r->max_ranks);
    return 0;
}

int strata_tuning_file_load(const char *path, struct strata_rule *rules, char *err,
                            size_t errlen)
{
    struct strata_json *top = strata_json_parse_file(path, err, errlen);
    if (!top) return -1;
    struct checker ck = {path, 0, err, errlen};
    const struct strata_json *list = strata_json_get(top, "rules"), *stray = NULL;
    for (const struct strata_json *m = top->type == STRATA_JSON_OBJECT ? top->child : NULL;
         m && !stray; m = m->next)
        if (strcmp(m->key, "rules")) stray = m;
    int n = -1;
    if (top->type != STRATA_JSON_OBJECT) {
        bad(&ck, top, "the file must hold an object {\"rules\": [...]}, not %s",
            strata_json_type_name(top->type));
    } else if (stray) {
        bad(&ck, stray, "unknown key \"%s\": the top-level object holds only \"rules\"",
            stray->key);
    } else if (!list) {
        bad(&ck, top, "\"rules\" is missing");
    } else if (list->type != STRATA_JSON_ARRAY) {
        bad(&ck, list, "\"rules\" must be an array of rules, not %s",
            strata_json_type_name(list->type));
    } else {
        const struct strata_json *rule = list->child;
        for (n = 0; rule; rule = rule->next, n++) {
            ck.rule = n + 1;
            if (n == STRATA_MAX_RULES) {
                bad(&ck, rule, "more than %d rules (STRATA_MAX_RULES): merge or drop some",
                    STRATA_MAX_RULES);
                n = -1;
                break;
            }
            if (read_rule(&ck, rule, &rules[n])) {
                n = -1;
                break;
            }
        }
    }
    strata_json_free(top);
    return n;
}

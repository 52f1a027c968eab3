/* The registry of user-defined ops and the call of their functions. */
#include "coll/user_op.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"

/* A few ops per application: a plain array, searched linearly. */
static struct entry {
    MPI_Op op;
    struct strata_user_op u;
} *entries;
static int nentries, capacity;
static unsigned long next_serial = 1;
/* Guards the array; also held across the host MPI's create and free
 * (strata_user_op_lock).  That lock is re-entrant per thread (depth): a
 * binding's create or free may reach the C MPI_Op_create/MPI_Op_free
 * wrapper through the host (MPICH's Fortran MPI_Op_create calls the C
 * MPI_Op_create), which then finds the lock already held by its thread. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local int depth;

void strata_user_op_call_c(void (*fn)(void), void *invec, void *inoutvec, int *len,
                           MPI_Datatype *type)
{
    ((MPI_User_function *)(void *)fn)(invec, inoutvec, len, type);
}

void strata_user_op_lock(void)
{
    if (depth++ == 0) pthread_mutex_lock(&lock);
}

void strata_user_op_unlock(void)
{
    if (--depth == 0) pthread_mutex_unlock(&lock);
}

int strata_user_op_nested(void) { return depth > 1; }

static int index_of(MPI_Op op)
{
    for (int i = 0; i < nentries; i++)
        if (entries[i].op == op) return i;
    return -1;
}

int strata_user_op_register(MPI_Op op, void (*fn)(void), strata_user_op_caller call, int commute)
{
    int i = index_of(op);
    if (i < 0) {
        if (nentries == capacity) {
            int grown_cap = capacity ? 2 * capacity : 16;
            struct entry *grown = realloc(entries, sizeof *grown * (size_t)grown_cap);
            if (!grown) return -1;
            entries = grown;
            capacity = grown_cap;
        }
        i = nentries++;
    }
    entries[i].op = op;
    entries[i].u = (struct strata_user_op){fn, call, commute != 0, next_serial++};
    return 0;
}

void strata_user_op_forget(MPI_Op op)
{
    int i = index_of(op);
    if (i < 0) return;
    entries[i] = entries[--nentries];
    if (nentries == 0) {
        /* Nothing left: give the memory back (leak checkers see none). */
        free(entries);
        entries = NULL;
        capacity = 0;
    }
}

int strata_user_op_find(MPI_Op op, struct strata_user_op *out)
{
    pthread_mutex_lock(&lock);
    int i = index_of(op);
    if (i >= 0) *out = entries[i].u;
    pthread_mutex_unlock(&lock);
    return i >= 0;
}

int strata_user_op_count(void)
{
    pthread_mutex_lock(&lock);
    int n = nentries;
    pthread_mutex_unlock(&lock);
    return n;
}

/* Scratch of at least `bytes`, kept for the rest of the call. */
static void *scratch(struct strata_user_op_call *c, size_t bytes)
{
    if (c->tmp_size >= bytes) return c->tmp;
    free(c->tmp);
    c->tmp = malloc(bytes);
    c->tmp_size = c->tmp ? bytes : 0;
    if (!c->tmp) {
        strata_error("out of memory for a %zu-byte user-defined reduction", bytes);
        abort();
    }
    return c->tmp;
}

void strata_user_op_apply(struct strata_user_op_call *c, void *dst, const void *x,
                          const void *y, size_t n)
{
    size_t bytes = n * c->extent;
    int len = (int)n; /* n <= the call's count, an int */
    MPI_Datatype type = c->type;
    /* The function sees each element at its origin, `shift` bytes before
     * its data. */
#define ORIGIN(p) ((void *)((char *)(p) - c->shift))
    if (c->op.commute) {
        /* x op y = y op x: fold y into dst, which holds x. */
        if (dst != x) memcpy(dst, x, bytes);
        c->op.call(c->op.fn, ORIGIN(y), ORIGIN(dst), &len, &type);
        return;
    }
    /* x op y lands in the second argument, which must hold y: dst itself
     * unless dst holds x (then a copy of y, moved to dst afterwards). */
    void *inout = dst == x ? scratch(c, bytes) : dst;
    memcpy(inout, y, bytes);
    c->op.call(c->op.fn, ORIGIN(x), ORIGIN(inout), &len, &type);
    if (inout != dst) memcpy(dst, inout, bytes);
#undef ORIGIN
}

void strata_user_op_call_end(struct strata_user_op_call *c)
{
    free(c->tmp);
    c->tmp = NULL;
    c->tmp_size = 0;
}

int strata_user_op_rank_ordered(const struct strata_hier *h)
{
    for (int l = 0; l < h->nlevels; l++) {
        const struct strata_hier_level *L = &h->level[l];
        /* Contiguous groups: the group changes exactly ngroups - 1 times
         * along the ranks. */
        int changes = 0;
        for (int r = 1; r < h->size; r++) changes += L->group_of[r] != L->group_of[r - 1];
        if (changes != L->ngroups - 1) return 0;
    }
    return 1;
}

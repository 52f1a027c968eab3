/* The communicator pool: FUZZ_SLOTS slots, slot 0 MPI_COMM_WORLD, the
 * others made by MPI_Comm_split of MPI_COMM_WORLD (irregular groups, odd
 * sizes, ranks left out, keys reversed, random or tied) or MPI_Comm_dup of
 * another slot.  Before some calls (the seed decides which) a slot's
 * communicator is freed and replaced, so strata creates and frees contexts
 * all along the run.
 *
 * A slot's membership is a pure function of (seed, call index): every rank
 * knows every group, and replaying one call rebuilds just its communicator
 * (a split, duplicated as many times as the original was). */
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "testutil.h"

/* How a slot's communicator is made: split by `split` (0: MPI_COMM_WORLD),
 * then duplicated `dups` times. */
struct spec {
    uint64_t split;
    int dups;
};

static struct spec specs[FUZZ_SLOTS];
static struct fuzz_comm slots[FUZZ_SLOTS];

static void initial_specs(void)
{
    specs[0] = (struct spec){0, 0};
    specs[1] = (struct spec){0, 1}; /* a duplicate of MPI_COMM_WORLD */
    for (int s = 2; s < FUZZ_SLOTS; s++)
        specs[s] = (struct spec){fuzz_hash(fuzz_opt.seed ^ 0x1417, (uint64_t)s) | 1, 0};
}

/* Whether the pool changes before call `index`: which slot, and either a
 * new split (*split != 0) or a duplicate of slot *dup_of. */
static int event_at(long index, int *slot, int *dup_of, uint64_t *split)
{
    uint64_t h = fuzz_hash(fuzz_opt.seed ^ 0xe7e47, (uint64_t)index);
    if (h % 32) return 0;
    *slot = 1 + (int)((h >> 8) % (FUZZ_SLOTS - 1));
    *dup_of = -1;
    *split = 0;
    if ((h >> 16) % 3 == 0) *dup_of = (int)((h >> 24) % FUZZ_SLOTS);
    else *split = fuzz_mix(h) | 1;
    return 1;
}

static void apply_event(int slot, int dup_of, uint64_t split)
{
    if (dup_of >= 0) {
        specs[slot] = specs[dup_of];
        specs[slot].dups++;
    } else {
        specs[slot] = (struct spec){split, 0};
    }
}

/* Color and key of world rank w in the split, and words for "how". */
static const char *color_modes[] = {"all", "two blocks", "parity", "random groups",
                                    "random subset"};
static const char *key_modes[] = {"keys in rank order", "keys reversed", "random keys",
                                  "equal keys"};

static void split_of(uint64_t split, int w, int *color, int *key, int *cmode, int *kmode)
{
    int n = fuzz_opt.world_size;
    struct fuzz_rng r = {split};
    *cmode = (int)fuzz_below(&r, 5);
    *kmode = (int)fuzz_below(&r, 4);
    int left_out = fuzz_below(&r, 2) ? (int)fuzz_below(&r, (uint64_t)n) : -1;
    int cut = n > 1 ? 1 + (int)fuzz_below(&r, (uint64_t)(n - 1)) : 1;
    int forced = (int)fuzz_below(&r, (uint64_t)n);
    /* Per-rank draws: skip the other ranks' so every rank sees the same. */
    struct fuzz_rng pr = {fuzz_hash(split, (uint64_t)w)};
    uint64_t a = fuzz_next(&pr), b = fuzz_next(&pr);
    switch (*cmode) {
    case 0: *color = (w == left_out && n > 1) ? MPI_UNDEFINED : 0; break;
    case 1: *color = w < cut ? 0 : 1; break;
    case 2: *color = w % 2; break;
    case 3: *color = a % 5 == 4 ? MPI_UNDEFINED : (int)(a % 3); break;
    default: *color = (w == forced || a % 3) ? 0 : MPI_UNDEFINED; break;
    }
    switch (*kmode) {
    case 0: *key = w; break;
    case 1: *key = n - w; break;
    case 2: *key = (int)(b % 1000); break;
    default: *key = 0; break;
    }
}

/* Fills membership and description of fc from its spec (no MPI calls). */
static void describe_spec(struct fuzz_comm *fc, const struct spec *sp)
{
    int me = fuzz_opt.world_rank, n = fuzz_opt.world_size;
    if (!sp->split) {
        fc->ngroups = 1;
        for (int w = 0; w < n; w++) fc->members[w] = w;
        snprintf(fc->how, sizeof fc->how, "MPI_COMM_WORLD%s", sp->dups ? ", duplicated" : "");
        if (sp->dups > 1) snprintf(fc->how, sizeof fc->how, "MPI_COMM_WORLD, duplicated %d times", sp->dups);
        return;
    }
    int color[FUZZ_MAX_WORLD], key[FUZZ_MAX_WORLD], cm = 0, km = 0, seen[4] = {0};
    for (int w = 0; w < n; w++) split_of(sp->split, w, &color[w], &key[w], &cm, &km);
    fc->ngroups = 0;
    for (int w = 0; w < n; w++)
        if (color[w] != MPI_UNDEFINED && !seen[color[w]]++) fc->ngroups++;
    int k = 0;
    if (color[me] != MPI_UNDEFINED) {
        for (int w = 0; w < n; w++)
            if (color[w] == color[me]) fc->members[k++] = w;
        /* MPI orders by key, then by rank in the parent (insertion sort). */
        for (int i = 1; i < k; i++)
            for (int j = i; j > 0 && key[fc->members[j - 1]] > key[fc->members[j]]; j--) {
                int t = fc->members[j];
                fc->members[j] = fc->members[j - 1];
                fc->members[j - 1] = t;
            }
    }
    snprintf(fc->how, sizeof fc->how, "MPI_Comm_split of MPI_COMM_WORLD (%s, %s; %d group%s)%s",
             color_modes[cm], key_modes[km], fc->ngroups, fc->ngroups == 1 ? "" : "s",
             sp->dups ? ", duplicated" : "");
}

static void split_comm(const struct spec *sp, MPI_Comm *out)
{
    int color, key, cm, km;
    split_of(sp->split, fuzz_opt.world_rank, &color, &key, &cm, &km);
    CHECK(MPI_Comm_split(MPI_COMM_WORLD, color, key, out) == MPI_SUCCESS, "MPI_Comm_split");
}

/* Checks the communicator against the membership the spec predicts. */
static void settle(struct fuzz_comm *fc)
{
    fc->rank = -1;
    fc->size = 0;
    if (fc->comm == MPI_COMM_NULL) return;
    MPI_Comm_rank(fc->comm, &fc->rank);
    MPI_Comm_size(fc->comm, &fc->size);
    CHECK(fc->members[fc->rank] == fuzz_opt.world_rank,
          "%s: rank %d of size %d is not world rank %d as predicted", fc->how, fc->rank,
          fc->size, fc->members[fc->rank]);
}

/* Makes a slot's communicator from its spec alone. */
static void build(int slot)
{
    struct fuzz_comm *fc = &slots[slot];
    const struct spec *sp = &specs[slot];
    describe_spec(fc, sp);
    MPI_Comm c = MPI_COMM_WORLD;
    if (sp->split) split_comm(sp, &c);
    for (int d = 0; d < sp->dups && c != MPI_COMM_NULL; d++) {
        MPI_Comm dup;
        CHECK(MPI_Comm_dup(c, &dup) == MPI_SUCCESS, "MPI_Comm_dup");
        if (c != MPI_COMM_WORLD) MPI_Comm_free(&c);
        c = dup;
    }
    fc->comm = c;
    settle(fc);
}

void fuzz_comms_init(long at, int slot)
{
    initial_specs();
    for (int s = 0; s < FUZZ_SLOTS; s++) slots[s].comm = MPI_COMM_NULL;
    for (long i = 0; i <= at; i++) {
        int sl, dup_of;
        uint64_t split;
        if (event_at(i, &sl, &dup_of, &split)) apply_event(sl, dup_of, split);
    }
    for (int s = 0; s < FUZZ_SLOTS; s++)
        if (slot < 0 || s == slot) build(s);
}

void fuzz_comms_event(long index)
{
    int slot, dup_of;
    uint64_t split;
    if (index == 0 || !event_at(index, &slot, &dup_of, &split)) return; /* 0: in init */
    struct fuzz_comm fresh;
    apply_event(slot, dup_of, split);
    describe_spec(&fresh, &specs[slot]);
    fresh.comm = MPI_COMM_NULL;
    if (dup_of >= 0) {
        /* A duplicate of the communicator in use, not of a rebuilt one. */
        if (slots[dup_of].comm != MPI_COMM_NULL)
            CHECK(MPI_Comm_dup(slots[dup_of].comm, &fresh.comm) == MPI_SUCCESS, "MPI_Comm_dup");
    } else {
        split_comm(&specs[slot], &fresh.comm);
    }
    settle(&fresh);
    struct fuzz_comm *old = &slots[slot];
    if (old->comm != MPI_COMM_NULL && old->comm != MPI_COMM_WORLD) MPI_Comm_free(&old->comm);
    *old = fresh;
    if (fuzz_opt.verbose && fuzz_opt.world_rank == 0)
        printf("call %ld: slot %d is now %s\n", index, slot, old->how);
}

struct fuzz_comm *fuzz_comm_slot(int slot) { return &slots[slot]; }

void fuzz_comms_free(void)
{
    for (int s = 0; s < FUZZ_SLOTS; s++)
        if (slots[s].comm != MPI_COMM_NULL && slots[s].comm != MPI_COMM_WORLD)
            MPI_Comm_free(&slots[s].comm);
}

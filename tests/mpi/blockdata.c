/* Test data for block movers (blockdata.h). */
#include "blockdata.h"

#include <string.h>

#include "testutil.h"

struct layout test_gapped_layout(void)
{
    MPI_Datatype raw, gapped;
    MPI_Type_vector(2, 3, 5, MPI_INT, &raw);
    MPI_Type_create_resized(raw, 0, 10 * sizeof(int), &gapped);
    MPI_Type_free(&raw);
    MPI_Type_commit(&gapped);
    return (struct layout){"vector(2,3,5 x MPI_INT)", gapped, 40, 24, 4, 2, {{0, 12}, {20, 12}}};
}

void test_check_layout(const struct layout *L)
{
    MPI_Aint lb, extent;
    int size;
    MPI_Type_get_extent(L->type, &lb, &extent);
    MPI_Type_size(L->type, &size);
    CHECK(lb == 0 && (size_t)extent == L->extent && (size_t)size == L->sig,
          "%s: extent %ld, size %d", L->name, (long)extent, size);
}

uint64_t test_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

void test_stream(unsigned char *out, size_t n, uint64_t seed, int src, int dst)
{
    test_fill_words(out, n, test_mix(seed ^ test_mix(((uint64_t)(src + 3) << 32) | (uint32_t)(dst + 3))));
}

void test_fill_words(unsigned char *out, size_t n, uint64_t base)
{
    size_t w = 0;
    /* One multiply per word, a bijection of base + w: cheap for megabytes,
     * and no two words of one stream alike. */
    for (; w * 8 + 8 <= n; w++) {
        uint64_t v = (base + w) * 0x9e3779b97f4a7c15ull;
        v ^= v >> 29;
        memcpy(out + w * 8, &v, 8);
    }
    if (w * 8 < n) {
        uint64_t v = test_mix(base + w);
        memcpy(out + w * 8, &v, n - w * 8);
    }
}

void *test_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    CHECK(p != NULL, "out of memory (%zu bytes)", n);
    return p;
}

/* The last slot is test_put_block's scratch. */
static struct { unsigned char *buf; size_t bytes; } pool[TEST_POOL_SLOTS + 1];

unsigned char *test_pooled(int slot, size_t bytes)
{
    CHECK(slot >= 0 && slot <= TEST_POOL_SLOTS, "pool slot %d", slot);
    if (pool[slot].bytes < bytes || !pool[slot].buf) {
        free(pool[slot].buf);
        pool[slot].buf = test_xmalloc(bytes);
        pool[slot].bytes = bytes;
    }
    return pool[slot].buf;
}

void test_pool_free(void)
{
    for (int i = 0; i <= TEST_POOL_SLOTS; i++) {
        free(pool[i].buf);
        pool[i].buf = NULL;
        pool[i].bytes = 0;
    }
}

void test_put_block(unsigned char *mem, const struct layout *L, size_t sig, uint64_t seed,
                    int src, int dst)
{
    if (L->nruns == 1 && L->run[0].len == L->extent) {
        test_stream(mem, sig, seed, src, dst);
        return;
    }
    unsigned char *from = test_pooled(TEST_POOL_SLOTS, sig), *end = from + sig;
    test_stream(from, sig, seed, src, dst);
    for (unsigned char *el = mem; from < end; el += L->extent)
        for (int r = 0; r < L->nruns; r++) {
            memcpy(el + L->run[r].off, from, L->run[r].len);
            from += L->run[r].len;
        }
}

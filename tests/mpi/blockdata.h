/* Test data for collectives that move blocks: datatype layouts with gaps,
 * reproducible byte streams per (case, source, destination), and buffers
 * kept from case to case.  Shared by the tests that check block movers
 * against computed expectations (test_block_colls.c, test_net_colls.c). */
#ifndef STRATA_TEST_BLOCKDATA_H
#define STRATA_TEST_BLOCKDATA_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* One element of a datatype in memory: its extent, and the runs of bytes of
 * its signature (the rest are gaps nobody may write), made of basic values
 * of `width` bytes (reductions combine those). */
struct layout {
    const char *name;
    MPI_Datatype type;
    size_t extent, sig, width;
    int nruns;
    struct { size_t off, len; } run[2];
};

/* MPI_INT's vector(2, 3, 5) resized to 10 ints: two runs of 3 ints, gaps
 * inside and after every element (extent 40, signature 24), committed. */
struct layout test_gapped_layout(void);

/* Aborts the job (CHECK) unless L's extent and size are what MPI says. */
void test_check_layout(const struct layout *L);

/* A bijective 64-bit mix (splitmix64's finaliser). */
uint64_t test_mix(uint64_t x);

#define TO_ALL (-1) /* destination of a block every rank receives alike */

/* n bytes that depend only on base, no two 8-byte words alike. */
void test_fill_words(unsigned char *out, size_t n, uint64_t base);

/* The n signature bytes rank src sends to rank dst in the case with seed. */
void test_stream(unsigned char *out, size_t n, uint64_t seed, int src, int dst);

/* malloc that aborts the job when memory runs out (never NULL, even for 0). */
void *test_xmalloc(size_t n);

/* Buffer number `slot` (0 to TEST_POOL_SLOTS - 1) of at least `bytes`, kept
 * from case to case: fresh megabytes would cost every rank page faults,
 * and every case has its own seed, so nothing left over can pass. */
#define TEST_POOL_SLOTS 8
unsigned char *test_pooled(int slot, size_t bytes);
void test_pool_free(void);

/* Writes block src -> dst (sig signature bytes) into mem through layout L. */
void test_put_block(unsigned char *mem, const struct layout *L, size_t sig, uint64_t seed,
                    int src, int dst);

#endif

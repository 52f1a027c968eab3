/* Run-time checks of the node's shared memory, with reasons a user can act
 * on when they fail.  Each transport's own probe is a call of its struct
 * (transport.h). */
#ifndef STRATA_PROBE_H
#define STRATA_PROBE_H

#include <stddef.h>

/* Local: can a shared segment of `bytes` be created in /dev/shm here? */
int strata_shm_probe(size_t bytes, char *why, size_t whylen);

#endif

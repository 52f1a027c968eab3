/* The private buffers of the compositions across nodes. */
#include <stdlib.h>

#include "net/net.h"

void *strata_net_staging(struct strata_net *net, enum strata_net_buffer which, size_t bytes)
{
    if (bytes <= net->staging_bytes[which]) return net->staging[which];
    /* The old contents are never needed: free first, so the peak is one buffer. */
    free(net->staging[which]);
    net->staging[which] = malloc(bytes);
    net->staging_bytes[which] = net->staging[which] ? bytes : 0;
    return net->staging[which];
}

/* The list of transports, from util/transports.h's. */
#include "transport/registry.h"

#include <stdio.h>
#include <strings.h>

#include "util/transports.h"

#define DECLARE(name) extern const struct strata_transport strata_transport_##name;
STRATA_TRANSPORTS(DECLARE)
#undef DECLARE

/* The segment first: it always works, so it is what ranks fall back to
 * when they cannot agree on anything better. */
#define ENTRY(name) &strata_transport_##name,
static const struct strata_transport *const all[] = {STRATA_TRANSPORTS(ENTRY)};
#undef ENTRY

#define NTRANSPORTS ((int)(sizeof all / sizeof all[0]))

int strata_transport_count(void) { return NTRANSPORTS; }

const struct strata_transport *strata_transport_at(int i)
{
    return i >= 0 && i < NTRANSPORTS ? all[i] : NULL;
}

const struct strata_transport *strata_transport_find(const char *name)
{
    for (int i = 0; name && i < NTRANSPORTS; i++)
        if (!strcasecmp(all[i]->name, name)) return all[i];
    return NULL;
}

int strata_transport_index(const struct strata_transport *t)
{
    for (int i = 0; i < NTRANSPORTS; i++)
        if (all[i] == t) return i;
    return -1;
}

void strata_transport_names(char *out, size_t outlen)
{
    size_t used = 0;
    if (outlen) out[0] = 0;
    for (int i = 0; i < NTRANSPORTS && used < outlen; i++) {
        int n = snprintf(out + used, outlen - used, "%s%s", i ? ", " : "", all[i]->name);
        if (n < 0) break;
        used += (size_t)n;
    }
}

/* In the order of enum strata_transport_feature's bits. */
static const char *const feature_names[] = {"read-peer", "write-peer", "map-peer",
                                            "needs-registration"};

void strata_transport_features(const struct strata_transport *t, char *out, size_t outlen)
{
    size_t used = 0;
    if (outlen) out[0] = 0;
    for (unsigned i = 0; i < sizeof feature_names / sizeof feature_names[0]; i++) {
        if (!(t->features & (1u << i)) || used >= outlen) continue;
        int n = snprintf(out + used, outlen - used, "%s%s", used ? "," : "", feature_names[i]);
        if (n < 0) break;
        used += (size_t)n;
    }
    if (!used && outlen) snprintf(out, outlen, "none");
}

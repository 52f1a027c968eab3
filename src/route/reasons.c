/* Reasons naming the argument and its value. */
#include "route/reasons.h"

#include <stdarg.h>
#include <stdio.h>

#include "context/runtime.h"
#include "route/route.h"
#include "util/mpi_names.h"

static _Thread_local char text[400];

static const char *say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return text;
}

/* Why one side (prefix "send" or "recv") is for the host MPI, or NULL. */
static const char *side_why(const char *p, const void *buf, long long count, MPI_Datatype type,
                            long long block)
{
    char tn[192];
    if (count < 0) return say("%scount %lld is negative", p, count);
    if (type == MPI_DATATYPE_NULL) return say("%stype is MPI_DATATYPE_NULL", p);
    static char some_data;
    if (strata_route_bad_data(&some_data, count, type))
        return say("%stype %s is not committed", p, strata_type_name(type, tn, sizeof tn));
    if (buf == MPI_IN_PLACE && count)
        return say("%sbuf is MPI_IN_PLACE, which this rank may not pass here", p);
    if (strata_route_bad_data(buf, count, type))
        return say("%sbuf is address 0 (MPI_BOTTOM) with %stype %s of relative addresses", p, p,
                   strata_type_name(type, tn, sizeof tn));
    int size;
    PMPI_Type_size(type, &size);
    if (block >= 0 && (long long)count * size != block)
        return say("%scount %lld x %s (%lld bytes) does not match the other side's %lld bytes "
                   "per rank", p, count, strata_type_name(type, tn, sizeof tn),
                   (long long)count * size, block);
    return NULL;
}

const char *strata_reason_bad_args(int root_used, int root, int size, int sides,
                                   const void *sendbuf, long long scount, MPI_Datatype stype,
                                   const void *recvbuf, long long rcount, MPI_Datatype rtype,
                                   long long block)
{
    if (root_used && (root < 0 || root >= size))
        return say("root %d is not a rank of the communicator (size %d)", root, size);
    const char *why = NULL;
    if ((sides & STRATA_SIDE_SEND) && (why = side_why("send", sendbuf, scount, stype, block)))
        return why;
    if ((sides & STRATA_SIDE_RECV) && (why = side_why("recv", recvbuf, rcount, rtype, block)))
        return why;
    if (sides == (STRATA_SIDE_SEND | STRATA_SIDE_RECV))
        return say("sendbuf and recvbuf share memory");
    return "arguments left to the host MPI to check";
}

const char *strata_reason_no_context(MPI_Comm comm)
{
    const struct strata_runtime *rt = strata_runtime_state();
    if (rt->disabled) return say("strata is off: %s", rt->why_disabled);
    if (!rt->ready)
        return "strata is not set up in this process (MPI_Init did not go through strata)";
    if (comm == MPI_COMM_NULL) return "communicator MPI_COMM_NULL";
    return "the communicator is an intercommunicator (strata serves intracommunicators)";
}

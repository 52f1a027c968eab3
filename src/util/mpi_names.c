/* The MPI-name table for predefined handles. */
#include "util/mpi_names.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

const char *strata_predefined_op_name(MPI_Op op)
{
    /* Handles are link-time addresses in Open MPI and constants in MPICH:
     * compared one by one, not switched on. */
    const struct { MPI_Op op; const char *name; } ops[] = {
        {MPI_SUM, "MPI_SUM"},       {MPI_PROD, "MPI_PROD"},     {MPI_MAX, "MPI_MAX"},
        {MPI_MIN, "MPI_MIN"},       {MPI_LAND, "MPI_LAND"},     {MPI_LOR, "MPI_LOR"},
        {MPI_LXOR, "MPI_LXOR"},     {MPI_BAND, "MPI_BAND"},     {MPI_BOR, "MPI_BOR"},
        {MPI_BXOR, "MPI_BXOR"},     {MPI_MINLOC, "MPI_MINLOC"}, {MPI_MAXLOC, "MPI_MAXLOC"},
        {MPI_REPLACE, "MPI_REPLACE"}, {MPI_NO_OP, "MPI_NO_OP"}, {MPI_OP_NULL, "MPI_OP_NULL"},
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (op == ops[i].op) return ops[i].name;
    return NULL;
}

const char *strata_handle_hex(const void *handle, size_t size, char *out, size_t len)
{
    uintmax_t v = 0;
    if (size == sizeof(unsigned)) {
        unsigned u;
        memcpy(&u, handle, sizeof u);
        v = u;
    } else if (size == sizeof(uintptr_t)) {
        uintptr_t p;
        memcpy(&p, handle, sizeof p);
        v = p;
    }
    snprintf(out, len, "0x%jx", v);
    return out;
}

const char *strata_op_name(MPI_Op op, char *out, size_t len)
{
    const char *name = strata_predefined_op_name(op);
    if (name) {
        snprintf(out, len, "%s", name);
    } else {
        char hex[32];
        snprintf(out, len, "MPI_Op %s", strata_handle_hex(&op, sizeof op, hex, sizeof hex));
    }
    return out;
}

static const char *combiner_name(int combiner)
{
    const struct { int combiner; const char *name; } names[] = {
        {MPI_COMBINER_DUP, "dup"},
        {MPI_COMBINER_CONTIGUOUS, "contiguous"},
        {MPI_COMBINER_VECTOR, "vector"},
        {MPI_COMBINER_HVECTOR, "hvector"},
        {MPI_COMBINER_INDEXED, "indexed"},
        {MPI_COMBINER_HINDEXED, "hindexed"},
        {MPI_COMBINER_INDEXED_BLOCK, "indexed block"},
        {MPI_COMBINER_HINDEXED_BLOCK, "hindexed block"},
        {MPI_COMBINER_STRUCT, "struct"},
        {MPI_COMBINER_SUBARRAY, "subarray"},
        {MPI_COMBINER_DARRAY, "darray"},
        {MPI_COMBINER_F90_REAL, "Fortran real"},
        {MPI_COMBINER_F90_COMPLEX, "Fortran complex"},
        {MPI_COMBINER_F90_INTEGER, "Fortran integer"},
        {MPI_COMBINER_RESIZED, "resized"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].combiner == combiner) return names[i].name;
    return "derived";
}

const char *strata_type_name(MPI_Datatype type, char *out, size_t len)
{
    char name[MPI_MAX_OBJECT_NAME] = "", hex[32];
    int ni, na, nd, combiner, name_len = 0;
    if (type == MPI_DATATYPE_NULL) {
        snprintf(out, len, "MPI_DATATYPE_NULL");
        return out;
    }
    if (PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS) {
        snprintf(out, len, "MPI_Datatype %s (not a datatype)",
                 strata_handle_hex(&type, sizeof type, hex, sizeof hex));
        return out;
    }
    PMPI_Type_get_name(type, name, &name_len);
    if (combiner == MPI_COMBINER_NAMED && name_len > 0) {
        snprintf(out, len, "%s", name); /* the standard names every predefined type */
        return out;
    }
    /* A name the application gave is the same on every rank, unlike the
     * handle (an address in Open MPI): STRATA_STATS then sums the ranks'
     * reasons into one. */
    if (name_len > 0) {
        snprintf(out, len, "derived datatype '%s' (%s)", name, combiner_name(combiner));
        return out;
    }
    strata_handle_hex(&type, sizeof type, hex, sizeof hex);
        snprintf(out, len, "derived datatype %s (%s)", hex, combiner_name(combiner));
    return out;
}

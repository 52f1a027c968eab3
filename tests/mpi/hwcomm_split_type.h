/* MPI_Comm_split_type with MPI_COMM_TYPE_HW_GUIDED / HW_UNGUIDED checked
 * beside strata_comm_split_hw in test_hwcomm's scenarios, where the host MPI
 * defines them (STRATA_HAVE_HW_SPLIT_TYPES); elsewhere these do nothing. */
#ifndef HWCOMM_SPLIT_TYPE_H
#define HWCOMM_SPLIT_TYPE_H

#include <mpi.h>

/* The unguided split of old with key: congruent to strata's `expected`
 * (MPI_COMM_NULL included), the level written into the info ("type",
 * strata_comm_get_hlevel_info's name), an info key already there replaced,
 * and HW_GUIDED with that value gives the same communicators. */
void split_type_check_unguided(MPI_Comm old, int key, MPI_Comm expected, const char *type);

/* The guided split of comm by `value` (the info value) with key: congruent
 * to `expected`. */
void split_type_check_guided(MPI_Comm comm, const char *value, int key, MPI_Comm expected);

/* The rest of the guided rules on MPI_COMM_WORLD: "mpi_shared_memory" is
 * strata's node, a "hwloc://" prefix is accepted, the host's answers
 * (compared with PMPI_Comm_split_type) for no info, no key and values strata
 * does not know, ranks passing MPI_UNDEFINED beside a strata split, and
 * other split types untouched. */
void split_type_check_rules(void);

/* 1 where the host defines the MPI-4 hardware split types. */
int split_type_available(void);

#endif

/* The C layout of MPI's pair types (MPI_FLOAT_INT ... MPI_LONG_DOUBLE_INT),
 * the operands of MINLOC and MAXLOC, for tests that build or check them. */
#ifndef STRATA_TEST_PAIR_TYPES_H
#define STRATA_TEST_PAIR_TYPES_H

struct p_float { float v; int i; };
struct p_double { double v; int i; };
struct p_long { long v; int i; };
struct p_int { int v; int i; };
struct p_short { short v; int i; };
struct p_ldouble { long double v; int i; };

#endif

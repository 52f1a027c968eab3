/* The parts of strata-info (tools/strata-info.c) in files of their own. */
#ifndef STRATA_INFO_TOOL_H
#define STRATA_INFO_TOOL_H

#include <stddef.h>

/* A size with an optional K, M or G suffix; 0 on success. */
int info_parse_bytes(const char *s, size_t *out);

/* --explain <collective> <size> [-n ranks] (argv[0] is "strata-info").
 * Returns the exit status: 0, 1 (strata is off) or 2 (bad usage). */
int info_explain_main(int argc, char **argv, int rank, int size);

/* --explain-nodes <bcast|reduce> <size> <nodes> <ranks per node>, on rank 0
 * only (argv after the option).  Returns the exit status. */
int info_explain_nodes(int argc, char **argv);

/* --traffic bcast <size> [--root R] [-n ranks].  Returns the exit status. */
int info_traffic_main(int argc, char **argv, int rank, int size);

#endif

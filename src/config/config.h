/* Configuration: every STRATA_ environment variable, its default, what it
 * accepts, and its parsed value.  Parsed once per process; a bad value is an
 * error that names the variable, the value and what is accepted. */
#ifndef STRATA_CONFIG_H
#define STRATA_CONFIG_H

#include <stddef.h>

#include "util/colls.h"

/* If you add a value here, also update: the names parse_map accepts and
 * STRATA_MAP's row of the variable table (src/config/config.c), and the
 * placement in strata_binding (src/topology/location.c). */
enum strata_map_kind {
    STRATA_MAP_CORE,     /* local rank i on the i-th core (wrapping) */
    STRATA_MAP_NUMA,     /* round-robin over NUMA nodes, then cores inside */
    STRATA_MAP_SOCKET,   /* round-robin over packages, then cores inside */
    STRATA_MAP_NONE,     /* unbound: the whole machine */
    STRATA_MAP_LIST,     /* explicit "type:index,..." per local rank */
    STRATA_MAP_ACTUAL    /* the binding the launcher really gave */
};

enum strata_vnode_layout { STRATA_VNODE_BLOCK, STRATA_VNODE_CYCLIC };

/* STRATA_CHECK_ARGS (the agreement of coll/agree.h): off, every call waits
 * for every rank's, or by the call's class (the default). */
enum strata_check_mode { STRATA_CHECK_OFF = 0, STRATA_CHECK_EVERY = 1, STRATA_CHECK_AUTO = 2 };

struct strata_config {
    int disable;                 /* STRATA_DISABLE */
    int verbose;                 /* STRATA_VERBOSE: 0, 1 or 2 */
    char hierarchy[256];         /* STRATA_HIERARCHY, comma list finest first */
    char topology[1024];         /* STRATA_TOPOLOGY: "" or synthetic or XML path */
    enum strata_map_kind map;    /* STRATA_MAP */
    char map_list[1024];         /* the list when map == STRATA_MAP_LIST */
    int virtual_nodes;           /* STRATA_VIRTUAL_NODES, 1 = off */
    enum strata_vnode_layout vnode_layout; /* STRATA_VIRTUAL_LAYOUT */
    int test_refuse_rank;        /* STRATA_TEST_REFUSE_RANK, -1 = off (tests only) */
    int test_host_time_percent;  /* STRATA_TEST_HOST_TIME_PERCENT, 100 = off (tests only) */
    int cma;                     /* STRATA_CMA: 0 never, 1 when it works */
    char transport[16];          /* STRATA_TRANSPORT: a name of transport/registry.h, or
                                    "auto" (the cost model picks map or cma at MPI_Init) */
    size_t cico_max;             /* STRATA_CICO_MAX */
    size_t chunk[8];             /* STRATA_CHUNK, per level, finest first */
    int nchunk;                  /* entries given (the last repeats) */
    size_t reduce_chunk;         /* STRATA_REDUCE_CHUNK */
    size_t min_slice;            /* STRATA_REDUCE_MIN_SLICE */
    int throttle;                /* STRATA_THROTTLE, 0 = unlimited */
    int spin;                    /* STRATA_SPIN, -1 = auto */
    int wait_adaptive;           /* STRATA_WAIT: 1 adaptive, 0 spin */
    int block_after_us;          /* STRATA_BLOCK_AFTER */
    int progress_thread;         /* STRATA_PROGRESS: 1 thread, 0 off */
    size_t shm_max;              /* STRATA_SHM_MAX */
    int shared_heap;             /* STRATA_SHARED_HEAP (heap/heap.c reads it itself) */
    size_t shared_heap_min;      /* STRATA_SHARED_HEAP_MIN */
    size_t cma_max_per_call;     /* STRATA_CMA_MAX_PER_CALL (tests) */
    char stats[512];             /* STRATA_STATS: "", "stderr" or a file */
    char model[4096];            /* STRATA_MODEL: a model file, "" the machine's cache */
    char tuning_file[4096];      /* STRATA_TUNING_FILE: "" none */
    char algorithm[STRATA_NCOLLS][64]; /* STRATA_<COLL>_ALGORITHM: "name[:k]", "" the
                                          cost model's (checked by coll/select.c) */
    int calibrate;               /* STRATA_CALIBRATE: 1 auto, 0 never */
    int learn;                   /* STRATA_LEARN: 1 selection corrects itself, 0 never */
    size_t net_segment;          /* STRATA_NET_SEGMENT */
    int net_sends, net_recvs;    /* STRATA_NET_SENDS, STRATA_NET_RECVS */
    int net_tree, net_tree_k;    /* STRATA_NET_TREE: enum strata_net_shape, factor */
    int net_reduce_leaders;      /* STRATA_NET_REDUCE_LEADERS */
    int check_args;              /* STRATA_CHECK_ARGS: STRATA_CHECK_OFF, _EVERY, _AUTO */
    int cuda;                    /* STRATA_CUDA: 0 never, 1 when a device is present */
    char cuda_lib[512];          /* STRATA_CUDA_LIB: the driver library to load */
    size_t cuda_chunk;           /* STRATA_CUDA_CHUNK: staging pipeline chunk */
    char cuda_plugin[512];       /* STRATA_CUDA_PLUGIN: "" beside libstrata, a path, or none */
};

/* How strata_config_parse reads a variable into its member of struct
 * strata_config. */
enum strata_config_kind {
    STRATA_VAR_INT,  /* an int member: one of the row's words, else a number in [min, max] */
    STRATA_VAR_WORD, /* an int member: one of the row's words only */
    STRATA_VAR_SIZE, /* a size_t member: bytes with an optional K, M or G suffix, in
                        [least, most] */
    STRATA_VAR_TEXT, /* a char array member: the value as given */
    STRATA_VAR_OWN   /* the row's own parse function (lists, forms of several parts) */
};

/* A word a variable accepts and the value it stands for. */
struct strata_config_word {
    const char *word;
    int value;
};

/* Row flag: an empty value means the variable is unset (else it is a value,
 * and most kinds reject it). */
#define STRATA_VAR_EMPTY_UNSET 1u

struct strata_config_var;
typedef int strata_config_parse_fn(struct strata_config *cfg, const char *value,
                                   const struct strata_config_var *row, char *err,
                                   size_t errlen);

/* One row of the variable table: what strata-info documents, and how the
 * value is parsed.  Unless the kind is STRATA_VAR_OWN, an unset variable
 * takes its default_value, parsed like a value; a default in parentheses
 * describes what a zero member means instead.  STRATA_VAR_OWN's parse gets
 * NULL when the variable is unset. */
struct strata_config_var {
    const char *name;
    const char *default_value;
    const char *accepts;
    const char *meaning;
    enum strata_config_kind kind;
    size_t member, member_size; /* offsetof and sizeof the member it sets */
    long min, max;              /* STRATA_VAR_INT's numbers */
    size_t least, most;         /* STRATA_VAR_SIZE's range */
    const struct strata_config_word *words; /* ending with a NULL word */
    strata_config_parse_fn *parse;          /* STRATA_VAR_OWN */
    unsigned flags;                         /* STRATA_VAR_EMPTY_UNSET */
};

/* Parse the environment into *cfg.  On a bad value, writes a message naming
 * the variable, the value and what is accepted into err and returns -1. */
int strata_config_parse(struct strata_config *cfg, char *err, size_t errlen);

/* The checks that need to know the job, after strata_config_parse: that
 * STRATA_TEST_REFUSE_RANK names a rank of MPI_COMM_WORLD (of world_size
 * ranks), and, on the rank that writes the STRATA_STATS report
 * (writes_stats), that its file can be written (a relative path is made
 * absolute, so that the report goes where it was checked).  0, or -1 with a
 * message as above. */
int strata_config_check_job(struct strata_config *cfg, int world_size, int writes_stats,
                            char *err, size_t errlen);

/* The table of variables, terminated by a row whose name is NULL. */
const struct strata_config_var *strata_config_vars(void);

/* The parsed configuration of this process (valid after runtime init), or
 * NULL before. */
const struct strata_config *strata_config(void);

/* The process's configuration for the runtime to fill in at MPI_Init
 * (strata_config_parse, then the values agreed with rank 0), and the mark
 * that it is complete: from then on strata_config() returns it. */
struct strata_config *strata_config_process(void);
void strata_config_set_parsed(void);

#endif

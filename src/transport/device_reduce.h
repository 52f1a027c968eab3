/* Reductions of device data: the interface between strata and a reducer.
 *
 * A reducer combines two arrays that lie in device memory into a third, in
 * device memory, ordered on a queue after everything issued there before.
 * Two implement it:
 *   - the CUDA plugin, libstrata_cuda.so (src/cuda/strata_cuda.cu, built with
 *     nvcc when CMake finds it), whose kernels run on the GPU.  strata loads
 *     it with dlopen only when the driver it loaded is a real one with a
 *     device (never with the fake of tests/fake_cuda);
 *   - the CPU reducer (coll/device_reduce.c), which copies both operands to
 *     host memory through the driver's copy calls, combines them with
 *     strata's CPU loops (coll/ops.c) and copies the result back.  It serves
 *     the fake device, a job without the plugin, and the kinds the plugin
 *     has no kernel for (80-bit long double: a GPU has none).
 * Both are called through the same table (coll/device_reduce.h), so the
 * fake-device tests run the dispatch a GPU run takes.
 *
 * This header is the whole contract: plain C, no MPI, no CUDA headers, so
 * the plugin is built from it alone.  The plugin exports one symbol,
 * STRATA_CUDA_PLUGIN_SYMBOL, of type strata_cuda_plugin_fn. */
#ifndef STRATA_DEVICE_REDUCE_H
#define STRATA_DEVICE_REDUCE_H

#include <stddef.h>
#include <stdint.h>

/* Bumped on any change to the table or the numbering below: a plugin built
 * for another ABI is refused (and strata says so). */
#define STRATA_DEVICE_REDUCER_ABI 1

/* Operations, in the order of MPI's predefined reduction operations. */
enum strata_dev_op {
    STRATA_DOP_SUM, STRATA_DOP_PROD, STRATA_DOP_MAX, STRATA_DOP_MIN, STRATA_DOP_LAND,
    STRATA_DOP_LOR, STRATA_DOP_LXOR, STRATA_DOP_BAND, STRATA_DOP_BOR, STRATA_DOP_BXOR,
    STRATA_DOP_MINLOC, STRATA_DOP_MAXLOC, STRATA_DOP_COUNT
};

/* Element kinds: what the bytes of one element are, whatever MPI datatype
 * names them (MPI_LONG and MPI_INT64_T are both I64 on LP64).  Pairs are the
 * C structs MPI defines (value, then int index; REAL2 and DOUBLE2 hold the
 * index in the value's type, as Fortran's MPI_2REAL does).  FLOG is Fortran
 * LOGICAL: a 32-bit word in the host's encoding (set_logical). */
enum strata_dev_kind {
    STRATA_DK_I8, STRATA_DK_U8, STRATA_DK_I16, STRATA_DK_U16, STRATA_DK_I32, STRATA_DK_U32,
    STRATA_DK_I64, STRATA_DK_U64, STRATA_DK_F32, STRATA_DK_F64, STRATA_DK_F80, STRATA_DK_C32,
    STRATA_DK_C64, STRATA_DK_C80, STRATA_DK_BOOL, STRATA_DK_BYTE, STRATA_DK_P_FLOAT,
    STRATA_DK_P_DOUBLE, STRATA_DK_P_LONG, STRATA_DK_P_INT, STRATA_DK_P_SHORT,
    STRATA_DK_P_LDOUBLE, STRATA_DK_FLOG, STRATA_DK_P_REAL2, STRATA_DK_P_DOUBLE2, STRATA_DK_COUNT
};

struct strata_device_reducer {
    int abi;          /* STRATA_DEVICE_REDUCER_ABI */
    const char *name; /* for verbose output and strata-info */
    /* 1 if (op, kind) has a kernel here.  The caller asks before reduce and
     * takes the CPU reducer for a 0. */
    int (*has)(int op, int kind);
    /* Fortran LOGICAL's .false. and .true. words in the host MPI's encoding
     * (any word but .false. is true).  Called once before FLOG is reduced. */
    void (*set_logical)(int32_t false_word, int32_t true_word);
    /* dst[i] = a[i] op b[i] for i < count elements, dst, a and b device
     * addresses; dst may equal a, neither may overlap b otherwise.  Ordered
     * on queue after what was issued there; done when the queue is
     * synchronised.  queue: for the CUDA plugin a CUstream (the
     * communicator's lane stream, its context current on the calling
     * thread); for the CPU reducer the strata_device_lane itself.
     * Returns 0, or an error code for error_name. */
    int (*reduce)(void *queue, int op, int kind, uint64_t dst, uint64_t a, uint64_t b,
                  size_t count);
    const char *(*error_name)(int err);
};

/* The plugin's entry point: its reducer when the ABI matches and it sees a
 * device, else NULL with why (at most why_len bytes, NUL-terminated). */
typedef const struct strata_device_reducer *(*strata_cuda_plugin_fn)(int abi, char *why,
                                                                     size_t why_len);
#define STRATA_CUDA_PLUGIN_SYMBOL "strata_cuda_reducer"

#endif

#!/usr/bin/env bash
# When strata cannot get a shared segment, a communicator's collectives go to
# the host MPI: results stay right and STRATA_VERBOSE=1 says why.
#   shm_fallback.sh shm-max STRATA_RUN PROGRAM RANKS [PROGRAM ARGS...]
#       STRATA_SHM_MAX=1: every segment would exceed the cap
#   shm_fallback.sh tmpfs STRATA_RUN PROGRAM RANKS [PROGRAM ARGS...]
#       a 64 KiB tmpfs over /dev/shm in a private mount namespace (as root,
#       with unshare), with STRATA_CMA=0 so strata uses named segments in
#       /dev/shm: the segment cannot be created or sized.  The host MPI is
#       told to keep its own shared memory elsewhere.
#   shm_fallback.sh tmpfs-cma STRATA_RUN PROGRAM RANKS [PROGRAM ARGS...]
#       the same small /dev/shm with CMA on: strata's segments are anonymous
#       (memfd) and never touch /dev/shm, so strata still serves.
#   shm_fallback.sh full STRATA_RUN PROGRAM RANKS [PROGRAM ARGS...]
#       a /dev/shm of 8 MiB filled to the brim by a file (every page taken),
#       with STRATA_CMA=0: names can still be created there but no page can
#       be had, so the segment cannot be sized (never a bus error later).
#   shm_fallback.sh full-cma STRATA_RUN PROGRAM RANKS [PROGRAM ARGS...]
#       the same full /dev/shm with CMA on: strata still serves (memfd).
#       Both skip with MPICH 4.0.2, whose own MPI_Init takes a bus error on a
#       full /dev/shm before strata is set up.
# Exits 77 (skipped) when the tmpfs mode cannot run here.
set -uo pipefail
mode=$1 run=$2 prog=$3 ranks=$4
shift 4

export STRATA_VERBOSE=1
case "$mode" in
  shm-max)
    export STRATA_SHM_MAX=1
    expect='would exceed STRATA_SHM_MAX'
    out=$("$run" --native -n "$ranks" "$prog" --expect-host=STRATA_SHM_MAX "$@" 2>&1)
    rc=$?
    ;;
  tmpfs|tmpfs-cma|full|full-cma)
    if [ "$(id -u)" != 0 ]; then echo "SKIP: mounting a tmpfs needs root"; exit 77; fi
    if ! command -v unshare >/dev/null; then echo "SKIP: no unshare"; exit 77; fi
    if ! unshare -m true 2>/dev/null; then
      echo "SKIP: unshare -m is not permitted here (no CAP_SYS_ADMIN?)"; exit 77
    fi
    case "$mode" in
      full*) if grep -q '^built_for="mpich"' "$run"; then
               echo "SKIP: MPICH's own MPI_Init takes a bus error on a full /dev/shm"; exit 77
             fi ;;
    esac
    # Open MPI's shared-memory transport and windows keep their segments in
    # /dev/shm by default; /tmp still has room.  MPICH (UCX) is told to use SysV shared
    # memory and CMA instead of POSIX shared memory.
    export OMPI_MCA_btl_vader_backing_directory=/tmp OMPI_MCA_osc_sm_backing_directory=/tmp
    export UCX_TLS=self,sysv,cma
    # Either way strata cannot get its segment: shm_open fails or
    # posix_fallocate finds no room.
    case "$mode" in
      tmpfs)
        export STRATA_CMA=0
        expect='cannot (create a shared segment|hold a [0-9]+-byte segment)'
        expect_arg=--expect-host=/dev/shm
        ;;
      full)
        export STRATA_CMA=0
        expect='/dev/shm cannot hold a [0-9]+-byte segment \(No space left on device\)'
        expect_arg=--expect-host=/dev/shm
        ;;
      *)
        expect='strata context, hierarchy'
        expect_arg=
        ;;
    esac
    # shellcheck disable=SC2016 # $4 is the inner awk's
    case "$mode" in
      tmpfs*) setup='mount -t tmpfs -o size=64k strata-test-tmpfs /dev/shm' ;;
      # cat stops at ENOSPC with every page taken; df must then show none.
      *) setup='mount -t tmpfs -o size=8m strata-test-tmpfs /dev/shm &&
                { cat /dev/zero >/dev/shm/fill 2>/dev/null; true; } &&
                [ "$(df -P /dev/shm | awk "NR == 2 { print \$4 }")" = 0 ] ||
                { echo "FAIL: could not fill /dev/shm"; exit 1; }' ;;
    esac
    out=$(unshare -m --propagation private sh -c "$setup"' && exec "$@"' sh \
      "$run" --native -n "$ranks" "$prog" $expect_arg "$@" 2>&1)
    rc=$?
    # A failed run: whether the host MPI alone (STRATA_DISABLE=1) starts
    # under this /dev/shm at all.  MPICH 5.0's MPI_Init takes a bus error in
    # a 64 KiB /dev/shm, whatever its UCX is told, before strata is set up.
    if [ "$rc" != 0 ]; then
      host_out=$(STRATA_DISABLE=1 unshare -m --propagation private sh -c "$setup"' && exec "$@"' \
        sh "$run" --native -n "$ranks" "$prog" "$@" 2>&1)
      if printf '%s\n' "$host_out" | grep -Eq 'Bus error|signal 7'; then
        printf '%s\n' "$out" | tail -n 5
        echo "SKIP: the host MPI alone (STRATA_DISABLE=1) takes a bus error under this /dev/shm"
        exit 77
      fi
    fi
    ;;
  *) echo "shm_fallback.sh: unknown mode $mode" >&2; exit 2 ;;
esac
printf '%s\n' "$out"
if [ "$rc" != 0 ]; then echo "FAIL: exit status $rc"; exit 1; fi
if ! printf '%s\n' "$out" | grep -Eq "$expect"; then
  echo "FAIL: STRATA_VERBOSE=1 did not say why strata left the communicator (expected /$expect/)"
  exit 1
fi
echo "PASS: $mode: the expected path, with what STRATA_VERBOSE=1 reports"

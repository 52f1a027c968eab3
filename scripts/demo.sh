#!/usr/bin/env bash
# The side-by-side benchmark for every MPI built under build/ (make demo):
# strata against the host MPI, 2 ranks, all collectives, a few sizes.
# Prints each table, writes bench/results/demo-<mpi>.json, then draws them
# with strata-report into bench/results/demo-report/ (a PNG per collective,
# speedup.png with all of them, summary.md) and ends with where those are.
#   STRATA_BUILD_ROOT  where the builds are (default build)
#   DEMO_SIZES         sizes to run (default 8,64K,1M,4M)
# After each table, one row beside two busy processes (strata-bench --load 2).
# Then the applications of DEMO_APPS (apps/: asp and train in C, cg in
# Fortran) with and without strata through scripts/app-compare.sh, one
# repetition each: their times and that their checksums agree.
# Two ranks on purpose: this machine has 2 cores and MPICH never yields the
# CPU, so more ranks than cores would measure the scheduler, not MPI.
# Newer MPIs: where scripts/host-mpis.sh laid out today's releases (in
# build/hosts/, as make test's host matrix does), the newest of each MPI
# there (Open MPI, MPICH, Intel MPI) is compared too, in build/host-<mpi>/
# (strata and strata-bench built there when missing).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="${STRATA_BUILD_ROOT:-build}"
unset STRATA_BUILD_ROOT # strata-run hands every STRATA_ variable to the ranks
sizes="${DEMO_SIZES:-8,64K,1M,4M}"
results=bench/results
mkdir -p "$results"

# The builds compared: Debian's two, then the newest laid-out host of each
# MPI (its env file gives its runtime settings).
builds=()
for mpi in openmpi mpich; do builds+=("$mpi"); done
declare -A host_env=()
if [ -d "$root/hosts" ]; then
  for product in openmpi mpich impi; do
    env=$(ls "$root/hosts/$product"-*.env 2>/dev/null | sort -V | tail -n 1)
    [ -n "$env" ] || continue
    h="host-$(basename "$env" .env)"
    host_env[$h]="$env"
    if [ ! -x "$root/$h/bin/strata-bench" ]; then
      echo "== building $root/$h (strata, strata-bench) with its mpicc =="
      (. "$env" && cmake -S . -B "$root/$h" -DCMAKE_C_COMPILER="$HOST_MPI_CC" >/dev/null &&
        cmake --build "$root/$h" -j "${JOBS:-2}" --target strata strata-bench >/dev/null) ||
        echo "demo: building $root/$h failed" >&2
    fi
    builds+=("$h")
  done
fi
# Runs a command with a build's host settings (none for Debian's).
with_host() {
  local b="$1"; shift
  if [ -n "${host_env[$b]:-}" ]; then
    (. "${host_env[$b]}" && "$@")
  else
    "$@"
  fi
}

status=0
ran=0
for mpi in "${builds[@]}"; do
  bin="$root/$mpi/bin"
  [ -x "$bin/strata-bench" ] && [ -x "$bin/strata-run" ] || continue
  ran=1
  echo "== strata-bench with $mpi: strata-run -n 2 strata-bench --sizes $sizes" \
       "--json $results/demo-$mpi.json =="
  # A bound on a stuck run; a normal one takes seconds.
  if ! with_host "$mpi" timeout 300 "$bin/strata-run" -n 2 "$bin/strata-bench" --sizes "$sizes" \
       --json "$results/demo-$mpi.json"; then
    echo "demo: strata-bench with $mpi failed" >&2
    status=1
  fi
  # One row under load (issue 15): two busy processes beside the job, which
  # then has fewer cores than ranks; strata/host there against the row above.
  echo
  echo "== under load, $mpi: strata-run -n 2 strata-bench --sizes 1M --colls bcast --load 2 =="
  if ! with_host "$mpi" timeout 300 "$bin/strata-run" -n 2 "$bin/strata-bench" --sizes 1M \
       --colls bcast --load 2 --json "$results/demo-$mpi-load2.json"; then
    echo "demo: strata-bench --load 2 with $mpi failed" >&2
    status=1
  fi
  echo
done
if [ "$ran" = 0 ]; then
  echo "demo: no build with strata-bench under $root/ (run make first)" >&2
  exit 1
fi
[ "$status" = 0 ] && echo "results: $results/demo-*.json"

# Every MPI's results in one report: the same plots compare them.
jsons=()
for mpi in "${builds[@]}"; do
  [ -s "$results/demo-$mpi.json" ] && [ -x "$root/$mpi/bin/strata-bench" ] &&
    jsons+=("$results/demo-$mpi.json")
done
report_dir="$results/demo-report"
if [ ${#jsons[@]} -gt 0 ]; then
  echo
  echo "== strata-report ${jsons[*]} -o $report_dir =="
  # strata-report is the same script in every build; tools/ has it too.
  report=tools/strata-report
  for mpi in openmpi mpich; do
    [ -x "$root/$mpi/bin/strata-report" ] && report="$root/$mpi/bin/strata-report" && break
  done
  "$report" "${jsons[@]}" -o "$report_dir"
  case $? in
    0)
      echo
      echo "plot   : $report_dir/speedup.png (and one PNG per collective beside it)"
      echo "summary: $report_dir/summary.md"
      ;;
    3)
      echo
      echo "summary: $report_dir/summary.md (no plots: matplotlib is missing)"
      status=1
      ;;
    *)
      echo "demo: strata-report failed" >&2
      status=1
      ;;
  esac
fi
# The applications, each with the host MPI alone and with strata.
apps_list="${DEMO_APPS:-asp 1024;train 100K --steps 10;cg 96}"
for mpi in openmpi mpich; do
  [ -x "$root/$mpi/bin/strata-run" ] || continue
  IFS=';' read -r -a apps <<<"$apps_list"
  for entry in "${apps[@]}"; do
    read -r -a words <<<"$entry"
    [ -x "$root/$mpi/bin/${words[0]}" ] || { echo "demo: no ${words[0]} in $root/$mpi/bin" >&2; continue; }
    echo
    echo "== $mpi: scripts/app-compare.sh -n 2 --reps 1 ${words[*]} =="
    if ! scripts/app-compare.sh --build "$root/$mpi" -n 2 --reps 1 --timeout 300 "${words[@]}"; then
      echo "demo: ${words[0]} with $mpi: results differ or a run failed" >&2
      status=1
    fi
  done
done
exit $status

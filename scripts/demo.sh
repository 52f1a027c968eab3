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
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="${STRATA_BUILD_ROOT:-build}"
unset STRATA_BUILD_ROOT # strata-run hands every STRATA_ variable to the ranks
sizes="${DEMO_SIZES:-8,64K,1M,4M}"
results=bench/results
mkdir -p "$results"

status=0
ran=0
for mpi in openmpi mpich; do
  bin="$root/$mpi/bin"
  [ -x "$bin/strata-bench" ] && [ -x "$bin/strata-run" ] || continue
  ran=1
  echo "== strata-bench with $mpi: strata-run -n 2 strata-bench --sizes $sizes" \
       "--json $results/demo-$mpi.json =="
  # A bound on a stuck run; a normal one takes seconds.
  if ! timeout 300 "$bin/strata-run" -n 2 "$bin/strata-bench" --sizes "$sizes" \
       --json "$results/demo-$mpi.json"; then
    echo "demo: strata-bench with $mpi failed" >&2
    status=1
  fi
  # One row under load (issue 15): two busy processes beside the job, which
  # then has fewer cores than ranks; strata/host there against the row above.
  echo
  echo "== under load, $mpi: strata-run -n 2 strata-bench --sizes 1M --colls bcast --load 2 =="
  if ! timeout 300 "$bin/strata-run" -n 2 "$bin/strata-bench" --sizes 1M --colls bcast \
       --load 2 --json "$results/demo-$mpi-load2.json"; then
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
for mpi in openmpi mpich; do
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

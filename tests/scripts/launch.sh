# Shared preamble of the scripts that launch a program with strata-run and
# check what it did (fortran_stats.sh, app_check.sh), sourced with their
# first three arguments:
#   . launch.sh STRATA_RUN PROGRAM RANKS
# Sets run, prog and ranks, then sources common.sh (a temporary folder,
# fail(), no STRATA_ variable inherited) but keeps STRATA_MODEL: the fixed
# cost model ctest sets for the whole suite, so that the launched program
# picks the same algorithms as every other test.
run="$1"
prog="$2"
ranks="$3"
launch_model="${STRATA_MODEL:-}"
# shellcheck source=common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
if [ -n "$launch_model" ]; then export STRATA_MODEL="$launch_model"; fi
unset launch_model

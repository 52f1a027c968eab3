#!/usr/bin/env bash
# netns_hosts.sh: MPI ranks as separate hosts on this one machine, so that
# strata's across-nodes path crosses a real network stack.
#   netns_hosts.sh --check BUILD_DIR [--mpi openmpi|mpich]
#   netns_hosts.sh [--mpi openmpi|mpich] [--hosts SPEC] [--timeout S] [--preload LIB] -- PROG [ARGS...]
# SPEC: HxR (H hosts of R ranks) or R1,R2,... (ranks per host); default 2x2.
# --timeout: the job is killed after S seconds (default 600; status 124).
# --check runs BUILD_DIR/bin/test_net_colls over 2x2 and 2,1,2 hosts (MPICH:
# 1,2) and asserts it passes with strata seeing one node per host, then
# BUILD_DIR/bin/test_vcolls (the v-collectives) over the first layout.  MPICH's
# 2,1 layout passes every check but then hangs in MPI_Finalize in about one
# run in seven here, with or without strata (STRATA_DISABLE=1: 1 hang in 7
# runs; strata: 1 in 8): the lone rank of the second host spins in
# ucp_worker_progress flushing its TCP endpoints while the others wait in the
# PMI barrier, UCX 1.13's TCP cleanup bug (openucx/ucx#8738), so it is not run.
# The 1,2 layout hits the same hang in about one run in five; there it comes
# after every check has passed, and the run counts (check_layout).
# The other form runs PROG under the host MPI's launcher across the hosts;
# every STRATA_ variable of the environment reaches the ranks, --preload LIB
# puts LIB (a libstrata.so) in every rank's LD_PRELOAD, and TMPDIR is a
# folder of the run's, removed with it.
#
# Each host is a network namespace ($prefix-h<i>, address 10.77.0.<i>) whose
# launcher daemon netns-agent.sh starts in a UTS namespace of its own (host
# name h<i>); mpirun (or mpiexec.hydra) runs in a head namespace (10.77.0.254)
# that also holds the bridge every host's veth link plugs into.  Nothing of
# it touches the machine's own network namespace, so runs can overlap, and
# host names are the addresses (nothing to resolve, /etc/hosts untouched).
# The host MPI speaks TCP between hosts (Open MPI: btl tcp, vader inside one
# host; MPICH: UCX over tcp).  Everything (processes left in the namespaces
# included) is removed on every exit; a namespace left by a run that was
# killed outright is removed by the next run.  Needs root with namespaces,
# veth and bridges: otherwise it prints "SKIP: why" and exits 77.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
agent="$here/netns-agent.sh"
subnet=10.77.0
prefix="strata-nh$$"
namespaces=()
tmp=""
# This run's files, the host MPI's included (Open MPI's session folders and
# vader segments, which a killed job leaves behind): in memory when possible.
tmp_base=/dev/shm
[ -d "$tmp_base" ] && [ -w "$tmp_base" ] || tmp_base="${TMPDIR:-/tmp}"

usage() {
  sed -n '4,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
skip() { echo "SKIP: $*"; exit 77; }
fail() {
  echo "FAIL: $*"
  for f in "$tmp"/out "$tmp"/err; do
    if [ -z "$tmp" ] || [ ! -s "$f" ]; then continue; fi
    # Without the per-call lines of STRATA_VERBOSE=2.
    echo "---- $(basename "$f") (first 60 lines, calls left out)"
    grep -v '^strata\[[0-9]*\]: MPI_[A-Za-z]* on communicator #' "$f" | head -n 60
  done
  exit 1
}

# ---- Namespaces ------------------------------------------------------------

# Kills what still runs in a namespace (mpirun, daemons, ranks: all started
# by this script) and deletes it, links and bridge with it.
remove_namespace() {
  local ns="$1" pids tries=0
  [ -e "/run/netns/$ns" ] || return 0
  while pids="$(ip netns pids "$ns" 2>/dev/null)" && [ -n "$pids" ] && [ $tries -lt 50 ]; do
    # shellcheck disable=SC2086  # one pid per word
    kill -KILL $pids 2>/dev/null
    sleep 0.1
    tries=$((tries + 1))
  done
  ip netns delete "$ns" 2>/dev/null || echo "netns_hosts.sh: could not delete namespace $ns" >&2
}

cleanup() {
  local i
  for ((i = ${#namespaces[@]} - 1; i >= 0; i--)); do remove_namespace "${namespaces[i]}"; done
  [ -n "$tmp" ] && rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# Namespaces and folders of earlier runs whose script no longer exists
# (killed outright, so its trap never ran).
remove_orphans() {
  local ns pid dir
  for ns in $(ip netns list 2>/dev/null | sed -n 's/^\(strata-nh[0-9]*-[a-z0-9]*\).*/\1/p'); do
    pid="${ns#strata-nh}"
    pid="${pid%%-*}"
    kill -0 "$pid" 2>/dev/null || remove_namespace "$ns"
  done
  for dir in "$tmp_base"/strata-nh[0-9]*.??????; do
    [ -d "$dir" ] || continue
    pid="${dir##*/strata-nh}"
    pid="${pid%%.*}"
    kill -0 "$pid" 2>/dev/null || rm -rf "$dir"
  done
}

# plug NS INDEX: a veth link from NS (eth0, address $subnet.INDEX) to the bridge.
plug() {
  local ns="$1" index="$2" err
  err="$(ip -n "$head" link add "p$index" type veth peer name eth0 netns "$ns" 2>&1)" ||
    skip "cannot create a veth link: $err"
  { ip -n "$head" link set "p$index" master br0 up &&
      ip -n "$ns" addr add "$subnet.$index/24" dev eth0 &&
      ip -n "$ns" link set eth0 up &&
      ip -n "$ns" link set lo up; } || fail "cannot configure the link of $ns"
}

# hosts_up COUNT: the head namespace with its bridge, and COUNT hosts.
hosts_up() {
  local count="$1" i err tool
  [ "$(id -u)" = 0 ] || skip "needs root (network namespaces, veth links, a bridge)"
  # The launchers run it as they would run ssh.
  [ -x "$agent" ] || fail "$agent is not executable (git keeps its mode: chmod +x)"
  for tool in ip unshare timeout; do
    command -v "$tool" >/dev/null || skip "no $tool command"
  done
  remove_orphans
  tmp="$(mktemp -d "$tmp_base/$prefix.XXXXXX")" || fail "cannot create a folder in $tmp_base"
  mkdir "$tmp/session" || fail "cannot create $tmp/session"
  head="$prefix-head"
  err="$(ip netns add "$head" 2>&1)" || skip "cannot create a network namespace: $err"
  namespaces+=("$head")
  err="$(ip -n "$head" link add br0 type bridge 2>&1)" || skip "cannot create a bridge: $err"
  ip -n "$head" link set br0 up || fail "cannot bring the bridge up"
  plug "$head" 254
  err="$(ip netns exec "$head" unshare --uts -- true 2>&1)" ||
    skip "cannot create a UTS namespace: $err"
  for ((i = 1; i <= count; i++)); do
    err="$(ip netns add "$prefix-h$i" 2>&1)" || fail "cannot create namespace $prefix-h$i: $err"
    namespaces+=("$prefix-h$i")
    plug "$prefix-h$i" "$i"
  done
}

# Bytes sent and received on host INDEX's link.
link_bytes() {
  ip netns exec "$prefix-h$1" cat /sys/class/net/eth0/statistics/tx_bytes \
    /sys/class/net/eth0/statistics/rx_bytes 2>/dev/null | paste -sd' '
}

# ---- Launching -------------------------------------------------------------

# parse_hosts SPEC: sets counts (ranks per host) and total.
parse_hosts() {
  local spec="$1" h r c
  counts=()
  if [[ "$spec" =~ ^([0-9]+)x([0-9]+)$ ]]; then
    h="${BASH_REMATCH[1]}"
    r="${BASH_REMATCH[2]}"
    for ((c = 0; c < h; c++)); do counts+=("$r"); done
  elif [[ "$spec" =~ ^[0-9]+(,[0-9]+)*$ ]]; then
    IFS=, read -ra counts <<<"$spec"
  else
    echo "netns_hosts.sh: --hosts takes HxR or R1,R2,... (got $spec)" >&2
    exit 2
  fi
  total=0
  for c in "${counts[@]}"; do
    if [ "$c" -lt 1 ]; then echo "netns_hosts.sh: a host needs at least one rank" >&2; exit 2; fi
    total=$((total + c))
  done
  if [ "${#counts[@]}" -lt 1 ] || [ "${#counts[@]}" -gt 253 ]; then
    echo "netns_hosts.sh: 1 to 253 hosts" >&2
    exit 2
  fi
}

# launch MPI SECONDS PROG [ARGS...]: PROG on the hosts of $counts, under the
# head namespace's launcher, killed after SECONDS.  Returns its status
# (124: timed out).
launch() {
  local mpi="$1" seconds="$2" hosts="" i v
  shift 2
  for ((i = 0; i < ${#counts[@]}; i++)); do hosts+="${hosts:+,}$subnet.$((i + 1)):${counts[i]}"; done
  # TMPDIR reaches the daemons through netns-agent.sh.
  local base=(env NETNS_HOSTS_PREFIX="$prefix" NETNS_HOSTS_SUBNET="$subnet" TMPDIR="$tmp/session")
  case "$mpi" in
    openmpi)
      local opts=()
      for v in $(env | sed -n 's/^\(STRATA_[A-Za-z0-9_]*\)=.*/\1/p'); do opts+=(-x "$v"); done
      [ -n "$preload" ] && opts+=(-x "LD_PRELOAD=$preload")
      # No binding, and yielding when the ranks outnumber the cores: every
      # host believes it has all the cores of the machine to itself.
      [ "$total" -gt "$(nproc)" ] && opts+=(--mca mpi_yield_when_idle 1)
      timeout -k 5 "$seconds" ip netns exec "$head" "${base[@]}" \
        OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        mpirun.openmpi --allow-run-as-root --host "$hosts" -n "$total" --bind-to none \
        --mca plm rsh --mca plm_rsh_agent "$agent" --mca plm_rsh_no_tree_spawn 1 \
        --mca oob_tcp_if_include "$subnet.0/24" --mca pml ob1 --mca btl tcp,vader,self \
        --mca btl_tcp_if_include "$subnet.0/24" --mca btl_vader_backing_directory "$tmp" \
        "${opts[@]}" "$@"
      ;;
    mpich)
      local genv=()
      [ -n "$preload" ] && genv+=(-genv LD_PRELOAD "$preload")
      # Hydra passes its whole environment to the ranks.  UCX over TCP only:
      # its shared-memory transports would reach the other "hosts".
      timeout -k 5 "$seconds" ip netns exec "$head" "${base[@]}" \
        UCX_TLS=tcp,self UCX_NET_DEVICES=eth0 \
        mpiexec.hydra -launcher ssh -launcher-exec "$agent" -iface eth0 \
        -hosts "$hosts" -n "$total" "${genv[@]}" "$@"
      ;;
    *) echo "netns_hosts.sh: --mpi takes openmpi or mpich" >&2; exit 2 ;;
  esac
}

# ---- --check: the ctest ----------------------------------------------------

# run_limit MPI: seconds a test program's run may take.  MPICH's runs take
# about 4 s here; a run that passed and then hangs in MPI_Finalize (UCX's
# TCP cleanup, above) is only known when the limit ends it, so MPICH's limit
# is short (it is still five times a run).
run_limit() { if [ "$1" = mpich ]; then echo 20; else echo 60; fi; }

# check_layout MPI PROG SPEC COMMS [OPTION...]: the ranks land on their
# hosts, and PROG (given OPTIONs too) passes on communicators COMMS (world, and odd: all ranks but 1, so nodes
# of unequal sizes) with strata seeing one node per host and serving the
# collectives across them.  Sizes from 0 to 1 MiB (8 segments of the
# across-nodes pipelines), ops of each kind: a few seconds a layout here.
check_layout() {
  local mpi="$1" prog="$2" spec="$3" comms="$4" i k r c expected="" groups="" before=() line
  local options=("${@:5}")
  local tx0 rx0 tx1 rx1
  parse_hosts "$spec"
  local nhosts="${#counts[@]}"

  # Where each rank runs, as the rank itself sees it.
  r=0
  for ((i = 0; i < nhosts; i++)); do
    for ((k = 0; k < counts[i]; k++)); do expected+="$r h$((i + 1))"$'\n'; r=$((r + 1)); done
  done
  launch "$mpi" 60 sh -c 'echo "${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-?}} $(hostname)"' \
    >"$tmp/out" 2>"$tmp/err" || fail "$spec: the placement run failed (status $?)"
  [ "$(sort -n "$tmp/out")" = "${expected%$'\n'}" ] ||
    fail "$spec: ranks not on the expected hosts; expected (rank host): $(echo "$expected" | paste -sd,)"

  for ((i = 1; i <= nhosts; i++)); do before[i]="$(link_bytes "$i")"; done
  local start=$SECONDS
  STRATA_VERBOSE=1 launch "$mpi" "$(run_limit "$mpi")" "$prog" --colls=bcast,allreduce,allgather \
    --comms="$comms" --roots=some --ops=sum,minloc --sizes=0,7,4099,64K+5,1M "${options[@]}" \
    >"$tmp/out" 2>"$tmp/err"
  local status=$?
  # MPICH's MPI_Finalize hangs in some runs of every layout with a host of
  # one rank, with or without strata (1,2 here: 4 in 15 runs at commit
  # c4e9e5f, 2 in 15 at 8dea9b7, before this session's changes): UCX 1.13's
  # TCP cleanup bug (see the top).  Every check has passed by then (PASS is
  # printed after a barrier of all ranks, and MPI_Finalize is the program's
  # next and last call), so such a run counts, with a note.
  if [ $status -eq 124 ] && [ "$mpi" = mpich ] && grep -q '^PASS' "$tmp/out"; then
    echo "note: $spec: every check passed, then MPICH's MPI_Finalize hung until the timeout" \
         "(UCX TCP cleanup, openucx/ucx#8738; also without strata)"
  else
    [ $status -eq 124 ] && fail "$spec: test_net_colls timed out after $(run_limit "$mpi") s"
    [ $status -eq 0 ] || fail "$spec: test_net_colls failed (status $status)"
  fi

  grep -q "^strata\[0\]: strata .*: $total ranks on $nhosts nodes\$" "$tmp/err" ||
    fail "$spec: strata did not report $total ranks on $nhosts nodes"
  grep -q "^strata\[0\]: communicator #0 MPI_COMM_WORLD (size $total, $nhosts nodes)" "$tmp/err" ||
    fail "$spec: no hierarchy of $nhosts nodes for MPI_COMM_WORLD"
  # The node level of MPI_COMM_WORLD groups exactly each host's ranks.
  r=0
  for ((i = 0; i < nhosts; i++)); do
    groups+="${groups:+ }[$r*"
    for ((k = 1; k < counts[i]; k++)); do groups+=" $((r + k))"; done
    groups+="]"
    r=$((r + counts[i]))
  done
  line="$(sed -n '/communicator #0 MPI_COMM_WORLD/,/^$/p' "$tmp/err" | grep -E '^ *level 0 node ')"
  [ "${line#*: }" = "$groups" ] ||
    fail "$spec: MPI_COMM_WORLD's node level is \"${line#*: }\", expected \"$groups\""
  # test_net_colls asserts that strata served every call (--expect-served);
  # its report names the nodes it saw.
  for c in MPI_Bcast MPI_Allreduce MPI_Allgather; do
    grep -Fq "$c on world ($total ranks, nodes ${groups//\*/}, strata)" "$tmp/out" ||
      fail "$spec: test_net_colls reports no $c served by strata on world with nodes ${groups//\*/}"
  done
  grep -q '^PASS' "$tmp/out" || fail "$spec: test_net_colls printed no PASS"

  echo "PASS $spec ($mpi, $total ranks on $nhosts hosts, $((SECONDS - start)) s)"
  for ((i = 1; i <= nhosts; i++)); do
    read -r tx0 rx0 <<<"${before[i]}"
    read -r tx1 rx1 <<<"$(link_bytes "$i")"
    echo "  h$i: $((tx1 - tx0)) bytes sent, $((rx1 - rx0)) received over its link"
  done
}

# check_vcolls MPI PROG SPEC: the four v-collectives (tests/mpi/test_vcolls.c,
# which sees the nodes itself and then requires every call served by
# strata's compositions across nodes) against the host MPI over the hosts of
# SPEC: the first root and the last, the cost model's choices, a few seconds.
check_vcolls() {
  local mpi="$1" prog="$2" spec="$3" start=$SECONDS
  parse_hosts "$spec"
  [ -x "$prog" ] || fail "no $prog (build the tests first)"
  launch "$mpi" "$(run_limit "$mpi")" "$prog" --roots=some --comms=world --model >"$tmp/out" 2>"$tmp/err"
  local status=$?
  # MPICH's MPI_Finalize hang of check_layout, after every check passed.
  if [ $status -eq 124 ] && [ "$mpi" = mpich ] && grep -q '^PASS' "$tmp/out"; then
    echo "note: $spec: test_vcolls passed, then MPICH's MPI_Finalize hung until the timeout"
  else
    [ $status -eq 124 ] && fail "$spec: test_vcolls timed out after $(run_limit "$mpi") s"
    [ $status -eq 0 ] || fail "$spec: test_vcolls failed (status $status)"
  fi
  grep -q '^PASS vcolls' "$tmp/out" || fail "$spec: test_vcolls printed no PASS"
  echo "PASS $spec test_vcolls ($mpi, $total ranks on ${#counts[@]} hosts, $((SECONDS - start)) s)"
}

check() {
  local build="$1" mpi="$2" prog layouts
  prog="$build/bin/test_net_colls"
  [ -x "$prog" ] || fail "no $prog (build the tests first)"
  for v in $(env | sed -n 's/^\(STRATA_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
  # A fixed cost model: choices that do not depend on this machine's
  # calibration (nor trigger one).
  export STRATA_MODEL="$here/../data/model.conf"
  preload=""
  # SPEC COMMS [PROG OPTION]
  case "$mpi" in
    openmpi) layouts=("2x2 world,odd" "2,1,2 world") ;;
    # MPICH never yields the CPU: at most 3 ranks on this 2-core machine.
    # A node of one rank and one of two (with one rank per node, strata
    # leaves everything to the host MPI).
    mpich) layouts=("1,2 world") ;;
    *) echo "netns_hosts.sh: --mpi takes openmpi or mpich" >&2; exit 2 ;;
  esac
  hosts_up 3
  for layout in "${layouts[@]}"; do
    # shellcheck disable=SC2086  # the words of a layout
    check_layout "$mpi" "$prog" $layout
  done
  # shellcheck disable=SC2086  # the first layout's host spec
  check_vcolls "$mpi" "$build/bin/test_vcolls" ${layouts[0]%% *}
}

# ---- Main ------------------------------------------------------------------

mpi=openmpi
spec=2x2
seconds=600
preload=""
build=""
while [ $# -gt 0 ]; do
  case "$1" in
    --check) [ $# -ge 2 ] || usage; build="$2"; shift 2 ;;
    --mpi) [ $# -ge 2 ] || usage; mpi="$2"; shift 2 ;;
    --hosts) [ $# -ge 2 ] || usage; spec="$2"; shift 2 ;;
    --timeout) [ $# -ge 2 ] || usage; seconds="$2"; shift 2 ;;
    --preload) [ $# -ge 2 ] || usage; preload="$2"; shift 2 ;;
    -h|--help) usage ;;
    --) shift; break ;;
    *) echo "netns_hosts.sh: unknown argument $1" >&2; usage ;;
  esac
done

if [ -n "$build" ]; then
  check "$build" "$mpi"
  exit 0
fi
[ $# -ge 1 ] || usage
case "$seconds" in ''|*[!0-9]*) echo "netns_hosts.sh: --timeout takes seconds" >&2; exit 2 ;; esac
parse_hosts "$spec"
if [ -n "$preload" ]; then
  [ -f "$preload" ] || { echo "netns_hosts.sh: no library $preload" >&2; exit 2; }
  # Only the ranks get it (the launcher passes it on), not the tools here.
  preload="$(cd "$(dirname "$preload")" && pwd)/$(basename "$preload")"
fi
# The hosts share this machine's cores, but each rank sees only its own
# host's ranks, so strata cannot tell it is oversubscribed: it would spin
# 16384 polls before yielding and starve the other hosts' ranks (Reduce 4 MiB
# 2-4x slower on 2x2 here).  Oversubscribed, the default is what strata
# picks itself when it can see it: 4 polls.
if [ -z "${STRATA_SPIN:-}" ] && [ "$total" -gt "$(nproc)" ]; then export STRATA_SPIN=4; fi
hosts_up "${#counts[@]}"
launch "$mpi" "$seconds" "$@"
status=$?
[ $status -eq 124 ] && echo "netns_hosts.sh: timed out after $seconds s" >&2
exit $status

#!/bin/sh
# netns-agent.sh: the "remote shell" of netns_hosts.sh.  The host MPI's
# launcher calls it as it would call ssh:
#   netns-agent.sh [-x] HOST COMMAND...
# Open MPI's rsh launcher (plm_rsh_agent) passes HOST then the orted command
# line; MPICH's Hydra (-launcher ssh -launcher-exec) passes -x first.  HOST
# is one of the addresses netns_hosts.sh gave its hosts (10.77.0.<i>), and
# the command runs inside that host's network namespace
# ($NETNS_HOSTS_PREFIX-h<i>), in a UTS namespace of its own named h<i>, so
# the launcher's daemon and every rank it starts see one separate host.
#
# Like ssh, the command is one shell command line (the launchers quote its
# arguments for a remote shell), and it starts from a bare environment: the
# ranks get only what the launcher forwards (mpirun -x, Hydra's environment
# passing), as they would on a real cluster.
set -eu

while [ $# -gt 0 ]; do
  case "$1" in
    -x) shift ;;
    -*) echo "netns-agent.sh: unexpected option $1" >&2; exit 255 ;;
    *) break ;;
  esac
done
[ $# -ge 2 ] || { echo "netns-agent.sh: usage: netns-agent.sh [-x] HOST COMMAND..." >&2; exit 255; }
host="$1"
shift
: "${NETNS_HOSTS_PREFIX:?netns-agent.sh is run by netns_hosts.sh, which sets NETNS_HOSTS_PREFIX}"
: "${NETNS_HOSTS_SUBNET:?netns-agent.sh is run by netns_hosts.sh, which sets NETNS_HOSTS_SUBNET}"

index="${host#"$NETNS_HOSTS_SUBNET".}"
case "$index" in
  ''|*[!0-9]*) echo "netns-agent.sh: $host is not one of the test hosts ($NETNS_HOSTS_SUBNET.N)" >&2
               exit 255 ;;
esac
ns="$NETNS_HOSTS_PREFIX-h$index"
[ -e "/run/netns/$ns" ] || { echo "netns-agent.sh: no network namespace $ns for $host" >&2; exit 255; }

# "$*": the launcher's words joined as ssh joins them, for the shell to parse.
exec ip netns exec "$ns" unshare --uts -- sh -c '
  hostname "$1" || exit 255
  exec env -i PATH="$PATH" HOME="${HOME:-/root}" USER="${USER:-root}" SHELL=/bin/sh \
    TMPDIR="${TMPDIR:-/tmp}" sh -c "$2"' netns-agent "h$index" "$*"

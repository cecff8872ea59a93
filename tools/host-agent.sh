#!/usr/bin/env bash
# mpirun's remote agent (plm_rsh_agent) for the hosts of tools/test-hosts.sh: where ssh would log
# in to HOST and run the command in a shell, this enters HOST's network namespace, gives it a
# hostname of its own (a UTS namespace) and runs the command in a shell there.
# Usage (by mpirun): host-agent.sh HOST COMMAND...; HOST is 10.53.0.N, the namespace
# ${NN_HOSTS_PREFIX}N, the hostname hostN.
set -eu
host=$1
shift
number=${host##*.}
case "$number" in
  '' | *[!0-9]*) echo "host-agent.sh: expected a host 10.53.0.N, got '$host'" >&2; exit 255 ;;
esac
exec ip netns exec "${NN_HOSTS_PREFIX:?host-agent.sh: NN_HOSTS_PREFIX is not set}$number" \
  unshare --uts sh -c "hostname host$number && exec sh -c \"\$0\"" "$*"

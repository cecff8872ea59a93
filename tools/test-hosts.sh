#!/usr/bin/env bash
# The LeNet example on several hosts of one machine: each host a network namespace with a hostname
# of its own, all joined by a bridge (a switch namespace, one virtual Ethernet pair a host), Open MPI
# reaching them through tools/host-agent.sh as through ssh, its TCP restricted to that network.
# Checks, each one test case:
#   4 ranks on 2 hosts and 6 on 3 report the losses and accuracies of one process at the same global
#   batch, rank 0 alone writing the metrics and the checkpoint;
#   the 4-rank checkpoint after epoch 1 resumes on 4 ranks bit for bit (the checkpoint and metrics
#   of the uninterrupted run), and on 1 and 6 ranks to the same losses;
#   the gradients sent as bfloat16 (--reduce-dtype bf16): at most 0.6 of float32's bytes on a
#   host's link, losses near float32's;
#   faults, with the process group's timeout at 5 s (NN_PROCESS_GROUP_TIMEOUT): a host's link taken
#   down mid-run, and a host's ranks killed: the job ends within seconds naming the rank (and, for
#   the link, the collective), its last checkpoint resumes; a link with 50 ms delay and 2% loss
#   (tc netem, or tools/lossy-link.pl where the kernel has no netem) keeps training, its images/s
#   printed.
# Needs root (network namespaces), ip, unshare, perl and mpirun: where one is missing, every case
# counts as skipped, saying why; the lossy link's case where the kernel has neither netem nor TAP
# devices. Under the sanitizers (ASAN_OPTIONS or TSAN_OPTIONS set) every case is skipped too: these
# runs check the launch and the network, which the plain build checks; the example's ranks under
# the sanitizers run in tests/distributed/distributed_example_test.cpp.
# Usage: tools/test-hosts.sh [LENET] (bazel-bin/examples/lenet); prints the "nn-test-cases:" line
# of tools/test-summary.sh. Nothing outlives it: every run has a time limit, and the namespaces
# and the processes in them are removed at exit.
set -uo pipefail
lenet=$(realpath "${1:-bazel-bin/examples/lenet}")
agent=$(realpath "$(dirname "$0")/host-agent.sh")
cases=8
passed=0 failed=0 skipped=0

skip_all() {
  echo "test-hosts: $1: every case skipped"
  echo "nn-test-cases: 0 passed, 0 failed, $cases skipped"
  exit 0
}
[ -n "${ASAN_OPTIONS:-}${TSAN_OPTIONS:-}" ] && skip_all "under a sanitizer"
[ "$(id -u)" -eq 0 ] || skip_all "not root (network namespaces need it)"
for tool in ip unshare mpirun timeout perl; do
  command -v "$tool" >/dev/null || skip_all "no $tool on PATH"
done
[ -x "$lenet" ] || skip_all "no LeNet example at $lenet"

prefix="nnh$$-"
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/test-hosts.XXXXXX")
cleanup() {
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^$prefix"); do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
    ip netns del "$ns" 2>/dev/null
  done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The switch, then hosts 1 .. 3 at 10.53.0.N/24, each behind port N of the bridge.
if ! { ip netns add "${prefix}sw" && ip -n "${prefix}sw" link add br0 type bridge &&
  ip -n "${prefix}sw" link set br0 up && ip -n "${prefix}sw" link set lo up; } 2>"$work/err"; then
  skip_all "network namespaces cannot be made here ($(tr '\n' ' ' <"$work/err"))"
fi
for n in 1 2 3; do
  ns=$prefix$n
  ip netns add "$ns" &&
    ip -n "${prefix}sw" link add "port$n" type veth peer name eth0 netns "$ns" &&
    ip -n "${prefix}sw" link set "port$n" master br0 up &&
    ip -n "$ns" addr add "10.53.0.$n/24" dev eth0 &&
    ip -n "$ns" link set eth0 up && ip -n "$ns" link set lo up ||
    skip_all "host $n's network could not be made"
  # Open MPI's runtime learns that a host is gone when TCP gives up on it: a message unanswered
  # for 3 retries (about 3 s, Linux's default of 15 takes 15 minutes), an idle connection after
  # 8 s and 2 keepalives of 1 s (below).
  ip netns exec "$ns" sysctl -qw net.ipv4.tcp_retries2=3
done

# Synthetic Fashion-MNIST files: a band of rows whose place is the label, over noise (as the
# tests' writeSyntheticSplit), so that a few epochs learn something.
make_split() { # prefix count seed
  perl -e '
    my ($path, $n, $seed) = @ARGV; srand($seed);
    my (@labels, $pixels);
    for my $i (1 .. $n) {
      my $l = int(rand(10)); push @labels, $l;
      for my $r (0 .. 27) { for my $c (0 .. 27) {
        my $band = ($r >= 2 * $l && $r < 2 * $l + 4) ? 160 : 0;
        $pixels .= chr($band + int(rand(90)));
      } }
    }
    open(my $f, ">", "$path-images-idx3-ubyte") or die; binmode $f;
    print $f pack("N4", 2051, $n, 28, 28), $pixels; close $f;
    open($f, ">", "$path-labels-idx1-ubyte") or die; binmode $f;
    print $f pack("N2", 2049, $n), pack("C*", @labels); close $f;' "$work/data/$1" "$2" "$3"
}
mkdir -p "$work/data"
make_split train 768 1 && make_split t10k 200 2 || skip_all "the synthetic data could not be written"

export NN_HOSTS_PREFIX=$prefix OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export TMPDIR=$work HOME=${HOME:-$work}
# One rank's flags; the global batch is 48 images: 48, 24, 12 and 8 a rank for 1, 2, 4 and 6.
train=(--data-dir "$work/data" --seed 3 --threads 1)

# mpirun from host 1 onto HOSTS hosts with 2 ranks each, under a time limit: mpirun RESULT HOSTS
# SECONDS FLAGS... writes RESULT.out and RESULT.err, returns mpirun's status.
mpirun_on() {
  local result=$1 hosts=$2 seconds=$3
  shift 3
  local ranks=$((2 * hosts))
  : >"$work/hostfile"
  for n in $(seq 1 "$hosts"); do echo "10.53.0.$n slots=2" >>"$work/hostfile"; done
  timeout -k 5 "$seconds" ip netns exec "${prefix}1" unshare --uts sh -c 'hostname host1 && exec "$@"' sh \
    mpirun -np "$ranks" --hostfile "$work/hostfile" --bind-to none --tag-output --display-map \
    --mca plm_rsh_agent "$agent" --mca plm_rsh_no_tree_spawn 1 --mca pml ob1 --mca btl tcp,self \
    --mca btl_tcp_if_include 10.53.0.0/24 --mca oob_tcp_if_include 10.53.0.0/24 \
    --mca oob_tcp_keepalive_time 8 --mca oob_tcp_keepalive_intvl 1 --mca oob_tcp_keepalive_probes 2 \
    "$lenet" "${train[@]}" --batch-size $((48 / ranks)) "$@" >"$result.out" 2>"$result.err"
}
# One process: single RESULT FLAGS...
single() {
  local result=$1
  shift
  timeout -k 5 120 "$lenet" "${train[@]}" --batch-size 48 "$@" >"$result.out" 2>"$result.err"
}
# The "train_loss" and "test_accuracy" of each line of metrics file $1.
scores() { sed -E 's/.*"train_loss": ([^,]*), "test_accuracy": ([^,]*),.*/\1 \2/' "$1"; }
# Whether metrics $1 and $2 agree: losses within $3 relative (2e-5), accuracies within 0.01.
close_scores() {
  paste -d ' ' <(scores "$1") <(scores "$2") | awk -v tolerance="${3:-2e-5}" '
    NF != 4 { bad = 1 }
    { d = $1 - $3; if (d < 0) d = -d; a = $2 - $4; if (a < 0) a = -a;
      if (d > tolerance * ($1 < 0 ? -$1 : $1) || a > 0.01) bad = 1 }
    END { exit bad || NR == 0 }'
}
pass() { echo "test-hosts: PASSED $1"; passed=$((passed + 1)); }
fail() {
  echo "test-hosts: FAILED $1" >&2
  for f in "${@:2}"; do [ -f "$f" ] && { echo "--- $f" >&2; tail -n 30 "$f" >&2; }; done
  failed=$((failed + 1))
}
skip() { echo "test-hosts: SKIPPED $1"; skipped=$((skipped + 1)); }

# 1 process, then 4 ranks on 2 hosts for 2 epochs and 6 on 3 for one, compared on the first
# epoch. A rank's GEMMs on 12 rows sum in another order than one process's on 48 (and each of 6
# ranks weighs its gradients by a sixth, rounded): the difference grows with each step of this
# small, fast-learning run (at the AVX2 level 1.2e-4 of the loss after 16 steps, 5e-3 after 32).
start=$(date +%s)
single "$work/one" --epochs 2 --metrics "$work/one.jsonl"
for hosts in 2 3; do
  r=$work/ranks$hosts epochs=$((4 - hosts))
  if mpirun_on "$r" "$hosts" 120 --epochs "$epochs" --metrics "$r.jsonl" --save "$r.safetensors" &&
    [ "$(wc -l <"$r.jsonl")" -eq "$epochs" ] &&
    [ "$(grep -c "stdout>:epoch $epochs  train loss" "$r.out")" -eq 1 ] &&
    grep -q "Data for node: 10.53.0.$hosts" "$r.out" &&
    close_scores <(head -n 1 "$work/one.jsonl") <(head -n 1 "$r.jsonl") 5e-4; then
    pass "$((2 * hosts)) ranks on $hosts hosts train as one process on the global batch; rank 0 alone writes"
  else
    fail "$((2 * hosts)) ranks on $hosts hosts against one process" "$r.out" "$r.err" "$work/one.jsonl" "$r.jsonl"
  fi
done

# The 4-rank checkpoint after epoch 1 resumes: on 4 ranks bit for bit, on 1 and 6 to the same losses.
r=$work/first
if mpirun_on "$r" 2 120 --epochs 1 --save "$r.safetensors" --metrics "$r.jsonl"; then
  mpirun_on "$work/again4" 2 120 --epochs 2 --resume "$r.safetensors" --save "$work/again4.safetensors" \
    --metrics "$work/again4.jsonl"
  if cmp -s "$work/again4.safetensors" "$work/ranks2.safetensors" &&
    [ "$(scores "$work/again4.jsonl")" = "$(scores "$work/ranks2.jsonl" | tail -n 1)" ]; then
    pass "a 4-rank checkpoint resumes on 4 ranks bit for bit"
  else
    fail "a 4-rank checkpoint resumed on 4 ranks" "$work/again4.out" "$work/again4.err"
  fi
  single "$work/again1" --epochs 2 --resume "$r.safetensors" --metrics "$work/again1.jsonl"
  mpirun_on "$work/again6" 3 120 --epochs 2 --resume "$r.safetensors" --metrics "$work/again6.jsonl"
  tail -n 1 "$work/ranks2.jsonl" >"$work/second.jsonl"
  if close_scores "$work/again1.jsonl" "$work/second.jsonl" && close_scores "$work/again6.jsonl" "$work/second.jsonl"; then
    pass "a 4-rank checkpoint resumes on 1 rank and on 6"
  else
    fail "a 4-rank checkpoint resumed on 1 rank and on 6" "$work/again1.err" "$work/again6.out" "$work/again6.err"
  fi
else
  fail "the 4-rank run of one epoch" "$r.out" "$r.err"
  fail "a 4-rank checkpoint resumed on 1 rank and on 6"
fi
# The gradients sent as bfloat16 (--reduce-dtype bf16): host 2's bytes out for one epoch of 4
# ranks, against float32's. The gradients' sums are nearly all of them: at most 0.6 as many, and
# losses near float32's.
sent() { ip netns exec "${prefix}2" cat /sys/class/net/eth0/statistics/tx_bytes; }
before=$(sent)
mpirun_on "$work/fp32" 2 120 --epochs 1 --reduce-dtype fp32 --metrics "$work/fp32.jsonl"
middle=$(sent)
mpirun_on "$work/bf16" 2 120 --epochs 1 --reduce-dtype bf16 --metrics "$work/bf16.jsonl"
after=$(sent)
echo "test-hosts: host 2 sent $((middle - before)) bytes with float32 gradients, $((after - middle)) with bfloat16"
if [ -s "$work/fp32.jsonl" ] && [ -s "$work/bf16.jsonl" ] && [ $((10 * (after - middle))) -le $((6 * (middle - before))) ] &&
  close_scores "$work/fp32.jsonl" "$work/bf16.jsonl" 2e-2; then
  pass "gradients sent as bfloat16 take at most 0.6 of float32's bytes and train alike"
else
  fail "gradients sent as bfloat16" "$work/bf16.out" "$work/bf16.err" "$work/fp32.jsonl" "$work/bf16.jsonl"
fi
echo "test-hosts: the runs without faults took $(($(date +%s) - start)) s"

# Ends what a fault left in the hosts (Open MPI's daemon on a host it lost).
end_processes() {
  for n in 1 2 3; do
    for pid in $(ip netns pids "$prefix$n"); do kill -9 "$pid" 2>/dev/null; done
  done
}

# A fault once epoch 1's checkpoint is written: fault RESULT ACTION; the job must end non-zero
# within 30 s (the group's timeout, 5 s, and TCP's giving up on a lost host), and the checkpoint
# then resume on one process.
fault() {
  local r=$1 action=$2
  rm -f "$r.jsonl"
  NN_PROCESS_GROUP_TIMEOUT=5 mpirun_on "$r" 2 90 --epochs 1000 --save "$r.safetensors" --metrics "$r.jsonl" &
  local job=$!
  for _ in $(seq 1 600); do
    [ -s "$r.jsonl" ] && break
    kill -0 "$job" 2>/dev/null || break
    sleep 0.1
  done
  local began
  began=$(date +%s)
  eval "$action"
  wait "$job"
  local status=$? took=$(($(date +%s) - began))
  echo "test-hosts: fault '$action': exit $status after $took s"
  [ "$status" -ne 0 ] && [ "$took" -lt 30 ] &&
    single "$r.resumed" --epochs 2 --resume "$r.safetensors" && grep -q '^epoch 2  train loss' "$r.resumed.out"
}
# The ranks on host 2, as SIGKILL would end them (the machine lost).
kill_ranks_of_host2() {
  for pid in $(ip netns pids "${prefix}2"); do
    [ "$(readlink "/proc/$pid/exe")" = "$lenet" ] && kill -9 "$pid"
  done
}
r=$work/killed
if fault "$r" kill_ranks_of_host2 &&
  grep -Eq 'rank [23] with PID [0-9]+ on node 10\.53\.0\.2 exited on signal 9' "$r.out" "$r.err"; then
  pass "a host's ranks killed mid-run end the job, naming the rank"
  grep -Eh 'exited on signal 9' "$r.out" "$r.err" | head -n 1
else
  fail "a host's ranks killed mid-run" "$r.out" "$r.err"
fi
end_processes

r=$work/linkdown
if fault "$r" 'ip -n "${prefix}sw" link set port2 down' &&
  grep -Eq 'rank [0-9] of 4: allReduceSum.* did not complete within 5 s' "$r.out" "$r.err"; then
  pass "a host's link down mid-run ends the job within the timeout, naming the rank and the collective"
  grep -Eh 'did not complete within' "$r.out" "$r.err" | head -n 1
else
  fail "a host's link down mid-run" "$r.out" "$r.err"
fi
ip -n "${prefix}sw" link set port2 up
end_processes

# 50 ms each way and 2% of the packets lost on host 2's link: slower, and still training. tc's
# netem on both ends of the link where the kernel has it, else tools/lossy-link.pl: host 2's
# address moved to a TAP device whose frames it relays to one on the bridge. Two steps of the
# global batch (--limit 96) against one process's: TCP over such a link moves a few hundred KB/s,
# and an epoch of this run puts 41 MB of gradients on it.
lossy=""
if ip netns exec "${prefix}2" tc qdisc add dev eth0 root netem delay 50ms loss 2% 2>"$work/err" &&
  ip netns exec "${prefix}sw" tc qdisc add dev port2 root netem delay 50ms loss 2% 2>>"$work/err"; then
  lossy="tc netem"
elif [ -c /dev/net/tun ] && ip -n "${prefix}2" addr flush dev eth0 && ip -n "${prefix}2" link set eth0 down &&
  ip -n "${prefix}2" tuntap add dev lossy mode tap && ip -n "${prefix}2" addr add 10.53.0.2/24 dev lossy &&
  ip -n "${prefix}2" link set lossy up && ip -n "${prefix}sw" tuntap add dev lossy2 mode tap &&
  ip -n "${prefix}sw" link set lossy2 master br0 up 2>>"$work/err"; then
  perl "$(dirname "$0")/lossy-link.pl" "${prefix}2" lossy "${prefix}sw" lossy2 50 2 2>>"$work/err" &
  relay=$!
  lossy="tools/lossy-link.pl, the kernel having no tc netem"
fi
if [ -n "$lossy" ]; then
  r=$work/netem
  if single "$work/short" --epochs 1 --limit 96 --metrics "$work/short.jsonl" &&
    mpirun_on "$r" 2 180 --epochs 1 --limit 96 --metrics "$r.jsonl" &&
    close_scores "$work/short.jsonl" "$r.jsonl" 5e-4; then
    speed=$(sed -E 's/.*"images_per_second": ([0-9.]+).*/\1/' "$r.jsonl" | awk '{printf "%.1f", $1}')
    pass "a link of 50 ms delay and 2% loss trains ($lossy; $speed images/s)"
  else
    fail "a link of 50 ms delay and 2% loss ($lossy)" "$r.out" "$r.err" "$work/err" "$work/short.jsonl" "$r.jsonl"
  fi
  [ -n "${relay:-}" ] && kill "$relay" 2>/dev/null
else
  skip "a link of 50 ms delay and 2% loss: neither tc netem nor a TAP device here ($(tr '\n' ' ' <"$work/err"))"
fi
echo "test-hosts: $(($(date +%s) - start)) s in all"
echo "nn-test-cases: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]

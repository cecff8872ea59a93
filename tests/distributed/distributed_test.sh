#!/usr/bin/env bash
# Training in several processes: runs distributed_ranks under mpirun in 2 and 3 processes on the
# loopback interface (each of its test cases counts once per process count, passed where every
# rank passed it), and distributed_faults in 2 processes with each fault (one test case each: the
# job must end, non-zero, within the group's timeout, naming what happened). Where MPI or mpirun
# is missing, every case counts as skipped, or as failed where NN_REQUIRE_MPI=1 says that MPI
# must be there (.ci/run, which installs Open MPI). Prints the "nn-test-cases:" line of
# tools/test-summary.sh.
set -uo pipefail
ranks=tests/distributed/distributed_ranks
faults=tests/distributed/distributed_faults
cases=$("$ranks" --list-test-names-only 2>/dev/null | grep -c '^[^ ]')
total=$((2 * cases + 3))
if ! grep -q '^with MPI' external/mpi/summary.txt || ! command -v mpirun >/dev/null; then
  echo "distributed_test: $(cat external/mpi/summary.txt 2>/dev/null)$(command -v mpirun >/dev/null || echo ', no mpirun')"
  if [ "${NN_REQUIRE_MPI:-0}" = 1 ]; then
    echo "distributed_test: NN_REQUIRE_MPI=1 asks for MPI: every distributed case fails" >&2
    echo "nn-test-cases: 0 passed, $total failed, 0 skipped"
    exit 1
  fi
  echo "nn-test-cases: 0 passed, 0 failed, $total skipped"
  exit 0
fi

# Under AddressSanitizer (--config=asan), Open MPI's own allocations, some in plugins it loads,
# outlive the program: leaks are looked for by every other test.
[ -n "${ASAN_OPTIONS:-}" ] && export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
# Under ThreadSanitizer (--config=tsan), what Open MPI does inside itself is not ours to report.
[ -n "${TSAN_OPTIONS:-}" ] && export TSAN_OPTIONS="$TSAN_OPTIONS:suppressions=$PWD/tests/distributed/distributed_tsan.supp"
export TMPDIR=${TEST_TMPDIR:-/tmp}
export HOME=${HOME:-$TMPDIR}
launch=(mpirun --oversubscribe --mca btl self,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo)
[ "$(id -u)" -eq 0 ] && launch+=(--allow-run-as-root)
passed=0 failed=0 skipped=0

for n in 2 3; do
  output=$(timeout 300 "${launch[@]}" -np "$n" "$ranks" 2>&1)
  status=$?
  echo "$output"
  lines=$(grep '^nn-test-cases:' <<<"$output" || true)
  count=$(grep -c . <<<"$lines")
  if [ "$status" -ne 0 ] || [ "$count" -ne "$n" ]; then
    echo "distributed_test: $n processes: mpirun exited with $status, $count of $n ranks counted their cases" >&2
    failed=$((failed + cases))
    continue
  fi
  # A case passed where it passed on every rank; the [gpu] cases where no CUDA device can be
  # used are skipped on every rank.
  least=$(awk '{print $2}' <<<"$lines" | sort -n | head -n 1)
  skip=$(awk '{print $6}' <<<"$lines" | sort -n | tail -n 1)
  passed=$((passed + least)) skipped=$((skipped + skip)) failed=$((failed + cases - least - skip))
done

# What a rank writes is tagged with its rank ("[1,1]<stderr>:", again before each piece of a line
# that reaches mpirun in pieces).
for fault in throw exit skip-backward; do
  start=$(date +%s)
  output=$(timeout 120 "${launch[@]}" --tag-output -np 2 "$faults" "$fault" 2>&1)
  status=$?
  seconds=$(($(date +%s) - start))
  case "$fault" in
    # The library's error, printed by rank 1 as it ends (mpirun's own "process rank 1 ... exited
    # on signal 6" says only that the rank ended), after the containers' positions "(1) (1) ".
    throw) expected='\[[0-9]+,1\]<stderr>:.*nn\.Linear\(4 -> 3\): expected input of size \[4\] or \[\.\.\., 4\], got \[2, 5\]' ;;
    *) expected="did not complete within 10 s" ;;
  esac
  if [ "$status" -ne 0 ] && [ "$status" -ne 124 ] && [ "$seconds" -lt 60 ] && grep -Eq "$expected" <<<"$output"; then
    echo "distributed_test: fault '$fault' ended the job in $seconds s (exit $status), as expected"
    passed=$((passed + 1))
  else
    echo "$output"
    echo "distributed_test: fault '$fault': exit $status after $seconds s, expected a failure naming '$expected'" >&2
    failed=$((failed + 1))
  fi
done
echo "nn-test-cases: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]

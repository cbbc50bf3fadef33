#!/usr/bin/env bash
# `lathe lower` and `lathe demo` run as built: the printed program, a demo's
# trace replayed, the lowered program, the default schedule, and the refusals
# of a missing or bad trace and of options that do not go together.
# Usage: lower_commands_test.sh LATHE_BIN CASE
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/expect.sh"
lathe=$1
case_name=$2
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cd "$d"

case $case_name in
lower_prints_program)
  "$lathe" lower matmul:M=8,N=6,K=4 > out.txt 2>&1 || fail "lower: $(cat out.txt)"
  grep -qF 'block C(vi = spatial(8, i), vj = spatial(6, j), vk = reduce(4, k))' out.txt \
    || fail "program: $(cat out.txt)"
  ;;
lower_custom_expr)
  "$lathe" lower --expr "C[i,j] += A[i,k] * B[k,j]" --dims i=4,j=4,k=4 > out.txt 2>&1 \
    || fail "lower: $(cat out.txt)"
  grep -qF 'reduce(4, k)' out.txt || fail "program: $(cat out.txt)"
  ;;
# The demo exits 0 only when the scheduled program matches the reference;
# its trace replays through `lathe lower` to the same structural hash.
demo_checks_and_replays)
  "$lathe" demo matmul:M=24,N=20,K=12 --save-trace t.json > demo.txt
  grep -q 'matches the reference' demo.txt || fail "demo: $(cat demo.txt)"
  grep -q 'compute_at\|reverse_compute_at' demo.txt || fail "demo trace: $(cat demo.txt)"
  "$lathe" lower matmul:M=24,N=20,K=12 --trace t.json > lower.txt
  grep -q 'structural hash' lower.txt || fail "lower: $(cat lower.txt)"
  ;;
demo_default_workload)
  "$lathe" demo > out.txt 2>&1 || fail "demo: $(cat out.txt)"
  grep -qF '== check: Y matches the reference' out.txt || fail "demo: $(cat out.txt)"
  ;;
lower_missing_trace_fails)
  expect_failure_line '^lathe: error: trace file /nonexistent.json' \
    "$lathe" lower matmul:M=8,N=8,K=8 --trace /nonexistent.json
  ;;
lower_bad_trace_fails)
  echo '{"format_version": 7}' > t.json
  if "$lathe" lower matmul:M=8,N=8,K=8 --trace t.json > out.txt 2>&1; then fail "succeeded"; fi
  grep -q 'format version 7' out.txt || fail "bad trace: $(cat out.txt)"
  ;;
# Traces beyond the limits of proto/trace_limits.h are refused in one line,
# before replay: a split into 100,000 factors (a stack overflow once), 20,000
# chained splits (minutes once), /dev/zero and a FIFO as the trace file.
lower_hostile_traces_refused)
  head='{"format_version": 1, "instructions": [{"kind": "get_block", "attrs": [{"name": "name", "string_value": "C"}], "outputs": [0]}, {"kind": "get_loops", "inputs": [{"rv": 0}], "outputs": [1, 2, 3]}'
  {
    printf '%s, {"kind": "split", "inputs": [{"rv": 1}' "$head"
    for _ in $(seq 1 100000); do printf ', {"int_value": "1"}'; done
    printf ']}]}\n'
  } > factors.json
  expect_failure_line "number of factors is 100000, more than kMaxSplitFactors (16)" \
    timeout 30 "$lathe" lower matmul:M=64,N=64,K=64 --trace factors.json
  {
    printf '%s' "$head"
    for i in $(seq 0 19999); do
      printf ', {"kind": "split", "inputs": [{"rv": %d}, {"none": true}, {"int_value": "1"}], "outputs": [%d, %d]}' \
        $((i == 0 ? 3 : 2 * i + 3)) $((2 * i + 4)) $((2 * i + 5))
    done
    printf ']}\n'
  } > chained.json
  expect_failure_line "more than kMaxTraceInstructions (4096)" \
    timeout 30 "$lathe" lower matmul:M=64,N=64,K=64 --trace chained.json
  expect_failure_line "trace file /dev/zero has more than 8388608 bytes (kMaxTraceBytes)" \
    timeout 30 "$lathe" lower matmul:M=64,N=64,K=64 --trace /dev/zero
  mkfifo fifo.json
  expect_failure_line "trace file fifo.json: trace: not a valid trace JSON" \
    timeout 30 "$lathe" lower matmul:M=64,N=64,K=64 --trace fifo.json
  ;;
# A chain of stages that each read the one before twice: inlining stops at
# kMaxInlinedExprNodes, so the default schedule stays small and quick.
lower_squaring_chain_default)
  expr=""
  for k in $(seq 1 20); do expr="$expr T$k[i] = T$((k - 1))[i] * T$((k - 1))[i];"; done
  timeout 30 "$lathe" lower --expr "$expr" --dims i=64 --default > out.txt \
    || fail "lower --default on the chain: $?"
  [ "$(wc -c < out.txt)" -lt 1000000 ] || fail "the program printed is $(wc -c < out.txt) bytes"
  ;;
# --lowered prints the flat loop program: no blocks left, the reduction's
# init guarded by its reduce loop; with a trace, the local accumulator of the
# demo's schedule is allocated inside its tile.
lower_lowered)
  "$lathe" lower matmul:M=8,N=6,K=4 --lowered > lowered.txt
  grep -q 'if k == 0:' lowered.txt || fail "no init guard: $(cat lowered.txt)"
  grep -q 'block C(' lowered.txt && fail "a block is left: $(cat lowered.txt)"
  "$lathe" demo matmul:M=24,N=20,K=12 --save-trace t.json > /dev/null
  "$lathe" lower matmul:M=24,N=20,K=12 --trace t.json --lowered > out.txt
  grep -q 'structural hash' out.txt || fail "lowered trace: $(cat out.txt)"
  ;;
lower_print_after_each)
  "$lathe" lower matmul:M=8,N=6,K=4 --print-after-each > out.txt 2>&1 || fail "lower: $(cat out.txt)"
  passes=$(grep -o '^# after [a-z_]*' out.txt | tr '\n' ,)
  [ "$passes" = "# after lower_blocks,# after compact_buffers,# after remove_no_ops,# after simplify," ] \
    || fail "passes: $passes"
  ;;
# --default replays the default schedule: parallel outer loop, 16 vector
# lanes inside, an 8 x 16 local accumulator after lowering; --vector-width
# changes the lanes; a width of 0 is refused, and so are a --vector-width
# without --default and --default beside --trace.
lower_default)
  "$lathe" lower matmul:M=64,N=64,K=64 --default --lowered > out.txt
  grep -qF 'alloc C_local: float32[8, 16] local' out.txt || fail "accumulator: $(cat out.txt)"
  grep -q 'for i_0 in range(8) parallel:' out.txt || fail "parallel: $(cat out.txt)"
  grep -q 'for j_1 in range(16) vectorized:' out.txt || fail "vectorized: $(cat out.txt)"
  "$lathe" lower matmul:M=64,N=64,K=64 --default --vector-width 8 > out8.txt
  grep -q 'for j_1 in range(8) vectorized:' out8.txt || fail "width 8: $(cat out8.txt)"
  "$lathe" lower matmul:M=64,N=64,K=64 --default --show-trace > trace.txt
  grep -q 'decompose_reduction' trace.txt || fail "trace: $(cat trace.txt)"
  if "$lathe" lower matmul:M=8,N=8,K=8 --default --vector-width 0 > /dev/null 2>&1; then
    fail "width 0 accepted"
  fi
  if "$lathe" lower matmul:M=8,N=8,K=8 --vector-width 8 > out.txt 2>&1; then
    fail "--vector-width without --default accepted"
  fi
  grep -q 'vector-width requires --default' out.txt || fail "vector width: $(cat out.txt)"
  "$lathe" demo matmul:M=8,N=8,K=8 --save-trace t.json > /dev/null
  if "$lathe" lower matmul:M=8,N=8,K=8 --trace t.json --default > out.txt 2>&1; then
    fail "--default beside --trace accepted"
  fi
  grep -q 'trace excludes --default' out.txt || fail "default and trace: $(cat out.txt)"
  ;;
*)
  fail "unknown case $case_name"
  ;;
esac
echo ok

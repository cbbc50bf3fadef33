#!/usr/bin/env bash
# `lathe tune` end to end: a tuning run through the real
# local worker, continued by a second run, and stopped by SIGINT with
# everything measured committed; the refusals; small kernel times; a
# workload with a constant (layout-free) weight.
# Usage: tune_commands_test.sh LATHE_BIN CASE
set -euo pipefail
lathe=$1
case_name=$2
d=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$d"' EXIT
cd "$d"

fail() { echo "FAIL: $*" >&2; exit 1; }
W=matmul:M=32,N=48,K=16
# A small search: the test is about the command, not the search.
tune() {
  "$lathe" tune "$W" --threads 1 --min-time 0.005 --batch 4 --seed 3 --population 16 \
    --generations 1 "$@"
}
# The first number named $1 in the JSON file $2.
json_number() { grep -m1 -oE "\"$1\": [0-9.]+" "$2" | sed -E 's/.*: //'; }

case $case_name in
runs_and_continues)
  tune --trials 8 --json > first.json
  grep -q '"trials": 8,' first.json || fail "first run: $(cat first.json)"
  # The model's accuracy on each batch it was judged on (two batches of 4;
  # the default schedule's record may have trained it before the first).
  grep -qE '"batch_accuracy": \[[01]\.[0-9]{4}(, [01]\.[0-9]{4})?\],' first.json ||
    fail "batch_accuracy: $(cat first.json)"
  # The job's report, beside the database (lathe report's own tests are in
  # tests/report/).
  grep -q '"report": "lathe.report.html"' first.json || fail "no report: $(cat first.json)"
  grep -q 'data-points="8"' lathe.report.html || fail "the report does not draw 8 trials"
  # The default schedule is measured once, for comparison, and recorded
  # (beside the 8 trials; near-ties re-measured at the end, if the timings
  # made any, are records too, and not counted here; so are the batch
  # lines after the records).
  "$lathe" db export -o first.jsonl
  [ "$(grep '^{"workload_key"' first.jsonl | grep -cv '(re-measure)')" = 9 ] ||
    fail "records after the first run: $(grep -c . first.jsonl) lines"
  "$lathe" db best "$W" --target "host -num-threads=1" > best.txt
  grep -q '^replay    ok' best.txt || fail "best: $(cat best.txt)"
  # A second run with the same seed continues: nothing measured twice.
  tune --trials 8 --json > second.json
  grep -q '"trials": 8,' second.json || fail "second run: $(cat second.json)"
  "$lathe" db export -o all.jsonl
  # Trials, not the re-measurements of near-ties at the end of each run
  # (nor the batch lines).
  grep '^{"workload_key"' all.jsonl | grep -v '(re-measure)' > trials.jsonl
  records=$(wc -l < trials.jsonl)
  programs=$(grep -o '"structural_hash":"[0-9a-f]*"' trials.jsonl | sort -u | wc -l)
  [ "$records" = 17 ] || fail "$records records after two runs"
  [ "$programs" = 17 ] || fail "only $programs distinct programs in $records records"
  # Plain progress lines when stderr is not a terminal, and a summary.
  tune --trials 4 > summary.txt 2> progress.txt
  grep -q 'tuned: 4 trials' summary.txt || fail "summary: $(cat summary.txt)"
  grep -q 'default .* GFLOP/s' summary.txt || fail "no default comparison: $(cat summary.txt)"
  grep -q '^\[.* trials' progress.txt || fail "no progress: $(cat progress.txt)"
  # Two workloads that share their first parameter are told apart in the
  # progress line (each was shown as "matmul:K=16").
  "$lathe" tune "$W" matmul:M=16,N=48,K=16 --threads 1 --min-time 0.005 --batch 4 --seed 3 \
    --population 16 --generations 1 --trials 8 --no-default --db two.db > /dev/null 2> two.txt
  grep -q '^\[.*matmul:K=16,M=32 .* | matmul:K=16,M=16 ' two.txt || fail "progress names: $(cat two.txt)"
  "$lathe" db check > /dev/null
  # A budget spent before the first measurement: nothing failed, nothing ran.
  "$lathe" tune "$W" --threads 1 --time-budget 0.001 --no-default --db empty.db > none.txt
  grep -q 'best     none (nothing measured yet)' none.txt || fail "nothing measured: $(cat none.txt)"
  # A time budget alone sets no trial limit (the default 200 is for runs
  # without one): progress counts trials without a total.
  tune --time-budget 2 --db budget.db > /dev/null 2> budget.txt
  grep -q '^\[[0-9]* trials, ' budget.txt || fail "budget progress: $(head -3 budget.txt)"
  if grep -q '/200 trials' budget.txt; then fail "a time budget capped at 200 trials"; fi
  ;;
sigint|sigterm)
  # SIGTERM (timeout, a CI job cancelled) stops as cleanly as Ctrl-C: it
  # used to kill the run and lose the batch being measured.
  signal=INT
  [ "$case_name" = sigterm ] && signal=TERM
  # Not through tune(): $! must be lathe's pid, not a subshell's.
  "$lathe" tune "$W" --threads 1 --min-time 0.005 --batch 4 --seed 3 --population 16 \
    --generations 1 --trials 100000 --no-default > out.txt 2> err.txt &
  pid=$!
  # Wait (bounded) until some batches are committed, then interrupt.
  for _ in $(seq 1 600); do
    "$lathe" db stats --json > stats.json 2>/dev/null || true
    n=$(json_number records stats.json || echo 0)
    [ "${n:-0}" -ge 8 ] && break
    sleep 0.1
  done
  [ "${n:-0}" -ge 8 ] || fail "no records after 60 s"
  # A second run on the database is refused while the first one runs: it
  # would measure the same programs and time its candidates beside them.
  if "$lathe" tune "$W" --threads 1 --trials 4 --no-default > second.txt 2> second_err.txt; then
    fail "a second lathe tune on the database ran: $(cat second.txt)"
  fi
  grep -q "^lathe: error: lathe.db: another lathe tune (pid $pid) runs on this database" \
    second_err.txt || fail "second run: $(cat second_err.txt)"
  kill -"$signal" "$pid"
  wait "$pid" || fail "exit code $? after SIG$signal: $(cat err.txt)"
  pid=""
  grep -q 'stopped after [0-9]* trials' out.txt || fail "output: $(cat out.txt)"
  # Stopped, it still writes its report.
  grep -q '^report: lathe.report.html$' out.txt || fail "no report: $(cat out.txt)"
  [ -s lathe.report.html ] || fail "no report file"
  trials=$(grep -m1 -oE 'stopped after [0-9]+' out.txt)
  trials=${trials##* }
  "$lathe" db stats --json > stats.json
  records=$(json_number records stats.json)
  [ "$records" = "$trials" ] || fail "$trials trials reported, $records records"
  "$lathe" db check > /dev/null || fail "check after SIG$signal"
  "$lathe" db export -o all.jsonl > /dev/null
  grep -q '"job":"tune-' all.jsonl || fail "job"
  ;;
errors)
  out=$("$lathe" tune 2>&1) && fail "no workload accepted"
  out=$("$lathe" tune nosuchop:M=1 2>&1) && fail "bad spec accepted"
  [ "$(wc -l <<<"$out")" -eq 1 ] && grep -q '^lathe: error: .*nosuchop' <<<"$out" \
    || fail "bad spec: $out"
  out=$("$lathe" tune "$W" --trials 0 2>&1) && fail "0 trials accepted"
  grep -q 'at least 1' <<<"$out" || fail "0 trials: $out"
  out=$("$lathe" tune "$W" "$W" --weights 1 2>&1) && fail "bad weights accepted"
  grep -q 'weights has 1 values for 2 workloads' <<<"$out" || fail "weights: $out"
  out=$("$lathe" tune "$W" matmul:K=16,M=32,N=48 2>&1) && fail "a workload twice accepted"
  [ "$(wc -l <<<"$out")" -eq 1 ] && grep -q 'the same workload as matmul:M=32,N=48,K=16' <<<"$out" \
    || fail "twice: $out"
  out=$("$lathe" tune "$W" --min-time -1 2>&1) && fail "negative min time accepted"
  grep -q '^lathe: error: --min-time' <<<"$out" || fail "min time: $out"
  out=$("$lathe" tune "$W" --min-time inf 2>&1) && fail "an infinite min time accepted"
  grep -q '^lathe: error: --min-time.*finite' <<<"$out" || fail "min time inf: $out"
  out=$("$lathe" tune "$W" --time-budget nan 2>&1) && fail "a time budget of nan accepted"
  grep -q -- '--time-budget' <<<"$out" || fail "time budget nan: $out"
  out=$("$lathe" compile "$W" -o k.a --function lathe_parallel_for 2>&1) && fail "a runtime name accepted"
  grep -q 'lathe_parallel_for: not a C identifier' <<<"$out" || fail "runtime name: $out"
  out=$("$lathe" tune "$W" --seed -1 2>&1) && fail "seed -1 accepted"
  grep -q -- '--seed: must be a whole number in \[0, ' <<<"$out" || fail "seed: $out"
  out=$("$lathe" tune "$W" --threads 0 2>&1) && fail "0 threads accepted"
  grep -q -- '--threads: must be a whole number in \[1, 1024\]' <<<"$out" || fail "threads: $out"
  out=$("$lathe" tune "$W" matmul:M=16,N=16,K=16 --weights 1,inf 2>&1) && fail "an infinite weight accepted"
  grep -q -- '--weights: "inf" is not a positive number' <<<"$out" || fail "weights inf: $out"
  out=$("$lathe" tune "$W" --timeout 0 2>&1) && fail "timeout 0 accepted"
  grep -q '^lathe: error: --timeout' <<<"$out" || fail "timeout: $out"
  # A duration that no clock holds is refused, not converted with overflow.
  out=$("$lathe" tune "$W" --timeout 1e300 2>&1) && fail "timeout 1e300 accepted"
  grep -q '^lathe: error: --timeout: must be a finite number of seconds in (0, 604800\] (kMaxDurationSeconds), got 1e+300' <<<"$out" \
    || fail "timeout 1e300: $out"
  out=$("$lathe" tune "$W" --min-time 1e300 2>&1) && fail "min time 1e300 accepted"
  grep -q '^lathe: error: --min-time: .*kMaxDurationSeconds' <<<"$out" || fail "min time 1e300: $out"
  out=$("$lathe" runner --connect 127.0.0.1:1 --token-file /dev/null --timeout 1e300 2>&1) && fail "runner: timeout 1e300 accepted"
  grep -q -- '--timeout: .*kMaxDurationSeconds' <<<"$out" || fail "runner timeout 1e300: $out"
  # More threads than CPUs: timings of the threads' turns, refused.
  out=$("$lathe" tune "$W" --threads 999 2>&1) && fail "999 threads accepted"
  [ "$(wc -l <<<"$out")" -eq 1 ] && grep -q 'runs 999 threads, but this process may use' <<<"$out" \
    || fail "999 threads: $out"
  out=$("$lathe" bench "$W" --job j 2>&1) && fail "bench: --job without --db accepted"
  grep -q -- '--job names the record of --db' <<<"$out" || fail "bench --job: $out"
  out=$("$lathe" bench "$W" --threads 999 2>&1) && fail "bench: 999 threads accepted"
  grep -q 'runs 999 threads' <<<"$out" || fail "bench 999 threads: $out"
  ;;
# Kernel times in the unit that keeps their digits (cli/time_text.h): a 4x4
# matmul's tens of nanoseconds were printed "0.0000 ms" by tune, db and bench.
prints_small_times)
  M4=matmul:M=4,N=4,K=4
  T4="host -num-threads=1"
  "$lathe" tune "$M4" --threads 1 --trials 2 --min-time 0.005 --db t.db > tune.txt 2>/dev/null
  grep -Eq '^  best +[0-9.]+ (ns|us) +[0-9.]+ GFLOP/s' tune.txt || fail "tune best: $(cat tune.txt)"
  grep -Eq '^  default +[0-9.]+ (ns|us) ' tune.txt || fail "tune default: $(cat tune.txt)"
  "$lathe" db list --db t.db > list.txt
  grep -Eq 'best [0-9.]+ (ns|us) = ' list.txt || fail "db list: $(cat list.txt)"
  grep -q '0\.0000 ms' list.txt && fail "db list: $(cat list.txt)"
  "$lathe" db best "$M4" --target "$T4" --db t.db > best.txt
  grep -Eq '^time +median [0-9.]+ (ns|us),' best.txt || fail "db best: $(cat best.txt)"
  "$lathe" bench "$M4" --min-time 0.01 > bench.txt
  grep -Eq '^time +median [0-9.]+ (ns|us)  min [0-9.]+ (ns|us)' bench.txt || fail "bench: $(cat bench.txt)"
  "$lathe" db top "$M4" --target "$T4" --db t.db > top.txt
  grep -Eq 'median (ns|us) ' top.txt || fail "db top: $(cat top.txt)"
  ;;
# A workload whose weight is a constant (`const`): tuned through the worker
# with the pre-pack split off (the check would fail on a wrong packing), its
# records kept apart from those of the same matmul with run-time weights,
# and its best record benched and replayed.
layout_free_weights)
  WC="custom:input A[16,32]; input B[32,64] const; C[i,j] += A[i,k] * B[k,j]|i=16,j=64,k=32"
  WR="custom:input A[16,32]; input B[32,64]; C[i,j] += A[i,k] * B[k,j]|i=16,j=64,k=32"
  T1="host -num-threads=1"
  "$lathe" tune "$WC" --threads 1 --trials 8 --min-time 0.005 --batch 4 --seed 3 \
    --population 16 --generations 1 --db t.db > tune.txt 2>/dev/null
  grep -q 'tuned: 8 trials' tune.txt || fail "tune: $(cat tune.txt)"
  "$lathe" db export --db t.db -o records.jsonl
  grep -q 'lathe.layout_free_pack' records.jsonl || fail "no record packs B ahead"
  grep -q '"status":"MEASURE_WRONG_RESULT"' records.jsonl && fail "wrong results: $(cat records.jsonl)"
  "$lathe" db best "$WC" --target "$T1" --db t.db --trace-out best.json > best.txt
  grep -q '^replay    ok' best.txt || fail "best: $(cat best.txt)"
  "$lathe" bench "$WC" --trace best.json --threads 1 --min-time 0.01 > bench.txt
  grep -q '^check     matches the reference' bench.txt || fail "bench: $(cat bench.txt)"
  # The run-time-weights task has no record: another key.
  "$lathe" db best "$WR" --target "$T1" --db t.db > other.txt 2>&1 && fail "run-time task answered: $(cat other.txt)"
  grep -q 'no measured record of custom:input A\[16,32\]; input B\[32,64\];' other.txt || fail "run-time task: $(cat other.txt)"
  ;;
*)
  fail "unknown case $case_name"
  ;;
esac
echo ok

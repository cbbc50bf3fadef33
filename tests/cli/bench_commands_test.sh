#!/usr/bin/env bash
# `lathe bench` run as built: JIT, reference check, timing, one JSON object;
# a foreign target refused before anything runs; a schedule LLVM's loop
# vectorizer once miscompiled; a tuned trace that packs a constant weight
# ahead, benched as its tuning run measured it.
# Usage: bench_commands_test.sh LATHE_BIN CASE
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/expect.sh"
lathe=$1
case_name=$2
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cd "$d"

case $case_name in
bench_json)
  "$lathe" bench matmul:M=64,N=64,K=64 --json --min-time 0.05 > out.json
  grep -q '"reference_check": "pass"' out.json || fail "check: $(cat out.json)"
  grep -q '"gflops": [0-9]' out.json || fail "gflops: $(cat out.json)"
  grep -q '"flops": 524288' out.json || fail "flops: $(cat out.json)"
  [ "$(wc -l < out.json)" -eq 1 ] || fail "not one line: $(cat out.json)"
  ;;
# A target with a feature this machine lacks is refused before anything runs
# (skipped on a machine with AMX).
bench_refuses_foreign_target)
  grep -q amx_tile /proc/cpuinfo && exit 77
  expect_failure_line 'lacks: .*amx-tile' \
    "$lathe" bench matmul:M=8,N=8,K=8 --target 'llvm -mattr=+amx-tile'
  ;;
# Regression: LLVM 16's loop vectorizer, left to vectorize loops the schedule
# did not mark, miscompiled this max_pool2d schedule (rfactor + unrolled
# update nest). bench exits non-zero when the kernel disagrees with the
# reference.
bench_max_pool_rfactor_regression)
  "$lathe" bench max_pool2d:N=1,C=3,H=8,W=8,R=2,S=2,stride=2 \
    --trace "$here/../compiler/codegen/data/max_pool_rfactor_trace.json" --min-time 0.01
  ;;
# A `const` weight packed at the root by the tuned trace: bench splits the
# prepack off, runs it once before the check and the timing, and says so;
# the default schedule packs nothing ahead. M=1 leaves one vector variable
# (j), whose tilings all pack B.
bench_packs_constant_weights_ahead)
  W="custom:input A[1,32]; input B[32,64] const; C[i,j] += A[i,k] * B[k,j]|i=1,j=64,k=32"
  "$lathe" tune "$W" --threads 1 --trials 4 --min-time 0.005 --batch 4 --seed 3 \
    --population 8 --generations 1 --db t.db > tune.txt 2>/dev/null
  # A measured schedule that packs B ahead (most points of the space do; the
  # fastest of four trials need not, so the test does not take the best).
  "$lathe" db export --db t.db --output records.jsonl > /dev/null
  grep 'lathe.layout_free_pack' records.jsonl > packing.jsonl ||
    fail "no measured schedule packs ahead: $(cat records.jsonl)"
  python3 -c 'import json, sys; json.dump(json.loads(sys.stdin.readline())["trace"], sys.stdout)' \
    < packing.jsonl > best.json || fail "trace of: $(head -n 1 packing.jsonl)"
  "$lathe" bench "$W" --trace best.json --threads 1 --min-time 0.01 --json > packed.json
  grep -q '"reference_check": "pass"' packed.json || fail "check: $(cat packed.json)"
  grep -q '"prepacked_inputs": 1,' packed.json || fail "not packed ahead: $(cat packed.json)"
  "$lathe" bench "$W" --trace best.json --threads 1 --min-time 0.01 > packed.txt
  grep -q '^prepack   1 layout-free input(s) packed once' packed.txt || fail "text: $(cat packed.txt)"
  "$lathe" bench "$W" --threads 1 --min-time 0.01 --json > default.json
  grep -q '"prepacked_inputs": 0,' default.json || fail "default schedule: $(cat default.json)"
  ;;
*)
  fail "unknown case $case_name"
  ;;
esac
echo ok

#!/usr/bin/env bash
# `lathe tune`, `bench` and `runner` with a cuda target on a machine without
# a GPU (CI): each refuses before it measures or stores anything, in one
# line that says why; the CUDA worker does not start. With a GPU the cases
# skip (scripts/gpu-check.sh measures there: tools/runner_check.h).
# Usage: cuda_measure_test.sh LATHE_BIN CASE
set -euo pipefail
lathe=$1
case_name=$2
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cd "$d"
source "$(dirname "$0")/expect.sh"

if command -v nvidia-smi > /dev/null 2>&1 && nvidia-smi -L > /dev/null 2>&1; then
  echo "SKIP: this machine has a GPU"
  exit 77
fi
W=matmul:M=64,N=64,K=64

case $case_name in
refused_without_gpu)
  expect_error 'target "cuda -arch=sm_90 .*" cannot be measured here: no CUDA driver' \
    "$lathe" tune "$W" --target "cuda -arch=sm_90" --trials 4 --db tune.db
  [ ! -e tune.db ] || fail "tune created its database before refusing"
  expect_error 'target "cuda -arch=sm_80 .*" cannot be measured here' \
    "$lathe" bench "$W" --target "cuda -arch=sm_80" --db bench.db
  [ ! -e bench.db ] || fail "bench created its database before refusing"
  # `cuda` alone names this machine's GPU: there is none to name.
  expect_error 'no -arch given and no GPU here' "$lathe" bench "$W" --target cuda
  echo secret > token
  expect_error 'target "cuda -arch=sm_90 .*" cannot be measured here' \
    "$lathe" runner --connect 127.0.0.1:1 --token-file token --target "cuda -arch=sm_90"
  ;;
worker_does_not_start)
  if "$lathe" runner-worker --cuda < /dev/null > out.bin 2> err.txt; then
    fail "the CUDA worker started without a GPU"
  fi
  grep -q '^lathe worker: no CUDA driver' err.txt || fail "worker: $(cat err.txt)"
  [ ! -s out.bin ] || fail "the worker said hello without a device"
  ;;
*)
  fail "unknown case $case_name"
  ;;
esac

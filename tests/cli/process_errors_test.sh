#!/usr/bin/env bash
# Failures of the process rather than of a command's input: output that
# cannot be written (a full disk) fails the command instead of exiting 0 with
# the output lost; running out of memory is one line that says so.
# Usage: process_errors_test.sh LATHE_BIN CASE
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/expect.sh"
lathe=$1
case_name=$2
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cd "$d"

case $case_name in
unwritable_output_fails)
  [ -w /dev/full ] || exit 77
  if "$lathe" workloads > /dev/full 2> err.txt; then fail "succeeded"; fi
  grep -q '^lathe: error: cannot write the output' err.txt || fail "error: $(cat err.txt)"
  ;;
# A 20000x20000 reference evaluation under a 1.5 GB limit (it printed
# "unexpected: std::bad_alloc").
out_of_memory_says_so)
  if (ulimit -v 1500000; exec "$lathe" demo matmul:M=20000,N=20000,K=8 > /dev/null 2> err.txt); then
    fail "succeeded"
  fi
  [ "$(wc -l < err.txt)" = 1 ] || fail "not one line: $(cat err.txt)"
  grep -q 'lathe: error: out of memory' err.txt || fail "error: $(cat err.txt)"
  ;;
*)
  fail "unknown case $case_name"
  ;;
esac
echo ok

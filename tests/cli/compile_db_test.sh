#!/usr/bin/env bash
# `lathe compile --db` end to end: tune a tiny database, compile
# every workload from it into one library, link a C checker, run it against
# plain loops; the fallback warning, --require-tuned, --misses and
# `lathe tune --workloads-file`, the manifest, reproducible bytes and the
# command-line refusals.
# Usage: compile_db_test.sh LATHE_BIN CHECK_C RUNTIME_LIB CASE
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/expect.sh"
lathe=$1
check_c=$2
runtime_lib=$3
case_name=$4
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cd "$d"

have_cc() { command -v cc > /dev/null; }

T="host -num-threads=1"
MM=matmul:M=32,N=48,K=16
DENSE=dense:M=8,N=40,K=32,bias=1,relu=1
DEFS="-DMM_FN=matmul_32x48x16 -DM=32 -DN=48 -DK=16 -DDENSE_FN=dense_8x40x32x1x1 -DDM=8 -DDN=40 -DDK=32"
tune() { "$lathe" tune "$@" --target "$T" --trials 8 --time-budget 60 --min-time 0.01 --batch 8 \
           --db tuned.db > tune.txt 2>&1 || fail "tune: $(cat tune.txt)"; }
# Links the library $1 (linker words, split) with the checker, header $2,
# and runs it.
check_library() {
  # shellcheck disable=SC2086
  cc -std=c99 -O1 -Wall -Werror $DEFS -include "$2" -o check "$check_c" $1 -lpthread -lm
  ./check > check.txt || fail "checker failed on $1: $(cat check.txt)"
  grep -qx ok check.txt || fail "wrong results from $1: $(cat check.txt)"
}

case $case_name in
tuned_library_runs)
  tune "$MM" "$DENSE"
  "$lathe" compile "$MM" "$DENSE" --db tuned.db --target "$T" -o k.a --header k.h \
    --manifest k.json --require-tuned 2> err.txt || fail "compile: $(cat err.txt)"
  [ ! -s err.txt ] || fail "warnings for tuned workloads: $(cat err.txt)"
  [ "$(grep -c '"source": "database"' k.json)" -eq 2 ] || fail "manifest: $(cat k.json)"
  grep -q '"function": "dense_8x40x32x1x1"' k.json || fail "manifest function: $(cat k.json)"
  grep -q '"record": {"id": [0-9]*, "job": "tune-' k.json || fail "manifest record: $(cat k.json)"
  # The manifest's record is the database's best, and its program is the header's.
  best_hash=$("$lathe" db best "$DENSE" --target "$T" --db tuned.db | awk '/^program/ {print $2}')
  [ -n "$best_hash" ] || fail "db best"
  grep -q "\"structural_hash\": \"$best_hash\"}" k.json || fail "not the best record ($best_hash)"
  grep -q "schedule: database record [0-9]*, structural hash $best_hash" k.h || fail "header: $(cat k.h)"
  have_cc || exit 0
  check_library k.a k.h
  # The header of several kernels is valid pedantic C and C++.
  printf '#include "k.h"\nint main(void) { return 0; }\n' > h.c
  cc -std=c99 -Wall -Wextra -Werror -pedantic -fsyntax-only h.c
  if command -v c++ > /dev/null; then
    cp h.c h.cc; c++ -std=c++17 -Wall -Wextra -Werror -pedantic -fsyntax-only h.cc
  fi
  "$lathe" compile "$MM" "$DENSE" --db tuned.db --target "$T" -o k.o --header ko.h
  check_library "k.o $runtime_lib" ko.h
  "$lathe" compile "$MM" "$DENSE" --db tuned.db --target "$T" -o libk.so --header ks.h
  check_library "-L. -lk -Wl,-rpath,$d" ks.h
  ;;
fallback_and_misses)
  tune "$MM"
  # One warning line naming the untuned workload; the tuned one is silent.
  "$lathe" compile "$MM" "$DENSE" --db tuned.db --target "$T" -o k.a --header k.h \
    --manifest k.json 2> err.txt || fail "compile: $(cat err.txt)"
  [ "$(wc -l < err.txt)" -eq 1 ] || fail "not one warning: $(cat err.txt)"
  grep -q "^lathe: warning: $DENSE: not tuned, using the default schedule (no record of dense:" err.txt \
    || fail "warning: $(cat err.txt)"
  grep -q '"source": "database"' k.json && grep -q '"source": "default"' k.json \
    || fail "manifest: $(cat k.json)"
  if have_cc; then check_library k.a k.h; fi
  # --require-tuned fails listing every untuned workload, and writes --misses.
  C3=conv2d_nchw:N=1,C=4,H=8,W=8,K=4,R=3,S=3,pad=1
  expect_error "--require-tuned: 2 of 3 workloads have no usable record .*: $DENSE, $C3 (listed in misses.txt)" \
    "$lathe" compile "$MM" "$DENSE" "$C3" --db tuned.db --target "$T" -o k.a --require-tuned \
    --misses misses.txt
  [ ! -e k.a.tmp ] || fail "partial output"
  [ "$(grep -vc '^#' misses.txt)" -eq 2 ] || fail "misses: $(cat misses.txt)"
  grep -qx 'dense:K=32,M=8,N=40,bias=1,dtype=float32,relu=1' misses.txt || fail "misses: $(cat misses.txt)"
  # CI tunes exactly the misses; then everything is tuned.
  tune --workloads-file misses.txt
  "$lathe" compile "$MM" "$DENSE" "$C3" --db tuned.db --target "$T" -o k.a --require-tuned \
    --misses misses2.txt 2> err.txt || fail "still untuned: $(cat err.txt)"
  [ "$(grep -vc '^#' misses2.txt)" -eq 0 ] || fail "misses2: $(cat misses2.txt)"
  "$lathe" tune --workloads-file misses2.txt --db tuned.db > nothing.txt
  grep -q 'nothing to tune' nothing.txt || fail "empty misses: $(cat nothing.txt)"
  # A script that reads --json gets JSON for it too (it printed the text).
  "$lathe" tune --workloads-file misses2.txt --db tuned.db --json > nothing.json
  grep -qx '{"db": "tuned.db", "trials": 0, "nothing_to_tune": "misses2.txt lists no workload", "tasks": \[\]}' \
    nothing.json || fail "empty misses, --json: $(cat nothing.json)"
  # A record whose trace replays to another program is a miss, never used.
  "$lathe" db export --db tuned.db -o all.jsonl
  sed -E 's/"structural_hash":"[0-9a-f]+"/"structural_hash":"00000000deadbeef"/' all.jsonl > stale.jsonl
  "$lathe" db import --db stale.db stale.jsonl > /dev/null
  expect_error "no usable record" "$lathe" compile "$MM" --db stale.db --target "$T" -o s.a --require-tuned
  "$lathe" compile "$MM" --db stale.db --target "$T" -o s.a --manifest s.json 2> err.txt
  grep -q "not tuned, using the default schedule (record [0-9]* of stale.db .* is not used: .*measured as 00000000deadbeef" err.txt \
    || fail "stale warning: $(cat err.txt)"
  grep -q '"source": "default"' s.json || fail "stale manifest: $(cat s.json)"
  # --compatible lets a record of another thread count answer.
  expect_error "no usable record" "$lathe" compile "$MM" --db tuned.db --target "host -num-threads=2" \
    -o c.a --require-tuned
  "$lathe" compile "$MM" --db tuned.db --target "host -num-threads=2" -o c.a --require-tuned \
    --compatible --manifest c.json
  grep -q '"exact_target": false' c.json || fail "compatible manifest: $(cat c.json)"
  ;;
reproducible)
  tune "$MM" "$DENSE"
  # The same inputs (the manifest names the output files: the same names).
  for i in 1 2; do
    mkdir "out$i"
    for ext in o a so; do
      (cd "out$i" && "$lathe" compile "$MM" "$DENSE" conv2d_nchw:N=1,C=4,H=8,W=8,K=4,R=3,S=3,pad=1 \
        --db ../tuned.db --target "$T" -o "k.$ext" --header "k$ext.h" --manifest "k$ext.json" \
        2> /dev/null)
    done
  done
  for f in k.o k.a ko.h ka.h ko.json ka.json; do cmp "out1/$f" "out2/$f" || fail "$f differs"; done
  # The shared library is reproducible when the system linker is (GNU ld).
  if have_cc; then cmp out1/k.so out2/k.so || fail "k.so differs"; cmp out1/kso.h out2/kso.h; fi
  ;;
refusals)
  expect_error "specs $MM and matmul:K=16,N=48,M=32 are the same workload" \
    "$lathe" compile "$MM" matmul:K=16,N=48,M=32 -o k.a
  expect_error "with several workloads use --prefix" "$lathe" compile "$MM" "$DENSE" -o k.a --function f
  expect_error "need --db" "$lathe" compile "$MM" -o k.a --require-tuned
  expect_error "--trace .* does not go with --db" "$lathe" compile "$MM" --trace t.json --db x.db -o k.a
  expect_error "--prefix 1x_matmul_32x48x16: not a C identifier" "$lathe" compile "$MM" -o k.a --prefix 1x_
  expect_error "missing.db" "$lathe" compile "$MM" --db missing.db -o k.a
  expect_error "matmul:M=4,N=4: matmul: missing parameter K" "$lathe" compile "$MM" matmul:M=4,N=4 -o k.a
  expect_error "--workloads-file nope.txt: cannot be opened" "$lathe" tune --workloads-file nope.txt
  # Read with a limit: /dev/zero is refused after at most the limit's bytes.
  expect_error "--workloads-file /dev/zero has more than .* (kMaxWorkloadsFileBytes)" \
    timeout 30 "$lathe" tune --workloads-file /dev/zero
  # A bad spec in the file is named by file and line.
  printf '# misses\n%s\nmatmul:M=4,N=4\n' "$MM" > bad-misses.txt
  expect_error "--workloads-file bad-misses.txt:3: matmul: missing parameter K" \
    "$lathe" tune --workloads-file bad-misses.txt
  mkdir a-folder
  expect_error "--workloads-file a-folder is a directory" "$lathe" tune --workloads-file a-folder
  # --prefix names every kernel, so two sets link into one program.
  "$lathe" compile "$MM" "$DENSE" -o p.o --header p.h --prefix tuned_
  grep -q 'int tuned_matmul_32x48x16(' p.h && grep -q 'int tuned_dense_8x40x32x1x1(' p.h || fail "prefix: $(cat p.h)"
  ;;
*) fail "unknown case $case_name" ;;
esac

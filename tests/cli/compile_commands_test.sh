#!/usr/bin/env bash
# `lathe compile` run as built: a small matmul with odd extents (vector
# tails) compiled to .o, .a and .so, linked or loaded by C programs that check
# it against plain loops; the header as C and C++; reproducible bytes; the
# refusals. Linking uses the system C compiler; a machine without one skips
# those cases (exit 77).
# Usage: compile_commands_test.sh LATHE_BIN RUNTIME_LIB DLOPEN_CHECK CXX CASE
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/expect.sh"
lathe=$1
runtime_lib=$2
dlopen_check=$3
cxx=$4
case_name=$5
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cd "$d"

MM=matmul:M=13,N=17,K=9
MM_DEFS=(-DFN=matmul_13x17x9 -DM=13 -DN=17 -DK=9)
MM_CHECK=$here/matmul_kernel_check.c
need_cc() { command -v cc > /dev/null || exit 77; }

case $case_name in
object_links_into_c)
  need_cc
  "$lathe" compile "$MM" -o k.o --header k.h
  cc -std=c99 -Wall -Werror "${MM_DEFS[@]}" -include k.h -o prog "$MM_CHECK" k.o "$runtime_lib" -lpthread -lm
  ./prog > prog.txt
  grep -qx ok prog.txt || fail "check: $(cat prog.txt)"
  ;;
static_library_links_alone)
  need_cc
  "$lathe" compile "$MM" -o k.a --header k.h
  cc -std=c99 -Wall -Werror "${MM_DEFS[@]}" -include k.h -o prog "$MM_CHECK" k.a -lpthread -lm
  ./prog > prog.txt
  grep -qx ok prog.txt || fail "check: $(cat prog.txt)"
  ;;
shared_library_dlopen)
  need_cc
  "$lathe" compile "$MM" -o k.so --header k.h --function my_mm
  grep -q 'my_mm_set_num_threads' k.h || fail "header: $(cat k.h)"
  "$dlopen_check" "$d/k.so" my_mm 13 17 9 > check.txt
  grep -qx ok check.txt || fail "check: $(cat check.txt)"
  ;;
# The header is valid C89-with-comments, C99 and C++ (extern "C" guards).
header_compiles_as_c_and_cxx)
  need_cc
  "$lathe" compile conv2d_nchw:N=1,C=3,H=8,W=8,K=4,R=3,S=3,pad=1 -o k.o --header k.h
  grep -qF '/* X: float32[1, 3, 8, 8] (row-major) */ const float* X' k.h || fail "header: $(cat k.h)"
  grep -q 'workload: conv2d_nchw:' k.h || fail "header: $(cat k.h)"
  grep -q 'structural hash' k.h || fail "header: $(cat k.h)"
  printf '#include "k.h"\nint main(void) { return 0; }\n' > a.c
  cc -std=c99 -Wall -Wextra -Werror -pedantic -fsyntax-only a.c
  cp a.c a.cc
  "$cxx" -std=c++17 -Wall -Wextra -Werror -pedantic -fsyntax-only a.cc
  ;;
# Same inputs, same bytes: object, archive (timestamps zeroed) and header.
is_reproducible)
  for i in 1 2; do
    "$lathe" compile "$MM" -o k$i.o --header k$i.h
    "$lathe" compile "$MM" -o k$i.a --header ka$i.h
  done
  cmp k1.o k2.o
  cmp k1.a k2.a
  cmp k1.h k2.h
  cmp ka1.h ka2.h
  ;;
bad_trace_fails)
  echo '{"format_version": 7}' > t.json
  expect_failure_line '^lathe: error: .*format version 7' \
    "$lathe" compile "$MM" --trace t.json -o k.o
  ;;
unknown_extension_fails)
  expect_failure_line 'unknown extension (accepted: .o, .a, .so)' \
    "$lathe" compile "$MM" -o k.dll
  ;;
# Cross-compiling for features this machine lacks is legitimate: a warning.
foreign_target_warns)
  "$lathe" compile "$MM" --target 'llvm -mcpu=sapphirerapids' -o k.o > out.txt 2>&1
  test -s k.o || fail "no object: $(cat out.txt)"
  if ! grep -q amx_tile /proc/cpuinfo; then
    grep -q 'lathe: warning:' out.txt || fail "no warning: $(cat out.txt)"
  fi
  ;;
*)
  fail "unknown case $case_name"
  ;;
esac
echo ok

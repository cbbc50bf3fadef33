#!/usr/bin/env bash
# examples/api_lookup end to end: install Lathe from the build tree into a
# temporary prefix, check what the C++ API's package holds (the shared
# library, its version links, headers that include nothing else of Lathe's,
# only lathe::api symbols exported, no build-tree RUNPATH), tune a tiny
# database with the installed `lathe`, then configure, build and run the
# example against that prefix alone (find_package(Lathe), Lathe::api): the
# dense kernel must come from the database and the unknown matmul from the
# default schedule, both matching the plain loops.
# Usage: api_lookup_example_test.sh BUILD_DIR SOURCE_DIR CMAKE GENERATOR
set -euo pipefail
build_dir=$1
source_dir=$2
cmake=$3
generator=$4
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cd "$d"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$cmake" --install "$build_dir" --prefix "$d/prefix" > install.txt 2>&1 || fail "install: $(cat install.txt)"
p=$d/prefix
lib=$(find "$p" -name 'liblathe_api.so.*.*.*' -type f)
[ -n "$lib" ] || fail "no liblathe_api.so.MAJOR.MINOR.PATCH: $(find "$p" -name 'liblathe_api*')"
libdir=$(dirname "$lib")
[ -L "$libdir/liblathe_api.so" ] || fail "no liblathe_api.so link (for the linker)"
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[[ "$soname" =~ ^liblathe_api\.so\.[0-9]+\.[0-9]+$ ]] || fail "SONAME $soname, want liblathe_api.so.MAJOR.MINOR"
[ -L "$libdir/$soname" ] || fail "no $soname link"
! readelf -d "$lib" | grep -q 'R.*PATH' || fail "installed with a RUNPATH: $(readelf -d "$lib" | grep PATH)"
# Exported: lathe::api's classes and nothing else (Lathe's internals, LLVM
# helpers, protobuf messages stay local).
nm -D --defined-only "$lib" | awk '$2 ~ /^[TWVDBRiu]$/ {print $3}' | c++filt > exported.txt
[ -s exported.txt ] || fail "nothing exported"
! grep -v -E '^lathe::api::(Database|Kernel)::' exported.txt > others.txt ||
  fail "exports beyond lathe::api: $(head -5 others.txt)"
grep -q '^lathe::api::Database::GetKernel' exported.txt || fail "GetKernel not exported"
# The headers: lathe.h and those it includes of Lathe's, all installed.
inc=$p/include/lathe
[ -f "$inc/api/lathe.h" ] || fail "no $inc/api/lathe.h"
for h in "$inc"/api/*.h; do
  for dep in $(sed -n 's/^#include "\(.*\)"$/\1/p' "$h"); do
    case $dep in
      absl/*) ;;
      *) [ -f "$inc/$dep" ] || fail "$(basename "$h") includes $dep, which is not installed" ;;
    esac
  done
done

T="host -num-threads=1"
"$p/bin/lathe" tune dense:M=32,N=64,K=64,bias=1,relu=1 --target "$T" --trials 4 --batch 4 \
  --time-budget 60 --min-time 0.01 --db tuned.db > tune.txt 2>&1 || fail "tune: $(cat tune.txt)"

# A sanitized Lathe (the asan preset) needs its runtime loaded first: the
# example is built sanitized too.
sanitize=()
if readelf -d "$lib" | grep -q 'libasan'; then
  sanitize=(-DCMAKE_CXX_FLAGS=-fsanitize=address,undefined)
fi
"$cmake" -S "$source_dir/examples/api_lookup" -B build -G "$generator" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$p" "${sanitize[@]}" > configure.txt 2>&1 || fail "configure: $(cat configure.txt)"
"$cmake" --build build > build.txt 2>&1 || fail "build: $(cat build.txt)"
# Built against the prefix only: no path of Lathe's source or build tree
# in its compile and link commands but the example's own source.
if [ "$generator" = Ninja ]; then
  "$cmake" --build build -- -t commands api_lookup | sed "s#$source_dir/examples/api_lookup/##g" > commands.txt
  grep -q 'liblathe_api' commands.txt || fail "not linked with liblathe_api: $(cat commands.txt)"
  ! grep -F -e "$source_dir" -e "$build_dir" commands.txt > leaks.txt ||
    fail "the example's build uses Lathe's tree: $(cat leaks.txt)"
fi
build/api_lookup tuned.db "$T" > run.txt 2>&1 || fail "run: $(cat run.txt)"
cat run.txt
grep -q '^dense: matches the reference; tuned: database record [0-9]' run.txt ||
  fail "dense not from the database: $(cat run.txt)"
grep -q '^matmul: matches the reference; default schedule: no record of matmul' run.txt ||
  fail "matmul: $(cat run.txt)"
# Without a database, the default schedule for both.
build/api_lookup "" "$T" > nodb.txt 2>&1 || fail "no database: $(cat nodb.txt)"
[ "$(grep -c 'matches the reference; default schedule: no database' nodb.txt)" = 2 ] ||
  fail "no database: $(cat nodb.txt)"
echo ok

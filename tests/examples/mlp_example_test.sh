#!/usr/bin/env bash
# examples/mlp end to end: install Lathe from the build tree into
# a temporary prefix, tune a tiny database with the installed `lathe`, then
# configure, build and run the example against it as a user project would
# (find_package(Lathe), lathe_add_kernels): both MLPs must match the C++
# reference, every layer must come from the database, and a database whose
# records change must regenerate the kernels on the next build (whatever its
# mtime says), one that is only touched must not.
# Usage: mlp_example_test.sh BUILD_DIR SOURCE_DIR CMAKE GENERATOR
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
lathe=$d/prefix/bin/lathe
[ -x "$lathe" ] || fail "no $lathe"
[ -f "$d/prefix/lib/cmake/Lathe/LatheConfig.cmake" ] || fail "no LatheConfig.cmake"
[ -f "$d/prefix/lib/cmake/Lathe/LatheConfigVersion.cmake" ] || fail "no version file"

T="host -num-threads=1"
L1=dense:M=64,N=256,K=256,bias=1,relu=1
L2=dense:M=64,N=64,K=256,bias=1
"$lathe" tune "$L1" "$L2" --target "$T" --trials 8 --batch 8 --time-budget 60 --min-time 0.01 \
  --db tuned.db > tune.txt 2>&1 || fail "tune: $(cat tune.txt)"

"$cmake" -S "$source_dir/examples/mlp" -B mlp -G "$generator" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$d/prefix" -DLATHE_MLP_DB="$d/tuned.db" -DLATHE_MLP_DEVICE="$T" \
  -DLATHE_MLP_REQUIRE_TUNED=ON > configure.txt 2>&1 || fail "configure: $(cat configure.txt)"
"$cmake" --build mlp > build.txt 2>&1 || fail "build: $(cat build.txt)"
manifest=mlp/lathe/mlp_tuned/mlp_tuned.json
[ "$(grep -c '"source": "database"' "$manifest")" -eq 2 ] || fail "not from the database: $(cat "$manifest")"
[ "$(grep -c '"source": "default"' mlp/lathe/mlp_default/mlp_default.json)" -eq 2 ] || fail "defaults"
mlp/mlp 3 > run.txt || fail "run: $(cat run.txt)"
grep -q '^tuned: matches the reference' run.txt || fail "tuned: $(cat run.txt)"
grep -q '^default: matches the reference' run.txt || fail "default: $(cat run.txt)"
grep -q '^speed-up [0-9.]*x' run.txt || fail "timing: $(cat run.txt)"
cat run.txt

# Nothing changed: nothing is generated again, nor when the database is
# only touched (its records are what counts, not its mtime).
"$cmake" --build mlp > rebuild.txt 2>&1
! grep -q 'Lathe: kernels' rebuild.txt || fail "regenerated without a change: $(cat rebuild.txt)"
touch tuned.db
"$cmake" --build mlp > rebuild.txt 2>&1 || fail "rebuild after touch: $(cat rebuild.txt)"
! grep -q 'Lathe: kernels' rebuild.txt || fail "regenerated for a touch: $(cat rebuild.txt)"
# More tuning changes the database: the tuned kernels are generated again.
"$lathe" tune "$L1" --target "$T" --trials 4 --batch 4 --time-budget 60 --min-time 0.01 \
  --db tuned.db --no-default > tune2.txt 2>&1 || fail "tune again: $(cat tune2.txt)"
"$cmake" --build mlp > rebuild.txt 2>&1 || fail "rebuild: $(cat rebuild.txt)"
grep -q 'Lathe: kernels mlp_tuned' rebuild.txt || fail "not regenerated: $(cat rebuild.txt)"
! grep -q 'Lathe: kernels mlp_default' rebuild.txt || fail "defaults regenerated: $(cat rebuild.txt)"
mlp/mlp 0 > mlp.txt || fail "after regeneration: $(cat mlp.txt)"
grep -q '^tuned: matches the reference' mlp.txt || fail "after regeneration: $(cat mlp.txt)"
# A database with more records copied in with an older mtime (cp -p, an
# unpacked CI artifact): generated again all the same.
cp tuned.db more.db
"$lathe" tune "$L2" --target "$T" --trials 4 --batch 4 --time-budget 60 --min-time 0.01 \
  --db more.db --no-default > tune3.txt 2>&1 || fail "tune a copy: $(cat tune3.txt)"
touch -d '2001-01-01 00:00' more.db
rm -f tuned.db-wal tuned.db-shm
cp -p more.db tuned.db
"$cmake" --build mlp > rebuild.txt 2>&1 || fail "rebuild after copy: $(cat rebuild.txt)"
grep -q 'Lathe: kernels mlp_tuned' rebuild.txt || fail "an older-mtime copy not regenerated: $(cat rebuild.txt)"
# Two directories of one project, each with find_package(Lathe) and its own
# kernels: both link Threads::Threads (imported targets belong to the
# directory that finds them; the second directory once failed to generate).
mkdir -p two/a two/b
cat > two/CMakeLists.txt <<'CMAKE'
cmake_minimum_required(VERSION 3.20)
project(two LANGUAGES C)
add_subdirectory(a)
add_subdirectory(b)
CMAKE
for sub in a b; do
  cat > two/$sub/CMakeLists.txt <<CMAKE
find_package(Lathe 0.1 REQUIRED)
add_executable(app_$sub main.c)
lathe_add_kernels(app_$sub NAME k_$sub WORKLOADS matmul:M=8,N=8,K=8 DEVICE "$T")
CMAKE
  printf '#include "k_%s.h"\nint main(void) { float a[64] = {0}, b[64] = {0}, c[64]; return matmul_8x8x8(a, b, c); }\n' \
    "$sub" > two/$sub/main.c
done
"$cmake" -S two -B two-build -G "$generator" -DCMAKE_PREFIX_PATH="$d/prefix" > two.txt 2>&1 ||
  fail "two directories, configure: $(cat two.txt)"
"$cmake" --build two-build > two.txt 2>&1 || fail "two directories, build: $(cat two.txt)"
two-build/a/app_a && two-build/b/app_b || fail "two directories, run"
echo ok

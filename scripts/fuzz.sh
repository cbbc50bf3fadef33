#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang (LATHE_FUZZ=ON, in
# build/fuzz) and runs each for a short fixed time on its corpus (the
# ctest label `fuzz`). scripts/test.sh runs it after the tests.
#
#   bash scripts/fuzz.sh [extra ctest args]
#
# Environment:
#   LATHE_FUZZ_SECONDS  seconds each target runs (default 10)
#   LATHE_FUZZ_JOBS     build jobs and targets run at once (default 2)
#   LATHE_FUZZ_CXX      the clang++ to use (default clang++-14, else clang++)
# Without clang, prints why and exits 0: the fuzz step is skipped.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

cxx="${LATHE_FUZZ_CXX:-}"
if [[ -z "$cxx" ]]; then
  for candidate in clang++-14 clang++; do
    if command -v "$candidate" >/dev/null 2>&1; then
      cxx="$candidate"
      break
    fi
  done
fi
if [[ -z "$cxx" ]]; then
  echo "fuzz: skipped: no clang++ (scripts/install-deps.sh installs clang-14)"
  exit 0
fi
cc="${cxx/clang++/clang}"

if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}"
  export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-true}"
fi

build_dir=build/fuzz
jobs="${LATHE_FUZZ_JOBS:-2}"
# -O1 with line tables only, as libFuzzer and ASan advise: crash reports
# still name file and line, and the build takes less than at -O2 -g.
fuzz_flags="-O1 -gline-tables-only -DNDEBUG"
cmake -S . -B "$build_dir" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="$fuzz_flags" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$fuzz_flags" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
  -DLATHE_FUZZ=ON -DLATHE_BUILD_BENCH=OFF -DLATHE_BUILD_TESTS=ON \
  -DLATHE_FUZZ_SECONDS="${LATHE_FUZZ_SECONDS:-10}" >/dev/null
cmake --build "$build_dir" -j "$jobs" --target \
  spec_parser_fuzz custom_expr_fuzz trace_replay_fuzz jsonl_import_fuzz
# Each target fuzzes on one core for its fixed time: as many at once as jobs.
ctest --test-dir "$build_dir" -L fuzz --output-on-failure -j "$jobs" "$@"

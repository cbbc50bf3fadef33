#!/usr/bin/env bash
# Configures and builds Lathe with a CMake preset (see CMakePresets.json).
#
#   bash scripts/build.sh [extra `cmake --build` args, e.g. --target lathe]
#
# Environment:
#   LATHE_PRESET      configure/build preset: release (default), debug, asan
#   LATHE_BUILD_DIR   build directory (default: build/$LATHE_PRESET)
#   LATHE_WERROR      ON/OFF; warnings as errors (default: ON when CI=true)
#   LATHE_JOBS        parallel jobs (default: nproc)
#   LATHE_CMAKE_ARGS  extra configure arguments (word-split)
#
# Does not install dependencies: scripts/test.sh and scripts/demo.sh do, or
# run scripts/install-deps.sh yourself. Uses ccache when it is installed
# (the top-level CMakeLists.txt picks it up as the compiler launcher).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

preset="${LATHE_PRESET:-release}"
build_dir="${LATHE_BUILD_DIR:-build/$preset}"
jobs="${LATHE_JOBS:-$(nproc)}"
if [[ -z "${LATHE_WERROR:-}" ]]; then
  if [[ "${CI:-}" == "true" ]]; then LATHE_WERROR=ON; else LATHE_WERROR=OFF; fi
fi

if command -v ccache >/dev/null 2>&1; then
  # Paths relative to the checkout, so clones in different directories (CI
  # workspaces, fresh clones) share cache hits.
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}"
  export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-true}"
fi

read -r -a extra_cmake_args <<<"${LATHE_CMAKE_ARGS:-}"

start=$SECONDS
# Re-running configure on an existing tree is cheap (about a second) and
# applies changed options such as LATHE_WERROR.
cmake --preset "$preset" -B "$build_dir" \
  -DLATHE_WERROR="$LATHE_WERROR" "${extra_cmake_args[@]}"
cmake --build "$build_dir" -j "$jobs" "$@"
echo "build: $preset in $build_dir (werror=$LATHE_WERROR, jobs=$jobs) in $((SECONDS - start))s"

#!/usr/bin/env bash
# Configures and builds Lathe with a CMake preset (see CMakePresets.json).
#
#   bash scripts/build.sh [extra `cmake --build` args, e.g. --target lathe]
#
# Environment:
#   LATHE_PRESET      configure/build preset: release (default), debug, asan
#   LATHE_BUILD_DIR   build directory (default: build/$LATHE_PRESET)
#   LATHE_WERROR      ON/OFF; warnings as errors (default: ON when CI=true,
#                     else whatever the build directory has, initially OFF)
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
if [[ -z "${LATHE_WERROR:-}" && "${CI:-}" == "true" ]]; then
  LATHE_WERROR=ON
fi

if command -v ccache >/dev/null 2>&1; then
  # Paths relative to the checkout, so clones in different directories (CI
  # workspaces, fresh clones) share cache hits.
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}"
  export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-true}"
fi

read -r -a extra_cmake_args <<<"${LATHE_CMAKE_ARGS:-}"
if [[ -n "${LATHE_WERROR:-}" ]]; then
  # Only when asked: flipping it changes every compile command, so a
  # developer build directory keeps its own setting otherwise.
  extra_cmake_args+=("-DLATHE_WERROR=$LATHE_WERROR")
fi

start=$SECONDS
# Re-running configure on an existing tree is cheap (about a second) and
# applies changed options such as LATHE_WERROR.
cmake --preset "$preset" -B "$build_dir" "${extra_cmake_args[@]}"
cmake --build "$build_dir" -j "$jobs" "$@"
werror="$(sed -n 's/^LATHE_WERROR:BOOL=//p' "$build_dir/CMakeCache.txt")"
echo "build: $preset in $build_dir (werror=${werror:-OFF}, jobs=$jobs)" \
     "in $((SECONDS - start))s"

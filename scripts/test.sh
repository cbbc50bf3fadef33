#!/usr/bin/env bash
# Installs dependencies, builds everything (the tests and benchmarks too)
# and runs every test (this is the command README.md gives and .ci/run
# runs).
#
#   bash scripts/test.sh [extra ctest args, e.g. -R Split]
#
# Environment (plus those of scripts/build.sh):
#   LATHE_TEST_LABELS          run only tests whose label matches this regex
#                              (labels: unit, integration, slow, gpu, lit)
#   LATHE_TEST_EXCLUDE_LABELS  skip tests whose label matches this regex
#   LATHE_TEST_JOBS            ctest parallelism (default 2)
#   LATHE_FUZZ_STEP            0: skip the fuzz step after the tests
#   LATHE_TEST_TIMEOUT         seconds per test without its own TIMEOUT
#                              property (default 300; a hang fails, it does
#                              not eat CI's 30-minute budget)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

bash scripts/install-deps.sh
bash scripts/build.sh

preset="${LATHE_PRESET:-release}"
build_dir="${LATHE_BUILD_DIR:-build/$preset}"

ctest_args=(--test-dir "$build_dir" --output-on-failure
            -j "${LATHE_TEST_JOBS:-2}" --timeout "${LATHE_TEST_TIMEOUT:-300}")
if [[ -n "${LATHE_TEST_LABELS:-}" ]]; then
  ctest_args+=(-L "$LATHE_TEST_LABELS")
fi
if [[ -n "${LATHE_TEST_EXCLUDE_LABELS:-}" ]]; then
  ctest_args+=(-LE "$LATHE_TEST_EXCLUDE_LABELS")
fi
if [[ -z "${LATHE_TEST_LABELS:-}${LATHE_TEST_EXCLUDE_LABELS:-}$*" ]]; then
  # An unfiltered run that finds no test means the build lost them: fail.
  ctest_args+=(--no-tests=error)
fi
if [[ "$preset" == "asan" ]]; then
  export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}"
  export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
fi

ctest "${ctest_args[@]}" "$@"

# The libFuzzer targets (fuzz/), each for a short fixed time on its corpus,
# in their own clang build: on an unfiltered run only (LATHE_FUZZ_STEP=0
# skips them).
if [[ -z "${LATHE_TEST_LABELS:-}${LATHE_TEST_EXCLUDE_LABELS:-}$*" &&
      "${LATHE_FUZZ_STEP:-1}" == "1" ]]; then
  bash scripts/fuzz.sh
fi

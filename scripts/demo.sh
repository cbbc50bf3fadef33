#!/usr/bin/env bash
# Installs dependencies, builds the `lathe` command (only it and the
# libraries it links: no tests, no benchmarks; scripts/test.sh builds
# everything) and runs the main job: a real tuning run. `lathe tune` searches schedules of a 512x512x512 matmul for a few
# minutes (measuring every candidate in a sandboxed worker, checked against
# the reference), commits every measurement to lathe.db, and prints the best
# schedule's GFLOP/s beside the default schedule's.
#
#   bash scripts/demo.sh                      # the default job
#   bash scripts/demo.sh SPEC... [OPTIONS]    # any `lathe tune` arguments
#
# Environment: those of scripts/build.sh, and LATHE_DEMO_SECONDS (the time
# budget of the default job, 180).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

bash scripts/install-deps.sh
bash scripts/build.sh --target lathe

build_dir="${LATHE_BUILD_DIR:-build/${LATHE_PRESET:-release}}"
if [ $# -eq 0 ]; then
  set -- matmul:M=512,N=512,K=512 --trials 2000 --time-budget "${LATHE_DEMO_SECONDS:-180}"
fi
exec "$build_dir/cli/lathe" tune "$@"

#!/usr/bin/env bash
# Installs dependencies, builds Lathe and runs the main job: `lathe demo`,
# which prints a workload's program before and after a schedule and checks
# the scheduled program's result against the reference.
#
#   bash scripts/demo.sh [extra arguments for `lathe demo`]
#
# Environment: those of scripts/build.sh.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

bash scripts/install-deps.sh
bash scripts/build.sh

build_dir="${LATHE_BUILD_DIR:-build/${LATHE_PRESET:-release}}"
exec "$build_dir/cli/lathe" demo "$@"

#!/usr/bin/env bash
# Tests of cmake/check_layers.cmake: the real tree passes; an include against
# the direction (the database using the compiler, the IR using the schedule)
# fails, naming the file, the header and the parts; one along it passes.
#
#   check_layers_test.sh SOURCE_DIR
set -euo pipefail

src="$1"
script="$src/cmake/check_layers.cmake"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# The real tree.
cmake -DROOT="$src" -DSTAMP="$tmp/stamp" -P "$script" >"$tmp/real.out" 2>&1 ||
  { cat "$tmp/real.out"; fail "the source tree breaks its own layers"; }
[[ -f "$tmp/stamp" ]] || fail "a passing check did not touch its stamp"

# A small tree: every include along the direction.
tree="$tmp/tree"
mkdir -p "$tree/base" "$tree/compiler/ir" "$tree/compiler/schedule" \
         "$tree/database" "$tree/cli"
echo '#pragma once' >"$tree/base/check.h"
printf '#include "base/check.h"\n#include "absl/status/status.h"\n' \
  >"$tree/compiler/ir/expr.h"
printf '#include "compiler/ir/expr.h"\n#include "proto/trace.pb.h"\n' \
  >"$tree/compiler/schedule/schedule.h"
printf '#include "base/check.h"\n#include "proto/record.pb.h"\n' \
  >"$tree/database/database.h"
printf '#include "database/database.h"\n#include "compiler/schedule/schedule.h"\n' \
  >"$tree/cli/main.cc"
cmake -DROOT="$tree" -P "$script" >"$tmp/good.out" 2>&1 ||
  { cat "$tmp/good.out"; fail "includes along the direction were refused"; }

# Against it: the database includes the compiler, the IR the schedule.
printf '#include "compiler/ir/expr.h"\n' >>"$tree/database/database.h"
printf '\n#include "compiler/schedule/schedule.h"\n' >>"$tree/compiler/ir/expr.h"
if cmake -DROOT="$tree" -P "$script" >"$tmp/bad.out" 2>&1; then
  fail "includes against the direction passed"
fi
grep -F 'database/database.h: includes "compiler/ir/expr.h": database/ may not use compiler/ir/' \
  "$tmp/bad.out" >/dev/null || { cat "$tmp/bad.out"; fail "database violation not named"; }
grep -F 'compiler/ir/expr.h: includes "compiler/schedule/schedule.h": compiler/ir/ may not use compiler/schedule/' \
  "$tmp/bad.out" >/dev/null || { cat "$tmp/bad.out"; fail "IR violation not named"; }
grep -F '2 include(s) against the direction' "$tmp/bad.out" >/dev/null ||
  { cat "$tmp/bad.out"; fail "count of violations wrong"; }
echo "PASS: layer check"

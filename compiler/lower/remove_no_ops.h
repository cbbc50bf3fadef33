// RemoveNoOps: loops that run once are replaced by their body, with the loop
// variable replaced by 0, and loops whose body is empty disappear. Splits by
// 1 and compute_at without preserve_unit_loops leave many such loops; code
// generation would otherwise emit a branch and a phi for each. A removed
// loop's kind and annotations go with it (one iteration has nothing to
// vectorize, unroll or run in parallel).
// Tests: tests/compiler/lower/remove_no_ops_test.cc.
#pragma once

#include "absl/status/status.h"
#include "compiler/ir/program.h"

namespace lathe {

absl::Status RemoveNoOps(Program* program);

}  // namespace lathe

// rfactor: factorize a reduction over one of its loops.
//
// For a sum/max/min reduction block B whose reduction loop `loop` is bound
// to a reduce iteration variable, B becomes two blocks: B_rf computes partial
// results into a new buffer with an extra dimension (inserted at factor_axis)
// indexed by `loop`, treating `loop` as spatial; B then reduces that
// dimension. This exposes parallelism in reductions with little spatial work.
// Errors: B is not a reduction of a recognized form (C = C op expr), the loop
// is not a reduction loop of B, factor_axis out of range.
// Tests: tests/compiler/schedule/primitive/rfactor_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/program.h"

namespace lathe::primitive {

// Returns the name of the new rfactor block.
absl::StatusOr<std::string> RFactor(Program* program, const std::string& loop,
                                    int64_t factor_axis);

}  // namespace lathe::primitive

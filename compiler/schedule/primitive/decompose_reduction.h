// decompose_reduction: separate a reduction's init from its update.
//
// The init of reduction block B becomes a new block B_init placed right
// before `loop` (a loop above B), inside the loops above `loop` and with
// copies of the spatial loops below `loop` that B's spatial iteration
// variables use; B keeps only the update (its init removed).
// Errors: B is not a reduction block, `loop` is not above B.
// Tests: tests/compiler/schedule/primitive/decompose_reduction_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/program.h"

namespace lathe::primitive {

// Returns the name of the new init block.
absl::StatusOr<std::string> DecomposeReduction(Program* program,
                                               const std::string& block,
                                               const std::string& loop);

}  // namespace lathe::primitive

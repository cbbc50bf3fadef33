// decompose_reduction: separate a reduction's init from its update.
//
// The init of reduction block B becomes a new block B_init placed right
// before `loop` (a loop above B), inside the loops above `loop` and under
// copies of the loops at or below `loop` that B's spatial bindings use (in
// their order, named "<loop>_init"); B keeps only the update (its init
// removed). B_init has B's spatial iteration variables only, bound like
// B's with the copies in place of the copied loops.
//
// Why it is correct, and what is checked (FailedPrecondition otherwise):
// - no loop strictly above `loop` is used by a reduction binding of B (the
//   init would run again for every iteration of that loop);
// - no loop at or below `loop` is used by both a spatial and a reduction
//   binding (the copies could not run the init once per element);
// - every reduction binding is 0 when the loops at or below `loop` are 0, so
//   the update that B's init preceded is the first one under `loop`;
// - B's init does not use B's reduction variables, and no other block under
//   `loop` writes a buffer that the init reads or writes (the init moves
//   before them);
// - B's predicate (iteration variables replaced by their bindings) is split
//   into conjuncts: those over loops above `loop` and copied loops guard
//   B_init too (with the copies); those that also use other loops at or
//   below `loop` must hold when those loops are 0 (so B_init writes exactly
//   the elements B's first instances initialized); anything else refuses.
// Errors: InvalidArgument for an unknown block or loop; FailedPrecondition
// when B has no init (not a reduction, or already decomposed), `loop` is not
// above B, or a check above fails.
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

// fuse: adjacent loops of one nest become one loop.
//
// Loops l0..ln-1, each the only statement in the body of the previous one,
// become one loop of the product extent; each l_i is rewritten as the
// corresponding floordiv/floormod of the fused variable.
// Errors: fewer than 2 loops, loops that are not directly nested in the given
// order (fusing loops that are not adjacent), a loop bound to threads.
// Tests: tests/compiler/schedule/primitive/fuse_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/program.h"

namespace lathe::primitive {

// Returns the name of the fused loop.
absl::StatusOr<std::string> Fuse(Program* program,
                                 const std::vector<std::string>& loops);

}  // namespace lathe::primitive

// fuse: adjacent loops of one nest become one loop.
//
// Loops l0..ln-1, each the only statement in the body of the previous one,
// become one serial loop named l0_l1_..._fused (made fresh) of the product
// extent, carrying l0's annotations; each l_i is rewritten as
// (fused // stride_i) % extent_i (the outermost without %), where stride_i is
// the product of the extents inside l_i, and bindings are simplified.
// Errors: InvalidArgument for fewer than 2 loops, an unknown or a repeated
// loop; FailedPrecondition for loops that are not directly nested in the
// given order (fusing loops that are not adjacent, or a block or a sequence
// between them), a loop bound to threads.
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

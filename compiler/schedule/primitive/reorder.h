// reorder: permute loops of one nest.
//
// The given loops, which must lie on one path of the loop tree (each an
// ancestor of the next in some order), are placed in the given order at the
// positions they occupied; loops in between keep their place. Every loop from
// the outermost to the innermost given loop must have a single child
// statement (a perfect nest), so no other block changes order.
// Errors: loops not in one nest, a repeated loop, an imperfect nest, a loop
// whose extent depends on another (never, extents are constant).
// Tests: tests/compiler/schedule/primitive/reorder_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/program.h"

namespace lathe::primitive {

absl::Status Reorder(Program* program, const std::vector<std::string>& order);

}  // namespace lathe::primitive

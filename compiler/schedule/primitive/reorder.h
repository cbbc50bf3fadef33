// reorder: permute loops of one nest.
//
// The given loops, which must lie on one path of the loop tree (each an
// ancestor of the next in some order), are placed in the given order at the
// positions they occupied; loops in between keep their place. Every loop from
// the outermost to the innermost given loop must have a single child
// statement which is the next loop (a perfect nest), so no other block
// changes order. A loop moves with its kind, thread tag and annotations.
// Reordering changes the order in which the points of the nest run, so it is
// refused when two accesses that may touch the same element (one a write)
// could run in the other order afterwards, e.g. two reduction loops swapped
// (the analysis is in compiler/schedule/analysis/data_parallel.h); a
// vectorized loop must stay innermost, and parallel, vectorized and bound
// loops must stay data-parallel where they land.
// Errors: InvalidArgument for no loops, an unknown or a repeated loop;
// FailedPrecondition for loops not in one nest (`reorder: loops "i" and
// "k_1" are not in one nest`), an imperfect nest, a dependence whose order
// would change.
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

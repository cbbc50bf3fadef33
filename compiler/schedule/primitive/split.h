// split: one loop becomes a nest of loops.
//
// Loop l of extent E with factors f0..fn-1 (at most one nullopt, inferred as
// ceil(E / product of the others)) becomes loops l_0 .. l_{n-1} of extents
// f0..fn-1, with l = ((l_0 * f1 + l_1) * f2 + l_2) ... substituted in every
// block below. When the product exceeds E, blocks below get the predicate
// l < E (dropped where provably true), so factors need not divide E.
// Errors: a factor < 1, more than one inferred factor, fewer than 2 factors,
// constant factors whose product is less than E, a thread-bound loop.
// Tests: tests/compiler/schedule/primitive/split_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/program.h"

namespace lathe::primitive {

// Returns the names of the new loops, outermost first.
absl::StatusOr<std::vector<std::string>> Split(
    Program* program, const std::string& loop,
    const std::vector<std::optional<int64_t>>& factors);

}  // namespace lathe::primitive

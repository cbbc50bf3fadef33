// rfactor: factorize a reduction over one of its loops.
//
// Let B be the only block under `loop`, a reduction C[idx] = C[idx] op x
// (op: +, max or min) with init C[idx] = identity of op, and vk the one
// reduction variable whose binding E uses `loop`. B becomes two blocks:
// - B_rf (B's statement, renamed, under B's loops) computes partial results
//   into a new buffer C_rf, C's shape with a dimension of `loop`'s extent
//   inserted at factor_axis: spatial variables B's plus v_rf bound to `loop`;
//   reduction variables B's others plus one per other loop of E (bound to
//   it), vk being replaced by E over those in the body. `loop` is then a
//   spatial loop of B_rf and can run in parallel. When `loop` was the only
//   loop of E and B has no other reduction variable, B_rf is a plain spatial
//   block C_rf[..] = x (no init: each partial result is a single term).
// - B (the same name, under new loops "ax0", ... placed at the root right
//   after the top-level statement holding B_rf) reduces C_rf over that
//   dimension into C.
// C_rf is allocated by the root block. Returns the name of B_rf.
//
// Preconditions (FailedPrecondition otherwise):
// - exactly one block under `loop`, at the root scope, and exactly one of its
//   bindings uses `loop`: a reduction binding, whose other loops appear in no
//   other binding;
// - the pattern above, with x not reading C and idx the block's spatial
//   variables, distinct, covering C's shape;
// - B's predicate is made of split tail guards (binding < extent); the guard
//   of vk must hold whenever E's other loops are 0, so every element of C_rf
//   has a first instance that initializes it (e.g. k = k_0 * 4 + k_1 < 13:
//   fine for 13 = 4 x 4 with a tail, refused for factors 5 x 4, where
//   k_0 = 4 has no valid iteration);
// - no other block in B's top-level statement reads or writes C.
// Errors: InvalidArgument for an unknown loop or factor_axis outside
// [0, rank of C].
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

// LowerBlocks: the first lowering pass. Every block except the root is
// replaced by the statements that run one of its instances, so that only
// loops, conditions, stores and allocation scopes remain (lowered_form.h).
//
// For a block instance
//   block B(v0 = spatial(n0, e0), v1 = reduce(n1, e1), ...):
//     where P; alloc T; init: I; body: S
// the pass emits, with every iteration variable vk replaced by its binding ek
// (in P, I and S, and in the bindings of nested blocks):
//   if P:                       (omitted when P is true)
//     block B():                (an allocation scope; only when B allocates)
//       alloc T
//       if e1 == 0 and ...:     (one equality per reduce variable; only with
//         I                      an init; no reduce variable means always)
//       S
// which is what the interpreter does with an instance: the predicate first,
// fresh allocations, the init when every reduce variable is 0, the body. What
// is dropped: the range check of bindings (the schedule guarantees it where
// the predicate holds) and the annotations of non-root blocks (schedule hints
// such as pragma_auto_unroll_max_step that code generation does not read
// yet); the root block keeps its allocations and annotations.
// Tests: tests/compiler/lower/lower_blocks_test.cc.
#pragma once

#include "absl/status/status.h"
#include "compiler/ir/program.h"

namespace lathe {

// Errors: Internal for a malformed block (bindings that do not match its
// iteration variables), naming the pass and the block.
absl::Status LowerBlocks(Program* program);

}  // namespace lathe

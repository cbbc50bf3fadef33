// The lowered form: what the lowering pipeline (pipeline.h) hands to code
// generation, and a checker for it.
//
// A lowered program is an ordinary Program (the same IR, so the interpreter
// runs it and the printer prints it) restricted to:
// - the root block, with no iteration variables, which allocates every buffer
//   that is not a parameter and not compacted (compact_buffers.h);
// - below it only For, If, Seq and Store, plus allocation-scope blocks: a
//   BlockNode with no iteration variables, no bindings, a true predicate, no
//   init and no annotations, whose only role is to scope its alloc_buffers
//   (fresh storage at each execution of the scope, as any block's);
// - every index and condition over loop variables only (no block iteration
//   variable survives).
// Code generation maps a scope block to a stack or register allocation at
// that point (or a heap one when large), the rest one to one.
// Tests: tests/compiler/lower/lower_blocks_test.cc.
#pragma once

#include "absl/status/status.h"
#include "compiler/ir/program.h"

namespace lathe {

// True for an allocation-scope block as described above.
bool IsAllocScope(const BlockNode& block);

// Ok when the program is in lowered form; Internal naming the first
// offending block otherwise (a pass that leaves anything else is a bug).
absl::Status VerifyLowered(const Program& program);

}  // namespace lathe

// The lowering pipeline: from a scheduled block-level program to the flat
// loop program that code generation translates (lowered_form.h). This file
// is the table of contents of lowering; pipeline.cc lists the passes in the
// order they run:
//   1. lower_blocks     blocks -> their instances' statements (lower_blocks.h)
//   2. compact_buffers  intermediates moved into the loop where they live and
//                       shrunk to one iteration's region (compact_buffers.h)
//   3. remove_no_ops    loops of extent 1 -> their body (remove_no_ops.h)
//   4. simplify         indices and conditions under loop ranges; decided
//                       Ifs folded (simplify_stmts.h)
// remove_no_ops runs before simplify so that the zeros it substitutes are
// folded away. The result is checked against the lowered form at the end.
// Tests: tests/compiler/lower/pipeline_test.cc and the property test
// tests/compiler/lower/lower_property_test.cc.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "compiler/ir/program.h"
#include "compiler/lower/compact_buffers.h"

namespace lathe {

struct LowerOptions {
  // Print the program after each pass (Halide's HL_DEBUG_CODEGEN habit):
  // "# after PASS" then the program, appended to *print_to, or written to
  // stderr when print_to is null.
  bool print_after_each = false;
  std::string* print_to = nullptr;
  // Optional passes, on by default; turning them off helps tests and bisection.
  bool compact_buffers = true;
  bool remove_no_ops = true;
};

// What lowering decided, for callers that look (code generation, the search).
struct LowerReport {
  CompactStats compact;
};

// Lowers a copy of `scheduled`.
// Errors: those of the passes (Internal, naming the pass: a bug or a
// malformed program).
absl::StatusOr<Program> LowerProgram(const Program& scheduled,
                                     const LowerOptions& options = {},
                                     LowerReport* report = nullptr);

}  // namespace lathe

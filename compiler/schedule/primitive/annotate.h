// annotate: attach a hint (unroll depth, pragma) to a loop or a block.
//
// Annotations never change what a program computes; code generation reads
// them. Setting a key again replaces its value.
//
// Unroll hints (on a block or on a loop; the search's unroll rule writes
// them on blocks, as MetaSchedule does):
// - "pragma_auto_unroll_max_step" (int >= 0): unroll every loop below whose
//   total number of iterations, with the loops below it, is at most this
//   many steps; 0 turns auto-unrolling off.
// - "pragma_unroll_explicit" (int 0 or 1): 1 unrolls those loops in the
//   generated code itself, 0 leaves it to the back end (an unroll pragma).
// Errors (InvalidArgument): an empty key, an unknown loop or block.
// Tests: tests/compiler/schedule/primitive/annotate_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/program.h"

namespace lathe::primitive {

absl::Status AnnotateLoop(Program* program, const std::string& loop,
                          const std::string& key, const AnnotationValue& value);
absl::Status AnnotateBlock(Program* program, const std::string& block,
                           const std::string& key,
                           const AnnotationValue& value);

}  // namespace lathe::primitive

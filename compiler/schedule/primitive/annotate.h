// annotate: attach a hint (unroll depth, pragma) to a loop or a block.
//
// Annotations never change what a program computes; code generation reads
// them (e.g. "pragma_auto_unroll_max_step", "pragma_unroll_explicit").
// Errors: an empty key, an unknown loop or block.
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
                           const std::string& key, const AnnotationValue& value);

}  // namespace lathe::primitive

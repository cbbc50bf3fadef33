// parallel, vectorize, unroll, bind: change how a loop's iterations run.
//
// Parallel, vectorized and thread-bound loops run their iterations in any
// order or at once, so they require a data-parallel loop: every block below
// binds the loop only to spatial iteration variables, and no iteration reads
// what another iteration writes (a buffer written below the loop and read
// below it must be accessed at the same elements by the same iteration).
// Vectorize additionally requires an innermost loop (no loop below it).
// Unroll changes nothing of the order and always applies. Bind takes
// blockIdx.x|y|z, threadIdx.x|y|z or vthread.
// Errors name the primitive, the loop and the offending block.
// Tests: tests/compiler/schedule/primitive/{parallel,vectorize,unroll,bind}_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/program.h"

namespace lathe::primitive {

absl::Status Parallel(Program* program, const std::string& loop);
absl::Status Vectorize(Program* program, const std::string& loop);
absl::Status Unroll(Program* program, const std::string& loop);
absl::Status Bind(Program* program, const std::string& loop,
                  const std::string& thread_axis);

}  // namespace lathe::primitive

// parallel, vectorize, unroll, bind: change how a loop's iterations run.
//
// Parallel, vectorized and thread-bound loops run their iterations in any
// order or at once, so they require a data-parallel loop
// (compiler/schedule/analysis/data_parallel.h): every block below binds the
// loop only into spatial iteration variables, and no two iterations touch the
// same element of a buffer that one of them writes (a buffer allocated by a
// block below the loop is private to an iteration). The analysis refuses what
// it cannot prove.
// - parallel: a serial loop; not nested with another parallel loop (the
//   runtime has one level of parallelism) nor with a thread-bound loop.
// - vectorize: a serial innermost loop (no loop below it, inside blocks
//   included) of extent >= 1; code generation splits long vectors.
// - unroll: a serial loop; it keeps serial order, so no data-parallel check.
// - bind: a serial loop to blockIdx.x|y|z, threadIdx.x|y|z or vthread; no
//   other loop of its nest (ancestors and loops below) bound to the same
//   axis, none parallel.
// Applying the kind a loop already has is a no-op (bind: with the same axis);
// changing the kind of a loop that is not serial is refused (unroll accepts
// an unrolled loop).
// Errors: InvalidArgument for an unknown loop or thread axis;
// FailedPrecondition naming the primitive, the loop and the offending block
// or loop otherwise, e.g. `parallel: loop "k" is not data-parallel: block "C"
// binds it to reduce iteration variable "vk"`.
// Tests:
// tests/compiler/schedule/primitive/{parallel,vectorize,unroll,bind}_test.cc.
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

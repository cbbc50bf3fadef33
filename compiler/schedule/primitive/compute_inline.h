// compute_inline and reverse_compute_inline: fold a block into its neighbour.
//
// compute_inline(producer): a spatial block whose body is a single store
// P[v0, .., vn] = f(...) (indices exactly its iteration variables) is removed
// and every read of P is replaced by f at the read's indices; P's
// allocation is removed. reverse_compute_inline(consumer): a spatial block
// whose body is C[...] = g(P[v...]) reading one producer element at its own
// iteration indices is folded into the producer, which then stores
// g(value) into C directly.
// Errors: a reduction block, an output buffer of the program (compute_inline),
// a body that is not a single store, indices that are not the iteration
// variables, a producer with several consumers in reverse form...
// Tests: tests/compiler/schedule/primitive/{compute_inline,reverse_compute_inline}_test.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/program.h"

namespace lathe::primitive {

absl::Status ComputeInline(Program* program, const std::string& block);
absl::Status ReverseComputeInline(Program* program, const std::string& block);

}  // namespace lathe::primitive

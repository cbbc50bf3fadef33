// compute_inline and reverse_compute_inline: fold a block into its neighbour.
//
// compute_inline(producer): a spatial block whose body is a single store
// P[v0, .., vn] = f(...) (indices exactly its iteration variables, in any
// order) is removed with the loops left empty, and every read P[i0, .., in]
// is replaced by f with the variables replaced by i0, .., in; P's allocation
// is removed.
// reverse_compute_inline(consumer): a spatial block whose body is a single
// store C[idx] = g(P[u0, .., un]) reading one buffer written by another block
// at exactly its own iteration variables is folded into that producer, which
// then stores g(its value) into C[idx] at its own variables.
//
// Preconditions (FailedPrecondition, naming the block and the reason):
// - compute_inline: not a reduction; a single store of a buffer that is not
//   an output, written by no other block and not read by the value; a
//   predicate that only clips the domain (split tails); every writer of what
//   the value reads finishes before the block (comes before it, no loop
//   around both), so the value is the same wherever it is read.
// - reverse_compute_inline: not a reduction; a single store; the only writer
//   of its buffer; a predicate that only clips the domain; it reads one
//   buffer written by other blocks (others only inputs), at its iteration
//   variables, that is not an output, read by no other block and written by
//   one producer that is not a reduction, has a single store at its
//   iteration variables over the same extents, does not read the block's
//   buffer, and comes before the block; no block that may run between the
//   two touches the block's buffer.
// Tests: tests/compiler/schedule/primitive/{compute_inline,
// reverse_compute_inline,block_motion_property}_test.cc.
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

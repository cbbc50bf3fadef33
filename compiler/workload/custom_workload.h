// Custom workloads: an einsum-like expression plus the extents of its index
// variables, e.g. `lathe tune --expr "C[i,j] += A[i,k] * B[k,j]" --dims
// i=512,j=512,k=512`.
//
// Meaning of a definition (syntax: expr_parser.h):
// - Each statement defines one tensor, shaped by the dims of its left-side
//   variables. `=` computes element-wise (every index on the right must be on
//   the left); `+=`, `max=`, `min=` reduce over the indices found only on the
//   right, in order of first appearance.
// - A tensor read but never defined is an input; inputs come in order of
//   first appearance. The last statement's tensor is the one output; earlier
//   ones are intermediates and must be read by a later statement. So an
//   epilogue is a further statement:
//   `C[i,j] += A[i,k] * B[k,j]; D[i,j] = max(C[i,j], 0)`.
// - An input's extent along a dimension is one past the largest index it is
//   read at: A[i+k] with i=4,k=3 makes A 6 long. Indices must never be
//   negative, and intermediates must be read within their extents.
// - All tensors are float32.
// Tests: tests/compiler/workload/custom_workload_test.cc.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compiler/workload/custom_ast.h"
#include "compiler/workload/workload.h"

namespace lathe {

struct CustomTensor {
  enum class Role { kInput, kIntermediate, kOutput };
  std::string name;
  std::vector<int64_t> shape;
  Role role = Role::kInput;
};

// A checked custom definition: the statements, the dims, and every tensor
// (inputs in order of first appearance, then the defined ones in statement
// order, the output last).
struct CustomDefinition {
  ParsedDefinition parsed;
  std::map<std::string, int64_t> dims;
  std::vector<CustomTensor> tensors;

  const CustomTensor* FindTensor(const std::string& name) const;
};

// Parses `i=512,j=512,k=512`. Errors: bad syntax, a duplicate name, a value
// that is not a positive integer or exceeds kMaxParamValue (registry.h).
absl::StatusOr<std::map<std::string, int64_t>> ParseDims(
    absl::string_view dims);

// Checks a parsed definition against the dims. Errors (InvalidArgument, with
// the column where it helps): a variable without a dim, a dim no statement
// uses, an index only on the right of `=`, a reduction with nothing to
// reduce, a tensor defined twice or read before its definition or by its own
// definition, an unused intermediate, inconsistent ranks, a negative or
// out-of-range index, a name used both as tensor and variable, a tensor over
// kMaxTensorElements.
absl::StatusOr<CustomDefinition> CheckCustomDefinition(
    ParsedDefinition parsed, std::map<std::string, int64_t> dims);

// Parse (expr_parser.h, ParseDims), check and build: the workload of `expr`
// at `dims`, with every error of those steps.
absl::StatusOr<Workload> ParseCustomWorkload(absl::string_view expr,
                                             absl::string_view dims);
// Builds the te tensors of a definition that CheckCustomDefinition returned.
absl::StatusOr<Workload> MakeCustomWorkload(CustomDefinition definition);

}  // namespace lathe

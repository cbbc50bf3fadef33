// Custom workloads: an einsum-like expression plus the extents of its index
// variables, e.g. `lathe tune --expr "C[i,j] += A[i,k] * B[k,j]" --dims
// i=512,j=512,k=512`.
//
// Meaning of a definition (syntax: expr_parser.h):
// - Each statement defines one tensor, shaped by the dims of its left-side
//   variables. `=` computes element-wise (every index on the right must be on
//   the left); `+=`, `max=`, `min=` reduce over the indices found only on the
//   right, in order of first appearance.
// - A tensor read but never defined is an input. Declared inputs
//   (`input X[1,64,56,56];` before the statements) come first, in
//   declaration order, then the undeclared ones in order of first
//   appearance. The last statement's tensor is the one output; earlier
//   ones are intermediates and must be read by a later statement. So an
//   epilogue is a further statement:
//   `C[i,j] += A[i,k] * B[k,j]; D[i,j] = max(C[i,j], 0)`.
// - A declared input has its declared shape, and its reads X[...] must stay
//   within it (rank and every index's range over the dims are checked);
//   its padded reads X?[...] may leave it and read the declared pad value
//   there (0 unless `pad V`). An undeclared input's extent along a
//   dimension is one past the largest index it is read at: A[i+k] with
//   i=4,k=3 makes A 6 long. Other indices must never be negative, and
//   intermediates must be read within their extents.
// - Padded reads become a stage NAME_pad (a select on the bounds, as the
//   padding of conv2d) holding X with the padding its reads reach, which
//   the reads index shifted; reads that stay inside X read X itself.
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
  // Declared inputs: the pad value, and per dimension how far the padded
  // reads reach before index 0 and past the last index (0 when they stay
  // inside).
  bool declared = false;
  bool constant = false;  // declared `const`: layout-free (custom_ast.h)
  double pad_value = 0;
  std::vector<int64_t> pad_before, pad_after;

  bool IsPadded() const;  // some padded read reaches outside the shape
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
// kMaxTensorElements; an input declared twice, defined by a statement or
// never read, read with another rank or outside its declared extents (the
// message names the input, the dimension counted from 0, and the column), a
// padded read of a tensor that is not a declared input.
absl::StatusOr<CustomDefinition> CheckCustomDefinition(
    ParsedDefinition parsed, std::map<std::string, int64_t> dims);

// Parse (expr_parser.h, ParseDims) and check: the definition of `expr` at
// `dims`, with every error of those steps.
absl::StatusOr<CustomDefinition> ParseCustomDefinition(absl::string_view expr,
                                                       absl::string_view dims);
// ParseCustomDefinition, then MakeCustomWorkload.
absl::StatusOr<Workload> ParseCustomWorkload(absl::string_view expr,
                                             absl::string_view dims);

// The definition of a `custom:EXPR|DIMS` workload spec (the form a custom
// workload's spec() prints; the `custom:` prefix may be left out), split at
// its last '|'. Errors: no '|' (the message shows the expected form), then
// those of ParseCustomDefinition.
absl::StatusOr<CustomDefinition> ParseCustomSpec(absl::string_view spec);

// Builds the te tensors of a definition that CheckCustomDefinition returned.
absl::StatusOr<Workload> MakeCustomWorkload(CustomDefinition definition);

}  // namespace lathe

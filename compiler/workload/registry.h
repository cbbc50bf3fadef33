// The operator registry: every named operator a workload spec can ask for.
//
// An operator declares its parameters (name, kind, default or required, a
// description) and knows two things: how to build its tensors through the te
// API, in the layouts and argument order of docs/architecture.md ("Tensor
// layouts and the C ABI"), and how to compute its result with plain nested
// loops (the reference, independent of the IR). Each operator family lives in
// its own file under compiler/workload/ops/; registry.cc lists them, one line
// each.
//
// Adding an operator: write its build and reference functions in an ops/ file,
// declare its Make...Op() in ops/ops.h, add one line to registry.cc, add it to
// tests/compiler/workload/ops_test.cc and reference_test.cc.
// Tests: tests/compiler/workload/registry_test.cc, ops_test.cc,
// reference_test.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compiler/interp/tensor_data.h"
#include "compiler/ir/dtype.h"
#include "compiler/te/tensor.h"

namespace lathe {

// What values a parameter accepts.
enum class ParamKind {
  kDim,          // a positive integer (a size, a stride, a group count)
  kNonNegative,  // an integer >= 0 (padding)
  kFlag,         // 0 or 1
  kDType,        // a dtype name; only float32 is accepted for now
};

// "positive integer", "non-negative integer", "0 or 1", "float32 only, ...".
const char* ParamKindDescription(ParamKind kind);

struct ParamSpec {
  std::string name;
  ParamKind kind = ParamKind::kDim;
  std::optional<std::string> default_value;  // nullopt: required
  std::string description;

  bool required() const { return !default_value.has_value(); }
};

// Integer parameters may not exceed this, and no tensor may hold more
// elements: index arithmetic on such shapes stays far from int64 overflow.
inline constexpr int64_t kMaxParamValue = int64_t{1} << 31;
inline constexpr int64_t kMaxTensorElements = int64_t{1} << 31;

// The validated parameters of one workload of a registry operator: every
// declared parameter, defaults filled in.
struct OpParams {
  std::map<std::string, int64_t> ints;
  DType dtype = DType::Float32();

  // The value of a declared integer parameter (a missing one is a bug).
  int64_t operator[](const std::string& name) const;
};

// The tensors of a workload, in C ABI order.
struct OpTensors {
  std::vector<te::Tensor> inputs;
  std::vector<te::Tensor> outputs;
};

// Computes the outputs from the inputs with plain loops. Called with tensors
// whose counts and shapes already match the built tensors' (RunReference
// checks them), so it cannot fail.
using ReferenceFn =
    std::function<void(const OpParams&, const std::vector<const TensorData*>&,
                       const std::vector<TensorData*>&)>;

struct OperatorDef {
  std::string name;
  std::string summary;            // one line for `lathe workloads`
  std::vector<ParamSpec> params;  // in the order users think of them
  // Builds the tensors. Each parameter is already valid on its own; build
  // returns InvalidArgument when they are inconsistent together (groups not
  // dividing C, an empty output).
  std::function<absl::StatusOr<OpTensors>(const OpParams&)> build;
  ReferenceFn reference;

  const ParamSpec* FindParam(absl::string_view param) const;
  // "M, N, K, dtype": the accepted parameter names, for messages.
  std::string ParamNames() const;
};

// Every operator, sorted by name.
const std::vector<OperatorDef>& Operators();
// nullptr when no operator has that name.
const OperatorDef* FindOperator(absl::string_view name);
// "add, avg_pool2d, ...": the known operator names, for messages.
std::string OperatorNames();

// Validates one parameter value given as text and returns its canonical text
// (decimal integer without leading zeros, full dtype name). Errors name the
// operator, the parameter, the value and what is accepted.
absl::StatusOr<std::string> CanonicalParamValue(const OperatorDef& op,
                                                const ParamSpec& param,
                                                absl::string_view value);

// The typed form of canonical parameter texts (as produced by
// CanonicalParamValue for every declared parameter).
OpParams OpParamsFromCanonical(
    const OperatorDef& op, const std::map<std::string, std::string>& params);

// The number of elements of a shape, or an error naming the tensor when it
// exceeds kMaxTensorElements (checked without overflowing).
absl::StatusOr<int64_t> CheckedNumElements(const std::string& what,
                                           const std::vector<int64_t>& shape);

}  // namespace lathe

#include "compiler/workload/reference.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/check.h"
#include "base/status_macros.h"
#include "compiler/workload/custom_eval.h"
#include "compiler/workload/registry.h"

namespace lathe {
namespace {

absl::Status CheckTensor(const Workload& w, const char* role, size_t i,
                         const te::Tensor& expected, const TensorData* actual) {
  const std::string what = absl::StrCat("reference of ", w.op(), ": ", role,
                                        " ", i, " (", expected.name(), ")");
  if (actual == nullptr)
    return absl::InvalidArgumentError(absl::StrCat(what, " is null"));
  if (actual->shape != expected.shape()) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " has shape [", absl::StrJoin(actual->shape, ", "),
        "], expected [", absl::StrJoin(expected.shape(), ", "), "]"));
  }
  if (actual->dtype != expected.dtype()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " has dtype ", actual->dtype.ToString(),
                     ", expected ", expected.dtype().ToString()));
  }
  int64_t n = 1;
  for (int64_t e : actual->shape) n *= e;
  if (actual->size() != n) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " holds ", actual->size(), " values for ", n, " elements"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RunReference(const Workload& w,
                          const std::vector<const TensorData*>& inputs,
                          const std::vector<TensorData*>& outputs) {
  if (inputs.size() != w.inputs().size() ||
      outputs.size() != w.outputs().size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("reference of ", w.op(), ": got ", inputs.size(),
                     " inputs and ", outputs.size(), " outputs, expected ",
                     w.inputs().size(), " and ", w.outputs().size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    LATHE_RETURN_IF_ERROR(CheckTensor(w, "input", i, w.inputs()[i], inputs[i]));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    LATHE_RETURN_IF_ERROR(
        CheckTensor(w, "output", i, w.outputs()[i], outputs[i]));
  }
  if (w.is_custom()) {
    EvaluateCustomDefinition(*w.custom(), inputs, outputs);
    return absl::OkStatus();
  }
  const OperatorDef* op = FindOperator(w.op());
  LATHE_CHECK(op != nullptr, "workload of unknown operator ", w.op());
  op->reference(OpParamsFromCanonical(*op, w.params()), inputs, outputs);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TensorData>> RunReference(
    const Workload& w, const std::vector<TensorData>& inputs) {
  std::vector<TensorData> outputs;
  for (const te::Tensor& t : w.outputs())
    outputs.push_back(TensorData::Like(*t.buffer()));
  std::vector<const TensorData*> in;
  for (const TensorData& t : inputs) in.push_back(&t);
  std::vector<TensorData*> out;
  for (TensorData& t : outputs) out.push_back(&t);
  LATHE_RETURN_IF_ERROR(RunReference(w, in, out));
  return outputs;
}

}  // namespace lathe

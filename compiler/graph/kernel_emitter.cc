#include "compiler/graph/kernel_emitter.h"

#include <cmath>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/check.h"

namespace lathe::graph {

void KernelEmitter::BeginNode(std::vector<KernelOperand> operands,
                              TensorType output_type, std::string output_name) {
  operands_ = std::move(operands);
  output_type_ = std::move(output_type);
  output_name_ = std::move(output_name);
}

std::string KernelEmitter::NewTensor() {
  return absl::StrCat("t", num_tensors_++);
}

std::string KernelEmitter::NewVar(int64_t extent) {
  std::string name = absl::StrCat("v", vars_.size());
  vars_.emplace_back(name, extent);
  return name;
}

std::vector<std::string> KernelEmitter::NewVars(
    const std::vector<int64_t>& shape) {
  std::vector<std::string> vars;
  if (shape.empty()) {
    vars.push_back(NewVar(1));
    return vars;
  }
  for (int64_t extent : shape) vars.push_back(NewVar(extent));
  return vars;
}

void KernelEmitter::Add(const std::string& tensor,
                        const std::vector<std::string>& vars,
                        const std::string& assign, const std::string& expr) {
  statements_.push_back(absl::StrCat(tensor, "[", absl::StrJoin(vars, ","),
                                     "] ", assign, " ", expr));
}

std::string KernelEmitter::DeclaredName(const KernelOperand& operand) {
  auto it = declared_names_.find(operand.value);
  if (it != declared_names_.end()) return it->second;
  std::string name = absl::StrCat("in", declared_values_.size());
  declared_names_[operand.value] = name;
  declared_values_.push_back(operand.value);
  std::vector<int64_t> shape = operand.type.shape;
  if (shape.empty()) shape.push_back(1);
  declared_shapes_.push_back(shape);
  declared_constants_.push_back(operand.constant != nullptr);
  return name;
}

absl::StatusOr<std::string> KernelEmitter::Read(
    size_t i, const std::vector<std::string>& index, bool padded) {
  LATHE_CHECK(has_input(i), "emitter: operand ", i, " is absent");
  const KernelOperand& operand = operands_[i];
  if (operand.literal) return Literal(*operand.literal);
  if (operand.type.dtype != DType::Float32()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "kernel read of a ", operand.type.dtype.ToString(), " tensor"));
  }
  if (padded && !operand.group_input) {
    return absl::FailedPreconditionError(
        "zero-padded read of a value computed inside the kernel");
  }
  std::string name = operand.group_input ? DeclaredName(operand) : operand.name;
  if (operand.type.shape.empty()) return absl::StrCat(name, "[0]");
  return absl::StrCat(name, padded ? "?[" : "[", absl::StrJoin(index, ","),
                      "]");
}

absl::StatusOr<std::string> KernelEmitter::ReadBroadcast(
    size_t i, const std::vector<std::string>& vars,
    const std::vector<int64_t>& shape) {
  const std::vector<int64_t>& in = operands_[i].type.shape;
  std::vector<std::string> index;
  const size_t offset = shape.size() - in.size();
  for (size_t a = 0; a < in.size(); ++a) {
    const int64_t out_extent = shape[offset + a];
    index.push_back(in[a] == 1 && out_extent != 1 ? "0" : vars[offset + a]);
  }
  return Read(i, index);
}

std::string KernelEmitter::ReadTensor(const std::string& tensor,
                                      const std::vector<std::string>& index) {
  return absl::StrCat(tensor, "[", absl::StrJoin(index, ","), "]");
}

absl::Status KernelEmitter::SetPadValue(size_t i, double pad) {
  const KernelOperand& operand = operands_[i];
  if (!operand.group_input) {
    return absl::FailedPreconditionError(
        "a pad value for a value computed inside the kernel");
  }
  DeclaredName(operand);
  auto it = pad_values_.find(operand.value);
  if (it != pad_values_.end() && it->second != pad) {
    return absl::FailedPreconditionError(
        "one kernel input read with two pad values");
  }
  pad_values_[operand.value] = pad;
  return absl::OkStatus();
}

std::string KernelEmitter::Affine(
    const std::vector<std::pair<int64_t, std::string>>& terms,
    int64_t constant) {
  std::string text;
  for (const auto& [coef, var] : terms) {
    if (coef == 0) continue;
    if (coef < 0) {
      text += "-";
    } else if (!text.empty()) {
      text += "+";
    }
    const int64_t magnitude = coef < 0 ? -coef : coef;
    if (magnitude != 1) absl::StrAppend(&text, magnitude, "*");
    text += var;
  }
  if (constant != 0 || text.empty()) {
    if (constant >= 0 && !text.empty()) text += "+";
    absl::StrAppend(&text, constant);
  }
  return text;
}

std::string KernelEmitter::Literal(double value) {
  char buffer[40];
  std::snprintf(buffer, sizeof(buffer), "%.17g", std::fabs(value));
  std::string text = buffer;
  if (std::signbit(value)) return absl::StrCat("(-", text, ")");
  return text;
}

std::string KernelEmitter::Text() const {
  std::string text;
  for (size_t i = 0; i < declared_values_.size(); ++i) {
    absl::StrAppend(&text, "input ", "in", i, "[",
                    absl::StrJoin(declared_shapes_[i], ","), "]");
    auto pad = pad_values_.find(declared_values_[i]);
    if (pad != pad_values_.end()) {
      char buffer[40];
      std::snprintf(buffer, sizeof(buffer), "%.17g", pad->second);
      absl::StrAppend(&text, " pad ", buffer);
    }
    if (declared_constants_[i]) text += " const";
    text += "; ";
  }
  text += absl::StrJoin(statements_, "; ");
  return text;
}

std::string KernelEmitter::DimsText() const {
  std::vector<std::string> parts;
  for (const auto& [name, extent] : vars_) {
    parts.push_back(absl::StrCat(name, "=", extent));
  }
  return absl::StrJoin(parts, ",");
}

}  // namespace lathe::graph

#include "compiler/workload/workload.h"

#include <cstdio>

#include "compiler/ir/structural_equal.h"
#include "compiler/workload/custom_workload.h"

namespace lathe {

Workload::Workload(std::string op, std::map<std::string, std::string> params,
                   std::vector<te::Tensor> inputs,
                   std::vector<te::Tensor> outputs, std::string canonical_form,
                   std::shared_ptr<const CustomDefinition> custom)
    : op_(std::move(op)),
      params_(std::move(params)),
      inputs_(std::move(inputs)),
      outputs_(std::move(outputs)),
      canonical_form_(std::move(canonical_form)),
      custom_(std::move(custom)) {}

bool Workload::IsLayoutFreeInput(size_t i) const {
  if (custom_ == nullptr || i >= inputs_.size()) return false;
  const CustomTensor* t = custom_->FindTensor(inputs_[i].name());
  return t != nullptr && t->constant;
}

absl::StatusOr<Program> Workload::InitialProgram() const {
  absl::StatusOr<Program> program = te::CreateProgram(op_, inputs_, outputs_);
  if (!program.ok()) return program.status();
  for (size_t i = 0; i < inputs_.size() && i < program->inputs.size(); ++i) {
    if (IsLayoutFreeInput(i))
      program->layout_free_inputs.push_back(program->inputs[i]);
  }
  return program;
}

std::string Workload::Key() const { return WorkloadKey(canonical_form_); }

std::string WorkloadKey(const std::string& canonical_form) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx",
                static_cast<unsigned long long>(StableHash64(canonical_form)));
  return buf;
}

}  // namespace lathe

#include "compiler/workload/workload.h"

#include <cstdio>

#include "compiler/ir/structural_equal.h"

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

absl::StatusOr<Program> Workload::InitialProgram() const {
  return te::CreateProgram(op_, inputs_, outputs_);
}

std::string Workload::Key() const { return WorkloadKey(canonical_form_); }

std::string WorkloadKey(const std::string& canonical_form) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx",
                static_cast<unsigned long long>(StableHash64(canonical_form)));
  return buf;
}

}  // namespace lathe

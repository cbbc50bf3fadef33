// One workload spec per operator of the registry, each required parameter
// at the same value, shared by the suites that check every operator (an
// odd value leaves a tail for every thread count and tile).
#pragma once

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/workload/registry.h"

namespace lathe::test_support {

inline std::vector<std::string> EveryOperatorSpec(int value) {
  std::vector<std::string> specs;
  for (const OperatorDef& op : Operators()) {
    std::vector<std::string> params;
    for (const ParamSpec& p : op.params) {
      if (p.required()) params.push_back(absl::StrCat(p.name, "=", value));
    }
    specs.push_back(absl::StrCat(op.name, ":", absl::StrJoin(params, ",")));
  }
  return specs;
}

}  // namespace lathe::test_support

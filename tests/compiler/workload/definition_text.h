// Helpers of the tests of definition rewrites (flatten_dims_test.cc,
// block_dims_test.cc): a checked definition from text, and dims as text.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/workload/custom_workload.h"
#include "gtest/gtest.h"

namespace lathe::testing {

inline CustomDefinition Checked(const std::string& expr,
                                const std::string& dims) {
  absl::StatusOr<CustomDefinition> def = ParseCustomDefinition(expr, dims);
  EXPECT_TRUE(def.ok()) << def.status();
  return def.ok() ? *def : CustomDefinition{};
}

// "a=1,b=2": the form ParseDims reads, in name order.
inline std::string DimsText(const std::map<std::string, int64_t>& dims) {
  std::string text;
  for (const auto& [name, extent] : dims) {
    absl::StrAppend(&text, text.empty() ? "" : ",", name, "=", extent);
  }
  return text;
}

}  // namespace lathe::testing

// Checks that a scheduled program computes what the unscheduled one does:
// both run in the reference interpreter on the same random inputs, and every
// output must match (float sums may be reassociated by a schedule, hence the
// tolerance). Used by the primitive tests.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/interp/allclose.h"
#include "compiler/interp/interpreter.h"
#include "compiler/interp/random_fill.h"
#include "compiler/ir/program.h"

namespace lathe::testing {

inline absl::Status CheckSameResult(const Program& original,
                                    const Program& scheduled, uint64_t seed = 1,
                                    double tolerance = 1e-5) {
  std::vector<BufferPtr> params = original.Params();
  std::vector<TensorData> expected, actual;
  for (size_t i = 0; i < params.size(); ++i) {
    expected.push_back(TensorData::Like(*params[i]));
    if (i < original.inputs.size()) FillRandom(&expected.back(), seed + i);
    actual.push_back(expected.back());
  }
  std::vector<TensorData*> expected_args, actual_args;
  for (size_t i = 0; i < params.size(); ++i) {
    expected_args.push_back(&expected[i]);
    actual_args.push_back(&actual[i]);
  }
  absl::Status status = Interpret(original, expected_args);
  if (!status.ok()) {
    return absl::InternalError(
        absl::StrCat("original program: ", status.message()));
  }
  status = Interpret(scheduled, actual_args);
  if (!status.ok()) {
    return absl::InternalError(
        absl::StrCat("scheduled program: ", status.message()));
  }
  for (size_t i = original.inputs.size(); i < params.size(); ++i) {
    status = CheckAllClose(actual[i], expected[i], tolerance, tolerance,
                           absl::StrCat("output ", params[i]->name));
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace lathe::testing

// A tuning task: one workload on one target, with its design spaces and
// what the search needs to know of it.
// Tests: tests/tuner/search/tuner_test.cc.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/program.h"
#include "compiler/schedule/trace.h"
#include "compiler/target/target.h"
#include "compiler/workload/workload.h"

namespace lathe::tuner {

struct Task {
  Workload workload;
  Target target;
  Program initial;
  std::vector<Trace> spaces;
  int64_t flops = 0;
  // How often the task runs per run of the whole model (the task
  // scheduler's weight), e.g. how many layers share this shape.
  double weight = 1;
  std::string key;  // workload key
};

// The task of `workload` on `target` with the default CPU design spaces.
absl::StatusOr<Task> MakeTask(const Workload& workload, const Target& target,
                              double weight);

}  // namespace lathe::tuner

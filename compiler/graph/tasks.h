// The distinct kernel workloads of a partitioned model, with how often each
// occurs: the tuning tasks of a model (`lathe tasks`).
// Tests: tests/compiler/graph/tasks_test.cc.
#pragma once

#include <string>
#include <vector>

#include "compiler/graph/kernel_partition.h"

namespace lathe::graph {

struct ModelTask {
  std::string workload;  // canonical form
  std::string anchor;    // as GraphStep::anchor
  int count = 0;         // occurrences in the model
  double flops = 0;      // of one occurrence
};

// One task per distinct workload, in order of first occurrence.
std::vector<ModelTask> DistinctTasks(const KernelPartition& partition);

}  // namespace lathe::graph

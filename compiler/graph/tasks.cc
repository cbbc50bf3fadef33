#include "compiler/graph/tasks.h"

#include <map>

namespace lathe::graph {

std::vector<ModelTask> DistinctTasks(const KernelPartition& partition) {
  std::vector<ModelTask> tasks;
  std::map<std::string, size_t> index;
  for (const GraphStep& step : partition.steps) {
    if (step.kind != GraphStep::Kind::kKernel) continue;
    auto [it, added] = index.emplace(step.workload, tasks.size());
    if (added) {
      tasks.push_back(ModelTask{step.workload, step.anchor, 0, step.flops});
    }
    ++tasks[it->second].count;
  }
  return tasks;
}

}  // namespace lathe::graph

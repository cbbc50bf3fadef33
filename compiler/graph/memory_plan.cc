#include "compiler/graph/memory_plan.h"

#include <algorithm>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"

namespace lathe::graph {
namespace {

// The values a step reads and the values it writes (materializes).
void StepValues(const Graph& graph, const GraphStep& step,
                std::vector<int>* reads, std::vector<int>* writes) {
  reads->clear();
  writes->clear();
  if (step.kind == GraphStep::Kind::kKernel) {
    if (step.args.empty()) return;
    reads->assign(step.args.begin(), step.args.end() - 1);
    writes->push_back(step.args.back());
    return;
  }
  for (int n : step.nodes) {
    const Node& node = graph.nodes()[n];
    for (int v : node.inputs) {
      if (v != kNoValue) reads->push_back(v);
    }
    for (int v : node.outputs) {
      if (v != kNoValue) writes->push_back(v);
    }
  }
}

struct Interval {
  int root = 0;
  int first = 0;
  int last = 0;
  int64_t bytes = 0;
};

}  // namespace

absl::StatusOr<MemoryPlan> PlanMemory(const Graph& graph,
                                      const KernelPartition& partition) {
  const int num_values = static_cast<int>(graph.values().size());
  MemoryPlan plan;
  plan.offsets.assign(num_values, kNotPlanned);
  plan.storage_of.resize(num_values);
  for (int v = 0; v < num_values; ++v) plan.storage_of[v] = v;

  // 1. Walk the steps: when each value appears, the last step that reads
  //    each storage, and which storages alias steps join.
  constexpr int kBeforeAll = -1;
  constexpr int kNever = std::numeric_limits<int>::min();
  std::vector<int> defined_at(num_values, kNever);
  std::vector<int> last_read(num_values, kNever);
  std::vector<bool> external(num_values, false);
  for (int v : graph.inputs()) {
    defined_at[v] = kBeforeAll;
    external[v] = true;
  }
  for (int v = 0; v < num_values; ++v) {
    if (graph.IsConstant(v)) {
      defined_at[v] = kBeforeAll;
      external[v] = true;
    }
  }
  std::vector<int> reads, writes;
  for (int s = 0; s < static_cast<int>(partition.steps.size()); ++s) {
    const GraphStep& step = partition.steps[s];
    StepValues(graph, step, &reads, &writes);
    // A host or alias step over several nodes may read what an earlier node
    // of the same step wrote: writes are visible before the reads' check.
    for (int v : writes) {
      if (v < 0 || v >= num_values) {
        return absl::InternalError(absl::StrCat(
            "memory plan: step ", s, " writes value id ", v, ", out of range"));
      }
      if (defined_at[v] == kNever) defined_at[v] = s;
    }
    for (int v : reads) {
      if (v < 0 || v >= num_values || defined_at[v] == kNever) {
        return absl::InternalError(absl::StrCat(
            "memory plan: step ", s, " reads ",
            v >= 0 && v < num_values
                ? absl::StrCat("\"", graph.value(v).name, "\"")
                : absl::StrCat("value id ", v),
            ", which no earlier step, input or constant provides"));
      }
      int root = plan.storage_of[v];
      last_read[root] = std::max(last_read[root], s);
    }
    if (step.kind == GraphStep::Kind::kAlias) {
      for (int n : step.nodes) {
        const Node& node = graph.nodes()[n];
        if (node.inputs.empty() || node.inputs[0] == kNoValue) continue;
        int root = plan.storage_of[node.inputs[0]];
        for (int v : node.outputs) {
          if (v != kNoValue) plan.storage_of[v] = root;
        }
      }
    }
  }
  for (int v : graph.outputs()) external[plan.storage_of[v]] = true;

  // 2. The storages to place, with their lifetimes.
  std::vector<Interval> intervals;
  for (int v = 0; v < num_values; ++v) {
    const Value& value = graph.value(v);
    if (plan.storage_of[v] != v || external[v] || defined_at[v] < 0) continue;
    if (value.type.dtype != DType::Float32()) continue;
    int64_t elements = value.type.NumElements();
    if (elements < 0 || elements > std::numeric_limits<int64_t>::max() / 8) {
      return absl::InternalError(absl::StrCat(
          "memory plan: \"", value.name, "\" has ", elements, " elements"));
    }
    Interval interval;
    interval.root = v;
    interval.first = defined_at[v];
    interval.last = std::max(defined_at[v], last_read[v]);
    interval.bytes = AlignToArena(elements * 4);
    if (plan.unshared_bytes >
        std::numeric_limits<int64_t>::max() / 2 - interval.bytes) {
      return absl::InternalError("memory plan: the intermediates overflow");
    }
    plan.unshared_bytes += interval.bytes;
    intervals.push_back(interval);
  }

  // 3. Greedy by size: largest first (ties: earlier first, then by id, so
  //    the plan is deterministic), each at the lowest gap that fits among
  //    the placed ones alive at the same time.
  std::stable_sort(intervals.begin(), intervals.end(),
                   [](const Interval& a, const Interval& b) {
                     if (a.bytes != b.bytes) return a.bytes > b.bytes;
                     return a.first < b.first;
                   });
  std::vector<const Interval*> placed;
  std::vector<std::pair<int64_t, int64_t>> busy;  // [offset, end)
  for (const Interval& interval : intervals) {
    busy.clear();
    for (const Interval* other : placed) {
      if (other->last < interval.first || interval.last < other->first) {
        continue;
      }
      int64_t offset = plan.offsets[other->root];
      busy.emplace_back(offset, offset + other->bytes);
    }
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (const auto& [begin, end] : busy) {
      if (begin - offset >= interval.bytes) break;
      offset = std::max(offset, end);
    }
    plan.offsets[interval.root] = offset;
    plan.peak_bytes = std::max(plan.peak_bytes, offset + interval.bytes);
    placed.push_back(&interval);
  }
  for (int v = 0; v < num_values; ++v) {
    int root = plan.storage_of[v];
    if (root != v) plan.offsets[v] = plan.offsets[root];
  }
  return plan;
}

}  // namespace lathe::graph

// The graph pass pipeline, in order: type inference with constant folding,
// BatchNorm folded into convolutions, eligible 3x3 convolutions split into
// Winograd's kernels, the window counts of average pools that need them,
// dead-node elimination. Each pass
// lives in its own file under passes/; this file is their table of
// contents. The observer sees the graph after each pass (`lathe graph
// --print-after-each`).
// Tests: tests/compiler/graph/pipeline_test.cc.
#pragma once

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "compiler/graph/graph.h"
#include "compiler/graph/kernel_partition.h"

namespace lathe::graph {

using PassObserver = std::function<void(const std::string& pass, const Graph&)>;

// Errors: the graph's contract broken (Graph::Verify), and those of the
// passes (infer_types.h).
absl::Status RunGraphPasses(Graph& graph,
                            const PassObserver& observer = nullptr);

// The passes, then the partition into steps (kernel_partition.h) and the
// activations stored channel-blocked (blocked_layouts.h, which adds the
// blocked constants to `graph`): what every user of a model's kernels
// starts from (api/model.h, the model library, `lathe tasks` and `lathe
// tune MODEL`), so that they agree on the tasks. Errors: those of all.
absl::StatusOr<KernelPartition> RunPassesAndPartition(Graph& graph);

}  // namespace lathe::graph

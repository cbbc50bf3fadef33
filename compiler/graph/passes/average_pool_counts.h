// Gives each AveragePool whose window count varies at the borders (padding
// excluded from the average, or ceil_mode windows past the padding) its
// count tensor as a constant second input, so that its kernel divides by
// the count of each output position (ops/pool.cc). The host evaluation
// ignores that input; graphs that skip this pass run such pools on the host.
// Tests: tests/compiler/graph/passes/average_pool_counts_test.cc.
#pragma once

#include "absl/status/status.h"
#include "compiler/graph/graph.h"

namespace lathe::graph {

// Precondition: types are inferred (infer_types.h).
absl::Status AddAveragePoolCounts(Graph& graph, int* added = nullptr);

}  // namespace lathe::graph

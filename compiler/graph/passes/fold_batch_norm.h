// Folds an inference BatchNormalization into the Conv before it: with
// s = scale / sqrt(var + epsilon) per output channel, the conv's weights
// become W * s and its bias (b - mean) * s + B, and the conv writes the
// BatchNormalization's output. Applies when the conv's output has no other
// reader and is not a graph output, and the weights, bias and the
// BatchNormalization's parameters are constants.
// Tests: tests/compiler/graph/passes/fold_batch_norm_test.cc.
#pragma once

#include "absl/status/status.h"
#include "compiler/graph/graph.h"

namespace lathe::graph {

// Precondition: types are inferred (infer_types.h). Returns how many were
// folded through `folded` when it is not null.
absl::Status FoldBatchNorm(Graph& graph, int* folded = nullptr);

}  // namespace lathe::graph

// The type inference pass: every node's output types from its inputs, in
// topological order, folding as it goes. A node whose inputs are all
// constants is evaluated on the host (op_registry.h) and its outputs become
// constants, so the shape arithmetic PyTorch exports (Shape -> Gather ->
// Unsqueeze -> Concat -> Reshape, Cast, ConstantOfShape) turns into constant
// shapes before the nodes that need them are inferred.
//
// Errors: a graph input without a type; a value whose type cannot be
// inferred, naming the value, its producer node and op, and the reason.
// Folding stops at outputs above kMaxFoldedElements (they stay nodes).
// Tests: tests/compiler/graph/passes/infer_types_test.cc.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "compiler/graph/graph.h"

namespace lathe::graph {

inline constexpr int64_t kMaxFoldedElements = int64_t{1} << 24;

absl::Status InferTypes(Graph& graph);

}  // namespace lathe::graph

// Graph inputs whose values are known before a model runs, made constants:
// they fold like any constant (a shape computed from them becomes known),
// and the graph no longer takes them as inputs. How a model loader binds
// the integer, bool and scalar inputs `lathe run` is given.
// Tests: tests/compiler/graph/bind_inputs_test.cc.
#pragma once

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "compiler/graph/graph.h"
#include "compiler/interp/tensor_data.h"

namespace lathe::graph {

// `graph` with the inputs named in `values` turned into constants holding
// them; its other inputs and its outputs keep their order. Errors
// (InvalidArgument): a value for no input, or of another dtype or shape
// than its input's (naming the input).
absl::StatusOr<Graph> BindInputValues(
    Graph graph, const std::map<std::string, TensorData>& values);

}  // namespace lathe::graph

// Test support: small graphs built by hand, and tensors to put in them.
// Tests: tests/compiler/graph/graph_test.cc.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/graph/graph.h"
#include "compiler/interp/tensor_data.h"

namespace lathe::graph::testing {

inline TensorData Floats(std::vector<int64_t> shape,
                         std::vector<double> values) {
  TensorData t(DType::Float32(), std::move(shape));
  t.values = std::move(values);
  for (double& v : t.values) v = RoundToDType(v, t.dtype);
  return t;
}

inline TensorData Ints(std::vector<int64_t> values,
                       std::vector<int64_t> shape = {-1}) {
  if (shape == std::vector<int64_t>{-1}) {
    shape = {static_cast<int64_t>(values.size())};
  }
  TensorData t(DType::Int64(), std::move(shape));
  for (size_t i = 0; i < values.size(); ++i) {
    t.values[i] = static_cast<double>(values[i]);
  }
  return t;
}

inline TensorData Scalar(double value, DType dtype = DType::Float32()) {
  TensorData t(dtype, {});
  t.values[0] = RoundToDType(value, dtype);
  return t;
}

inline TensorType F32(std::vector<int64_t> shape) {
  return TensorType{DType::Float32(), std::move(shape)};
}

class GraphBuilder {
 public:
  int Input(const std::string& name, TensorType type) {
    int id = graph.AddValue(name, std::move(type));
    graph.AddInput(id);
    return id;
  }
  int Const(const std::string& name, TensorData data) {
    return graph.AddConstant(name, std::move(data));
  }
  // Adds a node with untyped outputs; returns their ids.
  std::vector<int> Add(const std::string& op, std::vector<int> inputs,
                       std::map<std::string, Attr> attrs = {},
                       int num_outputs = 1) {
    Node node;
    node.op = op;
    node.name = absl::StrCat(op, "_", graph.nodes().size());
    node.attrs = std::move(attrs);
    node.inputs = std::move(inputs);
    for (int o = 0; o < num_outputs; ++o) {
      int id = graph.AddValue(absl::StrCat(node.name, "_out", o), TensorType{});
      graph.value(id).typed = false;
      node.outputs.push_back(id);
    }
    std::vector<int> outs = node.outputs;
    graph.AddNode(std::move(node));
    return outs;
  }
  int Add1(const std::string& op, std::vector<int> inputs,
           std::map<std::string, Attr> attrs = {}) {
    return Add(op, std::move(inputs), std::move(attrs))[0];
  }
  void Output(int id) { graph.AddOutput(id); }

  Graph graph;
};

}  // namespace lathe::graph::testing

// The graph IR: a model as a typed dataflow graph of tensor operators with
// constants, what the ONNX importer builds (compiler/frontend/onnx), what the
// passes rewrite (pipeline.h) and what fusion cuts into kernels
// (kernel_partition.h).
//
// Contract:
// - Values are tensors with a static type (dtype and shape; a scalar has
//   shape {}). A value is a graph input, a constant (its data held here), or
//   the output of exactly one node. Value ids index values(); they stay
//   valid while the graph lives (passes mark values and nodes dead instead
//   of erasing them; Compact() renumbers).
// - Nodes are in topological order: every input of nodes()[i] is a graph
//   input, a constant or an output of an earlier node.
// - Operators are named and behave as ONNX's at opset 17 (op_registry.h
//   lists those Lathe has). The importer normalizes the rest: every
//   attribute present with its default filled in, and inputs that older
//   opsets gave as attributes (or the reverse) in the opset-17 form. An
//   optional input that is absent is kNoValue.
// - Only the importer sees ONNX types; the graph holds Lathe's (DType,
//   TensorData).
// Tests: tests/compiler/graph/graph_test.cc.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "compiler/interp/tensor_data.h"
#include "compiler/ir/dtype.h"

namespace lathe::graph {

inline constexpr int kNoValue = -1;

struct TensorType {
  DType dtype = DType::Float32();
  std::vector<int64_t> shape;  // {} for a scalar

  int64_t NumElements() const;
  bool operator==(const TensorType& other) const;
};
std::string TensorTypeText(const TensorType& type);  // "f32[1,3,224,224]"

// An attribute value: int, float, string, or a list of ints or floats (the
// ONNX kinds Lathe's operators use).
using Attr = std::variant<int64_t, double, std::string, std::vector<int64_t>,
                          std::vector<double>>;

struct Value {
  std::string name;  // unique in the graph
  TensorType type;
  std::optional<TensorData> constant;  // set for constants
  int producer = kNoValue;             // node index, or kNoValue
  // False until shape inference (passes/infer_types.h) sets `type`: the
  // importer leaves it false where ONNX could not give a static shape.
  bool typed = true;
  bool dead = false;
};

struct Node {
  std::string op;    // "Conv", "Relu", ... (op_registry.h)
  std::string name;  // the ONNX node's name, or a made-up unique one
  std::map<std::string, Attr> attrs;
  std::vector<int> inputs;   // value ids; kNoValue for an absent optional
  std::vector<int> outputs;  // value ids
  bool dead = false;

  // Typed attribute access; the importer guarantees presence and kind, so a
  // missing attribute is a programming error (LATHE_CHECK).
  int64_t Int(const std::string& key) const;
  double Float(const std::string& key) const;
  const std::string& String(const std::string& key) const;
  const std::vector<int64_t>& Ints(const std::string& key) const;
  const std::vector<double>& Floats(const std::string& key) const;
  bool Has(const std::string& key) const { return attrs.count(key) != 0; }
};

class Graph {
 public:
  // Adds a value; its name must be new (a duplicate is made unique with a
  // suffix). Returns its id.
  int AddValue(std::string name, TensorType type);
  int AddConstant(std::string name, TensorData data);
  // Adds a node after every existing one; sets the outputs' producer.
  int AddNode(Node node);

  void AddInput(int value) { inputs_.push_back(value); }
  void AddOutput(int value) { outputs_.push_back(value); }
  void SetOutput(size_t index, int value) { outputs_[index] = value; }

  const std::vector<Value>& values() const { return values_; }
  std::vector<Value>& values() { return values_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  std::vector<Node>& nodes() { return nodes_; }
  const Value& value(int id) const { return values_[id]; }
  Value& value(int id) { return values_[id]; }
  const std::vector<int>& inputs() const { return inputs_; }
  const std::vector<int>& outputs() const { return outputs_; }

  bool IsConstant(int id) const {
    return id != kNoValue && values_[id].constant.has_value();
  }
  // For each value, the live nodes that read it (rebuilt on each call).
  std::vector<std::vector<int>> Consumers() const;
  // Replaces every read of `from` (by nodes and graph outputs) with `to`.
  void ReplaceUses(int from, int to);
  // Drops dead nodes and values no one reads or produces, renumbering ids.
  void Compact();
  // Checks the contract above (ids in range, topological order, one
  // producer per value, live inputs); names the first violation.
  absl::Status Verify() const;

 private:
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<int> inputs_;
  std::vector<int> outputs_;
};

}  // namespace lathe::graph

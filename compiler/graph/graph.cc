#include "compiler/graph/graph.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/check.h"

namespace lathe::graph {

int64_t TensorType::NumElements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

bool TensorType::operator==(const TensorType& other) const {
  return dtype == other.dtype && shape == other.shape;
}

std::string TensorTypeText(const TensorType& type) {
  std::string prefix;
  switch (type.dtype.code()) {
    case DType::Code::kFloat:
      prefix = absl::StrCat("f", type.dtype.bits());
      break;
    case DType::Code::kInt:
      prefix = absl::StrCat("i", type.dtype.bits());
      break;
    case DType::Code::kUInt:
      prefix = absl::StrCat("u", type.dtype.bits());
      break;
    case DType::Code::kBool:
      prefix = "bool";
      break;
  }
  return absl::StrCat(prefix, "[", absl::StrJoin(type.shape, ","), "]");
}

namespace {

template <typename T>
const T& AttrOf(const Node& node, const std::string& key) {
  auto it = node.attrs.find(key);
  LATHE_CHECK(it != node.attrs.end(), "node ", node.name, " (", node.op,
              ") has no attribute ", key);
  const T* value = std::get_if<T>(&it->second);
  LATHE_CHECK(value != nullptr, "node ", node.name, " (", node.op,
              "): attribute ", key, " has another kind");
  return *value;
}

}  // namespace

int64_t Node::Int(const std::string& key) const {
  return AttrOf<int64_t>(*this, key);
}
double Node::Float(const std::string& key) const {
  return AttrOf<double>(*this, key);
}
const std::string& Node::String(const std::string& key) const {
  return AttrOf<std::string>(*this, key);
}
const std::vector<int64_t>& Node::Ints(const std::string& key) const {
  return AttrOf<std::vector<int64_t>>(*this, key);
}
const std::vector<double>& Node::Floats(const std::string& key) const {
  return AttrOf<std::vector<double>>(*this, key);
}

int Graph::AddValue(std::string name, TensorType type) {
  std::set<std::string> taken;
  bool clash = false;
  for (const Value& v : values_) {
    if (v.name == name) clash = true;
  }
  if (clash) {
    for (const Value& v : values_) taken.insert(v.name);
    std::string base = name;
    for (int i = 1;; ++i) {
      name = absl::StrCat(base, "_", i);
      if (!taken.count(name)) break;
    }
  }
  Value value;
  value.name = std::move(name);
  value.type = std::move(type);
  values_.push_back(std::move(value));
  return static_cast<int>(values_.size()) - 1;
}

int Graph::AddConstant(std::string name, TensorData data) {
  TensorType type{data.dtype, data.shape};
  int id = AddValue(std::move(name), std::move(type));
  values_[id].constant = std::move(data);
  return id;
}

int Graph::AddNode(Node node) {
  int index = static_cast<int>(nodes_.size());
  for (int out : node.outputs) {
    LATHE_CHECK(out >= 0 && out < static_cast<int>(values_.size()), "node ",
                node.name, ": output id ", out, " out of range");
    values_[out].producer = index;
  }
  nodes_.push_back(std::move(node));
  return index;
}

std::vector<std::vector<int>> Graph::Consumers() const {
  std::vector<std::vector<int>> consumers(values_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].dead) continue;
    for (int in : nodes_[i].inputs) {
      if (in == kNoValue) continue;
      std::vector<int>& list = consumers[in];
      if (list.empty() || list.back() != static_cast<int>(i)) {
        list.push_back(static_cast<int>(i));
      }
    }
  }
  return consumers;
}

void Graph::ReplaceUses(int from, int to) {
  for (Node& node : nodes_) {
    for (int& in : node.inputs) {
      if (in == from) in = to;
    }
  }
  for (int& out : outputs_) {
    if (out == from) out = to;
  }
}

void Graph::Compact() {
  // 1. Which values survive: graph inputs and outputs, inputs and outputs of
  //    live nodes.
  std::vector<bool> keep(values_.size(), false);
  for (int v : inputs_) keep[v] = true;
  for (int v : outputs_) keep[v] = true;
  for (const Node& node : nodes_) {
    if (node.dead) continue;
    for (int v : node.inputs) {
      if (v != kNoValue) keep[v] = true;
    }
    for (int v : node.outputs) keep[v] = true;
  }
  // 2. Renumber values and nodes.
  std::vector<int> value_map(values_.size(), kNoValue);
  std::vector<Value> values;
  for (size_t i = 0; i < values_.size(); ++i) {
    if (!keep[i]) continue;
    value_map[i] = static_cast<int>(values.size());
    values.push_back(std::move(values_[i]));
    values.back().dead = false;
  }
  std::vector<Node> nodes;
  std::vector<int> node_map(nodes_.size(), kNoValue);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].dead) continue;
    node_map[i] = static_cast<int>(nodes.size());
    nodes.push_back(std::move(nodes_[i]));
  }
  for (Node& node : nodes) {
    for (int& v : node.inputs) {
      if (v != kNoValue) v = value_map[v];
    }
    for (int& v : node.outputs) v = value_map[v];
  }
  for (Value& value : values) {
    if (value.producer != kNoValue) value.producer = node_map[value.producer];
  }
  for (int& v : inputs_) v = value_map[v];
  for (int& v : outputs_) v = value_map[v];
  values_ = std::move(values);
  nodes_ = std::move(nodes);
}

absl::Status Graph::Verify() const {
  const int num_values = static_cast<int>(values_.size());
  std::vector<int> producer(values_.size(), kNoValue);
  std::vector<bool> available(values_.size(), false);
  for (int v : inputs_) {
    if (v < 0 || v >= num_values) {
      return absl::InternalError(
          absl::StrCat("graph: input id ", v, " out of range"));
    }
    available[v] = true;
  }
  for (int v = 0; v < num_values; ++v) {
    if (values_[v].constant) available[v] = true;
  }
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node& node = nodes_[i];
    if (node.dead) continue;
    for (int in : node.inputs) {
      if (in == kNoValue) continue;
      if (in < 0 || in >= num_values) {
        return absl::InternalError(absl::StrCat("graph: node ", node.name, " (",
                                                node.op, ") reads value id ",
                                                in, " out of range"));
      }
      if (!available[in]) {
        return absl::InternalError(
            absl::StrCat("graph: node ", node.name, " (", node.op, ") reads ",
                         values_[in].name, " before it is produced"));
      }
      if (values_[in].dead) {
        return absl::InternalError(absl::StrCat("graph: node ", node.name, " (",
                                                node.op, ") reads dead value ",
                                                values_[in].name));
      }
    }
    for (int out : node.outputs) {
      if (out < 0 || out >= num_values) {
        return absl::InternalError(absl::StrCat("graph: node ", node.name, " (",
                                                node.op, ") writes value id ",
                                                out, " out of range"));
      }
      if (producer[out] != kNoValue || available[out]) {
        return absl::InternalError(absl::StrCat(
            "graph: value ", values_[out].name, " has more than one producer"));
      }
      if (values_[out].producer != static_cast<int>(i)) {
        return absl::InternalError(
            absl::StrCat("graph: value ", values_[out].name, " names producer ",
                         values_[out].producer, ", but node ", node.name, " (",
                         i, ") writes it"));
      }
      producer[out] = static_cast<int>(i);
      available[out] = true;
    }
  }
  for (int v : outputs_) {
    if (v < 0 || v >= num_values) {
      return absl::InternalError(
          absl::StrCat("graph: output id ", v, " out of range"));
    }
    if (!available[v]) {
      return absl::InternalError(absl::StrCat("graph: output ", values_[v].name,
                                              " is never produced"));
    }
  }
  return absl::OkStatus();
}

}  // namespace lathe::graph

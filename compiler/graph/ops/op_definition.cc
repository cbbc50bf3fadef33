#include "compiler/graph/ops/op_definition.h"

#include <algorithm>
#include <cmath>

namespace lathe::graph {

absl::Status NodeError(const Node& node, const std::string& message) {
  return absl::InvalidArgumentError(
      absl::StrCat("node ", node.name, " (", node.op, "): ", message));
}

absl::Status UnsupportedAttr(const Node& node, const std::string& key,
                             const std::string& value) {
  return absl::UnimplementedError(
      absl::StrCat("node ", node.name, " (", node.op, "): attribute ", key, "=",
                   value, " is not supported"));
}

absl::StatusOr<DType> DataTypeAttr(const Node& node, const std::string& key,
                                   int64_t default_code) {
  const int64_t code = IntAttr(node, key, default_code);
  switch (code) {
    case 1:
      return DType::Float32();
    case 2:
      return DType(DType::Code::kUInt, 8);
    case 3:
      return DType::Int8();
    case 6:
      return DType::Int32();
    case 7:
      return DType::Int64();
    case 9:
      return DType::Bool();
    case 10:
      return DType::Float16();
    case 11:
      return DType(DType::Code::kFloat, 64);
    default:
      return UnsupportedAttr(node, key, absl::StrCat(code));
  }
}

absl::Status NoKernel(const Node& node, const std::string& why) {
  return absl::FailedPreconditionError(absl::StrCat(
      "node ", node.name, " (", node.op, ") has no kernel form: ", why));
}

absl::Status CheckInputCount(const Node& node, size_t min, size_t max) {
  size_t count = node.inputs.size();
  while (count > 0 && node.inputs[count - 1] == kNoValue) --count;
  if (count < min || node.inputs.size() > max) {
    return NodeError(node, absl::StrCat("expects ", min, " to ", max,
                                        " inputs, has ", node.inputs.size()));
  }
  for (size_t i = 0; i < min; ++i) {
    if (node.inputs[i] == kNoValue) {
      return NodeError(node, absl::StrCat("input ", i, " is required"));
    }
  }
  return absl::OkStatus();
}

bool HasInput(const Node& node, size_t i) {
  return i < node.inputs.size() && node.inputs[i] != kNoValue;
}

const TensorType& InputType(const Graph& graph, const Node& node, size_t i) {
  return graph.value(node.inputs[i]).type;
}

const TensorData* ConstantInput(const Graph& graph, const Node& node,
                                size_t i) {
  if (!HasInput(node, i)) return nullptr;
  const Value& value = graph.value(node.inputs[i]);
  return value.constant ? &*value.constant : nullptr;
}

absl::Status CheckFloat(const Graph& graph, const Node& node, size_t i) {
  const TensorType& type = InputType(graph, node, i);
  if (type.dtype != DType::Float32()) {
    return absl::UnimplementedError(absl::StrCat(
        "node ", node.name, " (", node.op, "): input ", i, " (",
        graph.value(node.inputs[i]).name, ") is ", TensorTypeText(type),
        "; dtype ", type.dtype.ToString(), " is not supported (float32 only)"));
  }
  return absl::OkStatus();
}

absl::Status CheckSameDType(const Graph& graph, const Node& node) {
  const DType first = InputType(graph, node, 0).dtype;
  for (size_t i = 1; i < node.inputs.size(); ++i) {
    if (!HasInput(node, i)) continue;
    if (InputType(graph, node, i).dtype != first) {
      return NodeError(
          node,
          absl::StrCat("input ", i, " (", graph.value(node.inputs[i]).name,
                       ") is ", InputType(graph, node, i).dtype.ToString(),
                       ", input 0 is ", first.ToString()));
    }
  }
  return absl::OkStatus();
}

std::vector<int64_t> ConstantInts(const TensorData& data) {
  constexpr double kLimit = 4611686018427387904.0;  // 2^62
  std::vector<int64_t> ints;
  ints.reserve(data.values.size());
  for (double v : data.values) {
    ints.push_back(std::isnan(v)
                       ? 0
                       : static_cast<int64_t>(std::clamp(v, -kLimit, kLimit)));
  }
  return ints;
}

// The attribute helpers never abort on an attribute of another kind than
// expected (a malformed model): numbers convert, anything else reads as
// absent.
int64_t IntAttr(const Node& node, const std::string& key, int64_t fallback) {
  auto it = node.attrs.find(key);
  if (it == node.attrs.end()) return fallback;
  if (const auto* i = std::get_if<int64_t>(&it->second)) return *i;
  if (const auto* f = std::get_if<double>(&it->second)) {
    return static_cast<int64_t>(std::clamp(*f, -4.0e18, 4.0e18));
  }
  return fallback;
}

double FloatAttr(const Node& node, const std::string& key, double fallback) {
  auto it = node.attrs.find(key);
  if (it == node.attrs.end()) return fallback;
  if (const auto* f = std::get_if<double>(&it->second)) return *f;
  if (const auto* i = std::get_if<int64_t>(&it->second)) {
    return static_cast<double>(*i);
  }
  return fallback;
}

std::vector<int64_t> IntsAttr(const Node& node, const std::string& key,
                              std::vector<int64_t> fallback) {
  auto it = node.attrs.find(key);
  if (it == node.attrs.end()) return fallback;
  if (const auto* is = std::get_if<std::vector<int64_t>>(&it->second)) {
    return *is;
  }
  if (const auto* i = std::get_if<int64_t>(&it->second)) return {*i};
  return fallback;
}

std::string StringAttr(const Node& node, const std::string& key,
                       const std::string& fallback) {
  auto it = node.attrs.find(key);
  if (it == node.attrs.end()) return fallback;
  if (const auto* s = std::get_if<std::string>(&it->second)) return *s;
  return fallback;
}

absl::StatusOr<int64_t> NormalizeAxis(const Node& node, int64_t axis,
                                      int64_t rank) {
  if (axis < -rank || axis >= rank) {
    return NodeError(node, absl::StrCat("axis ", axis, " is out of range for",
                                        " rank ", rank));
  }
  return axis < 0 ? axis + rank : axis;
}

absl::StatusOr<std::vector<int64_t>> BroadcastShapes(
    const Node& node, const std::vector<std::vector<int64_t>>& shapes) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  std::vector<int64_t> out(rank, 1);
  for (const auto& s : shapes) {
    const size_t offset = rank - s.size();
    for (size_t a = 0; a < s.size(); ++a) {
      int64_t& o = out[offset + a];
      if (s[a] == o || s[a] == 1) continue;
      if (o == 1) {
        o = s[a];
        continue;
      }
      return NodeError(
          node, absl::StrCat("shapes cannot be broadcast: dim ", offset + a,
                             " is ", o, " and ", s[a]));
    }
  }
  return out;
}

int64_t NumElements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<int64_t> Strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t a = static_cast<int64_t>(shape.size()) - 2; a >= 0; --a) {
    strides[a] = strides[a + 1] * shape[a + 1];
  }
  return strides;
}

absl::Status CheckShape(const Node& node, const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) {
      return NodeError(node, absl::StrCat("output dim ", d, " is negative"));
    }
    if (d > 0 && n > kMaxGraphElements / d) {
      return NodeError(node, "output has too many elements");
    }
    n *= d;
  }
  return absl::OkStatus();
}

std::vector<int64_t> BroadcastOffsets(const std::vector<int64_t>& in_shape,
                                      const std::vector<int64_t>& out_shape) {
  std::vector<int64_t> in_strides = Strides(in_shape);
  std::vector<int64_t> strides(out_shape.size(), 0);
  const size_t offset = out_shape.size() - in_shape.size();
  for (size_t a = 0; a < in_shape.size(); ++a) {
    strides[offset + a] = in_shape[a] == 1 ? 0 : in_strides[a];
  }
  std::vector<int64_t> offsets;
  offsets.reserve(static_cast<size_t>(NumElements(out_shape)));
  ForEachIndex(out_shape, [&](const std::vector<int64_t>& index) {
    int64_t o = 0;
    for (size_t a = 0; a < index.size(); ++a) o += index[a] * strides[a];
    offsets.push_back(o);
  });
  return offsets;
}

void RoundValues(TensorData& data) {
  for (double& v : data.values) v = RoundToDType(v, data.dtype);
}

}  // namespace lathe::graph

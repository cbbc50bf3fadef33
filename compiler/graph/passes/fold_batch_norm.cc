#include "compiler/graph/passes/fold_batch_norm.h"

#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {

absl::Status FoldBatchNorm(Graph& graph, int* folded) {
  int count = 0;
  std::vector<std::vector<int>> consumers = graph.Consumers();
  std::vector<bool> is_output(graph.values().size(), false);
  for (int v : graph.outputs()) is_output[v] = true;
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    const Node& bn = graph.nodes()[i];
    if (bn.dead || bn.op != "BatchNormalization" || bn.outputs.size() != 1 ||
        bn.inputs.size() != 5) {
      continue;
    }
    const int x = bn.inputs[0];
    const int producer = graph.value(x).producer;
    if (producer == kNoValue || graph.nodes()[producer].dead) continue;
    const Node& conv = graph.nodes()[producer];
    if (conv.op != "Conv" || consumers[x].size() != 1 || is_output[x]) continue;
    bool constants = true;
    for (int in : bn.inputs) {
      if (in != x && !graph.IsConstant(in)) constants = false;
    }
    if (!graph.IsConstant(conv.inputs[1])) constants = false;
    const bool has_bias = conv.inputs.size() > 2 && conv.inputs[2] != kNoValue;
    if (has_bias && !graph.IsConstant(conv.inputs[2])) constants = false;
    if (!constants) continue;
    // 1. s = scale / sqrt(var + epsilon) per output channel.
    const double epsilon = FloatAttr(bn, "epsilon", 1e-5);
    const TensorData& scale = *graph.value(bn.inputs[1]).constant;
    const TensorData& shift = *graph.value(bn.inputs[2]).constant;
    const TensorData& mean = *graph.value(bn.inputs[3]).constant;
    const TensorData& var = *graph.value(bn.inputs[4]).constant;
    TensorData weight = *graph.value(conv.inputs[1]).constant;
    const int64_t channels = weight.shape.empty() ? 0 : weight.shape[0];
    if (static_cast<int64_t>(scale.values.size()) != channels) continue;
    std::vector<double> s(channels);
    for (int64_t c = 0; c < channels; ++c) {
      s[c] = scale.values[c] / std::sqrt(var.values[c] + epsilon);
    }
    // 2. The new weights and bias.
    const int64_t per_channel = channels == 0 ? 0 : weight.size() / channels;
    for (int64_t e = 0; e < weight.size(); ++e) {
      weight.values[e] =
          RoundToDType(weight.values[e] * s[e / per_channel], weight.dtype);
    }
    TensorData bias(DType::Float32(), {channels});
    for (int64_t c = 0; c < channels; ++c) {
      const double b =
          has_bias ? graph.value(conv.inputs[2]).constant->values[c] : 0.0;
      bias.values[c] = RoundToDType(
          (b - mean.values[c]) * s[c] + shift.values[c], DType::Float32());
    }
    // 3. Rewire: the conv reads the new constants and writes the BN output.
    const std::string base = conv.name;
    const int w_id =
        graph.AddConstant(base + "_folded_weight", std::move(weight));
    const int b_id = graph.AddConstant(base + "_folded_bias", std::move(bias));
    const int bn_out = graph.nodes()[i].outputs[0];
    Node& c = graph.nodes()[producer];
    c.inputs.resize(3, kNoValue);
    c.inputs[1] = w_id;
    c.inputs[2] = b_id;
    c.outputs[0] = bn_out;
    graph.value(bn_out).producer = producer;
    graph.value(x).dead = true;
    graph.value(x).producer = kNoValue;
    graph.nodes()[i].dead = true;
    ++count;
  }
  if (folded != nullptr) *folded = count;
  return absl::OkStatus();
}

}  // namespace lathe::graph

// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opset 13): the
// input (or the log-softmax of the scores over axis 1) picked at each
// target class, negated and weighted (optional per-class weights, targets
// equal to ignore_index count nothing), then reduced by `reduction`: none,
// sum, or mean (divided by the total weight). SoftmaxCrossEntropyLoss's
// optional second output is the log-softmax. Host evaluation only.
#include <cmath>
#include <limits>

#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

bool IsCrossEntropy(const Node& node) {
  return node.op == "SoftmaxCrossEntropyLoss";
}

absl::StatusOr<std::vector<TensorType>> InferLoss(const Graph& graph,
                                                  const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 2, 3));
  const TensorType& x = InputType(graph, node, 0);
  const TensorType& target = InputType(graph, node, 1);
  if (!x.dtype.is_float()) return NodeError(node, "input must be float");
  if (!target.dtype.is_int()) return NodeError(node, "target must be integer");
  if (x.shape.size() < 2) return NodeError(node, "input rank below 2");
  std::vector<int64_t> expected = {x.shape[0]};
  expected.insert(expected.end(), x.shape.begin() + 2, x.shape.end());
  if (target.shape != expected) {
    return NodeError(node, "target shape must be the input's without axis 1");
  }
  if (HasInput(node, 2) &&
      InputType(graph, node, 2).shape != std::vector<int64_t>{x.shape[1]}) {
    return NodeError(node, "weight must have one value per class");
  }
  const std::string reduction = StringAttr(node, "reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean") {
    return UnsupportedAttr(node, "reduction", reduction);
  }
  std::vector<TensorType> types = {TensorType{
      x.dtype, reduction == "none" ? expected : std::vector<int64_t>{}}};
  if (IsCrossEntropy(node)) types.push_back(x);
  return types;
}

absl::StatusOr<std::vector<TensorData>> EvalLoss(
    const Node& node, const std::vector<const TensorData*>& in) {
  const TensorData& x = *in[0];
  const TensorData& target = *in[1];
  const TensorData* weight = in.size() > 2 ? in[2] : nullptr;
  const int64_t n = x.shape[0], classes = x.shape[1];
  const int64_t inner = classes == 0 ? 0 : x.size() / (n * classes);
  // 1. Log-probabilities: the input, or its log-softmax over axis 1.
  TensorData log_prob = x;
  if (IsCrossEntropy(node)) {
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t i = 0; i < inner; ++i) {
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t c = 0; c < classes; ++c) {
          mx = std::max(mx, x.values[(b * classes + c) * inner + i]);
        }
        double sum = 0;
        for (int64_t c = 0; c < classes; ++c) {
          sum += std::exp(x.values[(b * classes + c) * inner + i] - mx);
        }
        for (int64_t c = 0; c < classes; ++c) {
          double& v = log_prob.values[(b * classes + c) * inner + i];
          v = x.values[(b * classes + c) * inner + i] - mx - std::log(sum);
        }
      }
    }
  }
  // 2. The weighted losses.
  const bool has_ignore = node.Has("ignore_index");
  const int64_t ignore = IntAttr(node, "ignore_index", 0);
  const std::vector<int64_t> targets = ConstantInts(target);
  TensorData loss(x.dtype, target.shape);
  double total = 0, total_weight = 0;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t t = targets[b * inner + i];
      double value = 0;
      if (!(has_ignore && t == ignore)) {
        if (t < 0 || t >= classes) {
          return NodeError(
              node, absl::StrCat("target ", t, " is out of range for ", classes,
                                 " classes"));
        }
        const double w = weight != nullptr ? weight->values[t] : 1.0;
        value = -log_prob.values[(b * classes + t) * inner + i] * w;
        total_weight += w;
      }
      loss.values[b * inner + i] = value;
      total += value;
    }
  }
  const std::string reduction = StringAttr(node, "reduction", "mean");
  std::vector<TensorData> out;
  if (reduction == "none") {
    out.push_back(std::move(loss));
  } else {
    TensorData scalar(x.dtype, {});
    scalar.values[0] = reduction == "sum" ? total : total / total_weight;
    out.push_back(std::move(scalar));
  }
  RoundValues(out[0]);
  if (IsCrossEntropy(node)) {
    RoundValues(log_prob);
    out.push_back(std::move(log_prob));
  }
  return out;
}

}  // namespace

std::vector<OpDef> LossOps() {
  return {{"NegativeLogLikelihoodLoss", FusionRole::kHost, InferLoss, EvalLoss,
           nullptr},
          {"SoftmaxCrossEntropyLoss", FusionRole::kHost, InferLoss, EvalLoss,
           nullptr}};
}

}  // namespace lathe::graph

// Cast: conversion to the dtype of attribute `to` (an ONNX TensorProto data
// type code), or CastLike: to the dtype of input 1. Float to integer
// truncates toward zero; to bool is "!= 0".
#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

absl::StatusOr<std::vector<TensorType>> InferCast(const Graph& graph,
                                                  const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 1, 1));
  LATHE_ASSIGN_OR_RETURN(DType to, DataTypeAttr(node, "to", 0));
  return std::vector<TensorType>{
      TensorType{to, InputType(graph, node, 0).shape}};
}

absl::StatusOr<std::vector<TensorData>> EvalCast(
    const Node& node, const std::vector<const TensorData*>& in) {
  LATHE_ASSIGN_OR_RETURN(DType to, DataTypeAttr(node, "to", 0));
  TensorData out = *in[0];
  out.dtype = to;
  RoundValues(out);
  return std::vector<TensorData>{std::move(out)};
}

absl::StatusOr<std::vector<TensorType>> InferCastLike(const Graph& graph,
                                                      const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 2, 2));
  return std::vector<TensorType>{TensorType{InputType(graph, node, 1).dtype,
                                            InputType(graph, node, 0).shape}};
}

absl::StatusOr<std::vector<TensorData>> EvalCastLike(
    const Node&, const std::vector<const TensorData*>& in) {
  TensorData out = *in[0];
  out.dtype = in[1]->dtype;
  RoundValues(out);
  return std::vector<TensorData>{std::move(out)};
}

}  // namespace

std::vector<OpDef> CastOps() {
  return {
      {"Cast", FusionRole::kHost, InferCast, EvalCast, nullptr},
      {"CastLike", FusionRole::kHost, InferCastLike, EvalCastLike, nullptr}};
}

}  // namespace lathe::graph

// Cast: conversion to the dtype of attribute `to` (an ONNX TensorProto data
// type code), or CastLike: to the dtype of input 1. Float to integer
// truncates toward zero; to bool is "!= 0".
#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {
namespace {

absl::StatusOr<DType> CastTarget(const Node& node) {
  const int64_t to = IntAttr(node, "to", 0);
  switch (to) {
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
      return UnsupportedAttr(node, "to", absl::StrCat(to));
  }
}

absl::StatusOr<std::vector<TensorType>> InferCast(const Graph& graph,
                                                  const Node& node) {
  LATHE_RETURN_IF_ERROR(CheckInputCount(node, 1, 1));
  LATHE_ASSIGN_OR_RETURN(DType to, CastTarget(node));
  return std::vector<TensorType>{
      TensorType{to, InputType(graph, node, 0).shape}};
}

absl::StatusOr<std::vector<TensorData>> EvalCast(
    const Node& node, const std::vector<const TensorData*>& in) {
  LATHE_ASSIGN_OR_RETURN(DType to, CastTarget(node));
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

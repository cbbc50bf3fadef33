// The geometry of sliding windows (Conv, ConvTranspose, MaxPool,
// AveragePool): kernel, strides, dilations and pads per spatial axis, with
// auto_pad resolved to explicit pads, and the output extents.
//
// Private to compiler/graph/ops.
// Tests: tests/compiler/graph/ops/conv_test.cc.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/graph/graph.h"

namespace lathe::graph {

struct Window {
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads_begin;
  std::vector<int64_t> pads_end;
  std::vector<int64_t> out;  // output extents
  bool padded() const;       // any pad above zero
};

// The window of a node over `in` (the spatial extents) with the given kernel
// extents, from its strides, dilations, pads and auto_pad attributes.
// `ceil_mode` rounds the output extents up (pools). Errors name the node and
// attribute: lengths that differ from the rank, a non-positive stride or
// dilation, negative pads, an empty output.
absl::StatusOr<Window> ComputeWindow(const Node& node,
                                     const std::vector<int64_t>& in,
                                     const std::vector<int64_t>& kernel,
                                     bool ceil_mode);

}  // namespace lathe::graph

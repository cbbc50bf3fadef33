// Rewrites a custom definition into the same computation over fewer loops:
// the form a model's fused groups are tuned in (compiler/graph/
// kernel_partition.h), so that the tiler sees one long loop where ONNX's
// layout gives it two short ones.
//
// Two rewrites, each leaving every tensor's memory unchanged (row-major
// element order and count), so a kernel of the result is called with the
// same buffers as one of the input:
//
// 1. A reduction variable of extent 1 that only its statement uses is
//    dropped (read at 0): a 1x1 convolution's kernel indices. A statement
//    keeps its first reduction variable when all have extent 1, as a
//    reduction needs one.
// 2. Two variables a, b are merged into one of extent |a|·|b| where every
//    index that mentions either is one of two adjacent dimensions d, d+1 of
//    an access that reads (or writes) a at d and b at d+1 whole: plain
//    variables, no offset or stride, the tensor's extents there being
//    exactly |a| and |b|. The merge is taken for every access of each
//    tensor involved or not at all, and the tensors lose dimension d+1
//    (a declared input's shape [.., n, m, ..] becomes [.., n·m, ..]).
//    Repeated while a merge applies, so an element-wise chain over
//    [1,24,56,56] with a per-channel bias becomes [1,24,3136], and a 1x1
//    stride-1 convolution's spatial dimensions become one.
//
// Pads, broadcasts, strides, windows and transposes keep their dimensions
// apart: an index such as 2*h, h+r-1 or a permuted pair blocks the merge of
// its variable. Variable names are kept (the merged one takes the first
// name, a), so an already flat definition comes back unchanged.
// Tests: tests/compiler/workload/flatten_dims_test.cc.
#pragma once

#include "absl/status/statusor.h"
#include "compiler/workload/custom_workload.h"

namespace lathe {

// The flattened definition, checked again (CheckCustomDefinition). Errors
// only from that check (Internal: a rewrite that broke the definition).
absl::StatusOr<CustomDefinition> FlattenDims(const CustomDefinition& def);

}  // namespace lathe

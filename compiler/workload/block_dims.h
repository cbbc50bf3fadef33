// Rewrites a custom definition so that chosen tensors are stored blocked:
// dimension d of extent C split into C/b blocks, the b elements of a block
// moved to a new last dimension. A [1,C,H,W] activation blocked at 1 by 16
// is NCHW16c ([1,C/16,H,W,16]): a vector of 16 channels at each pixel, what
// a depthwise convolution's vector loop wants where NCHW gives it strided or
// short rows. The step towards layouts chosen between a model's kernels
// (compiler/graph/kernel_partition.h): a producer and its consumers agree on
// the blocked form of the value between them, and constant weights are
// reordered once, at load.
//
// The rewrite follows the variables: every access of a blocked tensor must
// index dimension d with a plain variable over the whole dimension (v, not
// 2*v or v+r-1); each such variable is split everywhere it appears, v =
// b*vo + vi (vo in its place, vi the last index of blocked accesses; other
// indices read b*vo + vi). Intermediates whose defining statement writes a
// split variable are blocked along with it, and their reads must then be
// plain too; so an epilogue computes in the blocked layout of the tensor it
// writes. Unblocked inputs that mention a split variable read the same
// elements as before, through b*vo + vi. A reduction over a split variable
// sums over vo, then vi: the same order as over v.
// Tests: tests/compiler/workload/block_dims_test.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/workload/custom_workload.h"

namespace lathe {

struct DimBlock {
  std::string tensor;  // an input or the output
  int dim = 0;         // the dimension split, counted from 0
  int64_t block = 0;   // elements per block: at least 2, dividing its extent
};

struct BlockedDefinition {
  CustomDefinition definition;
  // The inputs and the output stored blocked: those requested, and with
  // block_constants the constant inputs that followed.
  std::vector<DimBlock> blocked;
};

// The blocked definition, checked again (CheckCustomDefinition). With
// block_constants, a constant input (`const`: a weight the caller can
// reorder once) read with a split variable over a whole dimension is
// blocked there too, as an intermediate is, so that its reads follow the
// lanes rather than stride across them. Errors: InvalidArgument for a
// request that names no input or output, a dimension out of range, a block
// below 2 or not dividing the extent, a tensor named twice;
// FailedPrecondition, naming the tensor, the dimension and the index, when
// an access does not index the dimension with a plain variable over it
// whole, a variable would be split by two block sizes, a tensor would be
// blocked along two dimensions, or the output (not requested) would have to
// be blocked.
absl::StatusOr<BlockedDefinition> BlockDims(const CustomDefinition& def,
                                            const std::vector<DimBlock>& blocks,
                                            bool block_constants = false);

// The tensor's data in blocked order: element (.., c, ..) of `values` with
// row-major `shape` goes to (.., c / block, .., c % block). Precondition:
// dim < shape.size(), block divides shape[dim], values.size() is the
// product of shape.
template <typename T>
std::vector<T> BlockValues(const std::vector<T>& values,
                           const std::vector<int64_t>& shape, int dim,
                           int64_t block) {
  // Row-major: [outer][C][inner] -> [outer][C / block][inner][block].
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < dim; ++d) outer *= shape[d];
  for (size_t d = dim + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t channels = shape[dim];
  std::vector<T> out(values.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t i = 0; i < inner; ++i) {
        out[((o * (channels / block) + c / block) * inner + i) * block +
            c % block] = values[(o * channels + c) * inner + i];
      }
    }
  }
  return out;
}

}  // namespace lathe

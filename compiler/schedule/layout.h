// Layouts of cache buffers: how cache_read / cache_write pack a buffer.
//
// Each dimension d of the original buffer is split by splits[d] (1 = not
// split) into an outer dimension of extent ceil(extent / splits[d]) and an
// inner one of extent splits[d]; then the resulting dimensions are permuted:
// new dimension i is split dimension permutation[i]. Example, packing B[K, N]
// as [N / 16][K][16] (panels for a GEMM micro-kernel): splits {1, 16} gives
// (k, n_outer, n_inner); permutation {1, 0, 2}. Empty = identity.
// Tests: tests/compiler/schedule/layout_test.cc.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/expr.h"

namespace lathe {

struct Layout {
  std::vector<int64_t> splits;
  std::vector<int64_t> permutation;
  bool empty() const { return splits.empty() && permutation.empty(); }
};

// Checks the layout against a buffer shape; returns the new shape.
// Errors name what does not fit ("layout: 3 splits for a buffer of rank 2").
absl::StatusOr<std::vector<int64_t>> LayoutShape(
    const Layout& layout, const std::vector<int64_t>& shape);
// Maps indices of the original buffer to indices of the laid-out one.
std::vector<Expr> LayoutIndices(const Layout& layout,
                                const std::vector<Expr>& indices);

}  // namespace lathe

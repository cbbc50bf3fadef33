#include "compiler/schedule/layout.h"

#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/schedule/padding_limit.h"

namespace lathe {

namespace {
std::vector<int64_t> SplitsOrOnes(const Layout& layout, size_t rank) {
  return layout.splits.empty() ? std::vector<int64_t>(rank, 1) : layout.splits;
}
}  // namespace

absl::StatusOr<std::vector<int64_t>> LayoutShape(
    const Layout& layout, const std::vector<int64_t>& shape) {
  if (layout.empty()) return shape;
  std::vector<int64_t> splits = SplitsOrOnes(layout, shape.size());
  if (splits.size() != shape.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("layout: ", splits.size(), " splits for a buffer of rank ",
                     shape.size()));
  }
  std::vector<int64_t> split_shape;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (splits[d] < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("layout: split ", splits[d], " of dimension ", d,
                       " is not positive"));
    }
    if (splits[d] == 1) {
      split_shape.push_back(shape[d]);
      continue;
    }
    const int64_t outer = shape[d] / splits[d] + (shape[d] % splits[d] != 0);
    const int64_t max_padded = MaxPaddedExtent(shape[d]);
    if (SaturatingProduct(outer, splits[d], max_padded + 1) > max_padded) {
      return absl::InvalidArgumentError(absl::StrCat(
          "layout: split ", splits[d], " of dimension ", d, " (extent ",
          shape[d], ") pads it past ", max_padded,
          " elements (at most twice its extent, or its extent + 64)"));
    }
    split_shape.push_back(outer);
    split_shape.push_back(splits[d]);
  }
  if (layout.permutation.empty()) return split_shape;
  if (layout.permutation.size() != split_shape.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "layout: permutation of ", layout.permutation.size(),
        " dimensions for ", split_shape.size(), " dimensions after splitting"));
  }
  std::set<int64_t> seen;
  std::vector<int64_t> result;
  for (int64_t p : layout.permutation) {
    if (p < 0 || p >= static_cast<int64_t>(split_shape.size()) ||
        !seen.insert(p).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "layout: permutation entry ", p, " is out of range or repeated"));
    }
    result.push_back(split_shape[p]);
  }
  return result;
}

std::vector<Expr> LayoutIndices(const Layout& layout,
                                const std::vector<Expr>& indices) {
  if (layout.empty()) return indices;
  std::vector<int64_t> splits = SplitsOrOnes(layout, indices.size());
  std::vector<Expr> split_indices;
  for (size_t d = 0; d < indices.size(); ++d) {
    if (splits[d] == 1) {
      split_indices.push_back(indices[d]);
    } else {
      split_indices.push_back(FloorDiv(indices[d], splits[d]));
      split_indices.push_back(FloorMod(indices[d], splits[d]));
    }
  }
  if (layout.permutation.empty()) return split_indices;
  std::vector<Expr> result;
  for (int64_t p : layout.permutation) result.push_back(split_indices[p]);
  return result;
}

}  // namespace lathe

// A tile footprint: how many elements the tiles of a block's inputs hold,
// from the tile of each of its loops, as a flat list of integers that a
// trace can carry (check_footprint's attribute) and a design space can
// build from a block's indices (gpu_tile_choice.h's TileFootprintLayout).
//
// The layout: the number of inputs, then for each input the number of its
// index dimensions, then for each dimension the number of its terms, then
// for each term its coefficient, its bound, its number of factors and that
// many indices into the factors. The footprint is the sum over the inputs
// of the product over their dimensions of
//   1 + sum over the terms of |coefficient| x (min(product of its factors,
//   bound) - 1):
// an affine index sum c_l x loop_l spans 1 + sum |c_l| (tile_l - 1)
// elements when each loop l covers tile_l of its iterations, its tile the
// product of its factors but never more than its extent, the bound (a
// convolution's p + r: p's tile plus r's, less one: the halo).
// Tests: tests/compiler/schedule/footprint_test.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace lathe {

// Bounds on a layout read from a trace, whatever its source.
inline constexpr size_t kMaxFootprintLayout = 4096;
inline constexpr int64_t kMaxFootprintCoefficient = int64_t{1} << 20;
inline constexpr int64_t kMaxFootprintBound = int64_t{1} << 40;

// The footprint of `layout` over `factors` (each at least 1), saturated:
// min(footprint, cap + 1), so that a footprint past `cap` is only compared.
// Errors: InvalidArgument naming the position for a malformed layout (a
// count past its end, a factor index out of range, a coefficient past
// kMaxFootprintCoefficient, a bound below 1 or past kMaxFootprintBound, a
// layout longer than kMaxFootprintLayout or with words left over), a factor
// below 1 or a cap below 0.
absl::StatusOr<int64_t> EvaluateFootprint(const std::vector<int64_t>& layout,
                                          const std::vector<int64_t>& factors,
                                          int64_t cap);

}  // namespace lathe

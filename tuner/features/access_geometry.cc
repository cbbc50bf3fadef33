#include "tuner/features/access_geometry.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>

#include "compiler/ir/expr_functor.h"

namespace lathe::tuner {
namespace {

// The unique elements and lines of the union of the tuples' bounding boxes
// under `ranges`.
void Footprint(const BufferUse& use, const VarRanges& ranges, double* elements,
               double* lines) {
  const std::vector<int64_t>& shape = use.buffer->shape;
  const size_t rank = shape.size();
  std::vector<double> width(rank, 1);
  for (size_t k = 0; k < rank; ++k) {
    const double size = static_cast<double>(std::max<int64_t>(1, shape[k]));
    double lo = std::numeric_limits<double>::infinity();
    double hi = -std::numeric_limits<double>::infinity();
    for (const std::vector<Expr>& tuple : use.index_tuples) {
      if (k >= tuple.size()) continue;
      Interval iv = BoundOf(tuple[k], ranges);
      if (!iv.is_bounded()) {  // unknown: the whole dimension
        lo = 0;
        hi = size - 1;
        break;
      }
      lo = std::min(lo, static_cast<double>(iv.min));
      hi = std::max(hi, static_cast<double>(iv.max));
    }
    width[k] = hi >= lo ? std::clamp(hi - lo + 1, 1.0, size) : 1;
  }
  double total = 1;
  for (double w : width) total *= w;
  *elements = total;
  // Contiguous runs: the last dimension, extended outwards while the
  // dimensions inside are covered in full.
  double run = rank > 0 ? width[rank - 1] : 1;
  size_t k = rank > 0 ? rank - 1 : 0;
  while (k > 0 && width[k] == static_cast<double>(shape[k])) {
    run *= width[k - 1];
    --k;
  }
  double runs = 1;
  for (size_t j = 0; j < k; ++j) runs *= width[j];
  const double bytes = static_cast<double>(use.buffer->dtype.bytes());
  *lines = runs * std::ceil(run * bytes / static_cast<double>(kCacheLineBytes));
}

// The flat row-major index of a tuple with every variable at a point of
// `ranges`; nullopt when an index is not a point (not an affine function of
// the loop variables alone, e.g. an indirect load).
std::optional<double> FlatIndex(const std::vector<Expr>& tuple,
                                const std::vector<int64_t>& shape,
                                const VarRanges& ranges) {
  double flat = 0;
  double row_stride = 1;
  for (size_t k = tuple.size(); k-- > 0;) {
    Interval iv = BoundOf(tuple[k], ranges);
    if (!iv.is_point()) return std::nullopt;
    flat += static_cast<double>(iv.min) * row_stride;
    if (k < shape.size()) row_stride *= static_cast<double>(shape[k]);
  }
  return flat;
}

}  // namespace

void ComputeAccessGeometry(StoreContext* store) {
  const size_t n = store->loops.size();
  // 1. Footprints, from the whole nest (d = 0) inwards: at depth d the loops
  //    above d are held at their first iteration.
  VarRanges ranges;
  for (const LoopFrame& l : store->loops) {
    ranges[l.loop->var.get()] = Interval::Extent(l.extent);
  }
  for (BufferUse& use : store->buffers) {
    use.footprint_elements.assign(n + 1, 1);
    use.footprint_lines.assign(n + 1, 1);
    use.strides.assign(n, 0);
    use.uses_loop.assign(n, false);
  }
  for (size_t d = 0; d <= n; ++d) {
    for (BufferUse& use : store->buffers) {
      Footprint(use, ranges, &use.footprint_elements[d],
                &use.footprint_lines[d]);
    }
    if (d < n) ranges[store->loops[d].loop->var.get()] = Interval::Point(0);
  }
  // 2. Strides: every variable is now at 0; step each loop's to 1 and see
  //    how far the flat index moves (a finite difference, so that a fused
  //    loop's `f // 30` and `f % 30` get the stride of their first step).
  for (BufferUse& use : store->buffers) {
    std::vector<std::optional<double>> base;
    for (const std::vector<Expr>& t : use.index_tuples) {
      base.push_back(FlatIndex(t, use.buffer->shape, ranges));
    }
    for (size_t l = 0; l < n; ++l) {
      const Expr& var = store->loops[l].loop->var;
      ranges[var.get()] = Interval::Point(1);
      double stride = 0;
      for (size_t t = 0; t < use.index_tuples.size(); ++t) {
        std::optional<double> moved =
            FlatIndex(use.index_tuples[t], use.buffer->shape, ranges);
        if (moved.has_value() && base[t].has_value()) {
          stride = std::max(stride, std::fabs(*moved - *base[t]));
        }
        for (const Expr& index : use.index_tuples[t]) {
          if (UsesVar(index, var)) use.uses_loop[l] = true;
        }
      }
      use.strides[l] = static_cast<int64_t>(stride);
      ranges[var.get()] = Interval::Point(0);
    }
  }
  // 3. The read slots, costliest first.
  store->read_order.clear();
  for (size_t i = 1; i < store->buffers.size(); ++i) {
    store->read_order.push_back(static_cast<int>(i));
  }
  std::vector<double> lines(store->buffers.size());
  for (size_t i = 0; i < store->buffers.size(); ++i) {
    lines[i] = LinesAccessed(*store, store->buffers[i]);
  }
  std::stable_sort(store->read_order.begin(), store->read_order.end(),
                   [&](int a, int b) {
                     if (lines[a] != lines[b]) return lines[a] > lines[b];
                     return store->buffers[a].footprint_elements[0] >
                            store->buffers[b].footprint_elements[0];
                   });
}

double BytesAccessed(const StoreContext& store, const BufferUse& use) {
  return store.executions * use.num_accesses * use.buffer->dtype.bytes();
}

int64_t InnermostNonZeroStride(const BufferUse& use) {
  for (size_t l = use.strides.size(); l-- > 0;) {
    if (use.strides[l] != 0) return use.strides[l];
  }
  return 0;
}

double LinesAccessed(const StoreContext& store, const BufferUse& use) {
  for (size_t l = use.strides.size(); l-- > 0;) {
    if (use.strides[l] == 0) continue;
    double steps = store.guard_fraction;
    for (size_t i = 0; i <= l; ++i)
      steps *= static_cast<double>(store.loops[i].extent);
    const double step_bytes =
        static_cast<double>(use.strides[l]) * use.buffer->dtype.bytes();
    return steps *
           std::min(1.0, step_bytes / static_cast<double>(kCacheLineBytes));
  }
  return 1;
}

}  // namespace lathe::tuner

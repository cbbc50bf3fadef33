// How far a split may pad what it splits.
//
// A split whose factors multiply to more than the loop's extent pads the
// loop (the tail iterations are guarded off), and a layout split larger
// than its dimension pads the buffer. Some padding is useful: a vector
// panel of 16 over 8 elements, a loop of 28 vectorized by 16. Factors far
// beyond the extent are not a schedule anyone means, and a trace carrying
// them (edited, or imported from another database) made kernels that ran
// for centuries or, with products that overflowed int64, buffers of zero
// elements that the kernel then read and wrote past. So a split may make
// at most MaxPaddedExtent(extent) iterations or elements of its dimension.
// Tests: tests/compiler/schedule/primitive/split_test.cc,
// tests/compiler/schedule/layout_test.cc.
#pragma once

#include <algorithm>
#include <cstdint>

namespace lathe {

inline int64_t MaxPaddedExtent(int64_t extent) {
  return std::max(2 * extent, extent + 64);
}

// a * b, or `cap` when the product exceeds it (or overflows); a, b >= 0.
inline int64_t SaturatingProduct(int64_t a, int64_t b, int64_t cap) {
  int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product) || product > cap) return cap;
  return product;
}

}  // namespace lathe

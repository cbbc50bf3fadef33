// Tile footprints (footprint.h).
#include "compiler/schedule/footprint.h"

#include <algorithm>
#include <cstdlib>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace lathe {
namespace {

// a x b, or cap + 1 once past cap (a, b >= 0).
int64_t SaturatingProduct(int64_t a, int64_t b, int64_t cap) {
  if (a == 0 || b == 0) return 0;
  if (a > (cap + 1) / b) return cap + 1;
  return std::min(a * b, cap + 1);
}

int64_t SaturatingSum(int64_t a, int64_t b, int64_t cap) {
  return a > cap + 1 - b ? cap + 1 : a + b;
}

}  // namespace

absl::StatusOr<int64_t> EvaluateFootprint(const std::vector<int64_t>& layout,
                                          const std::vector<int64_t>& factors,
                                          int64_t cap) {
  if (cap < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("footprint: cap ", cap, " is below 0"));
  }
  if (layout.size() > kMaxFootprintLayout) {
    return absl::InvalidArgumentError(
        absl::StrCat("footprint: a layout of ", layout.size(),
                     " words, more than ", kMaxFootprintLayout));
  }
  for (int64_t f : factors) {
    if (f < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("footprint: factor ", f, " is below 1"));
    }
  }
  size_t at = 0;
  // The next word, a count or index in [0, limit).
  auto next = [&](int64_t limit, const char* what) -> absl::StatusOr<int64_t> {
    if (at >= layout.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("footprint: the layout ends at word ", at, " where ",
                       what, " was expected"));
    }
    const int64_t v = layout[at];
    if (v < 0 || v >= limit) {
      return absl::InvalidArgumentError(
          absl::StrCat("footprint: word ", at, " (", what, ") is ", v,
                       ", not in [0, ", limit, ")"));
    }
    ++at;
    return v;
  };
  const int64_t words = static_cast<int64_t>(layout.size()) + 1;
  absl::StatusOr<int64_t> inputs = next(words, "a count of inputs");
  if (!inputs.ok()) return inputs.status();
  int64_t total = 0;
  for (int64_t i = 0; i < *inputs; ++i) {
    absl::StatusOr<int64_t> dims = next(words, "a count of dimensions");
    if (!dims.ok()) return dims.status();
    int64_t elements = 1;
    for (int64_t d = 0; d < *dims; ++d) {
      absl::StatusOr<int64_t> terms = next(words, "a count of terms");
      if (!terms.ok()) return terms.status();
      int64_t span = 1;
      for (int64_t t = 0; t < *terms; ++t) {
        if (at >= layout.size() ||
            std::llabs(layout[at]) > kMaxFootprintCoefficient) {
          return absl::InvalidArgumentError(absl::StrCat(
              "footprint: word ", at, " (a coefficient) is missing or past ",
              kMaxFootprintCoefficient));
        }
        const int64_t coefficient = std::llabs(layout[at++]);
        if (at >= layout.size() || layout[at] < 1 ||
            layout[at] > kMaxFootprintBound) {
          return absl::InvalidArgumentError(absl::StrCat(
              "footprint: word ", at, " (a bound) is missing or not in [1, ",
              kMaxFootprintBound, "]"));
        }
        const int64_t bound = layout[at++];
        absl::StatusOr<int64_t> count = next(words, "a count of factors");
        if (!count.ok()) return count.status();
        int64_t product = 1;
        for (int64_t f = 0; f < *count; ++f) {
          absl::StatusOr<int64_t> index =
              next(static_cast<int64_t>(factors.size()), "a factor index");
          if (!index.ok()) return index.status();
          product = SaturatingProduct(product, factors[*index], bound);
        }
        product = std::min(product, bound);
        span = SaturatingSum(
            span, SaturatingProduct(coefficient, product - 1, cap), cap);
      }
      elements = SaturatingProduct(elements, span, cap);
    }
    total = SaturatingSum(total, elements, cap);
  }
  if (at != layout.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "footprint: ", layout.size() - at, " words left over after word ", at));
  }
  return total;
}

}  // namespace lathe

#include "compiler/interp/allclose.h"

#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace lathe {
namespace {

std::string ShapeString(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

// The multi-index of a row-major flat index.
std::string IndexString(const std::vector<int64_t>& shape, int64_t flat) {
  std::vector<int64_t> index(shape.size());
  for (size_t k = shape.size(); k-- > 0;) {
    index[k] = shape[k] == 0 ? 0 : flat % shape[k];
    flat = shape[k] == 0 ? 0 : flat / shape[k];
  }
  return ShapeString(index);
}

}  // namespace

bool IsClose(double a, double e, double rtol, double atol) {
  if (std::isnan(a) || std::isnan(e)) return std::isnan(a) && std::isnan(e);
  if (std::isinf(a) || std::isinf(e)) return a == e;
  return std::fabs(a - e) <= atol + rtol * std::fabs(e);
}

absl::Status CheckAllClose(const TensorData& actual, const TensorData& expected,
                           double rtol, double atol, const std::string& what) {
  if (actual.dtype != expected.dtype) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": dtype ", actual.dtype.ToString(), ", expected ",
                     expected.dtype.ToString()));
  }
  if (actual.shape != expected.shape || actual.size() != expected.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": shape ", ShapeString(actual.shape), ", expected ",
                     ShapeString(expected.shape)));
  }
  int64_t mismatches = 0;
  int64_t first = -1;
  int64_t worst = -1;
  double worst_error = -1;
  for (int64_t i = 0; i < actual.size(); ++i) {
    double a = actual.values[static_cast<size_t>(i)];
    double e = expected.values[static_cast<size_t>(i)];
    if (IsClose(a, e, rtol, atol)) continue;
    ++mismatches;
    if (first < 0) first = i;
    double error = std::fabs(a - e);
    if (std::isnan(error)) error = INFINITY;
    if (error > worst_error) {
      worst_error = error;
      worst = i;
    }
  }
  if (mismatches == 0) return absl::OkStatus();
  auto value = [&](const TensorData& t, int64_t i) {
    return absl::StrFormat("%.9g", t.values[static_cast<size_t>(i)]);
  };
  return absl::FailedPreconditionError(absl::StrCat(
      what, ": ", mismatches, " of ", actual.size(), " elements differ (rtol ",
      absl::StrFormat("%g", rtol), ", atol ", absl::StrFormat("%g", atol),
      "); first at ", IndexString(actual.shape, first), ": actual ",
      value(actual, first), ", expected ", value(expected, first),
      "; largest error ", absl::StrFormat("%.3g", worst_error), " at ",
      IndexString(actual.shape, worst), ": actual ", value(actual, worst),
      ", expected ", value(expected, worst)));
}

}  // namespace lathe

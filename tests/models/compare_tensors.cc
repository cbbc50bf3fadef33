// compare_tensors ACTUAL.pb EXPECTED.pb [RTOL ATOL]: exits 0 when the two
// ONNX TensorProto files hold tensors of one dtype and shape whose elements
// agree within |actual - expected| <= ATOL + RTOL * |expected| (defaults
// 1e-3 and 1e-4; NaN matches NaN, an infinity matches itself); otherwise
// prints one line saying where they differ and exits 1 (2: a file that
// does not read).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_join.h"
#include "compiler/frontend/onnx/tensor_file.h"

namespace {

std::string ShapeText(const std::vector<int64_t>& shape) {
  return "[" + absl::StrJoin(shape, ",") + "]";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 5) {
    std::fprintf(stderr,
                 "usage: compare_tensors ACTUAL.pb EXPECTED.pb [RTOL ATOL]\n");
    return 2;
  }
  double rtol = argc == 5 ? std::atof(argv[3]) : 1e-3;
  double atol = argc == 5 ? std::atof(argv[4]) : 1e-4;
  auto actual = lathe::ReadTensorFile(argv[1]);
  auto expected = lathe::ReadTensorFile(argv[2]);
  for (const auto* read : {&actual, &expected}) {
    if (!read->ok()) {
      std::fprintf(stderr, "%s\n",
                   std::string(read->status().message()).c_str());
      return 2;
    }
  }
  if (actual->dtype != expected->dtype || actual->shape != expected->shape) {
    std::printf(
        "%s: %s%s, expected %s%s\n", argv[1], actual->dtype.ToString().c_str(),
        ShapeText(actual->shape).c_str(), expected->dtype.ToString().c_str(),
        ShapeText(expected->shape).c_str());
    return 1;
  }
  int64_t mismatches = 0, first = -1;
  double worst = 0;
  for (int64_t i = 0; i < actual->size(); ++i) {
    double a = actual->values[i], e = expected->values[i];
    bool same = (std::isnan(a) && std::isnan(e)) || (std::isinf(e) && a == e) ||
                std::fabs(a - e) <= atol + rtol * std::fabs(e);
    if (same) continue;
    if (first < 0) first = i;
    ++mismatches;
    double error = std::isnan(a) || std::isinf(a) ? INFINITY : std::fabs(a - e);
    worst = std::max(worst, error);
  }
  if (mismatches > 0) {
    std::printf(
        "%s: %lld of %lld elements differ (first at %lld: %.9g, expected "
        "%.9g; largest difference %.3g)\n",
        argv[1], static_cast<long long>(mismatches),
        static_cast<long long>(actual->size()), static_cast<long long>(first),
        actual->values[first], expected->values[first], worst);
    return 1;
  }
  return 0;
}

#include "compiler/interp/tensor_data.h"

#include <cmath>

namespace lathe {

TensorData::TensorData(DType t, std::vector<int64_t> s)
    : dtype(t), shape(std::move(s)) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  values.assign(static_cast<size_t>(n), 0.0);
}

TensorData TensorData::Like(const Buffer& buffer) {
  return TensorData(buffer.dtype, buffer.shape);
}

double RoundToDType(double value, DType dtype) {
  switch (dtype.code()) {
    case DType::Code::kFloat:
      if (dtype.bits() == 32)
        return static_cast<double>(static_cast<float>(value));
      return value;  // float16 rounding arrives with float16 workloads
    case DType::Code::kBool:
      return value != 0 ? 1.0 : 0.0;
    case DType::Code::kInt:
    case DType::Code::kUInt: {
      if (!std::isfinite(value)) return 0;
      double t = std::trunc(value);
      if (dtype.bits() >= 64) return t;
      // Wrap to the width, as a cast in compiled code would. fmod is exact,
      // and unlike a cast to int64 it is defined for any magnitude.
      double modulus = std::ldexp(1.0, dtype.bits());
      double m = std::fmod(t, modulus);
      if (m < 0) m += modulus;
      uint64_t mask = (uint64_t{1} << dtype.bits()) - 1;
      uint64_t u = static_cast<uint64_t>(m) & mask;
      if (dtype.code() == DType::Code::kInt && (u >> (dtype.bits() - 1)) & 1) {
        return static_cast<double>(static_cast<int64_t>(u | ~mask));
      }
      return static_cast<double>(u);
    }
  }
  return value;
}

}  // namespace lathe

#include "compiler/interp/random_fill.h"

namespace lathe {

uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void FillRandom(TensorData* tensor, uint64_t seed) {
  uint64_t state = seed;
  const DType dtype = tensor->dtype;
  for (double& v : tensor->values) {
    uint64_t bits = SplitMix64(&state);
    switch (dtype.code()) {
      case DType::Code::kFloat: {
        // 53 random bits give a double in [0, 1); both steps below are exact.
        double unit = static_cast<double>(bits >> 11) * 0x1.0p-53;
        v = RoundToDType(2.0 * unit - 1.0, dtype);
        break;
      }
      case DType::Code::kInt:
        v = static_cast<double>(static_cast<int64_t>(bits % 9) - 4);
        break;
      case DType::Code::kUInt:
        v = static_cast<double>(bits % 9);
        break;
      case DType::Code::kBool:
        v = static_cast<double>(bits & 1);
        break;
    }
  }
}

}  // namespace lathe

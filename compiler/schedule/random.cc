#include "compiler/schedule/random.h"

namespace lathe {

uint64_t Rng::Next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

int64_t Rng::UniformInt(int64_t n) {
  // Rejection sampling removes the modulo bias.
  uint64_t bound = static_cast<uint64_t>(n);
  uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  uint64_t x;
  do {
    x = Next();
  } while (x >= limit);
  return static_cast<int64_t>(x % bound);
}

double Rng::UniformReal() {
  return static_cast<double>(Next() >> 11) * (1.0 / 9007199254740992.0);
}

int64_t Rng::Categorical(const std::vector<double>& weights) {
  double total = 0;
  for (double w : weights) total += w;
  double r = UniformReal() * total;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (r < weights[i]) return static_cast<int64_t>(i);
    r -= weights[i];
  }
  // Rounding can leave r just above the last weight: take the last non-zero.
  for (size_t i = weights.size(); i-- > 0;) {
    if (weights[i] > 0) return static_cast<int64_t>(i);
  }
  return 0;
}

Rng Rng::Fork() { return Rng(Next() ^ 0x2545f4914f6cdd1dULL); }

}  // namespace lathe

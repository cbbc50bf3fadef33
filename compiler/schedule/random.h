// The random number generator of schedule sampling.
//
// Schedules must sample identically on every machine and standard library, so
// neither std::mt19937 with std:: distributions (distributions differ between
// implementations) nor any global state is used: a splitmix64 stream, passed
// explicitly, with its own uniform draws. Fork() derives an independent
// stream, so that each candidate of a search can draw from its own.
// Tests: tests/compiler/schedule/sampling_test.cc (Rng).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace lathe {

class Rng {
 public:
  explicit Rng(uint64_t seed = 0) : state_(seed) {}

  uint64_t Next();
  // Uniform in [0, n); n > 0.
  int64_t UniformInt(int64_t n);
  // Uniform in [0, 1).
  double UniformReal();
  // An index drawn with the given non-negative weights (not all zero).
  int64_t Categorical(const std::vector<double>& weights);
  // A new, independent stream; advances this one.
  Rng Fork();
  uint64_t state() const { return state_; }

 private:
  uint64_t state_;
};

}  // namespace lathe

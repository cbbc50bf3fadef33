// Deterministic random tensor contents for tests and result checks.
//
// The generator is splitmix64 with integer arithmetic and exact floating-point
// steps only, so a (seed, dtype, shape) gives the same values on every machine
// and compiler: a reference computed here can be compared with one computed
// elsewhere.
// Tests: tests/compiler/interp/random_fill_test.cc.
#pragma once

#include <cstdint>

#include "compiler/interp/tensor_data.h"

namespace lathe {

// One step of splitmix64: advances *state and returns the next 64 random bits.
uint64_t SplitMix64(uint64_t* state);

// Fills every element of `tensor` (whose dtype and shape are kept):
// floats uniform in [-1, 1) rounded to the dtype; signed integers in
// [-4, 4]; unsigned integers in [0, 8]; bools 0 or 1. Small integers keep
// integer reductions far from overflow.
void FillRandom(TensorData* tensor, uint64_t seed);

}  // namespace lathe

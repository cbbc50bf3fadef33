// Sampling instructions: the decisions that turn a schedule into a space.
//
// They change nothing in the program; each draws one decision from the
// schedule's Rng (so a seed fixes them all) or, on replay, validates a given
// decision. sample_perfect_tile: n factors whose product is exactly the
// extent, the innermost at most max_innermost, every factorization with that
// bound equally likely per factor position (TVM's scheme: draw a divisor for
// each position from the remaining extent). sample_categorical: an index into
// the candidates drawn with the given probabilities.
// sample_compute_location: an index into ComputeLocations(block), or -1.
// Tests: tests/compiler/schedule/sampling_test.cc.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/schedule/random.h"

namespace lathe::primitive {

absl::StatusOr<std::vector<int64_t>> SamplePerfectTile(Rng* rng, int64_t extent,
                                                       int64_t n,
                                                       int64_t max_innermost);
// Errors: wrong count, a factor < 1, a product != extent, innermost too large.
absl::Status CheckPerfectTile(const std::vector<int64_t>& factors,
                              int64_t extent, int64_t n, int64_t max_innermost);

absl::StatusOr<int64_t> SampleCategorical(
    Rng* rng, const std::vector<int64_t>& candidates,
    const std::vector<double>& probs);
// Errors: the candidates and probabilities are not a distribution (as
// SampleCategorical refuses them), or the decision is not an index of one.
absl::Status CheckCategorical(int64_t decision,
                              const std::vector<int64_t>& candidates,
                              const std::vector<double>& probs);

}  // namespace lathe::primitive

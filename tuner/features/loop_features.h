// Loop features of a store: the nest above it, its annotations, and the
// vector, parallel and unroll lengths that the schedule chose.
//
// Lengths are products of the extents of the loops of a kind (1 when there
// is none, so that "no parallel loop" reads as one task); vector_length is
// the extent of the innermost vectorized loop (0 when none: the store runs
// scalar). write_invariant_product is the product of the extents of the
// loops whose variable the written indices do not use: the reduction loops
// around an accumulation, or the loops that recompute the same element.
// Tests: tests/tuner/features/loop_features_test.cc.
#pragma once

#include <vector>

#include "tuner/features/feature_group.h"
#include "tuner/features/store_context.h"

namespace lathe::tuner {

// The loop annotation read as an unroll limit (annotate.h).
inline constexpr char kAutoUnrollMaxStep[] = "pragma_auto_unroll_max_step";

const std::vector<StoreFeatureSpec>& LoopFeatureSpecs();

// Writes LoopFeatureSpecs().size() raw values.
void ExtractLoopFeatures(const StoreContext& store, double* out);

}  // namespace lathe::tuner

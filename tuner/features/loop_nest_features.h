// Loop nest features of a store: the extent of each loop above it by
// position, the kNestPositions loops nearest the store (innermost first) and
// the kNestPositions nearest the root (outermost first), and whether the
// written indices use each (a spatial loop of the store) or not (a reduction
// or recomputing loop).
//
// Why: the loop group (loop_features.h) reads products and counts, blind to
// where a loop sits, and so are the access and reuse groups for loops whose
// split only moves iterations between levels. Two conv2d tilings that split
// the channel reduction 2 x 64 or 4 x 32, or a spatial loop 7 x 1 x 4 or
// 1 x 7 x 4, had identical feature rows, and many programs of a conv tuning
// run shared their row with another (bench/README.md, "Why the code is as it
// is"), so the model could not tell them apart whatever they measured.
// A position with no loop (a shallower nest) reads 0 for both.
// Tests: tests/tuner/features/loop_nest_features_test.cc.
#pragma once

#include <vector>

#include "tuner/features/feature_group.h"
#include "tuner/features/store_context.h"

namespace lathe::tuner {

inline constexpr int kNestPositions = 8;

const std::vector<StoreFeatureSpec>& LoopNestFeatureSpecs();

// Writes LoopNestFeatureSpecs().size() raw values.
void ExtractLoopNestFeatures(const StoreContext& store, double* out);

}  // namespace lathe::tuner

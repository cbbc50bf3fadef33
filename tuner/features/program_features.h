// The cost model's view of a program: a fixed-length vector of numbers
// extracted from the lowered program (per store, then summed and maxed over
// the program's stores).
//
// Groups, each in its own file (tuner/features/<group>.h/.cc) with its own
// test: arithmetic counts by kind; loop structure and annotations (vector,
// parallel and unroll lengths); buffer accesses (bytes, strides, reuse
// distance, lines touched per cache level); allocations; whole-program
// figures (parallelism against threads, vector width against the target's).
// Tests: tests/tuner/features/.
#pragma once

#include <string>
#include <vector>

#include "compiler/codegen/target.h"
#include "compiler/ir/program.h"

namespace lathe::tuner {

// The name of every feature, in order; its size is the vector's length.
const std::vector<std::string>& FeatureNames();

// Features of `lowered` (LowerProgram's output) for `target`.
std::vector<float> ExtractProgramFeatures(const Program& lowered, const Target& target);

}  // namespace lathe::tuner

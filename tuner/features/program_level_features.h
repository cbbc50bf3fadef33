// Whole-program features: the program's size and work, and how its
// parallelism and vectors fit the target (threads, vector lanes).
//
//   target.num_threads, target.vector_lanes      the target itself
//   prog.stores, prog.loops, prog.loop_nests, prog.max_depth
//   prog.param_bytes     bytes of the inputs and outputs
//   prog.float_ops       float work of every store (arithmetic_features.h)
//   prog.intensity       float ops per parameter byte
//   parallel.launches    executions of parallel loops (fork-joins)
// Over stores, weighted by their executions (P: the product of a store's
// parallel extents, T: the target's threads, v: the extent of its innermost
// vectorized loop, L: the target's float lanes):
//   parallel.share             share of executions under a parallel loop
//   parallel.thread_use        min(P, T) / T: threads that get work
//   parallel.balance           P / (ceil(P / T) * T): the last round's idle
//   parallel.tasks_per_thread  P / T
//   vector.share               share of executions under a vectorized loop
//   vector.lane_use            v / (ceil(v / L) * L); 1 / L for scalar code
//   vector.length_over_lanes   v / L
// Counts and ratios above 1 are scaled by log2(1 + x); shares are not.
// Tests: tests/tuner/features/program_level_features_test.cc.
#pragma once

#include <string>
#include <vector>

#include "compiler/ir/program.h"
#include "compiler/target/target.h"
#include "tuner/features/store_context.h"

namespace lathe::tuner {

const std::vector<std::string>& ProgramLevelFeatureNames();

// Writes ProgramLevelFeatureNames().size() scaled values.
void ExtractProgramLevelFeatures(const Program& lowered,
                                 const ProgramWalk& walk, const Target& target,
                                 float* out);

}  // namespace lathe::tuner

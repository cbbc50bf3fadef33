// The cost model's view of a program: a fixed-length vector of numbers
// extracted from the lowered program.
//
// Groups, each in its own file (tuner/features/<group>.h/.cc) with its own
// test, over a shared walk that gives each Store its loop nest, guards and
// buffer accesses (store_context.h, access_geometry.h):
//   arith.*   arithmetic counts by kind        arithmetic_features.h
//   loop.*    loop structure, annotations, vector/parallel/unroll lengths
//                                              loop_features.h
//   buf.*     bytes, lines, strides per buffer buffer_access_features.h
//   reuse.*   reuse distances, bytes per cache level, intensity
//                                              reuse_features.h
//   alloc.*   allocation sizes                 allocation_features.h
//   target.*, prog.*, parallel.*, vector.*     program_level_features.h
//   gpu.*     kernels, threads, blocks, shared memory, occupancy (cuda
//             targets only: their vector is longer)  gpu_features.h
//
// Aggregation (feature_group.h): each group computes raw numbers per store;
// every per-store feature becomes two entries, by its kind:
//   extensive (operations, bytes, executions):  log2(1 + sum over stores),
//                                               log2(1 + max over stores)
//   intensive (lengths, strides, distances):    log2(1 + mean), log2(1 + max)
//   fraction (flags, shares in [0, 1]):         mean, max
// where the mean weights each store by how many times it runs, so the hot
// store of a nest dominates and an init or a write-back counts little. Names
// end in ".sum", ".mean" or ".max". The whole-program features (alloc.*
// totals, target.*, prog.*, parallel.*, vector.*) follow, one entry each.
// Every value is finite and non-negative; equal programs give equal vectors.
// Tests: tests/tuner/features/.
#pragma once

#include <string>
#include <vector>

#include "compiler/ir/program.h"
#include "compiler/target/target.h"

namespace lathe::tuner {

// The name of every feature of a CPU target's vector, in order; its size is
// the vector's length.
const std::vector<std::string>& FeatureNames();
// The names of `target`'s vector: FeatureNames(), then for a cuda target
// GpuFeatureNames().
std::vector<std::string> FeatureNamesFor(const Target& target);

// Features of `lowered` (LowerProgram's output) for `target`;
// FeatureNamesFor(target).size() values. Never fails: a program not in lowered
// form gets approximate numbers (store_context.h).
std::vector<float> ExtractProgramFeatures(const Program& lowered,
                                          const Target& target);

}  // namespace lathe::tuner

// A small design space for the mutator tests: a 96x64x48 matmul whose i, j
// and k loops are tiled with sampled perfect tiles, with a sampled unroll
// depth and a copy of B computed at a sampled location.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "compiler/schedule/replay.h"
#include "compiler/schedule/traced_schedule.h"
#include "compiler/workload/spec.h"

namespace lathe::tuner::testing {

inline Program MatmulProgram() {
  return ParseWorkloadSpec("matmul:M=96,N=64,K=48")
      .value()
      .InitialProgram()
      .value();
}

// The space's trace with the decisions of one sample.
inline Trace SampleSpace(uint64_t seed) {
  TracedSchedule sch(MatmulProgram(), seed);
  BlockRV c = sch.GetBlock("C").value();
  std::vector<LoopRV> loops = sch.GetLoops(c).value();
  std::vector<ExprRV> i = sch.SamplePerfectTile(loops[0], 3, 16).value();
  std::vector<ExprRV> j = sch.SamplePerfectTile(loops[1], 2, 16).value();
  std::vector<LoopRV> is = sch.Split(loops[0], {i[0], i[1], i[2]}).value();
  std::vector<LoopRV> js = sch.Split(loops[1], {j[0], j[1]}).value();
  EXPECT_TRUE(sch.Reorder({is[0], js[0], is[1], loops[2], is[2], js[1]}).ok());
  sch.SampleCategorical({0, 16, 64, 512}, {0.25, 0.25, 0.25, 0.25}).value();
  BlockRV cache = sch.CacheRead(c, 1, "global").value();
  LoopRV where = sch.SampleComputeLocation(cache).value();
  EXPECT_TRUE(sch.ComputeAt(cache, where).ok());
  return sch.trace();
}

}  // namespace lathe::tuner::testing

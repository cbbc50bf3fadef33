// ComputeLocations (compute_at.h) against its reference
// (compute_locations_reference.h: ComputeAt tried on a copy of the program at
// every candidate loop): the same loops in the same order, and the first
// max_count of them when it stops early. Hand-written cases pin the
// interesting orders (an invalid loop before a valid one, valid loops before
// invalid ones under a parallel loop, disjoint tiles under a parallel loop);
// random schedules of every kind of operator, and the default schedules
// (parallel outer loops, vectorized inner loops, local accumulators), check
// every block of every program they pass through.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/ir/printer.h"
#include "compiler/schedule/default_schedule.h"
#include "compiler/schedule/primitive/compute_at.h"
#include "compiler/schedule/replay.h"
#include "compiler/schedule/traced_schedule.h"
#include "compiler/workload/spec.h"
#include "tests/compiler/property/random_schedule.h"
#include "tests/compiler/schedule/compute_locations_reference.h"
#include "tests/compiler/schedule/test_programs.h"

namespace lathe {
namespace {

using testing::ComputeLocationCandidates;
using testing::ComputeLocationsReference;

std::vector<std::string> First(const std::vector<std::string>& v, size_t n) {
  return std::vector<std::string>(v.begin(), v.begin() + std::min(n, v.size()));
}

// Whether the loop or one around it runs its iterations at once.
bool UnderConcurrentLoop(const Program& p, const ForNode* loop) {
  for (const StmtNode* s = loop; s != nullptr; s = p.ParentOf(s)) {
    const auto* f = s->as<ForNode>();
    if (f != nullptr && f->for_kind != ForKind::kSerial &&
        f->for_kind != ForKind::kUnrolled) {
      return true;
    }
  }
  return false;
}

// What the checks of one program saw, so that a test can assert that its
// programs exercise the orders that matter.
struct Coverage {
  int blocks = 0;
  int with_locations = 0;
  int invalid_before_valid = 0;      // a rejected candidate, then a location
  int valid_under_concurrent = 0;    // a location under a parallel loop
  int invalid_under_concurrent = 0;  // a rejected candidate under one
};

// Every block of p: the fast list equals the reference, and every prefix
// (max_count from 0 to past the end) equals the reference's prefix.
void ExpectSameAsReference(const Program& p, const std::string& context,
                           Coverage* coverage) {
  for (const BlockNode* b : p.Blocks()) {
    std::vector<std::string> reference = ComputeLocationsReference(p, b->name);
    std::vector<std::string> fast = primitive::ComputeLocations(p, b->name);
    ASSERT_EQ(fast, reference) << context << ", block " << b->name << "\n"
                               << PrintProgram(p);
    for (size_t n = 0; n <= reference.size() + 1; ++n) {
      ASSERT_EQ(primitive::ComputeLocations(p, b->name, n), First(reference, n))
          << context << ", block " << b->name << ", max_count " << n << "\n"
          << PrintProgram(p);
    }
    ++coverage->blocks;
    if (!reference.empty()) ++coverage->with_locations;
    bool rejected = false;
    for (const ForNode* loop : ComputeLocationCandidates(p, b->name)) {
      bool valid = std::find(reference.begin(), reference.end(),
                             loop->var->name) != reference.end();
      if (valid && rejected) ++coverage->invalid_before_valid;
      if (!valid) rejected = true;
      if (UnderConcurrentLoop(p, loop)) {
        ++(valid ? coverage->valid_under_concurrent
                 : coverage->invalid_under_concurrent);
      }
    }
  }
}

std::vector<std::string> Loops(TracedSchedule& sch, const std::string& block) {
  std::vector<std::string> names;
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock(block).value()).value();
  for (LoopRV l : loops) {
    names.push_back(sch.LoopName(l).value());
  }
  return names;
}

TEST(ComputeLocations, SkipsAnOuterLoopWhereTheRegionCannotBeInferred) {
  // C's loops as (i_0, i_1, j): under i_0, the row max(i_0 * 2 + i_1 - 1, 0)
  // that C reads mixes a fixed and a varying loop inside a max, which has no
  // region; under i_1 and j the row is fixed.
  TracedSchedule sch(testing::ShiftedReadProgram(6, 8));
  std::vector<LoopRV> c = sch.GetLoops(sch.GetBlock("C").value()).value();
  std::vector<LoopRV> i =
      sch.Split(c[0], {Factor(), Factor(int64_t{2})}).value();
  const Program& p = sch.program();
  std::vector<std::string> expected = {sch.LoopName(i[1]).value(),
                                       sch.LoopName(c[1]).value()};
  EXPECT_EQ(primitive::ComputeLocations(p, "B"), expected);
  EXPECT_EQ(ComputeLocationsReference(p, "B"), expected);
  // Stopping after the first location still looks past the invalid one.
  EXPECT_EQ(primitive::ComputeLocations(p, "B", 1), First(expected, 1));
  EXPECT_TRUE(primitive::ComputeLocations(p, "B", 0).empty());
  Program trial = p;
  EXPECT_FALSE(
      primitive::ComputeAt(&trial, "B", sch.LoopName(i[0]).value(), true).ok());
}

TEST(ComputeLocations, StopsAtAParallelLoopWhoseTilesWouldOverlap) {
  // The stencil in three levels, the middle one parallel: the padding may be
  // computed above the parallel loop, not under it (neighbouring tiles share
  // their halo).
  TracedSchedule sch(testing::PadStencilProgram(24));
  std::vector<LoopRV> b = sch.GetLoops(sch.GetBlock("B").value()).value();
  std::vector<LoopRV> split =
      sch.Split(b[0], {Factor(), Factor(int64_t{3}), Factor(int64_t{4})})
          .value();
  ASSERT_TRUE(sch.Parallel(split[1]).ok());
  const Program& p = sch.program();
  std::vector<std::string> expected = {sch.LoopName(split[0]).value()};
  EXPECT_EQ(primitive::ComputeLocations(p, "Pad"), expected);
  EXPECT_EQ(ComputeLocationsReference(p, "Pad"), expected);
  EXPECT_EQ(primitive::ComputeLocations(p, "Pad", 1), expected);
}

TEST(ComputeLocations, DisjointTilesUnderAParallelLoopAreValid) {
  Program dense = testing::DenseBiasReluProgram(8, 6, 3);
  TracedSchedule sch(dense);
  ASSERT_TRUE(sch.ComputeInline(sch.GetBlock("T_bias").value()).ok());
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("Y").value()).value();
  std::vector<LoopRV> i =
      sch.Split(loops[0], {Factor(), Factor(int64_t{4})}).value();
  ASSERT_TRUE(sch.Parallel(i[0]).ok());
  const Program& p = sch.program();
  std::vector<std::string> all = Loops(sch, "Y");  // i_0, i_1, j
  EXPECT_EQ(primitive::ComputeLocations(p, "T_dense"), all);
  EXPECT_EQ(ComputeLocationsReference(p, "T_dense"), all);
  for (size_t n = 0; n <= all.size(); ++n) {
    EXPECT_EQ(primitive::ComputeLocations(p, "T_dense", n), First(all, n));
  }
}

TEST(ComputeLocations,
     NothingForOutputsUnknownBlocksAndBlocksWithoutConsumers) {
  Program p = testing::TwoStageProgram(6);
  EXPECT_TRUE(primitive::ComputeLocations(p, "C").empty());
  EXPECT_TRUE(primitive::ComputeLocations(p, "nope").empty());
  EXPECT_TRUE(primitive::ComputeLocations(p, "root").empty());
  EXPECT_EQ(primitive::ComputeLocations(p, "B"),
            ComputeLocationsReference(p, "B"));
}

// Operators of every kind at small, odd shapes, with padding (a stage that
// is computed at its consumer's loops) where they have one.
const char* const kSpecs[] = {
    "matmul:M=8,N=6,K=4",
    "dense:M=5,N=7,K=9,bias=1,relu=1",
    "conv2d_nchw:N=1,C=4,H=8,W=8,K=4,R=3,S=3,pad=1",
    "conv2d_nchw:N=1,C=3,H=7,W=7,K=5,R=3,S=3,stride=2,pad=1",
    "conv2d_nhwc:N=1,C=4,H=6,W=6,K=4,R=3,S=3,pad=1",
    "max_pool2d:N=1,C=2,H=7,W=7,R=3,S=3,stride=2,pad=1",
    "softmax:M=4,N=6",
};

TEST(ComputeLocations, MatchesTheReferenceOnRandomSchedules) {
  std::vector<std::pair<std::string, Program>> programs;
  for (const char* spec : kSpecs) {
    programs.emplace_back(
        spec, ParseWorkloadSpec(spec).value().InitialProgram().value());
  }
  programs.emplace_back("shifted_read", testing::ShiftedReadProgram(6, 8));
  programs.emplace_back("pad_stencil", testing::PadStencilProgram(13));
  programs.emplace_back("elementwise_chain",
                        testing::ElementwiseChainProgram(6, 4));
  Coverage coverage;
  for (const auto& [spec, initial] : programs) {
    for (uint64_t seed = 0; seed < 12; ++seed) {
      TracedSchedule sch(initial, seed);
      Rng rng(seed * 7919 + 1);
      testing::RandomScheduleStats stats;
      for (int round = 0; round < 6; ++round) {
        testing::ApplyRandomSchedule(&sch, &rng, /*attempts=*/4, &stats);
        ExpectSameAsReference(sch.program(),
                              absl::StrCat(spec, " seed ", seed, " round ",
                                           round, "\n", sch.trace().ToText()),
                              &coverage);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
  // The programs exercised what the fast path must get right.
  EXPECT_GT(coverage.with_locations, 50);
  EXPECT_GT(coverage.invalid_before_valid, 0);
  EXPECT_GT(coverage.valid_under_concurrent, 0);
  EXPECT_GT(coverage.invalid_under_concurrent, 0);
}

TEST(ComputeLocations, MatchesTheReferenceOnDefaultSchedules) {
  // Parallel outer loops, vectorized inner loops, local accumulators: every
  // candidate under them needs the data-parallel check of the moved block.
  Coverage coverage;
  for (const char* spec : kSpecs) {
    Program initial = ParseWorkloadSpec(spec).value().InitialProgram().value();
    DefaultScheduleOptions options;
    options.vector_width = 4;
    options.register_block = 2;
    Trace trace = DefaultSchedule(initial, options).value();
    auto sch = ReplayTrace(trace, initial).value();
    ExpectSameAsReference(sch->program(), spec, &coverage);
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_GT(coverage.blocks, 10);
}

}  // namespace
}  // namespace lathe

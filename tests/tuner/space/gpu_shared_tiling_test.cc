// Tests of the GpuSharedTiling rule (tuner/space/gpu_shared_tiling.h): what
// it takes and leaves, the sampling instructions it records, and points of
// its space that compute what the workload does (the interpreter runs bound
// loops serially).
#include "tuner/space/gpu_shared_tiling.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "compiler/codegen/cuda/cuda_codegen.h"
#include "compiler/codegen/cuda/cuda_target.h"
#include "compiler/interp/interpreter.h"
#include "compiler/schedule/gpu_tile_choice.h"
#include "compiler/schedule/replay.h"
#include "tests/compiler/schedule/same_result.h"
#include "tests/tuner/space/space_test_util.h"

namespace lathe::tuner {
namespace {

using testing::CountInstructions;
using testing::LoopsOfKind;
using testing::RuleFixture;

Target Sm80() { return cuda::ArchTarget("sm_80").value(); }

// The workload's (first) reduction block.
std::string Reduction(const RuleFixture& f) {
  for (const BlockNode* b : f.initial.Blocks())
    if (b->IsReduction()) return b->name;
  ADD_FAILURE() << "no reduction";
  return "";
}

std::unique_ptr<TracedSchedule> ApplyTo(const RuleFixture& f,
                                        const std::string& block) {
  auto out = GpuSharedTiling().Apply(f.Fresh(), block, f.context);
  EXPECT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->size(), 1u);  // never branches
  return std::move(out->front());
}

TEST(GpuSharedTiling, TilesAMatmulWithSampledFactors) {
  RuleFixture f("matmul:M=256,N=64,K=64", Sm80());
  std::unique_ptr<TracedSchedule> sch = ApplyTo(f, Reduction(f));
  const Trace& trace = sch->trace();
  EXPECT_EQ(CountInstructions(trace, "sample_perfect_tile"), 3);
  // The copies' vector width, and each tiled axis's register groups.
  EXPECT_EQ(CountInstructions(trace, "sample_categorical"), 3);
  EXPECT_EQ(CountInstructions(trace, "cache_read"), 2);
  const std::vector<const ForNode*> bound =
      LoopsOfKind(sch->program(), ForKind::kThreadBinding);
  EXPECT_GE(bound.size(), 5u);  // block, products, init, write-back, copies
  // Points of the space: correct programs wherever the replay is accepted.
  Trace space = trace;
  space.decisions.clear();
  int points = 0;
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    auto point = ReplayTrace(space, f.initial, {}, seed);
    if (!point.ok()) continue;
    absl::StatusOr<Program> lowered = LowerProgram((*point)->program());
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    EXPECT_TRUE(lathe::testing::CheckSameResult(f.initial, *lowered).ok())
        << (*point)->trace().ToText();
    ++points;
  }
  EXPECT_GE(points, 8);
}

TEST(GpuSharedTiling, TilesAConvolutionAsAnImplicitGemm) {
  RuleFixture f("conv2d_nchw:N=1,C=4,H=16,W=16,K=64,R=3,S=3,pad=1", Sm80());
  // The padding is its own block here (no inlining rule ran): the rule
  // takes the convolution's reduction, every spatial loop but the batch of
  // one tiled.
  std::unique_ptr<TracedSchedule> sch = ApplyTo(f, Reduction(f));
  // K, H and W, and C (R and S stay whole inside its chunk).
  EXPECT_EQ(CountInstructions(sch->trace(), "sample_perfect_tile"), 4);
  absl::StatusOr<Program> lowered = LowerProgram(sch->program());
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_TRUE(lathe::testing::CheckSameResult(f.initial, *lowered).ok());
}

// check_footprint bounds the tiles' shared memory right after sampling,
// and soundly: for sampled points of ResNet's batch-16 layer that the code
// generator accepts, the footprint it checks is never more than the shared
// memory then allocated (the same point replays with the bound lowered to
// that), so it refuses no point a device could run.
TEST(GpuSharedTiling, ChecksTheTilesSharedMemoryWithoutRefusingAFit) {
  const Target target = Sm80();
  RuleFixture f("conv2d_nchw:N=16,C=128,H=28,W=28,K=128,R=3,S=3,pad=1", target);
  std::unique_ptr<TracedSchedule> sch = ApplyTo(f, Reduction(f));
  Trace space = sch->trace();
  ASSERT_EQ(CountInstructions(space, "check_footprint"), 1);
  size_t check = 0;
  while (space.instructions[check].kind != "check_footprint") ++check;
  space.decisions.clear();
  int points = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE(seed);
    auto point = SampleTrace(space, f.initial, {}, seed);
    if (!point.ok()) continue;
    absl::StatusOr<Program> lowered = LowerProgram((*point)->program());
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    absl::StatusOr<cuda::CudaModule> module =
        cuda::GenerateCuda(*lowered, target);
    // A buffer rounded up to the copy's threads can still pass the limit:
    // the check is sound, not complete.
    if (!module.ok()) continue;
    int64_t shared = 0;
    for (const cuda::CudaKernel& k : module->kernels)
      shared = std::max(shared, k.shared_bytes);
    Trace tight = space;
    for (auto& [name, value] : tight.instructions[check].attrs) {
      if (name == "at_most") value = shared / 4;
    }
    absl::Status replayed =
        ReplayTrace(tight, f.initial, (*point)->trace().decisions).status();
    EXPECT_TRUE(replayed.ok()) << replayed << "\n"
                               << (*point)->trace().ToText();
    ++points;
  }
  EXPECT_GE(points, 6);
}

// The decisions of the sampling instructions of `kind`, in trace order.
std::vector<std::vector<int64_t>> DecisionsOf(const Trace& trace,
                                              const std::string& kind) {
  std::vector<std::vector<int64_t>> out;
  for (size_t i = 0; i < trace.instructions.size(); ++i) {
    if (trace.instructions[i].kind != kind) continue;
    auto it = trace.decisions.find(static_cast<int64_t>(i));
    out.push_back(it == trace.decisions.end() ? std::vector<int64_t>{}
                                              : it->second);
  }
  return out;
}

// The tile (per spatial loop threads and registers, the K chunk) of the
// point `trace` records, with each loop's runs of registers and the
// copies' width index; nullopt when its decisions are not a shared tile's.
std::optional<TileChoice> TileOfPoint(const Trace& trace,
                                      const TileProblem& problem,
                                      std::vector<int64_t>* runs,
                                      int64_t* lanes) {
  const auto tiles = DecisionsOf(trace, "sample_perfect_tile");
  const auto categoricals = DecisionsOf(trace, "sample_categorical");
  if (tiles.empty() || tiles.size() != categoricals.size()) return std::nullopt;
  TileChoice tile;
  size_t next = 0;
  for (int64_t extent : problem.spatial) {
    tile.threads.push_back(1);
    tile.registers.push_back(1);
    runs->push_back(1);
    if (extent == 1) continue;
    if (next + 1 >= tiles.size() || tiles[next].size() != 3 ||
        categoricals[next].size() != 1) {
      return std::nullopt;
    }
    tile.threads.back() = tiles[next][1];
    runs->back() = categoricals[next][0] + 1;
    tile.registers.back() = tiles[next][2] * runs->back();
    ++next;
  }
  if (next + 1 != tiles.size() || tiles.back().size() != 2) return std::nullopt;
  tile.k_chunk = tiles.back()[1];
  *lanes = categoricals.back().at(0);
  return tile;
}

// The space's own point (its recorded decisions, where the search starts)
// is the best ranked tile that builds in the space's form, 8 registers as
// 2 runs: here the best of all, ResNet's batch-16 layer's included (224
// threads over halos of 16 x 16, whose copy the data-parallel proof takes
// once the step shared by all threads cancels). Its copies are the widest
// the proof takes for that tile: 4 wide for each (the convolutions' since
// the proof reads a digit of a sum the simplifier split as a digit of the
// sum: (o * 56 + f) // 2 % 3 as (o * 28 + f // 2) % 3). And it computes
// what the workload does.
TEST(GpuSharedTiling, ItsOwnPointIsTheBestRankedTile) {
  struct Case {
    std::string spec;
    int64_t lanes;  // the copies' width index
  };
  for (const Case& c :
       {Case{"conv2d_nchw:N=16,C=128,H=28,W=28,K=128,R=3,S=3,pad=1", 2},
        Case{"conv2d_nchw:N=1,C=16,H=14,W=14,K=64,R=3,S=3,pad=1", 2},
        Case{"matmul:M=256,N=192,K=64", 2}}) {
    SCOPED_TRACE(c.spec);
    const Target target = Sm80();
    RuleFixture f(c.spec, target);
    const std::string block = Reduction(f);
    std::optional<TileProblem> problem =
        TileProblemOf(f.initial, *f.initial.FindBlock(block),
                      target.gpu.max_threads_per_block);
    ASSERT_TRUE(problem.has_value());
    const std::vector<TileChoice> ranked = RankSharedTiles(*problem, 1);
    ASSERT_EQ(ranked.size(), 1u);
    const TileChoice& best = ranked.front();
    std::unique_ptr<TracedSchedule> sch = ApplyTo(f, block);
    int64_t lanes = -1;
    std::vector<int64_t> runs;
    std::optional<TileChoice> own =
        TileOfPoint(sch->trace(), *problem, &runs, &lanes);
    ASSERT_TRUE(own.has_value()) << sch->trace().ToText();
    EXPECT_EQ(own->threads, best.threads);
    EXPECT_EQ(own->registers, best.registers);
    EXPECT_EQ(own->k_chunk, best.k_chunk);
    EXPECT_EQ(lanes, c.lanes);
    for (size_t d = 0; d < own->registers.size(); ++d)
      EXPECT_EQ(runs[d], own->registers[d] >= 8 ? 2 : 1) << d;
    if (problem->spatial.front() == 16) continue;  // too long to interpret
    absl::StatusOr<Program> lowered = LowerProgram(sch->program());
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    EXPECT_TRUE(lathe::testing::CheckSameResult(f.initial, *lowered).ok());
  }
}

TEST(GpuSharedTiling, LeavesCpuTargetsAndOtherBlocksAlone) {
  {
    RuleFixture f("matmul:M=128,N=64,K=64");  // the host CPU
    EXPECT_TRUE(ApplyTo(f, Reduction(f))->trace().instructions.empty());
  }
  {
    // Few outputs, a long reduction: a cross-thread reduction's.
    RuleFixture f("dense:M=1,N=64,K=512", Sm80());
    EXPECT_TRUE(ApplyTo(f, Reduction(f))->trace().instructions.empty());
  }
  {
    // One spatial loop of more than one iteration.
    RuleFixture f("matmul:M=1,N=4096,K=32", Sm80());
    EXPECT_TRUE(ApplyTo(f, Reduction(f))->trace().instructions.empty());
  }
  {
    // Not a reduction.
    RuleFixture f("add:M=64,N=64", Sm80());
    for (const BlockNode* b : f.initial.Blocks())
      EXPECT_TRUE(ApplyTo(f, b->name)->trace().instructions.empty());
  }
}

}  // namespace
}  // namespace lathe::tuner

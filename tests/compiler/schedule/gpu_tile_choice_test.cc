// The ranking of shared-memory tiles at any extents: the problem read from
// a convolution's and a matmul's blocks (loops, footprints with halos), the
// bounds every ranked tile keeps, its order, and the workloads that rank
// nothing (little reuse, one spatial loop, too few threads).
#include "compiler/schedule/gpu_tile_choice.h"

#include <gtest/gtest.h>

#include <string>

#include "absl/strings/str_join.h"
#include "compiler/schedule/gpu_shared_tile.h"
#include "compiler/workload/spec.h"

namespace lathe {
namespace {

// The problem of `spec`'s (first) reduction block.
TileProblem ProblemOf(const std::string& spec, int64_t max_threads = 1024) {
  absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec);
  EXPECT_TRUE(workload.ok()) << workload.status();
  absl::StatusOr<Program> initial = workload->InitialProgram();
  EXPECT_TRUE(initial.ok()) << initial.status();
  for (const BlockNode* b : initial->Blocks()) {
    if (!b->IsReduction()) continue;
    std::optional<TileProblem> problem =
        TileProblemOf(*initial, *b, max_threads);
    EXPECT_TRUE(problem.has_value());
    return problem.value_or(TileProblem{});
  }
  ADD_FAILURE() << "no reduction in " << spec;
  return {};
}

int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

std::string Describe(const TileChoice& c) {
  return "threads " + absl::StrJoin(c.threads, "x") + " registers " +
         absl::StrJoin(c.registers, "x") + " chunk " +
         std::to_string(c.k_chunk);
}

// The bounds of the header, for every ranked tile of `problem`.
void ExpectWithinBounds(const TileProblem& problem,
                        const std::vector<TileChoice>& ranked) {
  for (const TileChoice& c : ranked) {
    SCOPED_TRACE(Describe(c));
    const int64_t threads = Product(c.threads);
    const int64_t registers = Product(c.registers);
    EXPECT_EQ(threads % 32, 0);
    EXPECT_GE(threads, kMinTileThreads);
    EXPECT_LE(threads, kMaxTileThreads);
    EXPECT_GE(registers, kMinTileRegisters);
    EXPECT_LE(registers, kMaxTileRegisters);
    int64_t tiled = 0;
    for (size_t d = 0; d < problem.spatial.size(); ++d) {
      EXPECT_EQ(problem.spatial[d] % (c.threads[d] * c.registers[d]), 0);
      EXPECT_LE(c.registers[d], kMaxTileRegistersPerAxis);
      tiled += c.threads[d] * c.registers[d] > 1;
    }
    EXPECT_GE(tiled, 2);
    EXPECT_EQ(problem.reduce[0] % c.k_chunk, 0);
    EXPECT_LE(c.shared_elements, kMaxSharedTileElements);
    EXPECT_GE(c.intensity, kMinTileIntensity);
  }
  for (size_t i = 1; i < ranked.size(); ++i)
    EXPECT_GE(ranked[i - 1].score, ranked[i].score);
}

// ResNet-50's 3x3 layer at batch 16: loops n k p q, then c r s; the input
// X[n, c, p + r, q + s] (its halo) and the weights W[k, c, r, s].
TEST(GpuTileChoice, ReadsAConvolutionsLoopsAndFootprints) {
  const TileProblem problem =
      ProblemOf("conv2d_nchw:N=16,C=128,H=28,W=28,K=128,R=3,S=3,pad=1", 1024);
  EXPECT_EQ(problem.spatial, (std::vector<int64_t>{16, 128, 28, 28}));
  EXPECT_EQ(problem.reduce, (std::vector<int64_t>{128, 3, 3}));
  ASSERT_EQ(problem.inputs.size(), 2u);
  const std::vector<TileChoice> ranked = RankSharedTiles(problem, 16);
  ASSERT_FALSE(ranked.empty());
  ExpectWithinBounds(problem, ranked);
  for (const TileChoice& c : ranked) {
    SCOPED_TRACE(Describe(c));
    const int64_t n = c.threads[0] * c.registers[0];
    const int64_t k = c.threads[1] * c.registers[1];
    const int64_t p = c.threads[2] * c.registers[2];
    const int64_t q = c.threads[3] * c.registers[3];
    // Each chunk's tiles: the input with its halo of 2 along p and q, the
    // weights with the whole 3x3 window.
    EXPECT_EQ(c.shared_elements,
              c.k_chunk * n * (p + 2) * (q + 2) + k * c.k_chunk * 9);
    EXPECT_DOUBLE_EQ(c.intensity,
                     static_cast<double>(n * k * p * q * c.k_chunk * 9) /
                         static_cast<double>(c.shared_elements));
    EXPECT_EQ(c.blocks, 16 * 128 * 28 * 28 / (n * k * p * q));
  }
  // Enough blocks for two waves of a large GPU.
  EXPECT_GE(ranked.front().blocks, kTargetBlocks);
}

TEST(GpuTileChoice, ReadsAMatmulsFootprints) {
  const TileProblem problem = ProblemOf("matmul:M=100,N=1000,K=72");
  EXPECT_EQ(problem.spatial, (std::vector<int64_t>{100, 1000}));
  EXPECT_EQ(problem.reduce, (std::vector<int64_t>{72}));
  const std::vector<TileChoice> ranked = RankSharedTiles(problem, 8);
  ASSERT_FALSE(ranked.empty());
  ExpectWithinBounds(problem, ranked);
  for (const TileChoice& c : ranked) {
    const int64_t i = c.threads[0] * c.registers[0];
    const int64_t j = c.threads[1] * c.registers[1];
    EXPECT_EQ(c.shared_elements, (i + j) * c.k_chunk) << Describe(c);
  }
}

// The chunk is the largest power of two that divides the reduction and
// keeps a chunk's unrolled products within the bound.
TEST(GpuTileChoice, TakesTheLargestChunkThatFits) {
  const TileProblem problem =
      ProblemOf("conv2d_nchw:N=1,C=64,H=14,W=14,K=64,R=3,S=3,pad=1");
  const std::vector<TileChoice> ranked = RankSharedTiles(problem, 8);
  ASSERT_FALSE(ranked.empty());
  for (const TileChoice& c : ranked) {
    SCOPED_TRACE(Describe(c));
    const int64_t products = c.k_chunk * 9 * Product(c.registers);
    EXPECT_LE(products, kMaxTileUnrolledProducts);
    if (c.k_chunk < kMaxTileKChunk && 64 % (c.k_chunk * 2) == 0) {
      EXPECT_GT(products * 2, kMaxTileUnrolledProducts);
    }
  }
}

TEST(GpuTileChoice, KeepsTheBestInOrderWhateverTheLimit) {
  const TileProblem problem = ProblemOf("matmul:M=100,N=1000,K=72");
  const std::vector<TileChoice> three = RankSharedTiles(problem, 3);
  const std::vector<TileChoice> ten = RankSharedTiles(problem, 10);
  ASSERT_EQ(three.size(), 3u);
  for (size_t i = 0; i < three.size(); ++i) {
    EXPECT_EQ(three[i].threads, ten[i].threads);
    EXPECT_EQ(three[i].registers, ten[i].registers);
    EXPECT_EQ(three[i].k_chunk, ten[i].k_chunk);
  }
  EXPECT_TRUE(RankSharedTiles(problem, 0).empty());
}

// A target with less shared memory: every tile ranked fits its bound, the
// best differs from the unbounded best (whose tiles are larger), and a
// bound no tile fits (or none at all) ranks nothing.
TEST(GpuTileChoice, KeepsTheTilesWithinTheTargetsSharedMemory) {
  TileProblem problem =
      ProblemOf("conv2d_nchw:N=16,C=128,H=28,W=28,K=128,R=3,S=3,pad=1");
  const std::vector<TileChoice> unbounded = RankSharedTiles(problem, 4);
  ASSERT_FALSE(unbounded.empty());
  problem.max_shared_elements = 1024;  // 4 KiB
  ASSERT_GT(unbounded.front().shared_elements, problem.max_shared_elements);
  const std::vector<TileChoice> bounded = RankSharedTiles(problem, 16);
  ASSERT_FALSE(bounded.empty());
  ExpectWithinBounds(problem, bounded);
  for (const TileChoice& c : bounded) {
    SCOPED_TRACE(Describe(c));
    EXPECT_LE(c.shared_elements, 1024);
  }
  problem.max_shared_elements = 8;
  EXPECT_TRUE(RankSharedTiles(problem, 16).empty());
  problem.max_shared_elements = 0;
  EXPECT_TRUE(RankSharedTiles(problem, 16).empty());
}

TEST(GpuTileChoice, RanksNothingForLittleReuse) {
  // A depthwise convolution reads each input element for one output
  // channel; pooling has no weights at all.
  for (const std::string spec :
       {"conv2d_nchw:N=16,C=128,H=28,W=28,K=128,R=3,S=3,pad=1,groups=128",
        "avg_pool2d:N=16,C=128,H=56,W=56,R=3,S=3,stride=2"}) {
    SCOPED_TRACE(spec);
    const TileProblem problem = ProblemOf(spec);
    EXPECT_TRUE(RankSharedTiles(problem, 8).empty());
  }
}

TEST(GpuTileChoice, RanksNothingWithoutTwoLoopsOrWholeWarps) {
  // One spatial loop.
  TileProblem one;
  one.spatial = {4096};
  one.reduce = {256};
  one.inputs = {{{{{0, 1}}, true}, {{{1, 1}}, true}}};
  EXPECT_TRUE(RankSharedTiles(one, 8).empty());
  // No reduction.
  TileProblem none = one;
  none.spatial = {64, 64};
  none.reduce = {};
  EXPECT_TRUE(RankSharedTiles(none, 8).empty());
  // A term naming a loop the problem does not have.
  TileProblem stray = none;
  stray.reduce = {16};
  stray.inputs = {{{{{7, 1}}, true}}};
  EXPECT_TRUE(RankSharedTiles(stray, 8).empty());
  // Extents of 7: no product of their divisors is a whole warp.
  EXPECT_TRUE(
      RankSharedTiles(ProblemOf("conv2d_nchw:N=7,C=7,H=7,W=7,K=7,R=3,S=3,"
                                "pad=1"),
                      8)
          .empty());
  // Fewer threads than a tile needs.
  EXPECT_TRUE(
      RankSharedTiles(ProblemOf("matmul:M=128,N=128,K=64", 32), 8).empty());
}

// Eight loops of 720720 (240 divisors each): only the last four are tiled,
// the enumeration is bounded (kMaxTileVisits), and what it ranks keeps the
// bounds.
TEST(GpuTileChoice, TilesOnlyTheLastFourLoopsOfAManyLoopedReduction) {
  TileProblem problem;
  problem.spatial.assign(8, 720720);
  problem.reduce = {720720, 3};
  std::vector<TileProblem::Dimension> a, b;
  for (size_t d = 0; d < 8; ++d) (d % 2 ? a : b).push_back({{{d, 1}}, true});
  a.push_back({{{8, 1}}, true});
  b.push_back({{{8, 1}, {9, 1}}, true});
  problem.inputs = {a, b};
  const std::vector<TileChoice> ranked = RankSharedTiles(problem, 16);
  ASSERT_FALSE(ranked.empty());
  ExpectWithinBounds(problem, ranked);
  for (const TileChoice& c : ranked) {
    for (size_t d = 0; d < 4; ++d) {
      EXPECT_EQ(c.threads[d] * c.registers[d], 1) << Describe(c);
    }
  }
}

}  // namespace
}  // namespace lathe

// The shared-memory tile with fixed and with sampled factors: the structure
// it builds (blocks, threads, shared caches, register accumulators), and
// programs that compute what the unscheduled one does (the interpreter runs
// bound loops serially), for every decision a replay gives.
#include "compiler/schedule/gpu_shared_tile.h"

#include <gtest/gtest.h>

#include <cctype>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/ir/printer.h"
#include "compiler/lower/pipeline.h"
#include "compiler/schedule/analysis/reused_stage.h"
#include "compiler/schedule/replay.h"
#include "compiler/schedule/traced_schedule.h"
#include "compiler/te/tensor.h"
#include "compiler/workload/spec.h"
#include "tests/compiler/schedule/same_result.h"

namespace lathe {
namespace {

Program Initial(const std::string& spec) {
  absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec);
  EXPECT_TRUE(workload.ok()) << workload.status();
  absl::StatusOr<Program> initial = workload->InitialProgram();
  EXPECT_TRUE(initial.ok()) << initial.status();
  return *initial;
}

// The program's (first) reduction block.
std::string Reduction(const Program& program) {
  for (const BlockNode* b : program.Blocks())
    if (b->IsReduction()) return b->name;
  ADD_FAILURE() << "no reduction";
  return "";
}

ChooseSharedTile Fixed(int64_t ti, int64_t ri, int64_t tj, int64_t rj,
                       int64_t chunk, int64_t lanes) {
  return [=](ConcreteSchedule*,
             const SharedTileLoops&) -> absl::StatusOr<SharedTileFactors> {
    SharedTileFactors f;
    f.axes = {SharedTileAxis{ti, ri}, SharedTileAxis{tj, rj}};
    f.k_chunk = chunk;
    f.lanes = lanes;
    return f;
  };
}

absl::StatusOr<SharedTileFactors> Sampled(ConcreteSchedule* sch,
                                          const SharedTileLoops& loops) {
  // The batch loop stays whole; the two others tiled.
  SharedTileFactors f;
  f.axes.resize(loops.spatial.size());
  for (size_t d = 1; d < loops.spatial.size(); ++d) {
    absl::StatusOr<std::vector<ExprRV>> tile =
        sch->SamplePerfectTile(loops.spatial[d], 3, 4);
    if (!tile.ok()) return tile.status();
    f.axes[d] = SharedTileAxis{(*tile)[1], (*tile)[2]};
  }
  absl::StatusOr<std::vector<ExprRV>> k =
      sch->SamplePerfectTile(loops.reduce[0], 2, 8);
  absl::StatusOr<ExprRV> lanes = sch->SampleCategorical({1, 2}, {1, 1});
  if (!k.ok() || !lanes.ok()) return absl::InternalError("sampling failed");
  f.k_chunk = (*k)[1];
  f.lanes = *lanes;
  return f;
}

TEST(GpuSharedTile, FixedFactorsTileAMatmul) {
  const Program initial = Initial("matmul:M=64,N=32,K=16");
  ConcreteSchedule sch(initial);
  ASSERT_TRUE(
      ApplySharedTile(&sch, Reduction(initial), true, Fixed(8, 4, 8, 2, 8, 2))
          .ok());
  absl::StatusOr<Program> lowered = LowerProgram(sch.program());
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  const std::string text = PrintProgram(*lowered);
  // Blocks of 32x16 outputs (8x8 threads of 4x2), K chunks of 8.
  for (const char* part : {"in range(4) thread_binding(blockIdx.x)",
                           "in range(64) thread_binding(threadIdx.x)",
                           "alloc A_shared: float32[8, 32] shared",
                           "alloc B_shared: float32[8, 16] shared",
                           "alloc C_local: float32[32, 16] local"}) {
    EXPECT_NE(text.find(part), std::string::npos) << part << "\n" << text;
  }
  EXPECT_TRUE(testing::CheckSameResult(initial, *lowered).ok());
}

TEST(GpuSharedTile, RegisterGroupsSitOneRunOfEveryThreadApart) {
  const Program initial = Initial("matmul:M=64,N=64,K=16");
  ConcreteSchedule sch(initial);
  ASSERT_TRUE(ApplySharedTile(
                  &sch, Reduction(initial), true,
                  [](ConcreteSchedule*, const SharedTileLoops&)
                      -> absl::StatusOr<SharedTileFactors> {
                    SharedTileFactors f;
                    // 8x8 threads, each 2x2 groups of 2x2 registers.
                    f.axes = {SharedTileAxis{8, 2, 2}, SharedTileAxis{8, 2, 2}};
                    f.k_chunk = int64_t{8};
                    f.lanes = int64_t{2};
                    return f;
                  })
                  .ok());
  absl::StatusOr<Program> lowered = LowerProgram(sch.program());
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  const std::string text = PrintProgram(*lowered);
  // One block of 32x32 outputs; a thread's column runs 16 apart (8 threads
  // of 2), its rows too.
  for (const char* part :
       {"in range(4) thread_binding(blockIdx.x)",
        "in range(64) thread_binding(threadIdx.x)", "j_1 * 16", "i_1 * 16"}) {
    EXPECT_NE(text.find(part), std::string::npos) << part << "\n" << text;
  }
  EXPECT_TRUE(testing::CheckSameResult(initial, *lowered).ok());
}

TEST(GpuSharedTile, SampledFactorsReplayToCorrectPrograms) {
  const Program initial = Initial("batch_matmul:B=2,M=16,N=32,K=8");
  TracedSchedule sch(initial, /*seed=*/3);
  absl::Status applied =
      ApplySharedTile(&sch, Reduction(initial), true, &Sampled);
  ASSERT_TRUE(applied.ok()) << applied << "\n" << sch.trace().ToText();
  int kinds = 0;
  for (const Instruction& inst : sch.trace().instructions) {
    kinds +=
        inst.kind == "sample_perfect_tile" || inst.kind == "sample_categorical";
  }
  EXPECT_EQ(kinds, 4);
  // Other decisions, same structure: each replay is a correct program (or
  // refused, for a vector width that does not divide its loop).
  int replayed = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    Trace space = sch.trace();
    space.decisions.clear();
    absl::StatusOr<std::unique_ptr<TracedSchedule>> point =
        ReplayTrace(space, initial, {}, seed);
    if (!point.ok()) continue;
    absl::StatusOr<Program> lowered = LowerProgram((*point)->program());
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    EXPECT_TRUE(testing::CheckSameResult(initial, *lowered).ok())
        << (*point)->trace().ToText();
    ++replayed;
  }
  EXPECT_GE(replayed, 10);
}

// A convolution's tile (n whole; k, p and q by 4 threads and 2, 2 and 1
// registers; c by chunks of 4, r and s whole inside), its reduction loops
// kept apart: `reduce_extents` gets the extents the tile is handed.
ChooseSharedTile ConvTile(std::vector<int64_t>* reduce_extents = nullptr) {
  return [reduce_extents](ConcreteSchedule*, const SharedTileLoops& loops)
             -> absl::StatusOr<SharedTileFactors> {
    if (reduce_extents != nullptr) *reduce_extents = loops.reduce_extents;
    SharedTileFactors f;
    f.axes = {std::nullopt, SharedTileAxis{4, 2}, SharedTileAxis{4, 2},
              SharedTileAxis{8, 1}};
    f.k_chunk = int64_t{4};
    f.lanes = int64_t{1};
    return f;
  };
}

TEST(GpuSharedTile, KeepsAConvolutionsReductionLoopsApartWhenAsked) {
  const Program initial =
      Initial("conv2d_nchw:N=1,C=8,H=8,W=8,K=16,R=3,S=3,pad=1");
  ConcreteSchedule sch(initial);
  std::vector<int64_t> reduce_extents;
  const absl::Status applied =
      ApplySharedTile(&sch, Reduction(initial), /*fuse_reductions=*/false,
                      ConvTile(&reduce_extents));
  ASSERT_TRUE(applied.ok()) << applied;
  // c, r and s, each its own loop.
  EXPECT_EQ(reduce_extents, (std::vector<int64_t>{8, 3, 3}));
  absl::StatusOr<Program> lowered = LowerProgram(sch.program());
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  // The products index the shared tiles without dividing by the 3 x 3
  // window (a fused c, r, s would: k // 9, k // 3 % 3, k % 3); only the
  // copies decompose their fused loop (and the threads their fused index).
  const std::string text = PrintProgram(*lowered);
  int products = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::StrContains(line, "W_shared[") ||
        absl::StrContains(line, "W_shared[(")) {
      continue;
    }
    ++products;
    for (const char* window : {"// 9", "% 9", "// 3", "% 3"}) {
      // The window's divisor, not the start of a longer number (// 32).
      for (size_t at = line.find(window); at != absl::string_view::npos;
           at = line.find(window, at + 1)) {
        const size_t next = at + std::string(window).size();
        EXPECT_TRUE(next < line.size() && std::isdigit(line[next])) << line;
      }
    }
  }
  EXPECT_GT(products, 0) << text;
  EXPECT_TRUE(testing::CheckSameResult(initial, *lowered).ok());
}

// Whether some block of `program` stores to a buffer named `buffer`.
bool SomeBlockStores(const Program& program, const std::string& buffer) {
  bool found = false;
  for (const BlockNode* b : program.Blocks()) {
    VisitStmts(b->body.get(), [&](const StmtNode* s) {
      if (const auto* store = s->as<StoreNode>())
        found |= store->buffer->name == buffer;
      return true;
    });
  }
  return found;
}

TEST(GpuSharedTile, FoldsTheConvolutionsPaddingIntoItsCopy) {
  const Program initial =
      Initial("conv2d_nchw:N=1,C=8,H=8,W=8,K=16,R=3,S=3,pad=1");
  ASSERT_TRUE(SomeBlockStores(initial, "pad"));
  TracedSchedule sch(initial);
  ASSERT_TRUE(ApplySharedTile(&sch, Reduction(initial),
                              /*fuse_reductions=*/false, ConvTile())
                  .ok());
  // No stage writes the padded input: the shared copy reads X, guarded.
  EXPECT_FALSE(SomeBlockStores(sch.program(), "pad"));
  const BlockNode* copy = sch.program().FindBlock("pad_shared");
  ASSERT_NE(copy, nullptr) << PrintProgram(sch.program());
  const auto* store = copy->body->as<StoreNode>();
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(HasGuardedLoad(store->value)) << PrintProgram(sch.program());
  EXPECT_EQ(sch.trace().ToText().find("get_producers"), std::string::npos);
  absl::StatusOr<Program> lowered = LowerProgram(sch.program());
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_TRUE(testing::CheckSameResult(initial, *lowered).ok());
  // The trace replays to the same program.
  absl::StatusOr<std::unique_ptr<TracedSchedule>> replayed =
      ReplayTrace(sch.trace(), initial, {}, 1);
  ASSERT_TRUE(replayed.ok()) << replayed.status();
  EXPECT_EQ(PrintProgram((*replayed)->program()), PrintProgram(sch.program()));
}

TEST(GpuSharedTile, KeepsAStageThatCallsAMathFunction) {
  // B = exp(A0), then C = B * W over k: exp inlined into the copy would be
  // computed again by every block that shares the tile.
  te::Tensor a = te::Placeholder("A0", {64, 32});
  te::Tensor w = te::Placeholder("W", {32, 64});
  te::Tensor b =
      te::Compute("B", {64, 32}, {"i", "k"}, [&](const std::vector<Expr>& ax) {
        return Call("exp", {a(ax)}, DType::Float32());
      });
  te::ReduceAxis k = te::MakeReduceAxis(32, "k");
  te::Tensor c = te::ComputeReduction(
      "C", {64, 64}, {"i", "j"}, [&](const std::vector<Expr>& ax) {
        return te::Sum(b({ax[0], k.var}) * w({k.var, ax[1]}), {k});
      });
  absl::StatusOr<Program> initial = te::CreateProgram("expmm", {a, w}, {c});
  ASSERT_TRUE(initial.ok()) << initial.status();
  ConcreteSchedule sch(*initial);
  ASSERT_TRUE(ApplySharedTile(&sch, "C", true, Fixed(8, 2, 8, 2, 8, 1)).ok());
  EXPECT_TRUE(SomeBlockStores(sch.program(), "B"));
  absl::StatusOr<Program> lowered = LowerProgram(sch.program());
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_TRUE(testing::CheckSameResult(*initial, *lowered).ok());
}

TEST(GpuSharedTile, RefusesABlockWithoutTwoSpatialLoops) {
  const Program initial = Initial("softmax:M=4,N=64");
  ConcreteSchedule sch(initial);
  for (const BlockNode* b : initial.Blocks()) {
    if (!b->IsReduction()) continue;
    EXPECT_EQ(
        ApplySharedTile(&sch, b->name, true, Fixed(1, 1, 1, 1, 8, 1)).code(),
        absl::StatusCode::kFailedPrecondition);
  }
}

TEST(GpuSharedTile, AFailingChoiceIsReported) {
  const Program initial = Initial("matmul:M=32,N=32,K=8");
  ConcreteSchedule sch(initial);
  absl::Status status = ApplySharedTile(
      &sch, Reduction(initial), true,
      [](ConcreteSchedule*,
         const SharedTileLoops& loops) -> absl::StatusOr<SharedTileFactors> {
        EXPECT_EQ(loops.spatial_extents, (std::vector<int64_t>{32, 32}));
        EXPECT_EQ(loops.reduce_extents, (std::vector<int64_t>{8}));
        return absl::FailedPreconditionError("no tile for this block");
      });
  EXPECT_EQ(status.message(), "no tile for this block");
}

}  // namespace
}  // namespace lathe

#include "compiler/schedule/primitive/cache_read.h"

#include <gtest/gtest.h>

#include "compiler/ir/printer.h"
#include "compiler/schedule/traced_schedule.h"
#include "tests/compiler/schedule/same_result.h"
#include "tests/compiler/schedule/test_programs.h"
#include "tests/compiler/schedule/trace_round_trip.h"

namespace lathe {
namespace {

bool Contains(absl::string_view text, absl::string_view part) {
  return text.find(part) != absl::string_view::npos;
}

// The names of the root's top-level statements' blocks, in order.
std::vector<std::string> BlockOrder(const Program& p) {
  std::vector<std::string> names;
  for (BlockNode* b : p.Blocks()) names.push_back(b->name);
  return names;
}

// The root's buffer allocation named `name`, or null.
BufferPtr Allocated(const Program& p, const std::string& name) {
  for (const BufferPtr& b : p.root->alloc_buffers) {
    if (b->name == name) return b;
  }
  return nullptr;
}

// B[i] = A[i] * 2; C[i] = B[i] + A[i]: A has two readers.
Program TwoReadersProgram(int64_t n) {
  te::Tensor a = te::Placeholder("A", {n});
  te::Tensor b = te::Compute("B", {n}, {"i"}, [&](const std::vector<Expr>& ax) {
    return a({ax[0]}) * 2.0;
  });
  te::Tensor c = te::Compute("C", {n}, {"i"}, [&](const std::vector<Expr>& ax) {
    return b({ax[0]}) + a({ax[0]});
  });
  return te::CreateProgram("two_readers", {a}, {c}).value();
}

TEST(CacheRead, PacksMatmulOperandInPanels) {
  // B[K, N] packed as [N / 16][K][16] with N = 40: the last panel is padded.
  Program initial = testing::MatmulProgram(5, 40, 7);
  TracedSchedule sch(initial);
  BlockRV c = sch.GetBlock("C").value();
  auto packed = sch.CacheRead(c, 1, "global", Layout{{1, 16}, {1, 0, 2}});
  ASSERT_TRUE(packed.ok()) << packed.status();
  const Program& p = sch.program();
  EXPECT_EQ(sch.BlockName(*packed).value(), "B_global");
  BufferPtr cache = Allocated(p, "B_global");
  ASSERT_NE(cache, nullptr);
  EXPECT_EQ(cache->shape, (std::vector<int64_t>{3, 7, 16}));
  EXPECT_EQ(cache->scope, BufferScope::kGlobal);
  // The copy: every element of B once, at its packed position.
  const BlockNode* copy = p.FindBlock("B_global");
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(PrintStmt(*copy->body),
            "B_global[vax1 // 16, vax0, vax1 % 16] = B[vax0, vax1]\n");
  // C reads the panel, A is untouched, and the copy runs first.
  std::string text = PrintStmt(*p.FindBlock("C")->body);
  EXPECT_TRUE(Contains(text, "A[vi, vk] * B_global[vj // 16, vk, vj % 16]"))
      << text;
  EXPECT_EQ(BlockOrder(p), (std::vector<std::string>{"B_global", "C"}));
  absl::Status same = testing::CheckSameResult(initial, p);
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(p);
}

TEST(CacheRead, BothMatmulOperandsOddShapes) {
  // Prime extents, a split that leaves a mostly empty panel, a local cache.
  Program initial = testing::MatmulProgram(7, 13, 11);
  TracedSchedule sch(initial);
  BlockRV c = sch.GetBlock("C").value();
  auto a = sch.CacheRead(c, 0, "local", Layout{{4, 1}, {}});  // A as [2][4][11]
  ASSERT_TRUE(a.ok()) << a.status();
  auto b = sch.CacheRead(c, 1, "global", Layout{{1, 16}, {1, 0, 2}});
  ASSERT_TRUE(b.ok()) << b.status();
  const Program& p = sch.program();
  EXPECT_EQ(Allocated(p, "A_local")->shape, (std::vector<int64_t>{2, 4, 11}));
  EXPECT_EQ(Allocated(p, "A_local")->scope, BufferScope::kLocal);
  EXPECT_EQ(Allocated(p, "B_global")->shape, (std::vector<int64_t>{1, 11, 16}));
  EXPECT_EQ(BlockOrder(p),
            (std::vector<std::string>{"A_local", "B_global", "C"}));
  for (uint64_t seed : {1, 2, 3}) {
    absl::Status same = testing::CheckSameResult(initial, p, seed);
    EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(p);
  }
}

TEST(CacheRead, ReadOrderLeavesOutTheAccumulator) {
  // C = C + A * B reads C first, but C is written: index 0 is A.
  TracedSchedule sch(testing::MatmulProgram(4, 4, 4));
  auto a = sch.CacheRead(sch.GetBlock("C").value(), 0, "global");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(sch.BlockName(*a).value(), "A_global");
  auto out_of_range = sch.CacheRead(sch.GetBlock("C").value(), 2, "global");
  ASSERT_FALSE(out_of_range.ok());
  EXPECT_EQ(out_of_range.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(out_of_range.status().message(),
            "cache_read: block \"C\" reads 2 buffers, index 2 is out of range");
}

TEST(CacheRead, IntermediateIsCopiedAfterItsProducer) {
  Program initial = testing::TwoStageProgram(9);
  TracedSchedule sch(initial);
  auto cached = sch.CacheRead(sch.GetBlock("C").value(), 0, "shared");
  ASSERT_TRUE(cached.ok()) << cached.status();
  EXPECT_EQ(BlockOrder(sch.program()),
            (std::vector<std::string>{"B", "B_shared", "C"}));
  EXPECT_EQ(PrintStmt(*sch.program().FindBlock("C")->body),
            "C[vi_1] = B_shared[vi_1] + 1.0f\n");
  absl::Status same = testing::CheckSameResult(initial, sch.program());
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(sch.program());
}

TEST(CacheRead, OnlyTheGivenBlockIsRedirected) {
  Program initial = TwoReadersProgram(6);
  TracedSchedule sch(initial);
  auto cached =
      sch.CacheRead(sch.GetBlock("C").value(), 1, "global");  // B is 0, A is 1
  ASSERT_TRUE(cached.ok()) << cached.status();
  const Program& p = sch.program();
  EXPECT_EQ(PrintStmt(*p.FindBlock("B")->body), "B[vi] = A[vi] * 2.0f\n");
  EXPECT_EQ(PrintStmt(*p.FindBlock("C")->body),
            "C[vi_1] = B[vi_1] + A_global[vi_1]\n");
  EXPECT_EQ(BlockOrder(p), (std::vector<std::string>{"B", "A_global", "C"}));
  absl::Status same = testing::CheckSameResult(initial, p);
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(p);
}

TEST(CacheRead, TwoCachesOfOneBufferGetFreshNames) {
  Program initial = TwoReadersProgram(5);
  TracedSchedule sch(initial);
  ASSERT_TRUE(sch.CacheRead(sch.GetBlock("B").value(), 0, "global").ok());
  auto second = sch.CacheRead(sch.GetBlock("C").value(), 1, "global");
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(sch.BlockName(*second).value(), "A_global_1");
  EXPECT_EQ(BlockOrder(sch.program()),
            (std::vector<std::string>{"A_global", "B", "A_global_1", "C"}));
  absl::Status same = testing::CheckSameResult(initial, sch.program());
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(sch.program());
}

TEST(CacheRead, RejectsBadArgumentsAndLeavesProgramUnchanged) {
  TracedSchedule sch(testing::MatmulProgram(4, 8, 4));
  BlockRV c = sch.GetBlock("C").value();
  std::string before = PrintProgram(sch.program());
  size_t trace_size = sch.trace().instructions.size();

  auto negative = sch.CacheRead(c, -1, "global");
  ASSERT_FALSE(negative.ok());
  EXPECT_EQ(
      negative.status().message(),
      "cache_read: block \"C\" reads 2 buffers, index -1 is out of range");
  auto rank = sch.CacheRead(c, 1, "global", Layout{{1, 2, 4}, {}});
  ASSERT_FALSE(rank.ok());
  EXPECT_EQ(rank.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(rank.status().message(),
            "cache_read: buffer \"B\" of block \"C\": layout: 3 splits for a "
            "buffer of rank 2");
  auto perm = sch.CacheRead(c, 1, "global", Layout{{}, {0, 0}});
  ASSERT_FALSE(perm.ok());
  EXPECT_TRUE(Contains(perm.status().message(), "out of range or repeated"))
      << perm.status();
  auto scope = sch.CacheRead(c, 0, "texture");
  ASSERT_FALSE(scope.ok());
  EXPECT_EQ(scope.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(
      Contains(scope.status().message(), "cache_read: unknown buffer scope"))
      << scope.status();

  EXPECT_EQ(PrintProgram(sch.program()), before);
  EXPECT_EQ(sch.trace().instructions.size(), trace_size);
}

TEST(CacheRead, RejectsBufferProducedInTheSameNest) {
  // Both stages of B[i] = A[i] * 2; C[i] = B[i] + 1 under one loop of
  // extent 1: B is not complete before that loop, so no copy can go there.
  Program p = testing::TwoStageProgram(4);
  auto* seq = p.root->body->as<SeqNode>();
  ASSERT_NE(seq, nullptr);
  std::vector<StmtPtr> stages;
  for (StmtPtr& s : seq->stmts) stages.push_back(std::move(s));
  p.root->body = MakeFor(Var("outer"), 1, MakeSeq(std::move(stages)));
  std::string before = PrintProgram(p);
  Program copy = p;
  auto result =
      primitive::CacheRead(&copy, "C", 0, BufferScope::kGlobal, Layout{});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(result.status().message(),
            "cache_read: buffer \"B\" of block \"C\": block \"B\" writes it in "
            "the same loop "
            "nest, so it is not complete before the nest");
  // Through the schedule, the failed call leaves the program as it was.
  ConcreteSchedule sch(p);
  EXPECT_FALSE(sch.CacheRead(sch.GetBlock("C").value(), 0, "global").ok());
  EXPECT_EQ(PrintProgram(sch.program()), before);
}

TEST(CacheRead, UnknownBlock) {
  Program p = testing::MatmulProgram(2, 2, 2);
  auto result =
      primitive::CacheRead(&p, "D", 0, BufferScope::kGlobal, Layout{});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(result.status().message(), "cache_read: no block named \"D\"");
}

TEST(CacheRead, LayoutRoundTripsThroughTrace) {
  Program initial = testing::MatmulProgram(6, 40, 5);
  TracedSchedule sch(initial);
  BlockRV c = sch.GetBlock("C").value();
  ASSERT_TRUE(sch.CacheRead(c, 1, "global", Layout{{1, 16}, {1, 0, 2}}).ok());
  ASSERT_TRUE(sch.CacheRead(c, 0, "local").ok());
  std::vector<LoopRV> loops =
      sch.GetLoops(sch.GetBlock("B_global").value()).value();
  ASSERT_TRUE(sch.Split(loops[1], {Factor(), Factor(int64_t{16})}).ok());
  EXPECT_TRUE(Contains(sch.trace().ToText(), "layout")) << sch.trace().ToText();
  absl::Status round_trip = testing::CheckTraceRoundTrip(sch, initial);
  EXPECT_TRUE(round_trip.ok()) << round_trip;
  absl::Status same = testing::CheckSameResult(initial, sch.program());
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(sch.program());
}

}  // namespace
}  // namespace lathe

namespace lathe {
namespace {

// A packed cache with a padded layout (B[4, 5] in panels of 4: [2][4][4])
// has elements nothing writes; copying all of it again would read them.
TEST(CacheRead, RefusesToCopyAPaddedCache) {
  Program initial = testing::MatmulProgram(3, 5, 4);
  TracedSchedule sch(initial);
  BlockRV c = sch.GetBlock("C").value();
  Layout panels{{1, 4}, {1, 0, 2}};
  ASSERT_TRUE(sch.CacheRead(c, 1, "global", panels).ok());
  std::string before = PrintProgram(sch.program());
  absl::StatusOr<BlockRV> again = sch.CacheRead(c, 1, "local");
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("not every element of it is written"),
            std::string::npos)
      << again.status();
  EXPECT_EQ(PrintProgram(sch.program()), before);
  // Without padding the same double caching is fine.
  TracedSchedule exact(initial);
  BlockRV c2 = exact.GetBlock("C").value();
  ASSERT_TRUE(exact.CacheRead(c2, 1, "global").ok());
  ASSERT_TRUE(exact.CacheRead(c2, 1, "local").ok());
  absl::Status same = testing::CheckSameResult(initial, exact.program());
  EXPECT_TRUE(same.ok()) << same;
}

}  // namespace
}  // namespace lathe

#include "compiler/schedule/analysis/data_parallel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "absl/strings/str_join.h"
#include "compiler/ir/expr_functor.h"
#include "compiler/ir/printer.h"
#include "compiler/schedule/analysis/loop_ranges.h"
#include "compiler/schedule/primitive/fuse.h"
#include "compiler/schedule/primitive/loop_kind.h"
#include "compiler/schedule/primitive/reorder.h"
#include "compiler/schedule/primitive/split.h"
#include "tests/compiler/schedule/same_result.h"
#include "tests/compiler/schedule/test_programs.h"

namespace lathe {
namespace {

// A buffer and loop variables to write accesses by hand.
struct Fixture {
  BufferPtr buf2 = MakeBuffer("X", DType::Float32(), {64, 64});
  BufferPtr buf3 = MakeBuffer("Y", DType::Float32(), {64, 64, 64});
  VarRanges ranges;

  Expr Loop(const std::string& name, int64_t extent) {
    Expr v = Var(name);
    ranges[v.get()] = Interval::Extent(extent);
    return v;
  }
  LoopAccess Write(std::vector<Expr> indices) {
    return {nullptr, indices.size() == 2 ? buf2 : buf3, std::move(indices),
            true};
  }
  LoopAccess Read(std::vector<Expr> indices) {
    return {nullptr, indices.size() == 2 ? buf2 : buf3, std::move(indices),
            false};
  }
};

TEST(DataParallel, PlainIndicesDetermineTheirLoops) {
  Fixture f;
  Expr i = f.Loop("i", 16), j = f.Loop("j", 8);
  LoopAccess w = f.Write({i, j});
  EXPECT_TRUE(SameElementImpliesSameValue(w, w, i, {i, j}, f.ranges));
  EXPECT_TRUE(SameElementImpliesSameValue(w, w, j, {j}, f.ranges));
  // Transposed store: still one element per (i, j).
  LoopAccess t = f.Write({j, i});
  EXPECT_TRUE(SameElementImpliesSameValue(t, t, i, {i, j}, f.ranges));
}

TEST(DataParallel, AnIndexWithoutTheLoopDoesNotDetermineIt) {
  Fixture f;
  Expr i = f.Loop("i", 16), k = f.Loop("k", 8);
  LoopAccess w = f.Write({i, Expr(0)});
  EXPECT_FALSE(SameElementImpliesSameValue(w, w, k, {k}, f.ranges));
  // A loop of extent 1 has one iteration: nothing to prove.
  Expr u = f.Loop("u", 1);
  EXPECT_TRUE(SameElementImpliesSameValue(w, w, u, {u}, f.ranges));
}

TEST(DataParallel, SplitLoopsAreDeterminedThroughTheirCoefficient) {
  Fixture f;
  Expr i0 = f.Loop("i_0", 4), i1 = f.Loop("i_1", 4), ax = f.Loop("ax", 5);
  LoopAccess w = f.Write({i0 * 4 + i1, Expr(0)});
  EXPECT_TRUE(SameElementImpliesSameValue(w, w, i0, {i0, i1}, f.ranges));
  EXPECT_TRUE(SameElementImpliesSameValue(w, w, i1, {i1}, f.ranges));
  // A tile of 5 written at a stride of 4 overlaps the next tile.
  LoopAccess halo = f.Write({i0 * 4 + ax, Expr(0)});
  EXPECT_FALSE(SameElementImpliesSameValue(halo, halo, i0, {i0, ax}, f.ranges));
  EXPECT_FALSE(
      SameElementImpliesSameValue(halo, w, i0, {i0, i1, ax}, f.ranges));
}

TEST(DataParallel, FusedLoopsAreDeterminedByAllTheirDigits) {
  Fixture f;
  Expr fused = f.Loop("f", 48);
  LoopAccess w2 = f.Write({FloorDiv(fused, 8), FloorMod(fused, 8)});
  EXPECT_TRUE(SameElementImpliesSameValue(w2, w2, fused, {fused}, f.ranges));
  // Only the high digit: iterations 0..7 share a row.
  LoopAccess row = f.Write({FloorDiv(fused, 8), Expr(0)});
  EXPECT_FALSE(SameElementImpliesSameValue(row, row, fused, {fused}, f.ranges));
  // Three loops fused (4 x 3 x 4).
  LoopAccess w3 = f.Write({FloorDiv(fused, 12), FloorMod(FloorDiv(fused, 4), 3),
                           FloorMod(fused, 4)});
  EXPECT_TRUE(SameElementImpliesSameValue(w3, w3, fused, {fused}, f.ranges));
  // Missing the middle digit.
  LoopAccess gap = f.Write({FloorDiv(fused, 12), Expr(0), FloorMod(fused, 4)});
  EXPECT_FALSE(SameElementImpliesSameValue(gap, gap, fused, {fused}, f.ranges));
  // Fused tile loops with inner tiles: X[(f // 8) * 4 + i, (f % 8) * 2 + j].
  Expr i = f.Loop("ii", 4), j = f.Loop("jj", 2);
  LoopAccess tiled =
      f.Write({FloorDiv(fused, 8) * 4 + i, FloorMod(fused, 8) * 2 + j});
  EXPECT_TRUE(SameElementImpliesSameValue(tiled, tiled, fused, {fused, i, j},
                                          f.ranges));
}

TEST(DataParallel, AFusedLoopSplitAgainIsDeterminedThroughItsSum) {
  // Fuse (6 x 10) then split by 8: vi = (f_0 * 8 + f_1) // 10, vj = ... % 10.
  Fixture f;
  Expr f0 = f.Loop("f_0", 8), f1 = f.Loop("f_1", 8);
  Expr sum = f0 * 8 + f1;
  LoopAccess w = f.Write({FloorDiv(sum, 10), FloorMod(sum, 10)});
  EXPECT_TRUE(SameElementImpliesSameValue(w, w, f0, {f0, f1}, f.ranges));
  EXPECT_TRUE(SameElementImpliesSameValue(w, w, f1, {f1}, f.ranges));
  LoopAccess row = f.Write({FloorDiv(sum, 10), Expr(0)});
  EXPECT_FALSE(SameElementImpliesSameValue(row, row, f0, {f0, f1}, f.ranges));
}

TEST(DataParallel, OneProvenLoopHelpsProveTheNext) {
  // Both loops of a split vary (reorder compares points of the whole nest):
  // j_0 is proven first (coefficient 2 > the range of j_1), then j_1.
  Fixture f;
  Expr j0 = f.Loop("j_0", 3), j1 = f.Loop("j_1", 2);
  LoopAccess w = f.Write({j0 * 2 + j1, Expr(0)});
  EXPECT_TRUE(SameElementImpliesSameValue(w, w, j1, {j0, j1}, f.ranges));
  EXPECT_TRUE(SameElementImpliesSameValue(w, w, j0, {j0, j1}, f.ranges));
  // Overlapping digits prove neither: j_0 + j_1.
  LoopAccess sum = f.Write({j0 + j1, Expr(0)});
  EXPECT_FALSE(SameElementImpliesSameValue(sum, sum, j0, {j0, j1}, f.ranges));
  EXPECT_FALSE(SameElementImpliesSameValue(sum, sum, j1, {j0, j1}, f.ranges));
}

TEST(DataParallel, PackedLayoutDeterminesItsLoop) {
  Fixture f;
  Expr n = f.Loop("n", 64), k = f.Loop("k", 8);
  // B_packed[n // 16, k, n % 16]
  LoopAccess w = f.Write({FloorDiv(n, 16), k, FloorMod(n, 16)});
  EXPECT_TRUE(SameElementImpliesSameValue(w, w, n, {n, k}, f.ranges));
}

TEST(DataParallel, SharedOuterLoopsCancel) {
  Fixture f;
  Expr o = f.Loop("o", 8), i = f.Loop("i", 8);
  LoopAccess w = f.Write({o * 8 + i, Expr(0)});
  LoopAccess r = f.Read({o * 8 + i, Expr(0)});
  EXPECT_TRUE(SameElementImpliesSameValue(r, w, i, {i}, f.ranges));
  // A neighbour read does not.
  LoopAccess next = f.Read({o * 8 + i + 1, Expr(0)});
  EXPECT_FALSE(SameElementImpliesSameValue(next, w, i, {i}, f.ranges));
  // Different buffers never meet.
  LoopAccess other = {nullptr, f.buf3, {i, i, i}, true};
  EXPECT_TRUE(SameElementImpliesSameValue(other, w, i, {i}, f.ranges));
}

TEST(DataParallel, CollectsExpandedAccessesAndSkipsPrivateBuffers) {
  Program p = testing::TiledStagesProgram(3, 4, 1);
  std::vector<LoopAccess> accesses = CollectLoopAccesses(p, *p.FindLoop("i_0"));
  std::vector<std::string> text;
  for (const LoopAccess& a : accesses) {
    std::string s =
        a.block->name + (a.is_write ? " writes " : " reads ") + a.buffer->name;
    for (const Expr& e : a.indices) s += " " + e.ToString();
    text.push_back(s);
  }
  EXPECT_EQ(text, (std::vector<std::string>{
                      "B reads A i_0 * 4 + ax", "B writes B i_0 * 4 + ax",
                      "C reads B i_0 * 4 + i_1", "C reads B i_0 * 4 + i_1 + 1",
                      "C writes C i_0 * 4 + i_1"}));
  Program scratch = testing::ScratchProgram(5, /*private_scratch=*/true);
  for (const LoopAccess& a :
       CollectLoopAccesses(scratch, *scratch.FindLoop("i"))) {
    EXPECT_NE(a.buffer->name, "T");
  }
}

TEST(DataParallel, CheckNamesTheReductionBlock) {
  Program p = testing::MatmulProgram(4, 5, 6);
  EXPECT_TRUE(CheckDataParallel(p, *p.FindLoop("i"), "parallel").ok());
  EXPECT_TRUE(CheckDataParallel(p, *p.FindLoop("j"), "parallel").ok());
  absl::Status k = CheckDataParallel(p, *p.FindLoop("k"), "parallel");
  EXPECT_EQ(k.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(k.message(),
            "parallel: loop \"k\" is not data-parallel: block \"C\" binds it "
            "to reduce "
            "iteration variable \"vk\"");
}

TEST(DataParallel, CheckFindsCrossIterationReads) {
  Program p = testing::NeighborReadProgram(7);
  absl::Status s = CheckDataParallel(p, *p.FindLoop("i"), "parallel");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("block \"C\" reads B[max(i - 1, 0)]"),
            std::string::npos)
      << s;
  EXPECT_NE(s.message().find("block \"B\" writes B[i]"), std::string::npos)
      << s;
  Program tiles = testing::TiledStagesProgram(3, 4, 0);
  EXPECT_TRUE(
      CheckDataParallel(tiles, *tiles.FindLoop("i_0"), "parallel").ok());
  Program halo = testing::TiledStagesProgram(3, 4, 1);
  EXPECT_FALSE(CheckDataParallel(halo, *halo.FindLoop("i_0"), "parallel").ok());
  EXPECT_TRUE(CheckDataParallel(halo, *halo.FindLoop("ax"), "parallel").ok());
  EXPECT_TRUE(CheckDataParallel(halo, *halo.FindLoop("i_1"), "parallel").ok());
}

TEST(DataParallel, PrivateScratchIsPerIteration) {
  Program shared = testing::ScratchProgram(5, /*private_scratch=*/false);
  absl::Status s = CheckDataParallel(shared, *shared.FindLoop("i"), "parallel");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("T[0]"), std::string::npos) << s;
  Program own = testing::ScratchProgram(5, /*private_scratch=*/true);
  EXPECT_TRUE(CheckDataParallel(own, *own.FindLoop("i"), "parallel").ok());
}

TEST(DataParallel, ReorderKeepsDependences) {
  Program p = testing::MatmulProgram(4, 5, 6);
  const ForNode* i = p.FindLoop("i");
  const ForNode* j = p.FindLoop("j");
  const ForNode* k = p.FindLoop("k");
  EXPECT_TRUE(CheckReorderKeepsDependences(p, {i, j, k}, {k, i, j}).ok());
  EXPECT_TRUE(CheckReorderKeepsDependences(p, {i, j, k}, {j, k, i}).ok());
  Program w = testing::WavefrontProgram(4, 5);
  const ForNode* wi = w.FindLoop("i");
  const ForNode* wj = w.FindLoop("j");
  absl::Status s = CheckReorderKeepsDependences(w, {wi, wj}, {wj, wi});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("reorder: loops \"i\" and \"j\" cannot swap"),
            std::string::npos)
      << s;
}

TEST(DataParallel, LoopsNestedWithCrossBlocks) {
  Program p = testing::TiledStagesProgram(3, 4, 1);
  std::vector<std::string> names;
  for (const ForNode* l : LoopsNestedWith(p, *p.FindLoop("i_0")))
    names.push_back(l->var->name);
  EXPECT_EQ(names, (std::vector<std::string>{"ax", "i_1"}));
  names.clear();
  for (const ForNode* l : LoopsNestedWith(p, *p.FindLoop("ax")))
    names.push_back(l->var->name);
  EXPECT_EQ(names, (std::vector<std::string>{"i_0"}));
}

// The same program with the iterations of `loop` in reverse order: what a
// data-parallel loop may do without changing the result.
Program Reversed(const Program& program, const std::string& loop) {
  Program copy = program;
  ForNode* l = copy.FindLoop(loop);
  VarMap reverse{{l->var, IntImm(l->extent - 1) - l->var}};
  MutateAllExprs(l->body.get(),
                 [&](const Expr& e) { return Substitute(e, reverse); });
  return copy;
}

// Soundness, checked against the interpreter: on random schedules of many
// programs, every loop the analysis calls data-parallel computes the same
// result with its iterations reversed, and every accepted primitive keeps the
// result.
TEST(DataParallel, RandomSchedulesAreSound) {
  std::vector<Program> programs = {testing::MatmulProgram(5, 7, 3),
                                   testing::DenseBiasReluProgram(4, 6, 5),
                                   testing::TiledStagesProgram(3, 4, 0),
                                   testing::TiledStagesProgram(3, 4, 1),
                                   testing::NeighborReadProgram(7),
                                   testing::ScratchProgram(5, false),
                                   testing::ScratchProgram(5, true),
                                   testing::WavefrontProgram(4, 5),
                                   testing::PadStencilProgram(9),
                                   testing::ElementwiseChainProgram(5, 6),
                                   testing::RowMaxProgram(5, 7),
                                   testing::VectorSumProgram(9)};
  std::mt19937_64 rng(7);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  int accepted = 0, parallel_loops = 0, refused_loops = 0;
  for (const Program& initial : programs) {
    for (int trial = 0; trial < 12; ++trial) {
      Program p = initial;
      for (int step = 0; step < 8; ++step) {
        std::vector<BlockNode*> blocks = p.Blocks();
        std::vector<ForNode*> loops = p.LoopsAbove(blocks[pick(blocks.size())]);
        if (loops.empty()) continue;
        std::vector<std::string> names;
        for (ForNode* l : loops) names.push_back(l->var->name);
        std::string loop = names[pick(names.size())];
        Program before = p;
        absl::Status s;
        std::string what;
        switch (pick(7)) {
          case 0: {
            int64_t extent = p.FindLoop(loop)->extent;
            int64_t factor =
                1 + static_cast<int64_t>(pick(static_cast<size_t>(extent) + 1));
            s = primitive::Split(&p, loop, {std::nullopt, factor}).status();
            what = absl::StrCat("split ", loop, " by ", factor);
            break;
          }
          case 1: {
            size_t at = pick(names.size());
            size_t len = 2 + pick(2);
            if (at + len > names.size()) continue;
            std::vector<std::string> group(names.begin() + at,
                                           names.begin() + at + len);
            s = primitive::Fuse(&p, group).status();
            what = absl::StrCat("fuse ", absl::StrJoin(group, ","));
            break;
          }
          case 2: {
            std::vector<std::string> order = names;
            std::shuffle(order.begin(), order.end(), rng);
            order.resize(std::min<size_t>(order.size(), 2 + pick(3)));
            s = primitive::Reorder(&p, order);
            what = absl::StrCat("reorder ", absl::StrJoin(order, ","));
            break;
          }
          case 3:
            s = primitive::Parallel(&p, loop);
            what = "parallel " + loop;
            break;
          case 4:
            s = primitive::Vectorize(&p, loop);
            what = "vectorize " + loop;
            break;
          case 5:
            s = primitive::Unroll(&p, loop);
            what = "unroll " + loop;
            break;
          default:
            s = primitive::Bind(&p, loop,
                                pick(2) ? "threadIdx.x" : "blockIdx.x");
            what = "bind " + loop;
            break;
        }
        if (!s.ok()) {
          ASSERT_NE(s.code(), absl::StatusCode::kInternal) << s;
          p = std::move(before);
          continue;
        }
        ++accepted;
        absl::Status same = testing::CheckSameResult(initial, p);
        ASSERT_TRUE(same.ok())
            << initial.name << ": after " << what << ": " << same << "\n"
            << PrintProgram(before) << "\n"
            << PrintProgram(p);
      }
      // Every loop the analysis accepts tolerates reversed iterations.
      VisitStmts(static_cast<const StmtNode*>(p.root.get()),
                 [&](const StmtNode* node) {
                   const auto* l = node->as<ForNode>();
                   if (l == nullptr) return true;
                   if (!CheckDataParallel(p, *l, "test").ok()) {
                     ++refused_loops;
                     return true;
                   }
                   ++parallel_loops;
                   absl::Status same = testing::CheckSameResult(
                       initial, Reversed(p, l->var->name));
                   EXPECT_TRUE(same.ok())
                       << initial.name << ": loop " << l->var->name
                       << " reversed: " << same << "\n"
                       << PrintProgram(p);
                   return true;
                 });
    }
  }
  // The generator must exercise both outcomes.
  EXPECT_GT(accepted, 200);
  EXPECT_GT(parallel_loops, 100);
  EXPECT_GT(refused_loops, 50);
}

}  // namespace
}  // namespace lathe

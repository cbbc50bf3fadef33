// Tests of the block nest queries (tuner/space/block_nest.h).
#include "tuner/space/block_nest.h"

#include <gtest/gtest.h>

#include "compiler/ir/printer.h"
#include "tests/tuner/space/space_test_util.h"

namespace lathe::tuner {
namespace {

using testing::RuleFixture;

TEST(OwnNest, InitialStagesOwnTheirLoops) {
  RuleFixture f("matmul:M=4,N=6,K=8");
  const BlockNode* c = f.initial.FindBlock("C");
  std::optional<std::vector<NestLoop>> nest = OwnNest(f.initial, *c);
  ASSERT_TRUE(nest.has_value());
  ASSERT_EQ(nest->size(), 3u);
  EXPECT_EQ((*nest)[0].extent, 4);
  EXPECT_EQ((*nest)[1].extent, 6);
  EXPECT_EQ((*nest)[2].extent, 8);
  EXPECT_EQ((*nest)[2].type, IterType::kReduce);
  EXPECT_EQ((*nest)[0].type, IterType::kSpatial);
  EXPECT_EQ((*nest)[1].iter_index, 1);
  EXPECT_EQ(IterProduct(*c, IterType::kSpatial), 24);
  EXPECT_EQ(IterProduct(*c, IterType::kReduce), 8);
}

TEST(OwnNest, ASplitLoopIsNoLongerOwn) {
  RuleFixture f("matmul:M=4,N=6,K=8");
  std::unique_ptr<TracedSchedule> sch = f.Fresh();
  std::vector<LoopRV> loops = sch->GetLoops(sch->GetBlock("C").value()).value();
  ASSERT_TRUE(sch->Split(loops[1], {Factor{}, Factor{int64_t{2}}}).ok());
  EXPECT_FALSE(
      OwnNest(sch->program(), *sch->program().FindBlock("C")).has_value());
}

TEST(OwnNest, AParallelLoopIsNoLongerOwn) {
  RuleFixture f("relu:M=4,N=6");
  std::unique_ptr<TracedSchedule> sch = f.Fresh();
  std::vector<LoopRV> loops = sch->GetLoops(sch->GetBlock("Y").value()).value();
  ASSERT_TRUE(sch->Parallel(loops[0]).ok());
  EXPECT_FALSE(
      OwnNest(sch->program(), *sch->program().FindBlock("Y")).has_value());
}

TEST(AloneAtRoot, ABlockComputedAtItsConsumerIsNotAlone) {
  RuleFixture f("conv2d_nchw:N=1,C=2,H=6,W=6,K=4,R=3,S=3,pad=1");
  EXPECT_TRUE(AloneAtRoot(f.initial, *f.initial.FindBlock("pad")));
  EXPECT_TRUE(AloneAtRoot(f.initial, *f.initial.FindBlock("Y")));
  std::unique_ptr<TracedSchedule> sch = f.Fresh();
  BlockRV pad = sch->GetBlock("pad").value();
  std::vector<LoopRV> y_loops =
      sch->GetLoops(sch->GetBlock("Y").value()).value();
  ASSERT_TRUE(sch->ComputeAt(pad, y_loops[1]).ok());
  EXPECT_FALSE(AloneAtRoot(sch->program(), *sch->program().FindBlock("pad")))
      << PrintProgram(sch->program());
  EXPECT_FALSE(AloneAtRoot(sch->program(), *sch->program().FindBlock("Y")));
  EXPECT_FALSE(
      OwnNest(sch->program(), *sch->program().FindBlock("Y")).has_value());
}

TEST(IsTiled, ReadsTheAnnotation) {
  RuleFixture f("matmul:M=4,N=6,K=8");
  std::unique_ptr<TracedSchedule> sch = f.Fresh();
  EXPECT_FALSE(IsTiled(*sch->program().FindBlock("C")));
  ASSERT_TRUE(sch->AnnotateBlock(sch->GetBlock("C").value(), kTiledAnnotation,
                                 int64_t{1})
                  .ok());
  EXPECT_TRUE(IsTiled(*sch->program().FindBlock("C")));
  EXPECT_FALSE(IsPlaced(*sch->program().FindBlock("C")));
  ASSERT_TRUE(sch->AnnotateBlock(sch->GetBlock("C").value(), kPlacedAnnotation,
                                 int64_t{1})
                  .ok());
  EXPECT_TRUE(IsPlaced(*sch->program().FindBlock("C")));
}

TEST(HasDataReuse, OperandsMissingASpatialVariable) {
  RuleFixture matmul("matmul:M=4,N=6,K=8");  // A[i,k] is reused across j
  EXPECT_TRUE(HasDataReuse(*matmul.initial.FindBlock("C")));
  RuleFixture sum("custom:input in0[4,8]; out[i] += in0[i,k]|i=4,k=8");
  EXPECT_FALSE(HasDataReuse(*sum.initial.FindBlock("out")));
}

TEST(StoresEndWith, TheVariableOfTheLastIndex) {
  RuleFixture f("matmul:M=4,N=6,K=8");  // C[i, j]
  const BlockNode* c = f.initial.FindBlock("C");
  EXPECT_FALSE(StoresEndWith(*c, 0));
  EXPECT_TRUE(StoresEndWith(*c, 1));
  EXPECT_FALSE(StoresEndWith(*c, 2));
}

}  // namespace
}  // namespace lathe::tuner

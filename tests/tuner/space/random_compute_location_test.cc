// Tests of the RandomComputeLocation rule
// (tuner/space/random_compute_location.h).
#include "tuner/space/random_compute_location.h"

#include <gtest/gtest.h>

#include "compiler/codegen/cpu_target.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/schedule/primitive/compute_at.h"
#include "tests/tuner/space/space_test_util.h"
#include "tuner/space/block_nest.h"

namespace lathe::tuner {
namespace {

using testing::CheckProgram;
using testing::RuleFixture;

TEST(RandomComputeLocation, SamplesWhereThePaddingIsComputed) {
  RuleFixture f("conv2d_nchw:N=1,C=2,H=6,W=6,K=4,R=3,S=3,stride=2,pad=1");
  RandomComputeLocation rule;
  auto out = rule.Apply(f.Fresh(), "pad", f.context);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 1u);
  const Trace& trace = out->front()->trace();
  EXPECT_EQ(testing::CountInstructions(trace, "sample_compute_location"), 1)
      << trace.ToText();
  EXPECT_EQ(testing::CountInstructions(trace, "compute_at"), 1);

  // Every decision, "stay" (-1) included, gives a correct program; the moved
  // ones put the padding under the convolution's loops.
  const int64_t locations = static_cast<int64_t>(
      primitive::ComputeLocations(f.initial, "pad").size());
  ASSERT_GE(locations, 2);
  int64_t sample_index = -1;
  for (size_t i = 0; i < trace.instructions.size(); ++i) {
    if (trace.instructions[i].kind == "sample_compute_location")
      sample_index = i;
  }
  for (int64_t d = -1; d < locations; ++d) {
    auto replayed =
        ReplayTrace(trace, f.initial, Decisions{{sample_index, {d}}});
    ASSERT_TRUE(replayed.ok()) << replayed.status();
    const Program& p = (*replayed)->program();
    EXPECT_EQ(AloneAtRoot(p, *p.FindBlock("pad")), d < 0) << "decision " << d;
    absl::Status checked = CheckProgram(f.workload, p, HostTarget(2));
    EXPECT_TRUE(checked.ok()) << "decision " << d << ": " << checked;
  }
}

TEST(RandomComputeLocation, LeavesOutputsAndLoneBlocksAlone) {
  RuleFixture conv("conv2d_nchw:N=1,C=2,H=6,W=6,K=4,R=3,S=3,pad=1");
  RandomComputeLocation rule;
  auto out = rule.Apply(conv.Fresh(), "Y", conv.context);  // writes the output
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(out->front()->trace().instructions.empty());

  RuleFixture relu("relu:M=4,N=4");  // no consumer
  out = rule.Apply(relu.Fresh(), "Y", relu.context);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(out->front()->trace().instructions.empty());
}

TEST(RandomComputeLocation, LeavesTiledAndPlacedBlocksAlone) {
  RuleFixture f("conv2d_nchw:N=1,C=2,H=6,W=6,K=4,R=3,S=3,pad=1");
  RandomComputeLocation rule;
  std::unique_ptr<TracedSchedule> tiled = f.Fresh();
  ASSERT_TRUE(tiled
                  ->AnnotateBlock(tiled->GetBlock("pad").value(),
                                  kTiledAnnotation, int64_t{1})
                  .ok());
  auto out = rule.Apply(std::move(tiled), "pad", f.context);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(testing::CountInstructions(out->front()->trace(), "compute_at"), 0);

  std::unique_ptr<TracedSchedule> marked = f.Fresh();
  ASSERT_TRUE(marked
                  ->AnnotateBlock(marked->GetBlock("pad").value(),
                                  kPlacedAnnotation, int64_t{1})
                  .ok());
  out = rule.Apply(std::move(marked), "pad", f.context);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(testing::CountInstructions(out->front()->trace(), "compute_at"), 0);

  std::unique_ptr<TracedSchedule> placed = f.Fresh();
  auto y_loops = placed->GetLoops(placed->GetBlock("Y").value()).value();
  ASSERT_TRUE(
      placed->ComputeAt(placed->GetBlock("pad").value(), y_loops[1]).ok());
  const size_t before = placed->trace().instructions.size();
  out = rule.Apply(std::move(placed), "pad", f.context);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->front()->trace().instructions.size(), before);
}

}  // namespace
}  // namespace lathe::tuner

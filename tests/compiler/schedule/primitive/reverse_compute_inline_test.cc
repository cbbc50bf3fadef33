#include <gtest/gtest.h>

#include "compiler/ir/printer.h"
#include "compiler/schedule/primitive/compute_inline.h"
#include "compiler/schedule/traced_schedule.h"
#include "tests/compiler/schedule/same_result.h"
#include "tests/compiler/schedule/test_programs.h"
#include "tests/compiler/schedule/trace_round_trip.h"

namespace lathe {
namespace {

bool Contains(absl::string_view text, absl::string_view part) {
  return text.find(part) != absl::string_view::npos;
}

std::vector<std::string> BlockOrder(const Program& p) {
  std::vector<std::string> names;
  for (BlockNode* b : p.Blocks()) names.push_back(b->name);
  return names;
}

TEST(ReverseComputeInline, ConsumerFoldsIntoProducer) {
  Program initial = testing::TwoStageProgram(7);
  TracedSchedule sch(initial);
  absl::Status s = sch.ReverseComputeInline(sch.GetBlock("C").value());
  ASSERT_TRUE(s.ok()) << s;
  const Program& p = sch.program();
  EXPECT_EQ(BlockOrder(p), (std::vector<std::string>{"B"}));
  EXPECT_TRUE(p.root->alloc_buffers.empty());
  EXPECT_EQ(PrintStmt(*p.FindBlock("B")->body),
            "C[vi] = A[vi] * 2.0f + 1.0f\n");
  EXPECT_EQ(p.FindLoop("i_1"), nullptr);
  absl::Status same = testing::CheckSameResult(initial, p);
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(p);
  absl::Status trip = testing::CheckTraceRoundTrip(sch, initial);
  EXPECT_TRUE(trip.ok()) << trip;
}

TEST(ReverseComputeInline, ReluIntoBiasAfterSplit) {
  // The producer keeps its loops (split with a tail) and predicate.
  Program initial = testing::DenseBiasReluProgram(5, 7, 3);
  TracedSchedule sch(initial);
  std::vector<LoopRV> loops =
      sch.GetLoops(sch.GetBlock("T_bias").value()).value();
  ASSERT_TRUE(sch.Split(loops[1], {Factor(), Factor(int64_t{4})}).ok());
  absl::Status s = sch.ReverseComputeInline(sch.GetBlock("Y").value());
  ASSERT_TRUE(s.ok()) << s;
  const Program& p = sch.program();
  EXPECT_EQ(BlockOrder(p), (std::vector<std::string>{"T_dense", "T_bias"}));
  EXPECT_EQ(PrintStmt(*p.FindBlock("T_bias")->body),
            "Y[vi_1, vj_1] = max(T_dense[vi_1, vj_1] + bias[vj_1], 0.0f)\n");
  EXPECT_EQ(p.FindBlock("T_bias")->predicate.ToString(),
            "j_1_0 * 4 + j_1_1 < 7");
  absl::Status same = testing::CheckSameResult(initial, p);
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(p);
  absl::Status trip = testing::CheckTraceRoundTrip(sch, initial);
  EXPECT_TRUE(trip.ok()) << trip;
}

TEST(ReverseComputeInline, RejectsReductionProducer) {
  Program initial = testing::DenseBiasReluProgram(4, 4, 4);
  TracedSchedule sch(initial);
  std::string before = PrintProgram(sch.program());
  absl::Status s = sch.ReverseComputeInline(sch.GetBlock("T_bias").value());
  ASSERT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(
      s.message(),
      "reverse_compute_inline: block \"T_bias\" cannot be inlined: producer "
      "\"T_dense\": it is a reduction");
  EXPECT_EQ(PrintProgram(sch.program()), before);
}

TEST(ReverseComputeInline, RejectsShiftedReadsSharedProducersAndReductions) {
  Program stencil = testing::PadStencilProgram(5);
  TracedSchedule sch(stencil);
  absl::Status shifted = sch.ReverseComputeInline(sch.GetBlock("B").value());
  ASSERT_EQ(shifted.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(
      Contains(shifted.message(), "it reads Pad at [vi_1 + 1], not where"))
      << shifted;

  Program chain = testing::ElementwiseChainProgram(3, 3);
  TracedSchedule sch2(chain);
  std::string before = PrintProgram(sch2.program());
  absl::Status shared = sch2.ReverseComputeInline(sch2.GetBlock("C").value());
  ASSERT_EQ(shared.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(shared.message(), "block \"D\" also reads B")) << shared;
  absl::Status two = sch2.ReverseComputeInline(sch2.GetBlock("D").value());
  ASSERT_EQ(two.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(two.message(), "it reads both C and B")) << two;
  EXPECT_EQ(PrintProgram(sch2.program()), before);

  Program matmul = testing::MatmulProgram(3, 3, 3);
  TracedSchedule sch3(matmul);
  absl::Status reduction =
      sch3.ReverseComputeInline(sch3.GetBlock("C").value());
  ASSERT_EQ(reduction.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(reduction.message(), "it is a reduction")) << reduction;
}

}  // namespace
}  // namespace lathe

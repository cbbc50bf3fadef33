#include "compiler/schedule/primitive/compute_inline.h"

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

std::vector<std::string> BlockOrder(const Program& p) {
  std::vector<std::string> names;
  for (BlockNode* b : p.Blocks()) names.push_back(b->name);
  return names;
}

std::vector<std::string> Allocations(const Program& p) {
  std::vector<std::string> names;
  for (const BufferPtr& b : p.root->alloc_buffers) names.push_back(b->name);
  return names;
}

TEST(ComputeInline, BiasIntoRelu) {
  Program initial = testing::DenseBiasReluProgram(5, 7, 3);
  TracedSchedule sch(initial);
  absl::Status s = sch.ComputeInline(sch.GetBlock("T_bias").value());
  ASSERT_TRUE(s.ok()) << s;
  const Program& p = sch.program();
  EXPECT_EQ(BlockOrder(p), (std::vector<std::string>{"T_dense", "Y"}));
  EXPECT_EQ(Allocations(p), (std::vector<std::string>{"T_dense"}));
  EXPECT_EQ(PrintStmt(*p.FindBlock("Y")->body),
            "Y[vi_2, vj_2] = max(T_dense[vi_2, vj_2] + bias[vj_2], 0.0f)\n");
  EXPECT_EQ(p.FindLoop("i_1"), nullptr);  // T_bias's loops are gone
  EXPECT_EQ(p.FindLoop("j_1"), nullptr);
  absl::Status same = testing::CheckSameResult(initial, p);
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(p);
  absl::Status trip = testing::CheckTraceRoundTrip(sch, initial);
  EXPECT_TRUE(trip.ok()) << trip;
}

TEST(ComputeInline, PaddingIntoStencilSubstitutesEachTap) {
  for (int64_t n : {1, 5, 13}) {
    Program initial = testing::PadStencilProgram(n);
    TracedSchedule sch(initial);
    absl::Status s = sch.ComputeInline(sch.GetBlock("Pad").value());
    ASSERT_TRUE(s.ok()) << s;
    const Program& p = sch.program();
    EXPECT_EQ(BlockOrder(p), (std::vector<std::string>{"B"}));
    EXPECT_TRUE(p.root->alloc_buffers.empty());
    std::string body = PrintStmt(*p.FindBlock("B")->body);
    // The tap Pad[vi_1 + 2] became A[vi_1 + 1] under its own border test.
    EXPECT_TRUE(Contains(
        body, absl::StrCat("vi_1 + 2 < ", n + 1, ", A[vi_1 + 1], 0.0f)")))
        << body;
    absl::Status same = testing::CheckSameResult(initial, p, n);
    EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(p);
    absl::Status trip = testing::CheckTraceRoundTrip(sch, initial);
    EXPECT_TRUE(trip.ok()) << trip;
  }
}

TEST(ComputeInline, IntoEveryConsumer) {
  Program initial = testing::ElementwiseChainProgram(3, 4);
  TracedSchedule sch(initial);
  ASSERT_TRUE(sch.ComputeInline(sch.GetBlock("B").value()).ok());
  const Program& p = sch.program();
  EXPECT_EQ(BlockOrder(p), (std::vector<std::string>{"C", "D"}));
  EXPECT_EQ(PrintStmt(*p.FindBlock("C")->body),
            "C[vi_1, vj_1] = (A[vi_1, vj_1] + 1.0f) * 2.0f\n");
  EXPECT_TRUE(
      Contains(PrintStmt(*p.FindBlock("D")->body), "A[vi_2, vj_2] + 1.0f"));
  absl::Status same = testing::CheckSameResult(initial, p);
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(p);
  // And the next stage too.
  ASSERT_TRUE(sch.ComputeInline(sch.GetBlock("C").value()).ok());
  same = testing::CheckSameResult(initial, sch.program());
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(sch.program());
  absl::Status trip = testing::CheckTraceRoundTrip(sch, initial);
  EXPECT_TRUE(trip.ok()) << trip;
}

TEST(ComputeInline, AfterComputeAtTheSharedLoopStays) {
  Program initial = testing::PadStencilProgram(9);
  TracedSchedule sch(initial);
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("B").value()).value();
  std::vector<LoopRV> split =
      sch.Split(loops[0], {Factor(), Factor(int64_t{4})}).value();
  ASSERT_TRUE(sch.ComputeAt(sch.GetBlock("Pad").value(), split[0]).ok());
  absl::Status s = sch.ComputeInline(sch.GetBlock("Pad").value());
  ASSERT_TRUE(s.ok()) << s;
  const Program& p = sch.program();
  EXPECT_EQ(p.FindLoop("ax0"), nullptr);
  EXPECT_NE(p.FindLoop("i_1_0"), nullptr);
  EXPECT_EQ(p.FindLoop("i_1_0")->body.get(),
            p.FindLoop("i_1_1"));  // no Seq of one
  absl::Status same = testing::CheckSameResult(initial, p);
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(p);
  absl::Status trip = testing::CheckTraceRoundTrip(sch, initial);
  EXPECT_TRUE(trip.ok()) << trip;
}

TEST(ComputeInline, PackedCopyReadsThroughItsLayout) {
  // Inlining the packed copy of B gives back B[k, j].
  Program initial = testing::MatmulProgram(3, 20, 4);
  TracedSchedule sch(initial);
  auto packed = sch.CacheRead(sch.GetBlock("C").value(), 1, "global",
                              Layout{{1, 8}, {1, 0, 2}});
  ASSERT_TRUE(packed.ok()) << packed.status();
  absl::Status s = sch.ComputeInline(*packed);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(PrintStmt(*sch.program().FindBlock("C")->body),
            "C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]\n");
  absl::Status same = testing::CheckSameResult(initial, sch.program());
  EXPECT_TRUE(same.ok()) << same << "\n" << PrintProgram(sch.program());
  absl::Status trip = testing::CheckTraceRoundTrip(sch, initial);
  EXPECT_TRUE(trip.ok()) << trip;
}

TEST(ComputeInline, RejectsReductionBlock) {
  Program initial = testing::DenseBiasReluProgram(4, 4, 4);
  TracedSchedule sch(initial);
  std::string before = PrintProgram(sch.program());
  absl::Status s = sch.ComputeInline(sch.GetBlock("T_dense").value());
  ASSERT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(
      s.message(),
      "compute_inline: block \"T_dense\" cannot be inlined: it is a reduction");
  EXPECT_EQ(PrintProgram(sch.program()), before);
  EXPECT_EQ(sch.trace().instructions.size(), 1u);  // get_block only
}

TEST(ComputeInline, RejectsOutput) {
  Program initial = testing::DenseBiasReluProgram(4, 4, 4);
  TracedSchedule sch(initial);
  std::string before = PrintProgram(sch.program());
  absl::Status s = sch.ComputeInline(sch.GetBlock("Y").value());
  ASSERT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "compute_inline: block \"Y\" cannot be inlined: it writes Y, an "
            "output of the program");
  EXPECT_EQ(PrintProgram(sch.program()), before);
  Program copy = initial;
  EXPECT_EQ(primitive::ComputeInline(&copy, "nope").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(primitive::ComputeInline(&copy, "root").code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ComputeInline, RejectsPartialProducer) {
  // A predicate that skips elements inside the domain: the block does not
  // compute all of its buffer, so its value may not replace every read.
  Program initial = testing::TwoStageProgram(6);
  Program p = initial;
  BlockNode* b = p.FindBlock("B");
  b->predicate = b->iter_values[0] < 3;
  absl::Status s = primitive::ComputeInline(&p, "B");
  ASSERT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(s.message(),
                       "its predicate i < 3 does more than clip its domain"))
      << s;
}

}  // namespace
}  // namespace lathe

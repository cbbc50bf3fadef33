#include "compiler/schedule/trace.h"

#include <gtest/gtest.h>

#include "proto/trace.pb.h"

namespace lathe {
namespace {

Trace Example() {
  Trace t;
  t.workload = "matmul:K=8,M=8,N=8,dtype=float32";
  t.instructions.push_back(
      {"get_block", {}, {{"name", std::string("C")}}, {0}});
  t.instructions.push_back({"get_loops", {TraceInput::RV(0)}, {}, {1, 2, 3}});
  t.instructions.push_back({"sample_perfect_tile",
                            {TraceInput::RV(1)},
                            {{"n", int64_t{2}}, {"max_innermost", int64_t{4}}},
                            {4, 5}});
  t.instructions.push_back(
      {"split",
       {TraceInput::RV(1), TraceInput::RV(4), TraceInput::None()},
       {},
       {6, 7}});
  t.instructions.push_back({"sample_categorical",
                            {},
                            {{"candidates", std::vector<int64_t>{0, 16, 64}},
                             {"probs", std::vector<double>{0.25, 0.25, 0.5}}},
                            {8}});
  t.decisions[2] = {2, 4};
  t.decisions[4] = {1};
  return t;
}

TEST(Trace, JsonRoundTrip) {
  Trace t = Example();
  std::string json = t.ToJson();
  EXPECT_NE(json.find("\"format_version\": 1"), std::string::npos) << json;
  auto parsed = Trace::FromJson(json);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(*parsed == t);
  EXPECT_EQ(parsed->ToJson(), json);
}

TEST(Trace, TextForm) {
  EXPECT_EQ(
      Example().ToText(),
      "r0 = get_block(name=\"C\")\n"
      "r1, r2, r3 = get_loops(r0)\n"
      "r4, r5 = sample_perfect_tile(r1, n=2, max_innermost=4)  # decision: [2, "
      "4]\n"
      "r6, r7 = split(r1, r4, None)\n"
      "r8 = sample_categorical(candidates=[0, 16, 64], probs=[0.25, 0.25, 0.5])"
      "  # decision: [1]\n");
}

TEST(Trace, RejectsUnknownVersion) {
  proto::Trace message;
  Example().ToProto(&message);
  message.set_format_version(99);
  auto parsed = Trace::FromProto(message);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("format version 99"),
            std::string::npos);
}

TEST(Trace, RejectsUseBeforeDefinition) {
  proto::Trace message;
  Example().ToProto(&message);
  message.mutable_instructions(1)->mutable_inputs(0)->set_rv(5);
  auto parsed = Trace::FromProto(message);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("uses r5 before it is defined"),
            std::string::npos)
      << parsed.status();
}

TEST(Trace, RejectsDecisionForMissingInstruction) {
  proto::Trace message;
  Example().ToProto(&message);
  message.mutable_decisions(0)->set_instruction(17);
  EXPECT_FALSE(Trace::FromProto(message).ok());
}

// A decision belongs to a sampling instruction, one per instruction.
TEST(Trace, RejectsADecisionTwiceOrOnAnInstructionThatSamplesNothing) {
  proto::Trace message;
  Example().ToProto(&message);
  *message.add_decisions() = message.decisions(0);  // instruction 2 again
  auto twice = Trace::FromProto(message);
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find(
                "two decisions for instruction 2 (sample_perfect_tile)"),
            std::string::npos)
      << twice.status();
  Example().ToProto(&message);
  message.mutable_decisions(0)->set_instruction(3);  // split
  auto not_sampling = Trace::FromProto(message);
  ASSERT_FALSE(not_sampling.ok());
  EXPECT_NE(not_sampling.status().message().find(
                "instruction 3 (split), which samples nothing"),
            std::string::npos)
      << not_sampling.status();
}

TEST(Trace, RejectsMalformedJson) {
  auto parsed = Trace::FromJson("{\"instructions\": [");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("not a valid trace JSON"),
            std::string::npos);
  EXPECT_FALSE(Trace::Load("/nonexistent/trace.json").ok());
}

}  // namespace
}  // namespace lathe

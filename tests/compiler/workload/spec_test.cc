#include "compiler/workload/spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compiler/ir/structural_equal.h"

namespace lathe {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// The message of a spec that must be rejected as invalid input.
std::string ErrorOf(const std::string& spec) {
  absl::StatusOr<Workload> w = ParseWorkloadSpec(spec);
  EXPECT_FALSE(w.ok()) << spec << " was accepted";
  if (w.ok()) return "";
  EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument) << spec;
  return std::string(w.status().message());
}

TEST(WorkloadSpec, FillsDefaultsAndSortsParameters) {
  Workload w = *ParseWorkloadSpec("matmul:M=512,N=512,K=512");
  EXPECT_EQ(w.op(), "matmul");
  EXPECT_FALSE(w.is_custom());
  EXPECT_EQ(w.CanonicalForm(), "matmul:K=512,M=512,N=512,dtype=float32");
  EXPECT_EQ(w.params().at("dtype"), "float32");
  Workload conv = *ParseWorkloadSpec(
      "conv2d_nchw:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1");
  EXPECT_EQ(conv.CanonicalForm(),
            "conv2d_nchw:C=64,H=56,K=64,N=1,R=3,S=3,W=56,dilation=1,"
            "dtype=float32,groups=1,pad=1,stride=1");
}

TEST(WorkloadSpec, GoldenKeys) {
  // Keys index the database: a change here orphans every stored record.
  // Update these only with a migration of the stored keys.
  EXPECT_EQ(WorkloadKey(""), "cbf29ce484222325");
  EXPECT_EQ(ParseWorkloadSpec("matmul:M=512,N=512,K=512")->Key(),
            "2fd5fbe33d658f38");
  EXPECT_EQ(
      ParseWorkloadSpec("conv2d_nchw:N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1")
          ->Key(),
      "9688a5861c8f5a86");
  EXPECT_EQ(ParseWorkloadSpec("dense:M=128,N=256,K=512,bias=1,relu=1")->Key(),
            "b9f4db7ffcf6b154");
  EXPECT_EQ(ParseWorkloadSpec("softmax:M=64,N=1000")->Key(),
            "e8f33136d83a7a09");
}

TEST(WorkloadSpec, SpellingDoesNotChangeTheKey) {
  const std::string key = ParseWorkloadSpec("matmul:M=512,N=512,K=512")->Key();
  for (const char* spec :
       {"matmul:K=512,N=512,M=512", "matmul:N=512,M=512,K=512,dtype=float32",
        " matmul : M = 512 , N=512, K=0512 ",
        "matmul:M=512,N=512,K=512,dtype=f32",
        "matmul:K=512,M=512,N=512,dtype=float32"}) {
    EXPECT_EQ(ParseWorkloadSpec(spec)->Key(), key) << spec;
  }
  EXPECT_NE(ParseWorkloadSpec("matmul:M=512,N=512,K=256")->Key(), key);
  EXPECT_NE(
      ParseWorkloadSpec("conv2d_nchw:N=1,C=8,H=8,W=8,K=8,R=3,S=3")->Key(),
      ParseWorkloadSpec("conv2d_nhwc:N=1,C=8,H=8,W=8,K=8,R=3,S=3")->Key());
  EXPECT_EQ(
      ParseWorkloadSpec("conv2d_nchw:N=1,C=8,H=8,W=8,K=8,R=3,S=3")->Key(),
      ParseWorkloadSpec("conv2d_nchw:N=1,C=8,H=8,W=8,K=8,R=3,S=3,groups=1,"
                        "stride=1,dilation=1,pad=0")
          ->Key());
}

TEST(WorkloadSpec, CanonicalFormIsASpecOfTheSameWorkload) {
  for (const char* spec :
       {"matmul:M=4,N=5,K=3", "batch_matmul:B=2,M=4,N=5,K=3",
        "dense:M=4,N=5,K=3,relu=1",
        "conv2d_nhwc:N=1,C=4,H=5,W=5,K=4,R=3,S=3,pad=1",
        "avg_pool2d:N=1,C=2,H=5,W=5,R=3,S=3,pad=1", "add:M=2,N=2",
        "relu:M=2,N=2", "max_pool2d:N=1,C=1,H=4,W=4,R=2,S=2,stride=2",
        "softmax:M=2,N=3",
        "conv2d_nchw:N=1,C=4,H=5,W=5,K=2,R=3,S=3,groups=2,dilation=2,pad=2"}) {
    Workload w = *ParseWorkloadSpec(spec);
    absl::StatusOr<Workload> again = ParseWorkloadSpec(w.CanonicalForm());
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(again->CanonicalForm(), w.CanonicalForm());
    EXPECT_TRUE(StructuralEqual(*w.InitialProgram(), *again->InitialProgram()));
  }
}

TEST(WorkloadSpec, MakeWorkloadTakesKeyValuePairs) {
  absl::StatusOr<Workload> w = MakeWorkload("add", {{"N", "3"}, {"M", "2"}});
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->CanonicalForm(), "add:M=2,N=3,dtype=float32");
}

TEST(WorkloadSpecErrors, UnknownOperatorListsKnownOnes) {
  EXPECT_EQ(
      ErrorOf("matmull:M=1,N=1,K=1"),
      "unknown operator \"matmull\"; known operators: add, avg_pool2d, "
      "batch_matmul, conv2d_nchw, conv2d_nhwc, dense, matmul, max_pool2d, "
      "relu, softmax (or custom:EXPR|DIMS for an expression)");
}

TEST(WorkloadSpecErrors, UnknownParameterListsAcceptedOnes) {
  EXPECT_EQ(ErrorOf("matmul:M=1,N=1,K=1,L=2"),
            "matmul: unknown parameter \"L\"; accepted: M, N, K, dtype");
  EXPECT_EQ(ErrorOf("matmul:m=1,N=1,K=1"),
            "matmul: unknown parameter \"m\"; accepted: M, N, K, dtype");
}

TEST(WorkloadSpecErrors, MissingParameters) {
  EXPECT_EQ(ErrorOf("matmul:M=1,N=1"),
            "matmul: missing parameter K; required: M, N, K");
  EXPECT_EQ(ErrorOf("matmul"),
            "matmul: missing parameters M, N, K; required: M, N, K");
  EXPECT_EQ(ErrorOf("matmul:"),
            "matmul: missing parameters M, N, K; required: M, N, K");
}

TEST(WorkloadSpecErrors, BadDimensions) {
  EXPECT_EQ(ErrorOf("matmul:M=0,N=1,K=1"),
            "matmul: M must be a positive integer, got \"0\"");
  EXPECT_EQ(ErrorOf("matmul:M=-2,N=1,K=1"),
            "matmul: M must be a positive integer, got \"-2\"");
  EXPECT_EQ(ErrorOf("matmul:M=2.5,N=1,K=1"),
            "matmul: M must be a positive integer, got \"2.5\"");
  EXPECT_EQ(ErrorOf("matmul:M=,N=1,K=1"),
            "matmul: M must be a positive integer, got \"\"");
  EXPECT_EQ(ErrorOf("matmul:M=abc,N=1,K=1"),
            "matmul: M must be a positive integer, got \"abc\"");
  EXPECT_EQ(ErrorOf("conv2d_nchw:N=1,C=1,H=4,W=4,K=1,R=1,S=1,pad=-1"),
            "conv2d_nchw: pad must be a non-negative integer, got \"-1\"");
  EXPECT_EQ(ErrorOf("conv2d_nchw:N=1,C=1,H=4,W=4,K=1,R=1,S=1,stride=0"),
            "conv2d_nchw: stride must be a positive integer, got \"0\"");
  EXPECT_EQ(ErrorOf("matmul:M=1,N=1,K=1,dtype=int8"),
            "matmul: dtype int8 is not supported yet; accepted: float32");
}

TEST(WorkloadSpecErrors, DuplicateKeys) {
  EXPECT_EQ(ErrorOf("matmul:M=1,N=1,K=1,M=2"),
            "matmul: parameter M is given twice");
  EXPECT_EQ(ErrorOf("matmul:M=1,N=1,K=1,dtype=float32,dtype=f32"),
            "matmul: parameter dtype is given twice");
}

TEST(WorkloadSpecErrors, BadSyntax) {
  EXPECT_THAT(ErrorOf(""), HasSubstr("empty; expected NAME:key=value"));
  EXPECT_THAT(ErrorOf("   "), HasSubstr("empty"));
  EXPECT_EQ(ErrorOf(":M=1"),
            "workload spec \":M=1\": no operator name before ':'; expected "
            "NAME:key=value,...");
  EXPECT_EQ(ErrorOf("matmul:M=1,,N=1,K=1"),
            "workload spec \"matmul:M=1,,N=1,K=1\": empty parameter (a stray "
            "','); expected key=value,...");
  EXPECT_EQ(ErrorOf("matmul:M=1,N=1,K=1,"),
            "workload spec \"matmul:M=1,N=1,K=1,\": empty parameter (a stray "
            "','); expected key=value,...");
  EXPECT_EQ(ErrorOf("matmul:M=1,N1,K=1"),
            "workload spec \"matmul:M=1,N1,K=1\": \"N1\" is not key=value");
  EXPECT_EQ(
      ErrorOf("matmul:=1,N=1,K=1"),
      "workload spec \"matmul:=1,N=1,K=1\": \"=1\" has no parameter name");
  EXPECT_THAT(ErrorOf("matmul:M=1=2,N=1,K=1"),
              HasSubstr("M must be a positive integer, got \"1=2\""));
  EXPECT_THAT(ErrorOf("custom:C[i] = A[i]"), HasSubstr("custom:EXPR|DIMS"));
}

TEST(WorkloadSpecErrors, InconsistentShapes) {
  EXPECT_EQ(ErrorOf("conv2d_nchw:N=1,C=6,H=8,W=8,K=8,R=3,S=3,groups=4"),
            "conv2d_nchw: groups=4 does not divide C=6; groups must divide "
            "both C and K");
  EXPECT_EQ(ErrorOf("conv2d_nhwc:N=1,C=8,H=8,W=8,K=6,R=3,S=3,groups=4"),
            "conv2d_nhwc: groups=4 does not divide K=6; groups must divide "
            "both C and K");
}

TEST(WorkloadSpecErrors, WindowsThatLeaveNoOutput) {
  EXPECT_EQ(ErrorOf("conv2d_nchw:N=1,C=1,H=2,W=8,K=1,R=3,S=3"),
            "conv2d_nchw: no output along H: the padded input H+2*pad=2 is "
            "smaller than the window R=3");
  EXPECT_EQ(ErrorOf("conv2d_nchw:N=1,C=1,H=8,W=4,K=1,R=3,S=3,dilation=2"),
            "conv2d_nchw: no output along W: the padded input W+2*pad=4 is "
            "smaller than the window dilation*(S-1)+1=5");
  // Padding makes room.
  EXPECT_TRUE(
      ParseWorkloadSpec("conv2d_nchw:N=1,C=1,H=2,W=2,K=1,R=3,S=3,pad=1").ok());
  EXPECT_EQ(ErrorOf("max_pool2d:N=1,C=1,H=2,W=8,R=3,S=3"),
            "max_pool2d: no output along H: the padded input H+2*pad=2 is "
            "smaller than the window R=3");
  EXPECT_EQ(ErrorOf("avg_pool2d:N=1,C=1,H=8,W=8,R=2,S=3,pad=2"),
            "avg_pool2d: pad=2 must be smaller than the window (R=2, S=3) so "
            "that every window covers an input element");
}

TEST(WorkloadSpecErrors, AbsurdSizes) {
  EXPECT_EQ(ErrorOf("matmul:M=4294967296,N=1,K=1"),
            "matmul: M=4294967296 is too large (at most 2147483648)");
  EXPECT_THAT(ErrorOf("matmul:M=99999999999999999999999999,N=1,K=1"),
              HasSubstr("M=99999999999999999999999999 is too large"));
  EXPECT_EQ(ErrorOf("matmul:M=65536,N=65536,K=1"),
            "matmul: tensor C [65536, 65536] is too large (more than "
            "2147483648 elements)");
  // The padding stage counts too.
  EXPECT_THAT(ErrorOf("conv2d_nchw:N=1,C=1,H=40000,W=40000,K=1,R=1,S=1,"
                      "pad=20000"),
              AllOf(HasSubstr("conv2d_nchw: tensor"), HasSubstr("too large")));
  // At the bound it is accepted (building is cheap; nothing is allocated).
  EXPECT_TRUE(ParseWorkloadSpec("relu:M=2147483648,N=1").ok());
  EXPECT_FALSE(ParseWorkloadSpec("relu:M=2147483648,N=2").ok());
}

}  // namespace
}  // namespace lathe

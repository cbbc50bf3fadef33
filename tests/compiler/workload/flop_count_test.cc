// Tests of compiler/workload/flop_count.h.
#include "compiler/workload/flop_count.h"

#include <cstdint>
#include <limits>

#include "compiler/workload/custom_workload.h"
#include "compiler/workload/spec.h"
#include "gtest/gtest.h"

namespace lathe {
namespace {

int64_t Flops(const std::string& spec) {
  absl::StatusOr<Workload> w = ParseWorkloadSpec(spec);
  EXPECT_TRUE(w.ok()) << w.status();
  absl::StatusOr<int64_t> flops = FlopCount(*w);
  EXPECT_TRUE(flops.ok()) << flops.status();
  return *flops;
}

TEST(FlopCount, MultiplyAddCountsTwo) {
  EXPECT_EQ(Flops("matmul:M=64,N=32,K=16"), 2 * 64 * 32 * 16);
  EXPECT_EQ(Flops("batch_matmul:B=3,M=4,N=5,K=6"), 2 * 3 * 4 * 5 * 6);
}

TEST(FlopCount, ConvCountsTheReductionNotThePadding) {
  // Y[1,8,8,8] each a sum of 4*3*3 multiply-adds; the padding stage is free.
  EXPECT_EQ(Flops("conv2d_nchw:N=1,C=4,H=8,W=8,K=8,R=3,S=3,pad=1"),
            2 * 8 * 8 * 8 * 4 * 3 * 3);
}

TEST(FlopCount, ElementwiseCountsOnePerElement) {
  EXPECT_EQ(Flops("add:M=7,N=9"), 7 * 9);
}

}  // namespace
}  // namespace lathe

namespace lathe {
namespace {

TEST(FlopCount, SaturatesInsteadOfWrapping) {
  // Each tensor within the limits, the iteration space 2^93 instances.
  absl::StatusOr<Workload> w =
      ParseCustomWorkload("C[i] += A[i,j] * B[k,l] * D[m,n]",
                          "i=2,j=1073741824,k=32768,l=32768,m=32768,n=32768");
  ASSERT_TRUE(w.ok()) << w.status();
  absl::StatusOr<int64_t> flops = FlopCount(*w);
  ASSERT_TRUE(flops.ok()) << flops.status();
  EXPECT_EQ(*flops, std::numeric_limits<int64_t>::max());
}

}  // namespace
}  // namespace lathe

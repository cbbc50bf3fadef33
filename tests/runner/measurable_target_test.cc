// Tests of runner/measurable_target.h.
#include "runner/measurable_target.h"

#include "compiler/codegen/cpu_target.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lathe::runner {
namespace {

using ::testing::HasSubstr;

TEST(MeasurableTarget, AKernelOfAsManyThreadsAsCpusIsMeasurable) {
  EXPECT_GE(AllowedCpuCount(), 1);
  EXPECT_TRUE(CheckMeasurableHere(HostTarget(1)).ok());
  EXPECT_TRUE(CheckMeasurableHere(HostTarget(AllowedCpuCount())).ok());
  EXPECT_TRUE(CheckMeasurableHere(HostTarget(4), /*cpus=*/4).ok());
}

TEST(MeasurableTarget, MoreThreadsThanCpusAreRefusedWithTheCounts) {
  absl::Status st = CheckMeasurableHere(HostTarget(AllowedCpuCount() + 1));
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  st = CheckMeasurableHere(HostTarget(999), /*cpus=*/2);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(st.message(), HasSubstr("-num-threads=999"));
  EXPECT_THAT(st.message(),
              HasSubstr("runs 999 threads, but this process may use 2 CPUs"));
}

TEST(MeasurableTarget, ATargetThatDoesNotRunHereIsRefusedAsSuch) {
  Target fake = HostTarget(1);
  fake.features.push_back("+lathe-imaginary-feature");
  absl::Status st = CheckMeasurableHere(fake);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(st.message(), HasSubstr("lacks: lathe-imaginary-feature"));
}

}  // namespace
}  // namespace lathe::runner

// Tests of compiler/codegen/target_info.h: the target as records carry it
// (canonical string, the parts compatible matching compares) and the
// description of this machine.
#include "compiler/codegen/target_info.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lathe {
namespace {

TEST(TargetInfo, CarriesTheCanonicalStringAndItsParts) {
  absl::StatusOr<Target> target =
      ParseTarget("llvm -mcpu=znver4 -mattr=-pku -num-threads=2");
  ASSERT_TRUE(target.ok()) << target.status();
  proto::TargetInfo info = TargetInfoOf(*target, "a test machine");
  EXPECT_EQ(info.canonical(), target->ToString());
  EXPECT_EQ(info.kind(), "llvm");
  EXPECT_EQ(info.cpu(), "znver4");
  EXPECT_EQ(info.num_threads(), 2);
  EXPECT_EQ(info.device(), "a test machine");
  // Every enabled feature, sorted; the removed one is absent.
  std::vector<std::string> features(info.features().begin(),
                                    info.features().end());
  EXPECT_EQ(features, target->EnabledFeatureList());
  EXPECT_THAT(features, ::testing::Contains("avx512f"));
  EXPECT_THAT(features, ::testing::Not(::testing::Contains("pku")));
  EXPECT_TRUE(std::is_sorted(features.begin(), features.end()));
}

TEST(TargetInfo, DeviceIsEmptyUnlessGiven) {
  EXPECT_EQ(TargetInfoOf(Target{}).device(), "");
}

TEST(TargetInfo, DescribesThisMachine) {
  // "MODEL (N CPUs[, M GiB])".
  EXPECT_THAT(HostDeviceDescription(),
              ::testing::MatchesRegex(".+ \\([0-9]+ CPUs(, [0-9]+ GiB)?\\)"));
}

}  // namespace
}  // namespace lathe

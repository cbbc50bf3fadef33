// Tests of compiler/target/target_info.h: the target as records carry it.
#include "compiler/target/target_info.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lathe {
namespace {

TEST(TargetInfoOf, CarriesTheCanonicalStringAndEveryEnabledFeature) {
  Target t;
  t.cpu = "haswell";
  t.features = {"-fma"};
  t.resolved_features = {"avx", "avx2", "sse2"};
  t.num_threads = 2;
  proto::TargetInfo info = TargetInfoOf(t, "a test machine");
  EXPECT_EQ(info.canonical(), "llvm -mcpu=haswell -mattr=-fma -num-threads=2");
  EXPECT_EQ(info.kind(), "llvm");
  EXPECT_EQ(info.cpu(), "haswell");
  ASSERT_EQ(info.features_size(), 3);
  EXPECT_EQ(info.features(0), "avx");
  EXPECT_EQ(info.features(2), "sse2");
  EXPECT_EQ(info.num_threads(), 2);
  EXPECT_EQ(info.device(), "a test machine");
  EXPECT_EQ(TargetInfoOf(t).device(), "");
}

TEST(HostDeviceDescription, NamesCpusAndMemory) {
  // "MODEL (N CPUs[, M GiB])".
  EXPECT_THAT(HostDeviceDescription(),
              ::testing::MatchesRegex(".+ \\([0-9]+ CPUs(, [0-9]+ GiB)?\\)"));
}

}  // namespace
}  // namespace lathe

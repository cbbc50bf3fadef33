// CUDA targets: the canonical string with every limit, defaults per
// architecture, limits above the architecture's refused, `cuda` alone
// without a driver refused with a message, and compatible matching by the
// architectures a target runs.
#include "compiler/codegen/cuda/cuda_target.h"

#include <gtest/gtest.h>

#include "compiler/target/target_info.h"

namespace lathe::cuda {
namespace {

TEST(CudaTarget, PrintsEveryLimitInTheCanonicalString) {
  absl::StatusOr<Target> t = ParseCudaTarget("cuda -arch=sm_90");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->ToString(),
            "cuda -arch=sm_90 -max-threads-per-block=1024 "
            "-max-shared-memory-per-block=49152 -registers-per-block=65536 "
            "-warp-size=32");
  EXPECT_TRUE(t->IsCuda());
  absl::StatusOr<Target> again = ParseCudaTarget(t->ToString());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *t);
}

TEST(CudaTarget, TakesLowerLimits) {
  absl::StatusOr<Target> t = ParseCudaTarget(
      "cuda  -max-threads-per-block=256 -arch=sm_80 "
      "-max-shared-memory-per-block=16384");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->gpu.max_threads_per_block, 256);
  EXPECT_EQ(t->gpu.max_shared_memory_per_block, 16384);
  EXPECT_EQ(t->cpu, "sm_80");
}

TEST(CudaTarget, RefusesLimitsAboveTheArchitecture) {
  absl::StatusOr<Target> t =
      ParseCudaTarget("cuda -arch=sm_90 -max-threads-per-block=2048");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("-max-threads-per-block=2048 is above "
                                      "sm_90's 1024"),
            std::string::npos)
      << t.status();
}

TEST(CudaTarget, RefusesUnknownArchitecturesAndOptions) {
  EXPECT_NE(ParseCudaTarget("cuda -arch=sm_70")
                .status()
                .message()
                .find("unknown architecture \"sm_70\""),
            std::string::npos);
  EXPECT_NE(ParseCudaTarget("cuda -arch=sm_90 -mcpu=x")
                .status()
                .message()
                .find("unknown option \"-mcpu=x\""),
            std::string::npos);
  EXPECT_NE(ParseCudaTarget("cuda -arch=sm_90 -warp-size=0")
                .status()
                .message()
                .find("-warp-size must be a positive integer, got \"0\""),
            std::string::npos);
  // Past what an int holds: the same refusal, not a wrapped value.
  EXPECT_NE(ParseCudaTarget("cuda -arch=sm_90 -max-threads-per-block="
                            "99999999999")
                .status()
                .message()
                .find("-max-threads-per-block must be a positive integer, "
                      "got \"99999999999\""),
            std::string::npos);
  EXPECT_NE(ParseCudaTarget("cuda -arch=sm_90 -arch=sm_80")
                .status()
                .message()
                .find("-arch is given twice"),
            std::string::npos);
}

TEST(CudaTarget, ResolvesToTheLocalDeviceOrSaysWhyNot) {
  absl::StatusOr<Target> t = ParseCudaTarget("cuda");
  if (t.ok()) {
    EXPECT_TRUE(t->IsCuda());  // a machine with a GPU
    return;
  }
  EXPECT_EQ(t.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(t.status().message().find(
                "target \"cuda\": no -arch given and no GPU here"),
            std::string::npos)
      << t.status();
}

TEST(CudaTarget, NewerArchitecturesRunOlderOnesCode) {
  absl::StatusOr<Target> t = ParseCudaTarget("cuda -arch=sm_89");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->EnabledFeatureList(),
            (std::vector<std::string>{"sm_80", "sm_89"}));
  proto::TargetInfo info = TargetInfoOf(*t);
  EXPECT_EQ(info.kind(), "cuda");
  EXPECT_EQ(info.cpu(), "sm_89");
  EXPECT_EQ(info.features_size(), 2);
}

}  // namespace
}  // namespace lathe::cuda

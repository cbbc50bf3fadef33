// Tests of compiler/target/target.h: the target as data, without LLVM (this
// test links lathe_target alone).
#include "compiler/target/target.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace lathe {
namespace {

Target Resolved(std::vector<std::string> features,
                std::vector<std::string> resolved) {
  Target t;
  t.cpu = "haswell";
  t.features = std::move(features);
  t.resolved_features = std::move(resolved);
  return t;
}

TEST(Target, PrintsTheCanonicalString) {
  Target t = Resolved({"+avx512f", "-fma"}, {"avx", "avx2", "avx512f"});
  t.num_threads = 2;
  EXPECT_EQ(t.ToString(),
            "llvm -mcpu=haswell -mattr=+avx512f,-fma -num-threads=2");
  EXPECT_EQ(t.FeatureString(), "+avx512f,-fma");
  Target plain;
  EXPECT_EQ(plain.ToString(), "llvm -mcpu=generic -num-threads=1");
}

TEST(Target, ACudaTargetPrintsItsArchitectureAndEveryLimit) {
  Target t;
  t.kind = "cuda";
  t.cpu = "sm_80";
  t.gpu.max_threads_per_block = 512;
  t.gpu.max_shared_memory_per_block = 16384;
  t.gpu.registers_per_block = 65536;
  t.gpu.warp_size = 32;
  EXPECT_TRUE(t.IsCuda());
  EXPECT_EQ(t.ToString(),
            "cuda -arch=sm_80 -max-threads-per-block=512 "
            "-max-shared-memory-per-block=16384 -registers-per-block=65536 "
            "-warp-size=32");
  Target other = t;
  other.gpu.max_threads_per_block = 1024;
  EXPECT_FALSE(t == other);
}

TEST(Target, TheResolvedFeaturesAreNotPartOfItsIdentity) {
  Target a = Resolved({}, {"avx", "avx2"});
  Target b = Resolved({}, {});
  EXPECT_TRUE(a == b);
  b.num_threads = 3;
  EXPECT_FALSE(a == b);
}

TEST(Target, FeaturesComeFromTheResolutionAndTheListEditedAfterIt) {
  Target t = Resolved({}, {"avx", "avx2", "fma", "sse2"});
  EXPECT_TRUE(t.HasFeature("avx2"));
  EXPECT_FALSE(t.HasFeature("avx512f"));
  EXPECT_EQ(t.VectorLanesF32(), 8);
  // A list edited after parsing counts: "+" adds, "-" removes.
  t.features = {"+avx512f", "-fma"};
  EXPECT_TRUE(t.HasFeature("avx512f"));
  EXPECT_FALSE(t.HasFeature("fma"));
  EXPECT_EQ(t.VectorLanesF32(), 16);
  EXPECT_EQ(t.EnabledFeatureList(),
            (std::vector<std::string>{"avx", "avx2", "avx512f", "sse2"}));
}

TEST(Target, AssembledByHandItHasExactlyItsListedFeatures) {
  Target t;
  EXPECT_EQ(t.VectorLanesF32(), 4);
  EXPECT_TRUE(t.EnabledFeatureList().empty());
  t.features = {"+avx"};
  EXPECT_EQ(t.VectorLanesF32(), 8);
}

TEST(AllowedCpuCount, IsAtLeastOne) { EXPECT_GE(AllowedCpuCount(), 1); }

}  // namespace
}  // namespace lathe

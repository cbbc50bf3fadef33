// Tests of database/target_match.h: which targets may stand in for another,
// and in which order.
#include "database/target_match.h"

#include <string>

#include "compiler/codegen/cuda/cuda_target.h"
#include "compiler/target/target_info.h"
#include "gtest/gtest.h"
#include "tests/database/test_records.h"

namespace lathe::db {
namespace {

using testing::MakeTarget;

const proto::TargetInfo kWanted =
    MakeTarget("znver4", {"avx2", "avx512f", "fma"}, 4);

TEST(CompatibleDifference, TheSameTargetDiffersInNothing) {
  std::optional<std::string> difference =
      CompatibleDifference(kWanted, kWanted);
  ASSERT_TRUE(difference.has_value());
  EXPECT_EQ(*difference, "");
}

TEST(CompatibleDifference, AnyThreadCountMayAnswer) {
  std::optional<std::string> difference = CompatibleDifference(
      kWanted, MakeTarget("znver4", {"avx2", "avx512f", "fma"}, 2));
  ASSERT_TRUE(difference.has_value());
  EXPECT_EQ(*difference, "measured with 2 threads, asked for 4");
}

TEST(CompatibleDifference, AnotherCpuWithFewerFeaturesMayAnswer) {
  std::optional<std::string> difference =
      CompatibleDifference(kWanted, MakeTarget("haswell", {"avx2", "fma"}, 4));
  ASSERT_TRUE(difference.has_value());
  EXPECT_NE(difference->find("cpu haswell, asked for znver4"),
            std::string::npos)
      << *difference;
  EXPECT_NE(difference->find("1 more features"), std::string::npos)
      << *difference;
  EXPECT_EQ(difference->find("threads"), std::string::npos) << *difference;
}

TEST(CompatibleDifference, ACandidateUsingAFeatureTheTargetLacksNeverAnswers) {
  EXPECT_FALSE(CompatibleDifference(
      kWanted, MakeTarget("znver4", {"avx2", "avx512bw", "fma"}, 4)));
  EXPECT_FALSE(
      CompatibleDifference(MakeTarget("haswell", {"avx2", "fma"}, 4), kWanted));
}

TEST(CompatibleDifference, AnotherKindNeverAnswers) {
  proto::TargetInfo cuda =
      MakeTarget("znver4", {"avx2", "avx512f", "fma"}, 4, "cuda");
  EXPECT_FALSE(CompatibleDifference(kWanted, cuda));
  EXPECT_FALSE(CompatibleDifference(cuda, kWanted));
}

TEST(CompatibleDifference, UnsortedFeaturesOfTheAskedTargetStillMatch) {
  proto::TargetInfo wanted = kWanted;
  wanted.clear_features();
  for (const char* feature : {"fma", "avx512f", "avx2"})
    wanted.add_features(feature);
  std::optional<std::string> difference =
      CompatibleDifference(wanted, MakeTarget("znver4", {"avx2", "fma"}, 4));
  ASSERT_TRUE(difference.has_value());
  EXPECT_EQ(*difference, "asked-for target has 1 more features");
}

TEST(CompatibleDifference, NamesTheCandidateWhenOnlyItsStringDiffers) {
  proto::TargetInfo other = kWanted;
  other.set_canonical(kWanted.canonical() + " -opt=fast");
  std::optional<std::string> difference = CompatibleDifference(kWanted, other);
  ASSERT_TRUE(difference.has_value());
  EXPECT_EQ(*difference, "measured on " + other.canonical());
}

TEST(CompatibleDifference, AnOlderGpuArchitectureAnswersForANewerOne) {
  const proto::TargetInfo sm80 = TargetInfoOf(*cuda::ArchTarget("sm_80"));
  const proto::TargetInfo sm90 = TargetInfoOf(*cuda::ArchTarget("sm_90"));
  std::optional<std::string> difference = CompatibleDifference(sm90, sm80);
  ASSERT_TRUE(difference.has_value());
  EXPECT_EQ(*difference,
            "cpu sm_80, asked for sm_90; asked-for target has 2 more features");
  // sm_90 code does not run on sm_80, nor GPU code on a CPU.
  EXPECT_FALSE(CompatibleDifference(sm80, sm90).has_value());
  EXPECT_FALSE(CompatibleDifference(kWanted, sm80).has_value());
  EXPECT_FALSE(CompatibleDifference(sm80, kWanted).has_value());
}

TEST(Closeness, OrdersSameCpuAndThreadsThenThreadsThenCpuThenNearestThreads) {
  const proto::TargetInfo same = kWanted;
  const proto::TargetInfo fewer_features =
      MakeTarget("znver4", {"avx2", "fma"}, 4);
  const proto::TargetInfo same_threads =
      MakeTarget("haswell", {"avx2", "fma"}, 4);
  const proto::TargetInfo same_cpu_3 = MakeTarget("znver4", {"avx2", "fma"}, 3);
  const proto::TargetInfo same_cpu_1 = MakeTarget("znver4", {"avx2", "fma"}, 1);
  const proto::TargetInfo other_5 = MakeTarget("haswell", {"avx2", "fma"}, 5);
  const proto::TargetInfo other_16 = MakeTarget("haswell", {"avx2"}, 16);
  const std::vector<proto::TargetInfo> closest_first = {
      same,       fewer_features, same_threads, same_cpu_3,
      same_cpu_1, other_5,        other_16};
  for (size_t i = 0; i + 1 < closest_first.size(); ++i) {
    EXPECT_LT(Closeness(kWanted, closest_first[i]),
              Closeness(kWanted, closest_first[i + 1]))
        << closest_first[i].canonical() << " vs "
        << closest_first[i + 1].canonical();
  }
}

}  // namespace
}  // namespace lathe::db

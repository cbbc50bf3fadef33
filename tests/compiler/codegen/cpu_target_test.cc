// Tests of compiler/codegen/cpu_target.h: parsing, printing, host resolution
// and the refusal of targets this machine cannot run.
#include "compiler/codegen/cpu_target.h"

#include <sched.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lathe {
namespace {

TEST(Target, ParsePrintRoundTrip) {
  absl::StatusOr<Target> t =
      ParseTarget("llvm -mcpu=znver4 -mattr=+fma,-pku,+avx2 -num-threads=2");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->cpu, "znver4");
  EXPECT_EQ(t->num_threads, 2);
  // Features come out sorted by name.
  EXPECT_EQ(t->ToString(),
            "llvm -mcpu=znver4 -mattr=+avx2,+fma,-pku -num-threads=2");
  absl::StatusOr<Target> again = ParseTarget(t->ToString());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->ToString(), t->ToString());
}

TEST(Target, DefaultsAndLastSettingWins) {
  absl::StatusOr<Target> t = ParseTarget("llvm -mattr=+avx,-avx");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->ToString(), "llvm -mcpu=generic -mattr=-avx -num-threads=1");
}

TEST(Target, HandsCudaTargetsToTheCudaBackEnd) {
  absl::StatusOr<Target> t = ParseTarget("cuda -arch=sm_80");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->kind, "cuda");
  EXPECT_EQ(t->gpu.max_threads_per_block, 1024);
  EXPECT_THAT(std::string(CheckRunnableHere(*t).message()),
              ::testing::HasSubstr("only llvm targets run on this machine"));
}

TEST(Target, RejectsBadStrings) {
  EXPECT_EQ(ParseTarget("").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(ParseTarget("rocm -arch=x").status().message()),
              ::testing::HasSubstr(
                  "unknown kind \"rocm\" (accepted: llvm, host, cuda)"));
  EXPECT_THAT(std::string(ParseTarget("llvm -mattr=avx2").status().message()),
              ::testing::HasSubstr("must start with + or -"));
  EXPECT_THAT(
      std::string(ParseTarget("llvm -num-threads=0").status().message()),
      ::testing::HasSubstr("-num-threads"));
  EXPECT_THAT(std::string(ParseTarget("llvm -O3").status().message()),
              ::testing::HasSubstr("unknown option \"-O3\""));
}

// A second -mcpu or -num-threads used to replace the first without a word.
TEST(Target, RefusesAnOptionGivenTwice) {
  EXPECT_THAT(
      std::string(
          ParseTarget("llvm -num-threads=2 -num-threads=1").status().message()),
      ::testing::HasSubstr("-num-threads is given twice"));
  EXPECT_THAT(
      std::string(
          ParseTarget("host -num-threads=1 -num-threads=1").status().message()),
      ::testing::HasSubstr("-num-threads is given twice"));
  EXPECT_THAT(
      std::string(
          ParseTarget("llvm -mcpu=znver4 -mcpu=haswell").status().message()),
      ::testing::HasSubstr("-mcpu is given twice"));
  // -mattr lists add up.
  absl::StatusOr<Target> t =
      ParseTarget("llvm -mcpu=haswell -mattr=+avx2 -mattr=+fma");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_THAT(t->ToString(), ::testing::HasSubstr("-mattr=+avx2,+fma"));
}

// LLVM warns on a CPU or feature it does not know and aborts on a CPU
// without 64-bit mode: ParseTarget refuses them by name instead.
TEST(Target, RefusesCpusAndFeaturesLlvmDoesNotKnow) {
  for (const char* bad :
       {"llvm -mcpu=bogus", "llvm -mcpu=i386", "llvm -mcpu=pentium4",
        "llvm -mattr=+bogus", "llvm -mattr=-64bit",
        "llvm -mcpu=znver4 -mattr=+avx512f,-nosuchfeature"}) {
    absl::StatusOr<Target> t = ParseTarget(bad);
    EXPECT_FALSE(t.ok()) << bad;
    EXPECT_THAT(std::string(t.status().message()), ::testing::HasSubstr(bad))
        << bad;
  }
  EXPECT_THAT(std::string(ParseTarget("llvm -mcpu=bogus").status().message()),
              ::testing::HasSubstr("-mcpu=bogus is not an x86-64 CPU"));
  EXPECT_THAT(std::string(ParseTarget("llvm -mattr=+bogus").status().message()),
              ::testing::HasSubstr("\"bogus\" is not an x86 feature"));
  // Host detection names "hle", which LLVM 16's feature table lacks; a host
  // target string with it must parse on any machine.
  EXPECT_TRUE(ParseTarget("llvm -mcpu=skylake-avx512 -mattr=+hle").ok());
  for (const char* good :
       {"llvm -mcpu=x86-64-v3", "llvm -mcpu=znver4 -mattr=-avx512f",
        "llvm -mcpu=skylake-avx512 -mattr=+fma,+amx-tile", "llvm -mcpu=generic",
        "llvm"}) {
    EXPECT_TRUE(ParseTarget(good).ok())
        << good << ": " << ParseTarget(good).status();
  }
}

TEST(Target, HostHasSse2AndRunsHere) {
  absl::StatusOr<Target> host = ParseTarget("host -num-threads=2");
  ASSERT_TRUE(host.ok()) << host.status();
  EXPECT_EQ(host->num_threads, 2);
  EXPECT_TRUE(host->HasFeature("sse2")) << host->ToString();
  EXPECT_GE(host->VectorLanesF32(), 4);
  EXPECT_TRUE(CheckRunnableHere(*host).ok()) << CheckRunnableHere(*host);
  // The resolved string parses back to the same target.
  absl::StatusOr<Target> again = ParseTarget(host->ToString());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->ToString(), host->ToString());
  EXPECT_TRUE(CheckRunnableHere(*again).ok());
}

// "host" without a thread count: the CPUs this process may use (fewer
// under taskset than the machine has), as the measuring worker pins to.
TEST(Target, HostRunsAThreadOnEveryCpuThisProcessMayUse) {
  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof saved, &saved), 0);
  EXPECT_EQ(AllowedCpuCount(), CPU_COUNT(&saved));
  EXPECT_EQ(ParseTarget("host")->num_threads, CPU_COUNT(&saved));
  int first = 0;
  while (!CPU_ISSET(first, &saved)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  const int allowed = AllowedCpuCount();
  const int host_threads = ParseTarget("host")->num_threads;
  ASSERT_EQ(sched_setaffinity(0, sizeof saved, &saved), 0);
  EXPECT_EQ(allowed, 1);
  EXPECT_EQ(host_threads, 1);
}

TEST(Target, RefusesFeaturesTheHostLacks) {
  Target host = HostTarget(1);
  // A feature no machine has, and a real one this machine lacks.
  Target fake = host;
  fake.features.push_back("+lathe-imaginary-feature");
  absl::Status st = CheckRunnableHere(fake);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(st.message()),
              ::testing::HasSubstr("lathe-imaginary-feature"));

  for (const char* feature : {"amx-tile", "avx512f", "avx2"}) {
    if (host.HasFeature(feature)) continue;
    absl::StatusOr<Target> t =
        ParseTarget(absl::StrCat("llvm -mcpu=generic -mattr=+", feature));
    ASSERT_TRUE(t.ok());
    st = CheckRunnableHere(*t);
    EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << feature;
    EXPECT_THAT(std::string(st.message()), ::testing::HasSubstr(feature));
  }
}

TEST(Target, CpuNameImpliesFeatures) {
  absl::StatusOr<Target> t = ParseTarget("llvm -mcpu=skylake-avx512");
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->HasFeature("avx512f"));
  EXPECT_EQ(t->VectorLanesF32(), 16);
  absl::StatusOr<Target> h = ParseTarget("llvm -mcpu=haswell");
  ASSERT_TRUE(h.ok());
  EXPECT_FALSE(h->HasFeature("avx512f"));
  EXPECT_EQ(h->VectorLanesF32(), 8);
  // A CPU with AVX-512 is refused on a machine without it.
  if (!HostTarget(1).HasFeature("avx512f")) {
    EXPECT_FALSE(CheckRunnableHere(*t).ok());
  }
}

TEST(Target, ParsingResolvesWhatTheTargetEnables) {
  // The parser fills in every enabled feature, so the layers above codegen
  // read them without LLVM: implied by the CPU, by a "+" feature, and less
  // the "-" features.
  absl::StatusOr<Target> t =
      ParseTarget("llvm -mcpu=haswell -mattr=+avx512f,-fma");
  ASSERT_TRUE(t.ok()) << t.status();
  const std::vector<std::string>& r = t->resolved_features;
  EXPECT_TRUE(std::is_sorted(r.begin(), r.end()));
  auto has = [&](const std::string& f) {
    return std::find(r.begin(), r.end(), f) != r.end();
  };
  EXPECT_TRUE(has("avx2"));     // haswell
  EXPECT_TRUE(has("avx512f"));  // listed
  EXPECT_FALSE(has("fma"));     // removed
  EXPECT_EQ(t->EnabledFeatureList(), r);
  // Equal strings resolve equally: the resolution is not part of identity.
  absl::StatusOr<Target> again = ParseTarget(t->ToString());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->resolved_features, r);
  // The host's resolution matches what it runs.
  EXPECT_TRUE(HostTarget(1).HasFeature("sse2"));
}

}  // namespace
}  // namespace lathe

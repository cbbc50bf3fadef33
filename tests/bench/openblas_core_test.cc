#include "bench/openblas_core.h"

#include "gtest/gtest.h"

namespace lathe::bench {
namespace {

constexpr VectorExtensions kAvx2{/*avx2_fma=*/true, /*avx512=*/false,
                                 /*avx512_bf16=*/false};
constexpr VectorExtensions kAvx512{true, true, false};
constexpr VectorExtensions kAvx512Bf16{true, true, true};

TEST(FairerOpenBlasCore, ReplacesTheGenericFallbackByTheCpusWidestKernel) {
  // OpenBLAS 0.3.21 on a Sapphire Rapids: a model it does not know.
  EXPECT_EQ(FairerOpenBlasCore("Prescott", kAvx512Bf16), "Cooperlake");
  EXPECT_EQ(FairerOpenBlasCore("Prescott", kAvx512), "SkylakeX");
  EXPECT_EQ(FairerOpenBlasCore("Prescott", kAvx2), "Haswell");
  EXPECT_EQ(FairerOpenBlasCore("Nehalem", kAvx2), "Haswell");
}

TEST(FairerOpenBlasCore, ReplacesANarrowerKnownCore) {
  EXPECT_EQ(FairerOpenBlasCore("Haswell", kAvx512), "SkylakeX");
  EXPECT_EQ(FairerOpenBlasCore("Sandybridge", kAvx2), "Haswell");
}

TEST(FairerOpenBlasCore, KeepsOpenBlasOwnChoiceWhenItIsAsWide) {
  EXPECT_EQ(FairerOpenBlasCore("SkylakeX", kAvx512), "");
  EXPECT_EQ(FairerOpenBlasCore("Cooperlake", kAvx512Bf16), "");
  EXPECT_EQ(FairerOpenBlasCore("SkylakeX", kAvx512Bf16), "");  // same vectors
  EXPECT_EQ(FairerOpenBlasCore("Haswell", kAvx2), "");
  EXPECT_EQ(FairerOpenBlasCore("Prescott", VectorExtensions{}), "");
}

TEST(FairerOpenBlasCore, LeavesCoresItDoesNotRankAlone) {
  // AMD's cores: OpenBLAS knows them better than a vector width does.
  EXPECT_EQ(FairerOpenBlasCore("Zen", kAvx512Bf16), "");
  EXPECT_EQ(FairerOpenBlasCore("", kAvx512), "");
}

}  // namespace
}  // namespace lathe::bench

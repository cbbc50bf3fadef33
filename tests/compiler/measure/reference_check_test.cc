// Tests of compiler/measure/reference_check.h with kernels written here.
#include "compiler/measure/reference_check.h"

#include "compiler/te/tensor.h"
#include "compiler/workload/spec.h"
#include "gtest/gtest.h"

namespace lathe {
namespace {

constexpr int kM = 5, kN = 7, kK = 3;

absl::Status Matmul(const std::vector<float*>& args, bool wrong) {
  const float* a = args[0];
  const float* b = args[1];
  float* c = args[2];
  for (int i = 0; i < kM; ++i) {
    for (int j = 0; j < kN; ++j) {
      float sum = 0;
      for (int k = 0; k < kK; ++k) sum += a[i * kK + k] * b[k * kN + j];
      c[i * kN + j] = sum;
    }
  }
  if (wrong) c[2 * kN + 3] += 1.0f;
  return absl::OkStatus();
}

TEST(ReferenceCheck, PassesACorrectKernel) {
  absl::StatusOr<Workload> w = ParseWorkloadSpec("matmul:M=5,N=7,K=3");
  ASSERT_TRUE(w.ok());
  absl::Status st = CheckAgainstReference(
      *w, [](const auto& args) { return Matmul(args, false); });
  EXPECT_TRUE(st.ok()) << st;
}

TEST(ReferenceCheck, NamesTheFirstMismatch) {
  absl::StatusOr<Workload> w = ParseWorkloadSpec("matmul:M=5,N=7,K=3");
  ASSERT_TRUE(w.ok());
  absl::Status st = CheckAgainstReference(
      *w, [](const auto& args) { return Matmul(args, true); });
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(st.message()).find("output C"), std::string::npos)
      << st;
  EXPECT_NE(std::string(st.message()).find("[2, 3]"), std::string::npos) << st;
}

TEST(ReferenceCheck, AnUnwrittenOutputFails) {
  absl::StatusOr<Workload> w = ParseWorkloadSpec("matmul:M=5,N=7,K=3");
  ASSERT_TRUE(w.ok());
  absl::Status st =
      CheckAgainstReference(*w, [](const auto&) { return absl::OkStatus(); });
  EXPECT_FALSE(st.ok());
}

TEST(ReferenceCheck, RefusesAWorkloadThatIsNotFloat32BeforeRunningIt) {
  // Specs accept float32 only; a workload made directly may hold another
  // type (an integer input here).
  const te::Tensor x = te::Placeholder("X", {4}, DType::Int32());
  const te::Tensor y = te::Placeholder("Y", {4});
  const Workload w("probe", {}, {x}, {y}, "probe:dtype=int32");
  bool ran = false;
  absl::Status st = CheckAgainstReference(w, [&](const auto&) {
    ran = true;
    return absl::OkStatus();
  });
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("not float32"), std::string::npos) << st;
  EXPECT_FALSE(ran);
  // The cache refuses it too: what a caller that reads entries directly
  // (a GPU runner's check on the device) relies on.
  ReferenceCache cache;
  EXPECT_EQ(cache.Get(w, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ReferenceCheck, ACacheGivesTheSameVerdictsAndKeepsFewEntries) {
  absl::StatusOr<Workload> w = ParseWorkloadSpec("matmul:M=5,N=7,K=3");
  ASSERT_TRUE(w.ok());
  ReferenceCache cache(/*capacity=*/2);
  for (int round = 0; round < 2; ++round) {
    // The second round is served from the cache: still right and wrong.
    EXPECT_TRUE(
        CheckAgainstReference(
            *w, [](const auto& a) { return Matmul(a, false); }, 3, &cache)
            .ok());
    EXPECT_EQ(CheckAgainstReference(
                  *w, [](const auto& a) { return Matmul(a, true); }, 3, &cache)
                  .code(),
              absl::StatusCode::kFailedPrecondition);
  }
  // Other seeds are other inputs: their references are cached apart (the
  // oldest dropped) and the verdicts stay right.
  for (uint64_t seed : {4, 5, 6, 3}) {
    EXPECT_TRUE(
        CheckAgainstReference(
            *w, [](const auto& a) { return Matmul(a, false); }, seed, &cache)
            .ok())
        << seed;
  }
}

// The cache keeps the inputs and the argument buffers from check to check:
// a kernel that writes to its inputs does not change the next check's, and
// a kernel that writes nothing fails even after one that wrote everything.
TEST(ReferenceCheck, ACachedCheckStartsFromCleanInputsAndPoisonedOutputs) {
  absl::StatusOr<Workload> w = ParseWorkloadSpec("matmul:M=5,N=7,K=3");
  ASSERT_TRUE(w.ok());
  ReferenceCache cache;
  auto right = [](const std::vector<float*>& a) { return Matmul(a, false); };
  auto scribbles = [](const std::vector<float*>& a) {
    absl::Status st = Matmul(a, false);
    for (int e = 0; e < kM * kK; ++e) a[0][e] = 1000.0f;
    return st;
  };
  auto writes_nothing = [](const std::vector<float*>&) {
    return absl::OkStatus();
  };
  EXPECT_TRUE(CheckAgainstReference(*w, right, 1, &cache).ok());
  EXPECT_TRUE(CheckAgainstReference(*w, scribbles, 1, &cache).ok());
  absl::Status after = CheckAgainstReference(*w, right, 1, &cache);
  EXPECT_TRUE(after.ok()) << after;
  absl::Status nothing = CheckAgainstReference(*w, writes_nothing, 1, &cache);
  EXPECT_EQ(nothing.code(), absl::StatusCode::kFailedPrecondition) << nothing;
  EXPECT_NE(std::string(nothing.message()).find("35 of 35 elements differ"),
            std::string::npos)
      << nothing;
}

}  // namespace
}  // namespace lathe

// Tests of runner/cuda/cuda_build_ahead.h and cuda_candidate.h: CUDA
// candidates built ahead by NVRTC (no GPU needed; skipped without the
// toolkit's NVRTC) are the builds the measuring thread would have made.
#include "runner/cuda/cuda_build_ahead.h"

#include <gtest/gtest.h>

#include "compiler/codegen/cuda/cuda_program.h"
#include "compiler/codegen/cuda/cuda_target.h"
#include "compiler/codegen/cuda/nvrtc_compiler.h"
#include "compiler/workload/spec.h"

namespace lathe::runner {
namespace {

class CudaBuildAheadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (absl::Status st = cuda::CheckNvrtc(); !st.ok())
      GTEST_SKIP() << "no NVRTC: " << st;
    target_ = cuda::ArchTarget("sm_80").value();
  }

  // A request of `spec` with its default GPU schedule's trace.
  proto::MeasureRequest RequestOf(const std::string& spec) {
    proto::MeasureRequest request;
    Workload workload = ParseWorkloadSpec(spec).value();
    request.set_workload(workload.CanonicalForm());
    request.set_target(target_.ToString());
    cuda::CudaProgram program =
        cuda::MakeCudaProgram(workload, nullptr, target_).value();
    program.trace.ToProto(request.mutable_trace());
    return request;
  }

  Target target_;
};

TEST_F(CudaBuildAheadTest, ACandidateBuildsWithoutADevice) {
  const proto::MeasureRequest request = RequestOf("softmax:M=4,N=128");
  CudaCandidate built = BuildCudaCandidate(request, target_, {});
  ASSERT_TRUE(built.ok()) << built.status;
  EXPECT_FALSE(built.cubin.empty());
  EXPECT_EQ(built.structural_hash.size(), 16u);
  EXPECT_FALSE(built.built_ahead);
  // Another target's request is refused, naming both.
  proto::MeasureRequest other = request;
  other.set_target("cuda -arch=sm_90");
  CudaCandidate refused = BuildCudaCandidate(other, target_, {});
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.status.message().find("is not this runner's"),
            std::string::npos)
      << refused.status;
}

// `request` without its trace (the default schedule: another build),
// naming its trace as the next to build.
proto::MeasureRequest Hinting(const proto::MeasureRequest& request) {
  proto::MeasureRequest hinting = request;
  hinting.clear_trace();
  *hinting.add_build_ahead() = request.trace();
  return hinting;
}

TEST_F(CudaBuildAheadTest, AHintBuildsWhatTheSpotWouldAndIsTakenOnce) {
  CudaBuildAhead ahead(2, target_, {});
  const proto::MeasureRequest softmax = RequestOf("softmax:M=4,N=128");
  const CudaCandidate direct = BuildCudaCandidate(softmax, target_, {});
  ASSERT_TRUE(direct.ok()) << direct.status;
  // Added, then taken at once: built ahead or on the spot (whichever the
  // builders reached first), the same build.
  ahead.Add(Hinting(softmax));
  const CudaCandidate early = ahead.Take(softmax);
  EXPECT_EQ(early.cubin, direct.cubin);
  // Built for sure (a build-only request waits for its hints), then taken.
  proto::MeasureRequest batch = Hinting(softmax);
  batch.set_build_only(true);
  ASSERT_TRUE(ahead.BuildAll(batch).ok());
  const CudaCandidate taken = ahead.Take(softmax);
  EXPECT_TRUE(taken.built_ahead);
  EXPECT_EQ(taken.cubin, direct.cubin);
  EXPECT_EQ(taken.structural_hash, direct.structural_hash);
  // Taken once: asked for again, it is built on the spot.
  EXPECT_FALSE(ahead.Take(softmax).built_ahead);
}

TEST_F(CudaBuildAheadTest, AHintThatFailsFailsAsOnTheSpot) {
  CudaBuildAhead ahead(1, target_, {});
  // relu's request with matmul's trace: it does not replay.
  proto::MeasureRequest wrong = RequestOf("relu:M=64,N=64");
  *wrong.mutable_trace() = RequestOf("matmul:M=64,N=64,K=32").trace();
  ahead.Add(Hinting(wrong));
  const CudaCandidate taken = ahead.Take(wrong);
  const CudaCandidate direct = BuildCudaCandidate(wrong, target_, {});
  ASSERT_FALSE(direct.ok());
  EXPECT_EQ(taken.status, direct.status);
}

TEST_F(CudaBuildAheadTest, BuildAllReturnsWithEveryHintBuilt) {
  CudaBuildAhead ahead(1, target_, {});
  const proto::MeasureRequest matmul = RequestOf("matmul:M=64,N=64,K=32");
  proto::MeasureRequest batch = Hinting(matmul);
  batch.set_build_only(true);
  const CudaCandidate own = ahead.BuildAll(batch);
  ASSERT_TRUE(own.ok()) << own.status;
  EXPECT_TRUE(ahead.Take(matmul).built_ahead);
}

TEST_F(CudaBuildAheadTest, HintsOfAnotherTargetAreIgnored) {
  CudaBuildAhead ahead(1, target_, {});
  const proto::MeasureRequest request = RequestOf("softmax:M=4,N=128");
  proto::MeasureRequest hinting = Hinting(request);
  hinting.set_target("cuda -arch=sm_90");
  ahead.Add(hinting);
  EXPECT_FALSE(ahead.Take(request).built_ahead);
}

}  // namespace
}  // namespace lathe::runner

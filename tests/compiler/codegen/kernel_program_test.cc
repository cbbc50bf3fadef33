// The program of one kernel: for a CUDA target its default schedule is the
// one the CUDA back end builds (cuda::DefaultCudaTrace), so that what
// `lathe compile` emits and `lathe tune` records as the default is what a
// GPU runner measures, also on a target whose limits refuse the tiles.
#include "compiler/codegen/kernel_program.h"

#include <gtest/gtest.h>

#include <string>

#include "compiler/codegen/cuda/cuda_program.h"
#include "compiler/codegen/cuda/cuda_target.h"
#include "compiler/workload/spec.h"

namespace lathe {
namespace {

TEST(KernelProgram, ACudaDefaultIsTheCudaBackEndsDefault) {
  for (const std::string target_text :
       {"cuda -arch=sm_90",
        "cuda -arch=sm_80 -max-shared-memory-per-block=4096"}) {
    SCOPED_TRACE(target_text);
    absl::StatusOr<Target> target = cuda::ParseCudaTarget(target_text);
    ASSERT_TRUE(target.ok()) << target.status();
    absl::StatusOr<Workload> workload =
        ParseWorkloadSpec("matmul:M=128,N=128,K=32");
    ASSERT_TRUE(workload.ok());
    absl::StatusOr<KernelProgram> kernel =
        MakeKernelProgram(*workload, nullptr, *target);
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    absl::StatusOr<cuda::CudaProgram> program =
        cuda::MakeCudaProgram(*workload, nullptr, *target);
    ASSERT_TRUE(program.ok()) << program.status();
    EXPECT_TRUE(kernel->default_schedule);
    EXPECT_EQ(kernel->structural_hash, program->structural_hash);
  }
}

}  // namespace
}  // namespace lathe

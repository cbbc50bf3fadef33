// Tests of the GPU feature group (tuner/features/gpu_features.h): only a
// cuda target's vector has it; the default GPU schedules of a matmul
// (shared-memory tile) and of softmax (cross-thread reductions) give the
// threads, blocks, shared bytes and registers the code generator launches.
#include "tuner/features/gpu_features.h"

#include <gtest/gtest.h>

#include <cmath>

#include "compiler/codegen/cuda/cuda_program.h"
#include "compiler/codegen/cuda/cuda_target.h"
#include "compiler/workload/spec.h"
#include "tuner/features/program_features.h"

namespace lathe::tuner {
namespace {

struct Gpu {
  std::vector<float> features;  // the gpu.* entries
  cuda::CudaModule module;
};

Gpu Extract(const std::string& spec, const Target& target) {
  Workload workload = ParseWorkloadSpec(spec).value();
  cuda::CudaProgram program =
      cuda::MakeCudaProgram(workload, nullptr, target).value();
  std::vector<float> all = ExtractProgramFeatures(program.lowered, target);
  EXPECT_EQ(all.size(), FeatureNamesFor(target).size());
  return {std::vector<float>(all.end() - GpuFeatureNames().size(), all.end()),
          program.module};
}

float Named(const Gpu& gpu, const std::string& name) {
  const std::vector<std::string>& names = GpuFeatureNames();
  const size_t i = std::find(names.begin(), names.end(), name) - names.begin();
  EXPECT_LT(i, names.size()) << name;
  return i < names.size() ? gpu.features[i] : -1;
}

TEST(GpuFeatures, OnlyACudaTargetsVectorHasThem) {
  Target cpu;
  EXPECT_EQ(FeatureNamesFor(cpu), FeatureNames());
  const Target sm90 = cuda::ArchTarget("sm_90").value();
  const std::vector<std::string> names = FeatureNamesFor(sm90);
  ASSERT_EQ(names.size(), FeatureNames().size() + GpuFeatureNames().size());
  EXPECT_EQ(names.back(), GpuFeatureNames().back());
  // A CPU target's extraction writes zeros.
  std::vector<float> out(GpuFeatureNames().size(), 7.0f);
  ExtractGpuFeatures(ProgramWalk{}, cpu, out.data());
  for (float f : out) EXPECT_EQ(f, 0.0f);
}

TEST(GpuFeatures, ASharedTileMatmulsKernel) {
  const Target sm90 = cuda::ArchTarget("sm_90").value();
  const Gpu gpu = Extract("matmul:M=256,N=256,K=64", sm90);
  ASSERT_EQ(gpu.module.kernels.size(), 1u);
  const cuda::CudaKernel& k = gpu.module.kernels.front();
  EXPECT_FLOAT_EQ(Named(gpu, "gpu.kernels"), std::log2(2.0f));
  EXPECT_FLOAT_EQ(Named(gpu, "gpu.threads"),
                  std::log2(1.0f + static_cast<float>(k.block.Count())));
  EXPECT_FLOAT_EQ(Named(gpu, "gpu.blocks"),
                  std::log2(1.0f + static_cast<float>(k.grid.Count())));
  EXPECT_FLOAT_EQ(Named(gpu, "gpu.shared_bytes"),
                  std::log2(1.0f + static_cast<float>(k.shared_bytes)));
  EXPECT_FLOAT_EQ(Named(gpu, "gpu.warp_use"), 1.0f);  // 256 threads
  // 8 x 8 accumulators a thread (the 128 x 128 tile over 256 threads).
  EXPECT_FLOAT_EQ(Named(gpu, "gpu.local_elements"), std::log2(65.0f));
  const float occupancy = Named(gpu, "gpu.occupancy");
  EXPECT_GT(occupancy, 0.0f);
  EXPECT_LE(occupancy, 1.0f);
  EXPECT_GT(Named(gpu, "gpu.unrolled_stores"), std::log2(65.0f));
}

TEST(GpuFeatures, TheHeaviestKernelSpeaks) {
  // Softmax of rows of 1000: the row reductions share each row among 250
  // threads (1000's largest divisor up to 256), their partials running
  // 64 x 1000 times with their inits, more stores than the quotient's
  // one per element on 256 threads a block.
  const Target sm90 = cuda::ArchTarget("sm_90").value();
  const Gpu gpu = Extract("softmax:M=64,N=1000", sm90);
  EXPECT_FLOAT_EQ(Named(gpu, "gpu.kernels"),
                  std::log2(1.0f + gpu.module.kernels.size()));
  EXPECT_FLOAT_EQ(Named(gpu, "gpu.threads"), std::log2(251.0f));
  bool launched = false;
  for (const cuda::CudaKernel& k : gpu.module.kernels)
    launched |= k.block.Count() == 250;
  EXPECT_TRUE(launched);
  // 250 threads fill 7 warps and 26 of an eighth's 32 lanes.
  EXPECT_FLOAT_EQ(Named(gpu, "gpu.warp_use"), 250.0f / 256.0f);
}

}  // namespace
}  // namespace lathe::tuner

// Property tests of the GPU design space (DefaultGpuRules) without a GPU:
// points sampled (SampleTrace, as the search samples) from the spaces of
// GEMM-, convolution-, reduction- and element-wise workloads of the sizes
// that are tuned replay (a point whose first draw the tile does not fit is
// drawn again), and the points of small workloads are refused by a named
// limit of the code generator or become CUDA C that NVRTC compiles and
// ptxas assembles for sm_80 and sm_90; every fifth compiled one also runs
// on the CPU (cuda_emulation.h) against the reference; on a target with
// less shared memory than its architecture, the tiled spaces stay tiled
// and their points fit it. Fixed seeds: the same points every run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/cuda/cuda_codegen.h"
#include "compiler/codegen/cuda/cuda_target.h"
#include "compiler/codegen/cuda/nvrtc_compiler.h"
#include "compiler/lower/pipeline.h"
#include "compiler/measure/reference_check.h"
#include "compiler/schedule/replay.h"
#include "compiler/workload/spec.h"
#include "tests/compiler/codegen/cuda/cuda_emulation.h"
#include "tests/compiler/codegen/cuda/ptxas.h"
#include "tests/compiler/schedule/same_result.h"
#include "tests/support/every_operator.h"
#include "tuner/space/design_space.h"

namespace lathe::tuner {
namespace {

const std::vector<std::string>& Specs() {
  static const auto* const kSpecs = new std::vector<std::string>{
      "matmul:M=64,N=64,K=32",
      "batch_matmul:B=2,M=32,N=32,K=16",
      "dense:M=32,N=64,K=16,bias=1,relu=1",
      "conv2d_nchw:N=1,C=4,H=8,W=8,K=16,R=3,S=3,pad=1",
      "conv2d_nhwc:N=1,C=4,H=8,W=8,K=32,R=3,S=3,pad=1",
      "custom:C[i,j] += A[i,k] * B[k,j]|i=48,j=32,k=24",
      "softmax:M=4,N=128",
      "max_pool2d:N=1,C=8,H=9,W=9,R=3,S=3,pad=1,stride=2",
      "add:M=16,N=40",
  };
  return *kSpecs;
}

// A spec's workload, initial program and the one design space the GPU
// rules give it, the space's decisions cleared so that each seed samples a
// point of it.
struct GpuSpace {
  Workload workload;
  Program initial;
  Trace space;
};
absl::StatusOr<GpuSpace> GpuSpaceOf(const std::string& spec,
                                    const Target& target) {
  absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec);
  if (!workload.ok()) return workload.status();
  absl::StatusOr<Program> initial = workload->InitialProgram();
  if (!initial.ok()) return initial.status();
  absl::StatusOr<std::vector<Trace>> spaces =
      GenerateDesignSpaces(*workload, target, DefaultGpuRules());
  if (!spaces.ok()) return spaces.status();
  if (spaces->size() != 1) {
    return absl::InternalError(
        absl::StrCat(spaces->size(), " design spaces, expected one"));
  }
  Trace space = std::move(spaces->front());
  space.decisions.clear();
  return GpuSpace{std::move(*workload), std::move(*initial), std::move(space)};
}

TEST(GpuDesignSpace, PointsCompileAndAssembleOrAreRefused) {
  if (absl::Status s = cuda::CheckNvrtc(); !s.ok()) GTEST_SKIP() << s;
  if (access(cuda::testing::kPtxas, X_OK) != 0)
    GTEST_SKIP() << cuda::testing::kPtxas << " not found";
  const Target target = *cuda::ArchTarget("sm_80");
  constexpr int kPointsPerSpec = 9;
  int compiled = 0, emulated = 0, dropped = 0, refused = 0, tiled = 0,
      sampled_spaces = 0;
  for (const std::string& spec : Specs()) {
    SCOPED_TRACE(spec);
    absl::StatusOr<GpuSpace> gpu = GpuSpaceOf(spec, target);
    ASSERT_TRUE(gpu.ok()) << gpu.status();
    const Workload& workload = gpu->workload;
    const Program& initial = gpu->initial;
    const Trace& space = gpu->space;
    bool sampled = false, tile = false;
    for (const Instruction& inst : space.instructions) {
      sampled |= inst.kind.rfind("sample_", 0) == 0;
      tile |= inst.kind == "check_product";  // GpuSharedTiling's bounds
    }
    tiled += tile;
    sampled_spaces += sampled;
    for (int p = 0; p < kPointsPerSpec; ++p) {
      absl::StatusOr<std::unique_ptr<TracedSchedule>> point =
          SampleTrace(space, initial, {}, /*seed=*/1000 + p);
      if (!point.ok()) {
        ++dropped;
        continue;
      }
      SCOPED_TRACE((*point)->trace().ToText());
      absl::StatusOr<Program> lowered = LowerProgram((*point)->program());
      ASSERT_TRUE(lowered.ok()) << lowered.status();
      absl::StatusOr<cuda::CudaModule> module =
          cuda::GenerateCuda(*lowered, target);
      if (!module.ok()) {
        EXPECT_EQ(module.status().code(), absl::StatusCode::kFailedPrecondition)
            << module.status();
        ++refused;
        continue;
      }
      absl::StatusOr<cuda::CompiledCuda> ptx =
          cuda::CompileCuda(module->source, "sm_80", /*cubin=*/false);
      ASSERT_TRUE(ptx.ok()) << ptx.status() << "\n" << module->source;
      EXPECT_EQ(cuda::testing::Assemble(ptx->ptx, "sm_80"), "")
          << module->source;
      EXPECT_EQ(cuda::testing::Assemble(ptx->ptx, "sm_90"), "")
          << module->source;
      if (compiled++ % 5 == 0) {
        absl::Status checked = CheckAgainstReference(
            workload, [&](const std::vector<float*>& args) {
              return cuda::testing::RunEmulated(*module, args);
            });
        EXPECT_TRUE(checked.ok()) << checked << "\n" << module->source;
        ++emulated;
      }
    }
  }
  // The GEMM and convolution spaces are tiled ones; every space samples
  // something (the tile's factors; the others' threads per block or per
  // reduction, or the unroll depth of a thread's reduction); their points
  // replay and most build.
  EXPECT_EQ(tiled, 6);
  EXPECT_EQ(sampled_spaces, static_cast<int>(Specs().size()));
  const int total = kPointsPerSpec * static_cast<int>(Specs().size());
  EXPECT_EQ(dropped, 0);
  EXPECT_GE(compiled, total * 3 / 4);
  std::printf(
      "%d points: %d compiled and assembled (%d also emulated), %d "
      "refused by a limit, %d not sampled\n",
      total, compiled, emulated, refused, dropped);
}

// The tuned sizes: fp32 GEMM 4096^3 and 512^3, the ResNet-50 3x3
// convolution (C = K = 128, 28x28, batch 1), a 1x1 one and an element-wise
// add. Their sampled points replay (at least 90% of the GEMM and
// convolution points; all, in practice, within kSampleAttempts draws),
// though only a third to a half of first draws do: the draws they take are
// printed. No code is generated: replay only, a few seconds.
TEST(GpuDesignSpace, SampledPointsOfTunedSizesReplay) {
  const Target target = *cuda::ArchTarget("sm_80");
  constexpr int kPoints = 40;
  const std::vector<std::string> specs = {
      "matmul:M=4096,N=4096,K=4096",
      "matmul:M=512,N=512,K=512",
      "conv2d_nchw:N=1,C=128,H=28,W=28,K=128,R=3,S=3,pad=1",
      "conv2d_nchw:N=1,C=256,H=14,W=14,K=1024,R=1,S=1",
      "add:M=1024,N=1024",
  };
  for (const std::string& spec : specs) {
    SCOPED_TRACE(spec);
    absl::StatusOr<GpuSpace> gpu = GpuSpaceOf(spec, target);
    ASSERT_TRUE(gpu.ok()) << gpu.status();
    const Program& initial = gpu->initial;
    const Trace& space = gpu->space;
    int replayed = 0, first_draws = 0, draws = 0;
    for (int p = 0; p < kPoints; ++p) {
      int attempts = 0;
      absl::StatusOr<std::unique_ptr<TracedSchedule>> point = SampleTrace(
          space, initial, {}, /*seed=*/1000 + p, kSampleAttempts, &attempts);
      draws += attempts;
      replayed += point.ok();
      first_draws += point.ok() && attempts == 1;
    }
    EXPECT_GE(replayed * 10, kPoints * 9);
    std::printf(
        "%s: %d of %d points replay (%d at the first draw), %.1f "
        "draws a point\n",
        spec.c_str(), replayed, kPoints, first_draws,
        static_cast<double>(draws) / kPoints);
  }
}

// Every operator's space, where no tile is sampled (the blocks get the
// default GPU schedule's strategies with their thread counts and unroll
// depths sampled):
// every draw replays at the first try, to a program that computes what the
// workload does. A draw that changed the loops (a unit loop dropped when
// all of a reduction goes to threads) would fail here, where SampleTrace
// would silently draw again and lose that point. Replay and the
// interpreter only.
TEST(GpuDesignSpace, EveryDrawOfAnUntiledSpaceReplays) {
  const Target target = *cuda::ArchTarget("sm_80");
  constexpr int kPoints = 12;
  std::vector<std::string> specs = test_support::EveryOperatorSpec(9);
  specs.push_back("softmax:M=3,N=1024");
  specs.push_back("avg_pool2d:N=1,C=8,H=14,W=14,R=14,S=14");
  specs.push_back("custom:S[i] += A[i,k]|i=4,k=768");
  specs.push_back("max_pool2d:N=2,C=16,H=20,W=20,R=3,S=3,pad=1");
  specs.push_back(
      "conv2d_nchw:N=1,C=16,H=20,W=20,K=16,R=3,S=3,pad=1,groups=16");
  specs.push_back("add:M=33,N=50");
  int sampled_spaces = 0;
  for (const std::string& spec : specs) {
    SCOPED_TRACE(spec);
    absl::StatusOr<GpuSpace> gpu = GpuSpaceOf(spec, target);
    ASSERT_TRUE(gpu.ok()) << gpu.status();
    bool tiled = false, sampled = false;
    for (const Instruction& inst : gpu->space.instructions) {
      tiled |= inst.kind == "check_product";  // GpuSharedTiling's bounds
      sampled |= inst.kind.rfind("sample_", 0) == 0;
    }
    if (tiled || !sampled) continue;
    ++sampled_spaces;
    for (int p = 0; p < kPoints; ++p) {
      absl::StatusOr<std::unique_ptr<TracedSchedule>> point =
          ReplayTrace(gpu->space, gpu->initial, {}, /*seed=*/2000 + p);
      ASSERT_TRUE(point.ok()) << point.status();
      absl::StatusOr<Program> lowered = LowerProgram((*point)->program());
      ASSERT_TRUE(lowered.ok()) << lowered.status();
      EXPECT_TRUE(lathe::testing::CheckSameResult(gpu->initial, *lowered).ok())
          << (*point)->trace().ToText();
    }
  }
  EXPECT_GE(sampled_spaces, 5);
}

// A target with less shared memory than its architecture (4 KiB): the
// convolution's and the GEMM's spaces are still tiled ones, their own
// points (the best ranked tile within the target's shared memory) build
// within the limit, and sampled points build (check_footprint and the
// code generator refuse the rest).
TEST(GpuDesignSpace, ATargetWithLessSharedMemoryKeepsItsTiles) {
  const Target target = *cuda::ParseCudaTarget(
      "cuda -arch=sm_80 -max-shared-memory-per-block=4096");
  for (const std::string spec :
       {"conv2d_nchw:N=16,C=128,H=28,W=28,K=128,R=3,S=3,pad=1",
        "matmul:M=256,N=256,K=64"}) {
    SCOPED_TRACE(spec);
    absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec);
    ASSERT_TRUE(workload.ok());
    absl::StatusOr<Program> initial = workload->InitialProgram();
    ASSERT_TRUE(initial.ok());
    absl::StatusOr<std::vector<Trace>> spaces =
        GenerateDesignSpaces(*workload, target, DefaultGpuRules());
    ASSERT_TRUE(spaces.ok()) << spaces.status();
    ASSERT_EQ(spaces->size(), 1u);
    const Trace& space = spaces->front();
    int footprint_checks = 0;
    for (const Instruction& inst : space.instructions)
      footprint_checks += inst.kind == "check_footprint";
    EXPECT_EQ(footprint_checks, 1);  // GpuSharedTiling took the block
    auto shared_bytes = [&](const Trace& trace, const Decisions& decisions,
                            uint64_t seed) -> absl::StatusOr<int64_t> {
      absl::StatusOr<std::unique_ptr<TracedSchedule>> point =
          SampleTrace(trace, *initial, decisions, seed);
      if (!point.ok()) return point.status();
      absl::StatusOr<Program> lowered = LowerProgram((*point)->program());
      if (!lowered.ok()) return lowered.status();
      absl::StatusOr<cuda::CudaModule> module =
          cuda::GenerateCuda(*lowered, target);
      if (!module.ok()) return module.status();
      int64_t shared = 0;
      for (const cuda::CudaKernel& k : module->kernels)
        shared = std::max(shared, k.shared_bytes);
      return shared;
    };
    absl::StatusOr<int64_t> own = shared_bytes(space, space.decisions, 1);
    ASSERT_TRUE(own.ok()) << own.status();
    EXPECT_GT(*own, 0);
    EXPECT_LE(*own, 4096);
    Trace sampled = space;
    sampled.decisions.clear();
    int built = 0;
    for (uint64_t seed = 1; seed <= 8; ++seed) {
      absl::StatusOr<int64_t> bytes = shared_bytes(sampled, {}, seed);
      if (!bytes.ok()) continue;
      EXPECT_LE(*bytes, 4096);
      ++built;
    }
    EXPECT_GE(built, 2);
  }
}

}  // namespace
}  // namespace lathe::tuner

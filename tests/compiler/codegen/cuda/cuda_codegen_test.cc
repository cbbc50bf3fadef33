// The CUDA back end without a GPU: every operator's default GPU schedule
// (and a custom workload) becomes CUDA C that NVRTC compiles to PTX for
// sm_80 and sm_90 and ptxas assembles; NVRTC's cubin for sm_90; launch
// dimensions; a shared-memory schedule gets its barrier; schedules over a
// device limit are refused naming the limit. Skipped with a message where
// NVRTC or ptxas is missing.
#include "compiler/codegen/cuda/cuda_codegen.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/codegen/cuda/cuda_host_source.h"
#include "compiler/codegen/cuda/cuda_program.h"
#include "compiler/codegen/cuda/cuda_target.h"
#include "compiler/codegen/cuda/nvrtc_compiler.h"
#include "compiler/lower/pipeline.h"
#include "compiler/measure/reference_check.h"
#include "compiler/schedule/default_gpu_schedule.h"
#include "compiler/schedule/gpu_shared_tile.h"
#include "compiler/schedule/trace_text.h"
#include "compiler/schedule/traced_schedule.h"
#include "compiler/workload/spec.h"
#include "tests/compiler/codegen/cuda/cuda_emulation.h"
#include "tests/support/every_operator.h"

namespace lathe::cuda {
namespace {

constexpr char kPtxas[] = "/usr/local/cuda/bin/ptxas";

Target Arch(const std::string& arch) { return *ArchTarget(arch); }

// Every operator, required parameters at 9 (odd: tails everywhere), and a
// custom workload.
std::vector<std::string> Specs() {
  std::vector<std::string> specs = test_support::EveryOperatorSpec(9);
  specs.push_back("conv2d_nchw:N=2,C=16,H=14,W=14,K=32,R=3,S=3,pad=1,stride=2");
  specs.push_back("custom:C[i,j] += A[i,k] * B[k,j]|i=65,j=130,k=17");
  // Every math function of the IR (compiler/ir/expr.h): GELU's erf and
  // ONNX's Pow come from models.
  specs.push_back(
      "custom:Y[i,j] = erf(A[i,j]) + pow(abs(A[i,j]) + 1.0, B[i,j]) + "
      "tanh(B[i,j]) * exp(A[i,j]) - log(abs(B[i,j]) + 1.0) + "
      "sqrt(abs(A[i,j]))|i=9,j=33");
  // Register tiles (dense with its bias and relu in the write-back).
  specs.push_back("matmul:M=128,N=64,K=9");
  specs.push_back("dense:M=32,N=64,K=7,bias=1,relu=1");
  specs.push_back("conv2d_nhwc:N=1,C=3,H=6,W=32,K=64,R=3,S=3,pad=1");
  // A ranked shared-memory tile (extents of 14), the padding folded into
  // the copy of the input's tile.
  specs.push_back("conv2d_nchw:N=2,C=16,H=14,W=14,K=32,R=3,S=3,pad=1");
  specs.push_back("conv2d_nchw:N=1,C=8,H=28,W=28,K=32,R=3,S=3,pad=1");
  // A padding folded into the fixed shared tile's copy.
  specs.push_back("conv2d_nhwc:N=1,C=16,H=3,W=64,K=128,R=1,S=3,pad=1");
  // Shared-memory tiles: 8x8, 4x4 (with an epilogue) and 4x4 accumulators
  // per thread, batched.
  specs.push_back("matmul:M=128,N=128,K=32");
  specs.push_back("dense:M=64,N=64,K=12,bias=1,relu=1");
  specs.push_back("batch_matmul:B=2,M=64,N=64,K=8");
  // Cross-thread reductions.
  specs.push_back("softmax:M=5,N=96");
  specs.push_back("softmax:M=3,N=1000");
  specs.push_back("dense:M=1,N=40,K=256,bias=1");
  // One output (ONNX's ReduceSum over every axis): one block, its partial
  // sums in device memory.
  specs.push_back("custom:input in0[108]; out[v0] += in0[v1]|v0=1,v1=108");
  return specs;
}

// ptxas's verdict on `ptx` for `arch`: empty when it assembles. With
// `info`, ptxas runs with -v and its report goes there.
std::string Assemble(const std::string& ptx, const std::string& arch,
                     std::string* info = nullptr) {
  char dir[] = "/tmp/lathe_ptxas_XXXXXX";
  if (mkdtemp(dir) == nullptr) return "mkdtemp failed";
  const std::string path = absl::StrCat(dir, "/k.ptx");
  std::ofstream(path) << ptx;
  const std::string command =
      absl::StrCat(kPtxas, " -arch=", arch, info != nullptr ? " -v" : "",
                   " -O3 ", path, " -o ", dir, "/k.cubin > ", dir, "/log 2>&1");
  const int rc = std::system(command.c_str());
  std::ifstream log(absl::StrCat(dir, "/log"));
  std::string text((std::istreambuf_iterator<char>(log)), {});
  std::system(absl::StrCat("rm -rf ", dir).c_str());
  if (info != nullptr) *info = text;
  return rc == 0 ? "" : absl::StrCat("ptxas failed: ", text);
}

class CudaCodegen : public ::testing::Test {
 protected:
  void SetUp() override {
    if (absl::Status s = CheckNvrtc(); !s.ok()) GTEST_SKIP() << s;
  }
};

TEST_F(CudaCodegen, EveryOperatorsDefaultScheduleAssemblesForSm80AndSm90) {
  if (access(kPtxas, X_OK) != 0) GTEST_SKIP() << kPtxas << " not found";
  for (const std::string& spec : Specs()) {
    SCOPED_TRACE(spec);
    absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec);
    ASSERT_TRUE(workload.ok()) << workload.status();
    for (const std::string arch : {"sm_80", "sm_90"}) {
      absl::StatusOr<CudaProgram> program =
          MakeCudaProgram(*workload, nullptr, Arch(arch));
      ASSERT_TRUE(program.ok()) << program.status();
      ASSERT_FALSE(program->module.kernels.empty());
      for (const CudaKernel& k : program->module.kernels) {
        EXPECT_LE(k.block.Count(), 1024);
        EXPECT_GE(k.grid.Count(), 1);
      }
      absl::StatusOr<CompiledCuda> compiled =
          CompileCuda(program->module.source, arch, /*cubin=*/false);
      ASSERT_TRUE(compiled.ok()) << compiled.status() << "\n"
                                 << program->module.source;
      EXPECT_NE(compiled->ptx.find(".target " + arch), std::string::npos);
      EXPECT_EQ(Assemble(compiled->ptx, arch), "") << program->module.source;
    }
  }
}

// The generated CUDA C computes what the reference computes: compiled for
// the CPU (cuda_emulation.h), every operator's default GPU schedule.
TEST(CudaEmulation, EveryOperatorsDefaultScheduleMatchesTheReference) {
  for (const std::string& spec : Specs()) {
    SCOPED_TRACE(spec);
    absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec);
    ASSERT_TRUE(workload.ok()) << workload.status();
    absl::StatusOr<CudaProgram> program =
        MakeCudaProgram(*workload, nullptr, Arch("sm_90"));
    ASSERT_TRUE(program.ok()) << program.status();
    absl::Status checked =
        CheckAgainstReference(*workload, [&](const std::vector<float*>& args) {
          return testing::RunEmulated(program->module, args);
        });
    EXPECT_TRUE(checked.ok()) << checked << "\n" << program->module.source;
  }
}

// ResNet-50's 3x3 layer at batch 1 and 16: the default's ranked tile is one
// kernel (the padding folded into the input's copy) whose accumulators and
// operands fit in registers (ptxas spills nothing).
TEST_F(CudaCodegen, ResNetConvolutionsDefaultIsOneKernelWithoutSpills) {
  if (access(kPtxas, X_OK) != 0) GTEST_SKIP() << kPtxas << " not found";
  for (const std::string spec :
       {"conv2d_nchw:N=1,C=128,H=28,W=28,K=128,R=3,S=3,pad=1",
        "conv2d_nchw:N=16,C=128,H=28,W=28,K=128,R=3,S=3,pad=1"}) {
    SCOPED_TRACE(spec);
    absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec);
    ASSERT_TRUE(workload.ok());
    absl::StatusOr<CudaProgram> program =
        MakeCudaProgram(*workload, nullptr, Arch("sm_90"));
    ASSERT_TRUE(program.ok()) << program.status();
    ASSERT_EQ(program->module.kernels.size(), 1u);
    EXPECT_GT(program->module.kernels[0].shared_bytes, 0);
    absl::StatusOr<CompiledCuda> compiled =
        CompileCuda(program->module.source, "sm_90", /*cubin=*/false);
    ASSERT_TRUE(compiled.ok()) << compiled.status();
    std::string info;
    ASSERT_EQ(Assemble(compiled->ptx, "sm_90", &info), "");
    EXPECT_NE(info.find(" 0 bytes spill stores"), std::string::npos) << info;
  }
}

// A target whose limits refuse the default's tiles (less shared memory or
// fewer registers per block than the architecture has) still gets a
// default within its limits: the ranked tile sized to its shared memory,
// or untiled; the same workload on the full target keeps its tile.
TEST_F(CudaCodegen, DefaultScheduleFitsATargetsLowerLimits) {
  struct Case {
    std::string spec;
    std::string limit;
  };
  for (const Case& c : std::vector<Case>{
           {"matmul:M=128,N=128,K=32", "-max-shared-memory-per-block=4096"},
           {"conv2d_nchw:N=16,C=128,H=28,W=28,K=128,R=3,S=3,pad=1",
            "-max-shared-memory-per-block=8192"},
           {"matmul:M=128,N=128,K=32", "-registers-per-block=8192"}}) {
    SCOPED_TRACE(c.spec + " " + c.limit);
    absl::StatusOr<Workload> workload = ParseWorkloadSpec(c.spec);
    ASSERT_TRUE(workload.ok());
    absl::StatusOr<CudaProgram> full =
        MakeCudaProgram(*workload, nullptr, Arch("sm_80"));
    ASSERT_TRUE(full.ok()) << full.status();
    EXPECT_GT(full->module.kernels.back().shared_bytes, 0);
    absl::StatusOr<Target> small =
        ParseCudaTarget(absl::StrCat("cuda -arch=sm_80 ", c.limit));
    ASSERT_TRUE(small.ok()) << small.status();
    absl::StatusOr<CudaProgram> fitted =
        MakeCudaProgram(*workload, nullptr, *small);
    ASSERT_TRUE(fitted.ok()) << fitted.status();
    EXPECT_TRUE(fitted->default_schedule);
    for (const CudaKernel& k : fitted->module.kernels)
      EXPECT_LE(k.shared_bytes, small->gpu.max_shared_memory_per_block);
    EXPECT_NE(fitted->structural_hash, full->structural_hash);
    // The convolution keeps a shared tile, one sized to the target's
    // shared memory, rather than falling back to the plain binding.
    if (c.spec.rfind("conv2d", 0) == 0) {
      EXPECT_GT(fitted->module.kernels.back().shared_bytes, 0);
    }
  }
}

TEST_F(CudaCodegen, NvrtcMakesACubin) {
  absl::StatusOr<Workload> workload = ParseWorkloadSpec("softmax:M=33,N=70");
  ASSERT_TRUE(workload.ok());
  absl::StatusOr<CudaProgram> program =
      MakeCudaProgram(*workload, nullptr, Arch("sm_90"));
  ASSERT_TRUE(program.ok()) << program.status();
  // Three stages (max, sum, normalize): three launches in order.
  ASSERT_EQ(program->module.kernels.size(), 3u);
  absl::StatusOr<CompiledCuda> compiled =
      CompileCuda(program->module.source, "sm_90", /*cubin=*/true);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  ASSERT_GE(compiled->cubin.size(), 4u);
  EXPECT_EQ(compiled->cubin.substr(1, 3), "ELF");
}

// The kernel for builds: the host entry point compiles against the
// toolkit's cuda.h, with the cubin embedded byte for byte.
TEST_F(CudaCodegen, HostEntryPointCompilesWithTheCubinEmbedded) {
  constexpr char kCudaHeader[] = "/usr/local/cuda/include/cuda.h";
  absl::StatusOr<Workload> workload = ParseWorkloadSpec("softmax:M=4,N=512");
  ASSERT_TRUE(workload.ok());
  absl::StatusOr<CudaProgram> program =
      MakeCudaProgram(*workload, nullptr, Arch("sm_90"));
  ASSERT_TRUE(program.ok());
  absl::StatusOr<CompiledCuda> compiled =
      CompileCuda(program->module.source, "sm_90", /*cubin=*/true);
  ASSERT_TRUE(compiled.ok());
  absl::StatusOr<HostSource> host = GenerateHostSource(
      program->module, program->lowered, compiled->cubin, "softmax_4x512",
      "kernels/softmax.h", "softmax for sm_90");
  ASSERT_TRUE(host.ok()) << host.status();
  EXPECT_NE(host->header.find("int softmax_4x512(CUdeviceptr p0, CUdeviceptr "
                              "p1, CUstream stream);"),
            std::string::npos)
      << host->header;
  EXPECT_NE(host->header.find("//   p1: output Y float32[4, 512]"),
            std::string::npos);
  // Two intermediates (row max, row sum) allocated and freed in the call.
  EXPECT_NE(host->source.find("cuMemAlloc(&b2, 16)"), std::string::npos);
  EXPECT_NE(host->source.find("cuMemFree(b3)"), std::string::npos);
  // The source includes the header by the name it was given.
  EXPECT_NE(host->source.find("\n#include \"kernels/softmax.h\"\n"),
            std::string::npos);
  EXPECT_FALSE(GenerateHostSource(program->module, program->lowered,
                                  compiled->cubin, "not-a-name", "k.h", "")
                   .ok());
  // Names that would break out of the include or the comment.
  EXPECT_FALSE(GenerateHostSource(program->module, program->lowered,
                                  compiled->cubin, "k", "k\".h", "")
                   .ok());
  EXPECT_FALSE(GenerateHostSource(program->module, program->lowered,
                                  compiled->cubin, "k", "k.h", "two\nlines")
                   .ok());
  // The cubin, byte for byte: the ELF magic first, one entry per byte.
  const size_t array = host->source.find("kImage[] = {");
  ASSERT_NE(array, std::string::npos);
  const size_t end = host->source.find("};", array);
  EXPECT_EQ(host->source.compare(array + 12, 21, "\n    127, 69, 76, 70,"), 0)
      << host->source.substr(array, 80);
  EXPECT_EQ(static_cast<size_t>(std::count(host->source.begin() + array,
                                           host->source.begin() + end, ',')),
            compiled->cubin.size());
  if (access(kCudaHeader, R_OK) != 0)
    GTEST_SKIP() << kCudaHeader << " not found";
  char dir[] = "/tmp/lathe_host_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  ASSERT_EQ(mkdir(absl::StrCat(dir, "/kernels").c_str(), 0700), 0);
  std::ofstream(absl::StrCat(dir, "/kernels/softmax.h")) << host->header;
  std::ofstream(absl::StrCat(dir, "/softmax_4x512.cc")) << host->source;
  const std::string compile = absl::StrCat(
      "c++ -std=c++17 -Wall -Wextra -Werror -c -I/usr/local/cuda/include ", dir,
      "/softmax_4x512.cc -o ", dir, "/k.o");
  EXPECT_EQ(std::system(compile.c_str()), 0);
  std::system(absl::StrCat("rm -rf ", dir).c_str());
}

TEST_F(CudaCodegen, ReportsSourceThatDoesNotCompile) {
  absl::StatusOr<CompiledCuda> compiled =
      CompileCuda("__global__ void k() { undeclared = 1; }", "sm_90", false);
  ASSERT_FALSE(compiled.ok());
  EXPECT_NE(compiled.status().message().find("undeclared"), std::string::npos);
}

// A column strip of 16 of C per block (blockIdx.x), 16x16 threads walking
// down it; the strip's columns of B cached in shared memory under the
// block's loop: the threads copy, synchronize, compute.
absl::StatusOr<Program> SharedTileProgram(int64_t k) {
  absl::StatusOr<Workload> workload =
      ParseWorkloadSpec(absl::StrCat("matmul:M=64,N=64,K=", k));
  if (!workload.ok()) return workload.status();
  absl::StatusOr<Program> initial = workload->InitialProgram();
  if (!initial.ok()) return initial.status();
  TracedSchedule sch(*initial);
  auto c = sch.GetBlock("C");
  auto loops = sch.GetLoops(*c);
  auto i = sch.Split((*loops)[0], {Factor{}, Factor{int64_t{16}}});
  auto j = sch.Split((*loops)[1], {Factor{}, Factor{int64_t{16}}});
  if (!i.ok() || !j.ok()) return absl::InternalError("split");
  if (absl::Status s = sch.Reorder({(*j)[0], (*i)[0], (*i)[1], (*j)[1]});
      !s.ok())
    return s;
  for (auto [loop, axis] :
       std::vector<std::pair<LoopRV, std::string>>{{(*j)[0], "blockIdx.x"},
                                                   {(*i)[1], "threadIdx.y"},
                                                   {(*j)[1], "threadIdx.x"}}) {
    if (absl::Status s = sch.Bind(loop, axis); !s.ok()) return s;
  }
  auto shared = sch.CacheRead(*c, 1, "shared");
  if (!shared.ok()) return shared.status();
  if (absl::Status s = sch.ComputeAt(*shared, (*j)[0]); !s.ok()) return s;
  return LowerProgram(sch.program());
}

TEST_F(CudaCodegen, SharedTilesAreSynchronizedBeforeTheyAreRead) {
  absl::StatusOr<Program> lowered = SharedTileProgram(32);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  absl::StatusOr<CudaModule> module = GenerateCuda(*lowered, Arch("sm_90"));
  ASSERT_TRUE(module.ok()) << module.status();
  ASSERT_EQ(module->kernels.size(), 1u);
  const CudaKernel& k = module->kernels[0];
  EXPECT_EQ(k.grid.x, 4);
  EXPECT_EQ(k.grid.y, 1);
  EXPECT_EQ(k.block.x, 16);
  EXPECT_EQ(k.block.y, 16);
  EXPECT_EQ(k.shared_bytes, 16 * 32 * 4);
  const std::string& src = module->source;
  const size_t decl = src.find("__shared__ __align__(16) float B_shared[512];");
  const size_t barrier = src.find("__syncthreads();");
  const size_t use = src.find("B_shared[", src.find("C["));
  ASSERT_NE(decl, std::string::npos) << src;
  ASSERT_NE(barrier, std::string::npos) << src;
  EXPECT_LT(decl, barrier);
  EXPECT_LT(barrier, use) << src;
  absl::StatusOr<CompiledCuda> compiled = CompileCuda(src, "sm_80", false);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  if (access(kPtxas, X_OK) == 0) {
    EXPECT_EQ(Assemble(compiled->ptx, "sm_80"), "");
  }
}

TEST(CudaEmulation, CatchesAKernelThatSkipsItsTail) {
  // 7 x 37 = 259 outputs on blocks of 256 threads, guarded; with the guard
  // one short, the last element keeps the check's poison.
  absl::StatusOr<Workload> workload = ParseWorkloadSpec("relu:M=7,N=37");
  ASSERT_TRUE(workload.ok());
  absl::StatusOr<CudaProgram> program =
      MakeCudaProgram(*workload, nullptr, Arch("sm_90"));
  ASSERT_TRUE(program.ok());
  CudaModule broken = program->module;
  const size_t guard = broken.source.find("< 259)");
  ASSERT_NE(guard, std::string::npos) << broken.source;
  broken.source.replace(guard, 6, "< 258)");
  absl::Status checked =
      CheckAgainstReference(*workload, [&](const std::vector<float*>& args) {
        return testing::RunEmulated(broken, args);
      });
  EXPECT_FALSE(checked.ok());
}

TEST(CudaEmulation, SharedTilesMatchTheReferenceWithTheBlocksThreadsAtOnce) {
  absl::StatusOr<Workload> workload =
      ParseWorkloadSpec("matmul:M=64,N=64,K=32");
  ASSERT_TRUE(workload.ok());
  absl::StatusOr<Program> lowered = SharedTileProgram(32);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  absl::StatusOr<CudaModule> module = GenerateCuda(*lowered, Arch("sm_90"));
  ASSERT_TRUE(module.ok()) << module.status();
  absl::Status checked =
      CheckAgainstReference(*workload, [&](const std::vector<float*>& args) {
        return testing::RunEmulated(*module, args);
      });
  EXPECT_TRUE(checked.ok()) << checked << "\n" << module->source;
}

// Blocks of 32x32 outputs (the 2x2 tiles fused onto blockIdx.x), 16x16
// threads of 2x2 outputs each, K in chunks of 8: the chunk's tiles of A and
// B copied to shared memory by all the block's threads (each copy's loops
// fused onto threadIdx.x), then the products. The caches sit at the K
// chunk, under the blockIdx loop.
absl::StatusOr<Program> SharedKChunkProgram() {
  LATHE_ASSIGN_OR_RETURN(Workload workload,
                         ParseWorkloadSpec("matmul:M=64,N=64,K=32"));
  LATHE_ASSIGN_OR_RETURN(Program initial, workload.InitialProgram());
  TracedSchedule sch(initial);
  LATHE_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(c));
  const std::vector<Factor> tile = {Factor{}, Factor{int64_t{16}},
                                    Factor{int64_t{2}}};
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> i, sch.Split(loops[0], tile));
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> j, sch.Split(loops[1], tile));
  LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> k,
                         sch.Split(loops[2], {Factor{}, Factor{int64_t{8}}}));
  LATHE_RETURN_IF_ERROR(
      sch.Reorder({i[0], j[0], k[0], i[1], j[1], k[1], i[2], j[2]}));
  LATHE_ASSIGN_OR_RETURN(LoopRV block_loop, sch.Fuse({i[0], j[0]}));
  LATHE_ASSIGN_OR_RETURN(LoopRV thread_loop, sch.Fuse({i[1], j[1]}));
  LATHE_RETURN_IF_ERROR(sch.Bind(block_loop, "blockIdx.x"));
  LATHE_RETURN_IF_ERROR(sch.Bind(thread_loop, "threadIdx.x"));
  for (int64_t input : {0, 1}) {
    LATHE_ASSIGN_OR_RETURN(BlockRV cache, sch.CacheRead(c, input, "shared"));
    LATHE_RETURN_IF_ERROR(sch.ComputeAt(cache, k[0]));
    LATHE_ASSIGN_OR_RETURN(std::vector<LoopRV> copy, sch.GetLoops(cache));
    LATHE_ASSIGN_OR_RETURN(LoopRV fused,
                           sch.Fuse({copy[copy.size() - 2], copy.back()}));
    LATHE_RETURN_IF_ERROR(sch.Bind(fused, "threadIdx.x"));
  }
  return LowerProgram(sch.program());
}

TEST(CudaEmulation, SharedKChunksUnderTheBlockLoopMatchTheReference) {
  absl::StatusOr<Workload> workload =
      ParseWorkloadSpec("matmul:M=64,N=64,K=32");
  ASSERT_TRUE(workload.ok());
  absl::StatusOr<Program> lowered = SharedKChunkProgram();
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  absl::StatusOr<CudaModule> module = GenerateCuda(*lowered, Arch("sm_90"));
  ASSERT_TRUE(module.ok()) << module.status();
  ASSERT_EQ(module->kernels.size(), 1u);
  const CudaKernel& kernel = module->kernels[0];
  EXPECT_EQ(kernel.grid.x, 4);
  EXPECT_EQ(kernel.block.x, 256);
  // A 32x8 tile of A and an 8x32 tile of B per block.
  EXPECT_EQ(kernel.shared_bytes, 2 * 32 * 8 * 4);
  const std::string& src = module->source;
  EXPECT_NE(src.find("__shared__ __align__(16) float A_shared[256];"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("__shared__ __align__(16) float B_shared[256];"),
            std::string::npos)
      << src;
  absl::Status checked =
      CheckAgainstReference(*workload, [&](const std::vector<float*>& args) {
        return testing::RunEmulated(*module, args);
      });
  EXPECT_TRUE(checked.ok()) << checked << "\n" << src;
  absl::StatusOr<CompiledCuda> compiled = CompileCuda(src, "sm_80", false);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  if (access(kPtxas, X_OK) == 0) {
    EXPECT_EQ(Assemble(compiled->ptx, "sm_80"), "");
  }
}

TEST(CudaEmulation, SharedTileAccumulatorsAreEachThreadsRegisters) {
  // The default schedule of a 128x128 matmul: the accumulators (touched by
  // the init's, the products' and the write-back's thread loops) are each
  // thread's 8x8, the K chunk's tiles of A and B shared.
  absl::StatusOr<Workload> workload =
      ParseWorkloadSpec("matmul:M=128,N=128,K=32");
  ASSERT_TRUE(workload.ok());
  absl::StatusOr<CudaProgram> program =
      MakeCudaProgram(*workload, nullptr, Arch("sm_90"));
  ASSERT_TRUE(program.ok()) << program.status();
  const std::string& src = program->module.source;
  EXPECT_NE(src.find("float C_local[64];"), std::string::npos) << src;
  EXPECT_NE(src.find("__shared__ __align__(16) float A_shared[2048];"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("__shared__ __align__(16) float B_shared[2048];"),
            std::string::npos)
      << src;
  EXPECT_EQ(program->module.kernels.at(0).shared_bytes, 2 * 2048 * 4);
  absl::Status checked =
      CheckAgainstReference(*workload, [&](const std::vector<float*>& args) {
        return testing::RunEmulated(program->module, args);
      });
  EXPECT_TRUE(checked.ok()) << checked << "\n" << src;
}

TEST(CudaEmulation, AccumulatorsOfAPaddedTileAreEachThreadsRegisters) {
  // N = 8 tiled by 2 groups of 1 thread x 8 registers: the tile is 16
  // columns, past N, the columns past 8 under a guard. The accumulators'
  // column index (no thread in it) runs past their buffer's 8 columns
  // there, but only under the guard, so they are still each thread's (4
  // rows x 8 columns), not shared memory.
  absl::StatusOr<Workload> workload = ParseWorkloadSpec("matmul:M=64,N=8,K=16");
  ASSERT_TRUE(workload.ok());
  absl::StatusOr<Program> initial = workload->InitialProgram();
  ASSERT_TRUE(initial.ok());
  TracedSchedule sch(*initial);
  ASSERT_TRUE(
      ApplySharedTile(
          &sch, "C", /*fuse_reductions=*/true,
          [](ConcreteSchedule*,
             const SharedTileLoops&) -> absl::StatusOr<SharedTileFactors> {
            SharedTileFactors f;
            f.axes = {SharedTileAxis{int64_t{16}, int64_t{4}},
                      SharedTileAxis{int64_t{1}, int64_t{8}, int64_t{2}}};
            f.k_chunk = int64_t{8};
            f.lanes = int64_t{1};
            return f;
          })
          .ok());
  absl::StatusOr<Program> lowered = LowerProgram(sch.program());
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  absl::StatusOr<CudaModule> module = GenerateCuda(*lowered, Arch("sm_90"));
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_NE(module->source.find("float C_local[32];"), std::string::npos)
      << module->source;
  EXPECT_EQ(module->source.find("__shared__ __align__(16) float C_local"),
            std::string::npos)
      << module->source;
  absl::Status checked =
      CheckAgainstReference(*workload, [&](const std::vector<float*>& args) {
        return testing::RunEmulated(*module, args);
      });
  EXPECT_TRUE(checked.ok()) << checked << "\n" << module->source;
}

// `spec`'s default GPU schedule with `options`, as CUDA for sm_90; its
// outputs checked against the reference in the emulator.
absl::StatusOr<CudaProgram> CheckedDefaultProgram(
    const std::string& spec, const DefaultGpuScheduleOptions& options) {
  LATHE_ASSIGN_OR_RETURN(Workload workload, ParseWorkloadSpec(spec));
  LATHE_ASSIGN_OR_RETURN(Program initial, workload.InitialProgram());
  LATHE_ASSIGN_OR_RETURN(Trace trace, DefaultGpuSchedule(initial, options));
  LATHE_ASSIGN_OR_RETURN(CudaProgram program,
                         MakeCudaProgram(workload, &trace, Arch("sm_90")));
  LATHE_RETURN_IF_ERROR(
      CheckAgainstReference(workload, [&](const std::vector<float*>& args) {
        return testing::RunEmulated(program.module, args);
      }));
  return program;
}

TEST_F(CudaCodegen, GroupedRegisterTilesAreEachThreadsRegisters) {
  // The default schedule of a 128x128 matmul with each thread's 8x8 as 2x2
  // groups of 4x4, one run of every thread apart: the accumulators are still
  // the thread's 64, and neighbouring threads read neighbouring float4s of
  // a B tile row (threadIdx % 16 * 4 + a multiple of 64).
  DefaultGpuScheduleOptions options;
  options.shared_tile_register_groups = 2;
  absl::StatusOr<CudaProgram> program =
      CheckedDefaultProgram("matmul:M=128,N=128,K=32", options);
  ASSERT_TRUE(program.ok()) << program.status();
  const std::string& src = program->module.source;
  EXPECT_NE(src.find("float C_local[64];"), std::string::npos) << src;
  EXPECT_NE(src.find("% 16) * 4)"), std::string::npos) << src;
  EXPECT_EQ(src.find("% 16) * 8)"), std::string::npos) << src;
  // NVRTC keeps the accumulators in registers and reads the tiles four
  // floats at a time.
  absl::StatusOr<CompiledCuda> compiled = CompileCuda(src, "sm_90", false);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_EQ(compiled->ptx.find(".local"), std::string::npos) << compiled->ptx;
  EXPECT_NE(compiled->ptx.find("ld.shared.v4.f32"), std::string::npos);
  if (access(kPtxas, X_OK) == 0) {
    EXPECT_EQ(Assemble(compiled->ptx, "sm_90"), "");
  }
}

TEST_F(CudaCodegen, LargeUnrolledRegionsUnrollInPartsButRegisterLoopsWhole) {
  // The default tile of a 128x128 matmul with K chunks of 32 and 8x8
  // accumulators: the chunk loop around 64 products would unroll to 2048,
  // past kMaxUnrolledRegion, and indexes no array of the thread, so it
  // unrolls by 16 (1024); the register loops, which index the
  // accumulators, unroll whole, and the accumulators stay in registers.
  DefaultGpuScheduleOptions options;
  options.shared_tile_k_chunk = 32;
  options.shared_tile_register_groups = 1;
  absl::StatusOr<CudaProgram> program =
      CheckedDefaultProgram("matmul:M=128,N=128,K=64", options);
  ASSERT_TRUE(program.ok()) << program.status();
  const std::string& src = program->module.source;
  const size_t chunk = src.find("for (int k_1 = 0; k_1 < 32; ++k_1)");
  ASSERT_NE(chunk, std::string::npos) << src;
  // The line before the chunk loop, and no other loop, unrolls in parts.
  const size_t line = src.rfind('\n', src.rfind('\n', chunk) - 1) + 1;
  EXPECT_EQ(absl::StripAsciiWhitespace(src.substr(line, chunk - line)),
            "#pragma unroll 16")
      << src;
  EXPECT_EQ(src.find("#pragma unroll 16"), line + src.substr(line).find('#'))
      << src;
  EXPECT_EQ(src.find("#pragma unroll 16", chunk), std::string::npos) << src;
  absl::StatusOr<CompiledCuda> compiled = CompileCuda(src, "sm_90", false);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_EQ(compiled->ptx.find(".local"), std::string::npos);
}

TEST_F(CudaCodegen, RefusesMoreSharedMemoryThanTheTargetHas) {
  // 1024 rows of 16 floats: 64 KiB, over 48 KiB.
  absl::StatusOr<Program> lowered = SharedTileProgram(1024);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  absl::StatusOr<CudaModule> module = GenerateCuda(*lowered, Arch("sm_90"));
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(module.status().message().find(
                "uses 65536 bytes of shared memory, more than the target's "
                "max-shared-memory-per-block 49152"),
            std::string::npos)
      << module.status();
}

TEST_F(CudaCodegen, RefusesMoreThreadsThanTheTargetHas) {
  absl::StatusOr<Workload> workload = ParseWorkloadSpec("relu:M=4,N=2048");
  ASSERT_TRUE(workload.ok());
  absl::StatusOr<Program> initial = workload->InitialProgram();
  ASSERT_TRUE(initial.ok());
  TracedSchedule sch(*initial);
  auto loops = sch.GetLoops(*sch.GetBlock("Y"));
  ASSERT_TRUE(sch.Bind((*loops)[0], "blockIdx.x").ok());
  ASSERT_TRUE(sch.Bind((*loops)[1], "threadIdx.x").ok());
  absl::StatusOr<Program> lowered = LowerProgram(sch.program());
  ASSERT_TRUE(lowered.ok());
  absl::StatusOr<CudaModule> module = GenerateCuda(*lowered, Arch("sm_90"));
  ASSERT_FALSE(module.ok());
  EXPECT_NE(module.status().message().find(
                "has 2048 threads per block (2048x1x1), more than the "
                "target's max-threads-per-block 1024"),
            std::string::npos)
      << module.status();
  // A target with fewer threads refuses less, by its own limit.
  absl::StatusOr<Target> small =
      ParseCudaTarget("cuda -arch=sm_90 -max-threads-per-block=128");
  ASSERT_TRUE(small.ok());
  absl::StatusOr<CudaProgram> defaulted =
      MakeCudaProgram(*workload, nullptr, *small);
  ASSERT_TRUE(defaulted.ok()) << defaulted.status();
  for (const CudaKernel& k : defaulted->module.kernels)
    EXPECT_LE(k.block.Count(), 128);
}

// `spec`'s program scheduled by `trace_text`, lowered, as CUDA for sm_90.
absl::StatusOr<CudaModule> ScheduledModule(const std::string& spec,
                                           const std::string& trace_text,
                                           const Target& target) {
  LATHE_ASSIGN_OR_RETURN(Workload workload, ParseWorkloadSpec(spec));
  LATHE_ASSIGN_OR_RETURN(Trace trace, ParseTraceText(trace_text));
  LATHE_ASSIGN_OR_RETURN(CudaProgram program,
                         MakeCudaProgram(workload, &trace, target));
  return std::move(program.module);
}

TEST_F(CudaCodegen, UnrolledStoresAreCountedAsEmitted) {
  // relu over M x N: two threads, each unrolling the M rows and its N / 2
  // columns as [a, b]. 32 x 2 x 16 = 1024 stores unroll whole. 32 x 16 x 16
  // would be 8192, past kMaxUnrolledStores; the rows, which index no array
  // of the thread, unroll by 4 (4 x 256 = 1024 stores, within
  // kMaxUnrolledRegion), and the code as emitted is within the limit.
  // Longer loops unroll kPartialUnroll times: 64 rows of 64 columns count
  // 4 x 4 stores.
  struct Case {
    std::string spec;
    int64_t a;
    std::string pragma;  // on the rows' loop
  };
  for (const Case& c :
       {Case{"relu:M=32,N=64", 2, "#pragma unroll\n"},
        Case{"relu:M=32,N=512", 16, "#pragma unroll 4\n"},
        Case{"relu:M=64,N=128", 1,
             absl::StrCat("#pragma unroll ", kPartialUnroll, "\n")}}) {
    SCOPED_TRACE(c.spec);
    absl::StatusOr<Workload> workload = ParseWorkloadSpec(c.spec);
    ASSERT_TRUE(workload.ok());
    absl::StatusOr<Program> initial = workload->InitialProgram();
    ASSERT_TRUE(initial.ok());
    TracedSchedule sch(*initial);
    auto loops = sch.GetLoops(*sch.GetBlock("Y"));
    auto j = sch.Split((*loops)[1], {Factor{2}, Factor{c.a}, Factor{}});
    ASSERT_TRUE(j.ok());
    ASSERT_TRUE(sch.Reorder({(*j)[0], (*loops)[0], (*j)[1], (*j)[2]}).ok());
    ASSERT_TRUE(sch.Bind((*j)[0], "threadIdx.x").ok());
    for (LoopRV l : {(*loops)[0], (*j)[1], (*j)[2]})
      ASSERT_TRUE(sch.Unroll(l).ok());
    absl::StatusOr<Program> lowered = LowerProgram(sch.program());
    ASSERT_TRUE(lowered.ok());
    absl::StatusOr<CudaModule> module = GenerateCuda(*lowered, Arch("sm_90"));
    ASSERT_TRUE(module.ok()) << module.status();
    const size_t rows = module->source.find("for (int i = 0;");
    ASSERT_NE(rows, std::string::npos) << module->source;
    const size_t line = module->source.rfind('#', rows);
    ASSERT_NE(line, std::string::npos) << module->source;
    EXPECT_EQ(module->source.substr(line, rows - line).find(c.pragma), 0)
        << module->source;
    absl::Status checked =
        CheckAgainstReference(*workload, [&](const std::vector<float*>& args) {
          return testing::RunEmulated(*module, args);
        });
    EXPECT_TRUE(checked.ok()) << checked << "\n" << module->source;
  }
}

TEST_F(CudaCodegen, RefusesAThreadsCodeUnrolledPastTheLimit) {
  // Four threads, each accumulating 64 x 64 outputs in an array of its own
  // (4096 elements, the most one may have). The loops over the array index
  // it, so they unroll whole: 4096 stores, plus the init's and the
  // write-back's, past kMaxUnrolledStores.
  absl::StatusOr<CudaModule> module = ScheduledModule("matmul:M=128,N=128,K=4",
                                                      R"(
r0 = get_block(name="C")
r1, r2, r3 = get_loops(r0)
r4, r5, r6 = split(r1, 2, 2, 32)
r7, r8, r9 = split(r2, 2, 2, 32)
reorder(r4, r7, r3, r5, r6, r8, r9)
r10 = fuse(r4, r7)
bind(r10, thread_axis="threadIdx.x")
r11 = cache_write(r0, write_index=0, scope="local")
reverse_compute_at(r11, r10, preserve_unit_loops=1)
r12 = decompose_reduction(r0, r3)
unroll(r5)
unroll(r6)
unroll(r8)
unroll(r9)
)",
                                                      Arch("sm_90"));
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(module.status().message().find(
                absl::StrCat("kernel matmul unrolls to more than ",
                             kMaxUnrolledStores, " stores per thread")),
            std::string::npos)
      << module.status();
}

// A 64 x 64 matmul in blocks of 2 x 2 threads, each thread's share of the
// accumulators `rows` x `rows` registers (C_local, allocated for the block,
// a register tile).
std::string RegisterTileTrace(int64_t rows) {
  return absl::StrCat(R"(
r0 = get_block(name="C")
r1, r2, r3 = get_loops(r0)
r4, r5, r6 = split(r1, None, 2, )",
                      rows, R"()
r7, r8, r9 = split(r2, None, 2, )",
                      rows, R"()
reorder(r4, r7, r5, r8, r3, r6, r9)
r10 = cache_write(r0, write_index=0, scope="local")
r11 = fuse(r4, r7)
reverse_compute_at(r10, r11, preserve_unit_loops=1)
r12 = fuse(r5, r8)
bind(r11, thread_axis="blockIdx.x")
bind(r12, thread_axis="threadIdx.x")
r13, r14, r15 = get_loops(r10)
r16, r17 = split(r14, 2, )",
                      rows, R"()
r18, r19 = split(r15, 2, )",
                      rows, R"()
reorder(r16, r18, r17, r19)
r20 = fuse(r16, r18)
bind(r20, thread_axis="threadIdx.x")
r21 = decompose_reduction(r0, r3)
unroll(r6)
unroll(r9)
)");
}

TEST_F(CudaCodegen, RefusesARegisterTileLargerThanAThreadsRegisters) {
  // 8 x 8 accumulators are the thread's registers (no local memory); 16 x 16
  // are more than the 255 a thread may have.
  absl::StatusOr<Workload> workload = ParseWorkloadSpec("matmul:M=64,N=64,K=8");
  ASSERT_TRUE(workload.ok());
  absl::StatusOr<CudaModule> fits = ScheduledModule(
      "matmul:M=64,N=64,K=8", RegisterTileTrace(8), Arch("sm_90"));
  ASSERT_TRUE(fits.ok()) << fits.status();
  EXPECT_NE(fits->source.find("float C_local[64];"), std::string::npos)
      << fits->source;
  absl::Status checked =
      CheckAgainstReference(*workload, [&](const std::vector<float*>& args) {
        return testing::RunEmulated(*fits, args);
      });
  EXPECT_TRUE(checked.ok()) << checked << "\n" << fits->source;
  absl::StatusOr<CompiledCuda> compiled =
      CompileCuda(fits->source, "sm_90", false);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_EQ(compiled->ptx.find(".local"), std::string::npos) << compiled->ptx;

  absl::StatusOr<CudaModule> spilled = ScheduledModule(
      "matmul:M=64,N=64,K=8", RegisterTileTrace(16), Arch("sm_90"));
  ASSERT_FALSE(spilled.ok());
  EXPECT_EQ(spilled.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(spilled.status().message().find(absl::StrCat(
                "buffer \"C_local\" (256 elements of each thread's share) is "
                "held in registers, more than the ",
                kMaxRegistersPerThread, " registers a thread has")),
            std::string::npos)
      << spilled.status();
}

TEST_F(CudaCodegen, RefusesABlocksRegisterTilesPastTheTargetsRegisters) {
  // Four threads of 8 x 8 accumulators need 256 registers: within sm_90's
  // 65536, past a target that says it has 128.
  absl::StatusOr<Target> small =
      ParseCudaTarget("cuda -arch=sm_90 -registers-per-block=128");
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_TRUE(ScheduledModule("matmul:M=64,N=64,K=8", RegisterTileTrace(8),
                              Arch("sm_90"))
                  .ok());
  absl::StatusOr<CudaModule> module =
      ScheduledModule("matmul:M=64,N=64,K=8", RegisterTileTrace(8), *small);
  ASSERT_FALSE(module.ok());
  EXPECT_EQ(module.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(module.status().message().find(
                "buffer \"C_local\" (64 elements of each thread's share, 4 "
                "threads) needs 256 registers, more than the target's "
                "registers-per-block 128"),
            std::string::npos)
      << module.status();
}

TEST_F(CudaCodegen, RefusesABlockLoopUnderASerialLoop) {
  absl::StatusOr<Workload> workload = ParseWorkloadSpec("relu:M=4,N=64");
  ASSERT_TRUE(workload.ok());
  absl::StatusOr<Program> initial = workload->InitialProgram();
  ASSERT_TRUE(initial.ok());
  TracedSchedule sch(*initial);
  auto loops = sch.GetLoops(*sch.GetBlock("Y"));
  ASSERT_TRUE(sch.Bind((*loops)[1], "blockIdx.x").ok());
  absl::StatusOr<Program> lowered = LowerProgram(sch.program());
  ASSERT_TRUE(lowered.ok());
  absl::StatusOr<CudaModule> module = GenerateCuda(*lowered, Arch("sm_90"));
  ASSERT_FALSE(module.ok());
  EXPECT_NE(module.status().message().find("blocks cannot synchronize"),
            std::string::npos)
      << module.status();
}

TEST(CudaCodegenTarget, RefusesACpuTarget) {
  absl::StatusOr<Workload> workload = ParseWorkloadSpec("relu:M=4,N=4");
  ASSERT_TRUE(workload.ok());
  absl::StatusOr<CudaProgram> program =
      MakeCudaProgram(*workload, nullptr, Target{});
  EXPECT_EQ(program.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace lathe::cuda

// Property test of the CUDA back end without a GPU: random GPU schedules
// (thread and register tiles of random sizes, tails included, one- and
// two-dimensional bindings, local accumulators, unrolling) of every
// operator either are refused by a named limit or become CUDA C that NVRTC
// compiles and ptxas assembles for sm_80 and sm_90; every fifth one also
// runs on the CPU (cuda_emulation.h) against the reference. The seed is
// fixed: the same traces every run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/cuda/cuda_codegen.h"
#include "compiler/codegen/cuda/cuda_target.h"
#include "compiler/codegen/cuda/nvrtc_compiler.h"
#include "compiler/lower/pipeline.h"
#include "compiler/measure/reference_check.h"
#include "compiler/schedule/traced_schedule.h"
#include "compiler/workload/spec.h"
#include "tests/compiler/codegen/cuda/cuda_emulation.h"
#include "tests/compiler/codegen/cuda/ptxas.h"

namespace lathe::cuda {
namespace {

const std::vector<std::string>& Specs() {
  static const auto* const kSpecs = new std::vector<std::string>{
      "matmul:M=48,N=40,K=12",
      "matmul:M=37,N=29,K=5",
      "batch_matmul:B=3,M=16,N=24,K=7",
      "dense:M=24,N=40,K=9,bias=1,relu=1",
      "conv2d_nchw:N=1,C=3,H=9,W=10,K=8,R=3,S=3,pad=1",
      "conv2d_nhwc:N=2,C=4,H=7,W=8,K=16,R=3,S=3,pad=1,stride=2",
      "max_pool2d:N=1,C=5,H=9,W=9,R=3,S=3,pad=1,stride=2",
      "avg_pool2d:N=2,C=3,H=8,W=8,R=2,S=2,stride=2",
      "softmax:M=9,N=33",
      "add:M=17,N=33",
      "relu:M=5,N=300",
      "custom:C[i,j] += A[i,k] * B[k,j]|i=20,j=36,k=6",
  };
  return *kSpecs;
}

template <typename T>
T Pick(std::mt19937_64& rng, const std::vector<T>& options) {
  return options[rng() % options.size()];
}

IterType TypeOfLoop(const BlockNode& block, const ForNode& loop) {
  for (size_t i = 0; i < block.iter_vars.size(); ++i) {
    if (block.iter_values[i].same_as(loop.var)) return block.iter_vars[i].type;
  }
  return IterType::kSpatial;
}

// One random GPU schedule of `initial`; primitives that refuse are skipped,
// so the result is always a valid program (possibly unbound in places).
Program RandomGpuSchedule(const Program& initial, std::mt19937_64& rng) {
  ConcreteSchedule sch(initial);
  std::vector<std::string> names;
  for (const BlockNode* b : sch.program().Blocks()) {
    if (!b->IsReduction()) names.push_back(b->name);
  }
  for (const std::string& name : names) {
    if (rng() % 2 == 0) {
      if (auto b = sch.GetBlock(name); b.ok())
        sch.ComputeInline(*b).IgnoreError();
    }
  }
  names.clear();
  for (const BlockNode* b : sch.program().Blocks()) names.push_back(b->name);
  for (const std::string& name : names) {
    absl::StatusOr<BlockRV> block = sch.GetBlock(name);
    if (!block.ok()) continue;
    absl::StatusOr<std::vector<LoopRV>> loops = sch.GetLoops(*block);
    if (!loops.ok() || loops->empty()) continue;
    const BlockNode* node = sch.program().FindBlock(name);
    std::vector<LoopRV> spatial, reduce;
    for (LoopRV l : *loops) {
      const ForNode* loop = sch.program().FindLoop(sch.LoopName(l).value());
      if (loop == nullptr) continue;
      (TypeOfLoop(*node, *loop) == IterType::kSpatial ? spatial : reduce)
          .push_back(l);
    }
    if (spatial.empty()) continue;
    std::vector<LoopRV> order = spatial;
    order.insert(order.end(), reduce.begin(), reduce.end());
    if (!reduce.empty() && !sch.Reorder(order).ok()) continue;
    std::optional<BlockRV> write_back;
    if (!reduce.empty() && rng() % 2 == 0) {
      if (auto wb = sch.CacheWrite(*block, 0, "local"); wb.ok())
        write_back = *wb;
    }
    const int shape = static_cast<int>(rng() % 3);
    std::optional<LoopRV> thread_loop;
    if (shape == 0 || spatial.size() < 2) {
      // Fused, split by a random thread count.
      absl::StatusOr<LoopRV> fused =
          spatial.size() > 1 ? sch.Fuse(spatial) : spatial.front();
      if (!fused.ok()) continue;
      const int64_t threads =
          Pick<int64_t>(rng, {32, 64, 100, 256, 1024, 2048});
      auto parts = sch.Split(*fused, {Factor{}, Factor{threads}});
      if (!parts.ok()) continue;
      sch.Bind((*parts)[0], "blockIdx.x").IgnoreError();
      if (sch.Bind((*parts)[1], "threadIdx.x").ok()) thread_loop = (*parts)[1];
    } else {
      // The last two spatial loops tiled [outer, threads, registers].
      const size_t n = spatial.size();
      std::vector<std::vector<LoopRV>> tiles;
      for (size_t d : {n - 2, n - 1}) {
        auto parts = sch.Split(
            spatial[d],
            {Factor{}, Factor{Pick<int64_t>(rng, {1, 2, 4, 8, 16, 32})},
             Factor{Pick<int64_t>(rng, {1, 2, 3, 4})}});
        if (!parts.ok()) break;
        tiles.push_back(*parts);
      }
      if (tiles.size() != 2) continue;
      std::vector<LoopRV> outer(spatial.begin(), spatial.end() - 2);
      std::vector<LoopRV> tile_order = outer;
      tile_order.insert(tile_order.end(),
                        {tiles[0][0], tiles[1][0], tiles[0][1], tiles[1][1]});
      tile_order.insert(tile_order.end(), reduce.begin(), reduce.end());
      tile_order.insert(tile_order.end(), {tiles[0][2], tiles[1][2]});
      if (!sch.Reorder(tile_order).ok()) continue;
      if (shape == 1) {
        // One dimension: outer loops fused to blockIdx.x, threads fused.
        outer.push_back(tiles[0][0]);
        outer.push_back(tiles[1][0]);
        if (auto bx = sch.Fuse(outer); bx.ok())
          sch.Bind(*bx, "blockIdx.x").IgnoreError();
        if (auto tx = sch.Fuse({tiles[0][1], tiles[1][1]}); tx.ok()) {
          if (sch.Bind(*tx, "threadIdx.x").ok()) thread_loop = *tx;
        }
      } else {
        // Two dimensions.
        sch.Bind(tiles[0][0], "blockIdx.y").IgnoreError();
        sch.Bind(tiles[1][0], "blockIdx.x").IgnoreError();
        sch.Bind(tiles[0][1], "threadIdx.y").IgnoreError();
        if (sch.Bind(tiles[1][1], "threadIdx.x").ok())
          thread_loop = tiles[1][1];
      }
      if (rng() % 2 == 0) sch.Unroll(tiles[1][2]).IgnoreError();
    }
    if (write_back.has_value() && thread_loop.has_value())
      sch.ReverseComputeAt(*write_back, *thread_loop).IgnoreError();
  }
  return sch.program();
}

TEST(CudaRandomSchedules, CompileAndAssembleOrAreRefusedByALimit) {
  if (absl::Status s = CheckNvrtc(); !s.ok()) GTEST_SKIP() << s;
  if (access(testing::kPtxas, X_OK) != 0)
    GTEST_SKIP() << testing::kPtxas << " not found";
  std::mt19937_64 rng(27);
  const Target target = *ArchTarget("sm_80");
  int compiled = 0, refused = 0, emulated = 0;
  constexpr int kTraces = 240;
  for (int t = 0; t < kTraces; ++t) {
    const std::string& spec = Specs()[t % Specs().size()];
    SCOPED_TRACE(absl::StrCat("schedule ", t, " of ", spec));
    absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec);
    ASSERT_TRUE(workload.ok());
    absl::StatusOr<Program> initial = workload->InitialProgram();
    ASSERT_TRUE(initial.ok());
    Program scheduled = RandomGpuSchedule(*initial, rng);
    absl::StatusOr<Program> lowered = LowerProgram(scheduled);
    ASSERT_TRUE(lowered.ok()) << lowered.status();
    absl::StatusOr<CudaModule> module = GenerateCuda(*lowered, target);
    if (!module.ok()) {
      // Only limits and misplaced bound loops may refuse, by name.
      EXPECT_EQ(module.status().code(), absl::StatusCode::kFailedPrecondition)
          << module.status();
      ++refused;
      continue;
    }
    absl::StatusOr<CompiledCuda> ptx =
        CompileCuda(module->source, "sm_80", /*cubin=*/false);
    ASSERT_TRUE(ptx.ok()) << ptx.status() << "\n" << module->source;
    EXPECT_EQ(testing::Assemble(ptx->ptx, "sm_80"), "") << module->source;
    EXPECT_EQ(testing::Assemble(ptx->ptx, "sm_90"), "") << module->source;
    ++compiled;
    if (t % 5 == 0) {
      absl::Status checked = CheckAgainstReference(
          *workload, [&](const std::vector<float*>& args) {
            return testing::RunEmulated(*module, args);
          });
      EXPECT_TRUE(checked.ok()) << checked << "\n" << module->source;
      ++emulated;
    }
  }
  // Most random schedules are legal: the property is not vacuous.
  EXPECT_GE(compiled, kTraces / 2);
  std::printf("%d compiled and assembled (%d also emulated), %d refused\n",
              compiled, emulated, refused);
}

}  // namespace
}  // namespace lathe::cuda

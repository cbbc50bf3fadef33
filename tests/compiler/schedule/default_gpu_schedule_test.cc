// The default GPU schedule: every registered operator (and a custom
// workload) at small and odd shapes gets blockIdx/threadIdx loops, and the
// scheduled, lowered program computes what the reference computes (the
// interpreter runs bound loops serially).
#include "compiler/schedule/default_gpu_schedule.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/interp/allclose.h"
#include "compiler/interp/interpreter.h"
#include "compiler/interp/random_fill.h"
#include "compiler/ir/printer.h"
#include "compiler/lower/pipeline.h"
#include "compiler/schedule/gpu_tile_choice.h"
#include "compiler/schedule/replay.h"
#include "compiler/workload/reference.h"
#include "compiler/workload/spec.h"
#include "tests/support/every_operator.h"

namespace lathe {
namespace {

// Every operator at a shape with odd extents (required parameters at 7,
// which no thread count divides), and shapes that tile.
std::vector<std::string> OddSpecs() {
  std::vector<std::string> specs = test_support::EveryOperatorSpec(7);
  specs.push_back("custom:C[i,j] += A[i,k] * B[k,j]|i=9,j=33,k=5");
  // Shapes that get a register tile (the element-wise epilogue of dense
  // folded into its write-back).
  specs.push_back("matmul:M=64,N=128,K=9");
  specs.push_back("batch_matmul:B=2,M=32,N=64,K=5");
  specs.push_back("dense:M=32,N=64,K=7,bias=1,relu=1");
  specs.push_back("conv2d_nhwc:N=1,C=3,H=6,W=32,K=64,R=3,S=3,pad=1");
  // Shapes that get a shared-memory tile (with 256 threads): 4x8 and 4x4
  // accumulators per thread, K chunks of 16 and 4, fused reduction loops.
  specs.push_back("matmul:M=64,N=128,K=16");
  specs.push_back("batch_matmul:B=2,M=64,N=64,K=8");
  specs.push_back("dense:M=64,N=64,K=12,bias=1,relu=1");
  specs.push_back("conv2d_nhwc:N=1,C=2,H=3,W=33,K=128,R=2,S=2");
  specs.push_back("conv2d_nhwc:N=1,C=16,H=3,W=64,K=128,R=1,S=3,pad=1");
  // Shapes that get a ranked shared-memory tile (extents of 14 and 100,
  // which the two tiles above do not divide).
  specs.push_back("conv2d_nchw:N=2,C=16,H=14,W=14,K=32,R=3,S=3,pad=1");
  specs.push_back("matmul:M=100,N=96,K=12");
  // Shapes that get a cross-thread reduction (a GEMV among them).
  specs.push_back("softmax:M=5,N=96");
  specs.push_back("softmax:M=3,N=1000");
  specs.push_back("dense:M=1,N=40,K=256,bias=1");
  return specs;
}

absl::Status MatchesReference(const Workload& workload,
                              const Program& program) {
  std::vector<TensorData> inputs;
  for (size_t i = 0; i < workload.inputs().size(); ++i) {
    inputs.push_back(TensorData::Like(*workload.inputs()[i].buffer()));
    FillRandom(&inputs.back(), 5 + i);
  }
  absl::StatusOr<std::vector<TensorData>> expected =
      RunReference(workload, inputs);
  if (!expected.ok()) return expected.status();
  std::vector<TensorData> outputs;
  for (const te::Tensor& t : workload.outputs())
    outputs.push_back(TensorData::Like(*t.buffer()));
  std::vector<TensorData*> args;
  for (TensorData& t : inputs) args.push_back(&t);
  for (TensorData& t : outputs) args.push_back(&t);
  if (absl::Status s = Interpret(program, args); !s.ok()) return s;
  for (size_t o = 0; o < outputs.size(); ++o) {
    absl::Status close = CheckAllClose(outputs[o], (*expected)[o], 1e-4, 1e-5,
                                       workload.outputs()[o].name());
    if (!close.ok()) return close;
  }
  return absl::OkStatus();
}

int CountBound(const Program& program, const std::string& prefix) {
  int count = 0;
  VisitStmts(static_cast<const StmtNode*>(program.root.get()),
             [&](const StmtNode* s) {
               if (const ForNode* f = s->as<ForNode>()) {
                 count += f->for_kind == ForKind::kThreadBinding &&
                          f->thread_tag.rfind(prefix, 0) == 0;
               }
               return true;
             });
  return count;
}

TEST(DefaultGpuSchedule, BindsEveryOperatorAndMatchesTheReference) {
  for (const std::string& spec : OddSpecs()) {
    for (int64_t threads : {32, 256}) {
      SCOPED_TRACE(absl::StrCat(spec, " threads ", threads));
      absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec);
      ASSERT_TRUE(workload.ok()) << workload.status();
      absl::StatusOr<Program> initial = workload->InitialProgram();
      ASSERT_TRUE(initial.ok());
      std::vector<std::string> skipped;
      absl::StatusOr<Trace> trace =
          DefaultGpuSchedule(*initial, {threads}, &skipped);
      ASSERT_TRUE(trace.ok()) << trace.status();
      auto scheduled = ReplayTrace(*trace, *initial);
      ASSERT_TRUE(scheduled.ok()) << scheduled.status();
      const Program& program = (*scheduled)->program();
      EXPECT_GE(CountBound(program, "threadIdx."), 1)
          << absl::StrJoin(skipped, "\n") << PrintProgram(program);
      for (const BlockNode* b : program.Blocks()) {
        EXPECT_FALSE(program.LoopsAbove(b).empty() &&
                     CountBound(program, "threadIdx.") == 0);
      }
      absl::StatusOr<Program> lowered = LowerProgram(program);
      ASSERT_TRUE(lowered.ok()) << lowered.status();
      EXPECT_TRUE(MatchesReference(*workload, *lowered).ok())
          << PrintProgram(*lowered);
    }
  }
}

// The lowered program of `spec`'s default GPU schedule, printed.
std::string LoweredText(const std::string& spec,
                        const DefaultGpuScheduleOptions& options) {
  absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec);
  EXPECT_TRUE(workload.ok());
  absl::StatusOr<Program> initial = workload->InitialProgram();
  EXPECT_TRUE(initial.ok());
  absl::StatusOr<Trace> trace = DefaultGpuSchedule(*initial, options);
  EXPECT_TRUE(trace.ok());
  auto scheduled = ReplayTrace(*trace, *initial);
  EXPECT_TRUE(scheduled.ok());
  absl::StatusOr<Program> lowered = LowerProgram((*scheduled)->program());
  EXPECT_TRUE(lowered.ok());
  return PrintProgram(*lowered);
}

std::string LoweredText(const std::string& spec, int64_t threads = 256) {
  DefaultGpuScheduleOptions options;
  options.threads_per_block = threads;
  return LoweredText(spec, options);
}

TEST(DefaultGpuSchedule, MatmulGetsSharedTilesAndRegisterAccumulators) {
  // Blocks of 128x128 outputs, 16x16 threads of 8x8 accumulators; A's
  // 128x16 tile (transposed: k outermost) and B's 16x128 tile of each K
  // chunk in shared memory, copied by the block's 256 threads (8 elements
  // each).
  const std::string text = LoweredText("matmul:M=256,N=128,K=64");
  for (const char* part : {
           "in range(2) thread_binding(blockIdx.x)",
           "alloc A_shared: float32[16, 128] shared",
           "alloc B_shared: float32[16, 128] shared",
           "alloc C_local: float32[128, 128] local",
           "in range(4)",  // the K chunks
       }) {
    EXPECT_NE(text.find(part), std::string::npos) << part << "\n" << text;
  }
  // The init, two copies, the products and the write-back.
  size_t thread_loops = 0;
  for (size_t at = text.find("in range(256) thread_binding(threadIdx.x)");
       at != std::string::npos;
       at = text.find("in range(256) thread_binding(threadIdx.x)", at + 1)) {
    ++thread_loops;
  }
  EXPECT_EQ(thread_loops, 5u) << text;
  // A K that no chunk divides keeps the register tile.
  EXPECT_EQ(LoweredText("matmul:M=128,N=128,K=9").find("shared"),
            std::string::npos);
}

TEST(DefaultGpuSchedule, SharedTileTakesItsKChunkAndRegisterTileFromOptions) {
  DefaultGpuScheduleOptions options;
  options.shared_tile_k_chunk = 32;
  options.shared_tile_max_registers = 4;
  // Blocks of 64x64 outputs (16x16 threads of 4x4), K chunks of 32.
  const std::string text = LoweredText("matmul:M=256,N=128,K=64", options);
  for (const char* part : {
           "in range(8) thread_binding(blockIdx.x)",
           "alloc A_shared: float32[32, 64] shared",
           "alloc B_shared: float32[32, 64] shared",
           "alloc C_local: float32[64, 64] local",
           "in range(2)",  // the K chunks
       }) {
    EXPECT_NE(text.find(part), std::string::npos) << part << "\n" << text;
  }
  // A chunk that does not divide K falls back to the largest of {16, 8, 4}.
  options.shared_tile_k_chunk = 24;
  EXPECT_NE(LoweredText("matmul:M=256,N=128,K=64", options)
                .find("alloc A_shared: float32[16, 64] shared"),
            std::string::npos);
}

TEST(DefaultGpuSchedule, MatmulGetsARegisterTilePerThread) {
  // 16x16 threads, each accumulating 4x4 outputs in registers; the tile's
  // loops and the init's and write-back's unrolled. (K = 9: no K chunk.)
  const std::string text = LoweredText("matmul:M=128,N=128,K=9");
  EXPECT_NE(text.find("in range(4) thread_binding(blockIdx.x)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("in range(256) thread_binding(threadIdx.x)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("alloc C_local: float32[4, 4] local"), std::string::npos)
      << text;
  EXPECT_NE(text.find("in range(4) unrolled"), std::string::npos) << text;
  // With at most 64 threads, an 8x8 thread tile.
  EXPECT_NE(LoweredText("matmul:M=128,N=128,K=9", 64)
                .find("in range(64) thread_binding(threadIdx.x)"),
            std::string::npos);
}

// ResNet-50's 3x3 layer at batch 16 (28x28: no 16x16-thread tile, no
// register tile divides it): a tile of the ranking, its threads in one
// threadIdx loop, the input's tile with its halo and the weights' in
// shared memory, the padding folded into the input's copy (no stage of its
// own, no condition in the products).
TEST(DefaultGpuSchedule, ConvolutionsAtResNetExtentsGetARankedTile) {
  const std::string spec =
      "conv2d_nchw:N=16,C=128,H=28,W=28,K=128,R=3,S=3,pad=1";
  absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec);
  ASSERT_TRUE(workload.ok());
  absl::StatusOr<Program> initial = workload->InitialProgram();
  ASSERT_TRUE(initial.ok());
  const BlockNode* conv = nullptr;
  for (const BlockNode* b : initial->Blocks())
    if (b->IsReduction()) conv = b;
  ASSERT_NE(conv, nullptr);
  std::optional<TileProblem> problem = TileProblemOf(*initial, *conv, 256);
  ASSERT_TRUE(problem.has_value());
  const std::string text = LoweredText(spec);
  bool found = false;
  for (const TileChoice& tile : RankSharedTiles(*problem, 16)) {
    int64_t threads = 1;
    for (int64_t t : tile.threads) threads *= t;
    found |= text.find(absl::StrCat("in range(", tile.blocks,
                                    ") thread_binding(blockIdx.x)")) !=
                 std::string::npos &&
             text.find(absl::StrCat("in range(", threads,
                                    ") thread_binding(threadIdx.x)")) !=
                 std::string::npos;
  }
  EXPECT_TRUE(found) << text;
  EXPECT_NE(text.find("alloc W_shared: float32["), std::string::npos) << text;
  EXPECT_NE(text.find("alloc pad_shared: float32["), std::string::npos) << text;
  EXPECT_EQ(text.find("alloc pad:"), std::string::npos) << text;
  EXPECT_EQ(text.find("select("), text.rfind("select(")) << text;
  // Without the ranked tile, one thread per output.
  DefaultGpuScheduleOptions plain;
  plain.ranked_tile = -1;
  EXPECT_EQ(LoweredText(spec, plain).find("shared"), std::string::npos);
}

// A padded input whose own binding would have a tail (1x8x30x30 elements
// over 256 threads) is still folded into the ranked tile's copy: the
// stage is left for the tile, not bound first.
TEST(DefaultGpuSchedule, RankedTilesFoldAPaddingOfAnySize) {
  const std::string text =
      LoweredText("conv2d_nchw:N=1,C=8,H=28,W=28,K=32,R=3,S=3,pad=1");
  EXPECT_NE(text.find("alloc pad_shared: float32["), std::string::npos) << text;
  EXPECT_EQ(text.find("alloc pad:"), std::string::npos) << text;
}

// The fixed 16x16-thread tile folds a padding the same way.
TEST(DefaultGpuSchedule, FixedSharedTilesFoldThePaddingToo) {
  const std::string text =
      LoweredText("conv2d_nhwc:N=1,C=16,H=3,W=64,K=128,R=1,S=3,pad=1");
  EXPECT_NE(text.find("in range(256) thread_binding(threadIdx.x)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("alloc pad_shared: float32["), std::string::npos) << text;
  EXPECT_EQ(text.find("alloc pad:"), std::string::npos) << text;
}

// Later ranks give other tiles; past the last one that builds, the plain
// binding.
TEST(DefaultGpuSchedule, TakesTheRankedTileItIsGiven) {
  const std::string spec = "conv2d_nchw:N=2,C=16,H=14,W=14,K=32,R=3,S=3,pad=1";
  std::set<std::string> tiled;
  for (int64_t rank = 0; rank < 6; ++rank) {
    DefaultGpuScheduleOptions options;
    options.ranked_tile = rank;
    const std::string text = LoweredText(spec, options);
    if (text.find("shared") != std::string::npos) tiled.insert(text);
  }
  EXPECT_GE(tiled.size(), 2u);
  DefaultGpuScheduleOptions past;
  past.ranked_tile = 1000;
  EXPECT_EQ(LoweredText(spec, past).find("shared"), std::string::npos);
}

TEST(DefaultGpuSchedule, OtherReductionsAccumulateInOneRegisterPerThread) {
  // Rows of a softmax: one spatial loop, no register tile; the local
  // accumulator is compacted into the threadIdx.x loop (compact_buffers: a
  // bound loop carries no accumulation).
  const std::string text = LoweredText("softmax:M=64,N=100");
  EXPECT_NE(text.find("alloc row_max_local: float32[1] local"),
            std::string::npos)
      << text;
}

TEST(DefaultGpuSchedule, RejectsANonPositiveThreadCount) {
  absl::StatusOr<Workload> workload = ParseWorkloadSpec("relu:M=4,N=4");
  ASSERT_TRUE(workload.ok());
  absl::StatusOr<Program> initial = workload->InitialProgram();
  ASSERT_TRUE(initial.ok());
  absl::StatusOr<Trace> trace = DefaultGpuSchedule(*initial, {0});
  EXPECT_EQ(trace.status().code(), absl::StatusCode::kInvalidArgument);
}

// A target's limits as options: its threads per block when fewer than
// the default's, its shared memory in float32 elements (at least one, the
// least DefaultGpuSchedule accepts).
TEST(DefaultGpuSchedule, OptionsForATargetTakeItsLimits) {
  const DefaultGpuScheduleOptions sm80 =
      DefaultGpuScheduleOptionsFor(1024, 49152);
  EXPECT_EQ(sm80.threads_per_block,
            DefaultGpuScheduleOptions{}.threads_per_block);
  EXPECT_EQ(sm80.max_shared_elements, 12288);
  const DefaultGpuScheduleOptions small =
      DefaultGpuScheduleOptionsFor(64, 4096);
  EXPECT_EQ(small.threads_per_block, 64);
  EXPECT_EQ(small.max_shared_elements, 1024);
  EXPECT_EQ(DefaultGpuScheduleOptionsFor(64, 3).max_shared_elements, 1);
}

TEST(DefaultGpuSchedule, RejectsBadSharedTileOptions) {
  absl::StatusOr<Workload> workload = ParseWorkloadSpec("relu:M=4,N=4");
  ASSERT_TRUE(workload.ok());
  absl::StatusOr<Program> initial = workload->InitialProgram();
  ASSERT_TRUE(initial.ok());
  DefaultGpuScheduleOptions negative_chunk;
  negative_chunk.shared_tile_k_chunk = -1;
  EXPECT_EQ(DefaultGpuSchedule(*initial, negative_chunk).status().code(),
            absl::StatusCode::kInvalidArgument);
  DefaultGpuScheduleOptions odd_registers;
  odd_registers.shared_tile_max_registers = 3;
  absl::Status status = DefaultGpuSchedule(*initial, odd_registers).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("max registers 3"), std::string::npos)
      << status.message();
  DefaultGpuScheduleOptions ranked;
  ranked.ranked_tile = -2;
  status = DefaultGpuSchedule(*initial, ranked).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("ranked tile -2"), std::string::npos)
      << status.message();
  DefaultGpuScheduleOptions no_shared;
  no_shared.max_shared_elements = 0;
  status = DefaultGpuSchedule(*initial, no_shared).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("shared tiles of 0 elements"),
            std::string::npos)
      << status.message();
}

}  // namespace
}  // namespace lathe

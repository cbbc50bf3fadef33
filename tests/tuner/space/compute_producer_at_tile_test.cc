// Tests of the step of MultiLevelTiling that computes a producing reduction
// at its consumer's tile (tuner/space/compute_producer_at_tile.h), and of the
// design spaces of a fused depthwise + projection kernel.
#include "tuner/space/compute_producer_at_tile.h"

#include <gtest/gtest.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/cpu_target.h"
#include "compiler/codegen/cuda/cuda_target.h"
#include "compiler/ir/printer.h"
#include "tests/tuner/space/space_test_util.h"
#include "tuner/space/block_nest.h"
#include "tuner/space/design_space.h"
#include "tuner/space/multi_level_tiling.h"

namespace lathe::tuner {
namespace {

using testing::CheckSpacePoint;
using testing::RuleFixture;

// A depthwise 3x3 layer over 32 channels blocked by 16 (d1), its bias and
// clip in one stage (d0), and a 1x1 projection to 16 channels (t0) with its
// bias: the shape of a fused MobileNetV2 block. 10 columns: the positions
// are not a multiple of kFusedPositions.
constexpr char kFused[] =
    "custom:input in0[1,2,6,10,16]; input in1[2,1,3,3,16] const; "
    "input in2[2,16] const; input in3[1,32,1,1,16] const; "
    "input in4[1,16] const; "
    "d1[a0,a1o,a2,a3,a1i] += in0?[a0,a1o,a2+a4-1,a3+a5-1,a1i] * "
    "in1[a1o,0,a4,a5,a1i]; "
    "d0[b0,b1o,b2,b3,b1i] = min(max(d1[b0,b1o,b2,b3,b1i] + in2[b1o,b1i], "
    "0.0), 6.0); "
    "t0[c0,c1o,c2,c3,c1i] += d0[c0,c4o,c2,c3,c4i] * "
    "in3[c1o,c4i+16*c4o,0,0,c1i]; "
    "out[e0,e1o,e2,e3,e1i] = t0[e0,e1o,e2,e3,e1i] + in4[e1o,e1i]"
    "|a0=1,a1o=2,a2=6,a3=10,a1i=16,a4=3,a5=3,b0=1,b1o=2,b2=6,b3=10,b1i=16,"
    "c0=1,c1o=1,c2=6,c3=10,c1i=16,c4o=2,c4i=16,e0=1,e1o=1,e2=6,e3=10,e1i=16";

// The same block as the model partition emits it: the bias (t0) and the clip
// (t2) are two stages, and the projection adds a residual (in5).
constexpr char kEmitted[] =
    "custom:input in0[1,2,6,10,16]; input in1[2,1,3,3,16] const; "
    "input in2[2,16] const; input in3[1,32,1,1,16] const; "
    "input in4[1,16] const; input in5[1,1,6,10,16]; "
    "t1[v0,v1o,v2,v3,v1i] += in0?[v0,v1o,v2+v4-1,v3+v5-1,v1i] * "
    "in1[v1o,0,v4,v5,v1i]; "
    "t0[v6,v7o,v8,v9,v7i] = t1[v6,v7o,v8,v9,v7i] + in2[v7o,v7i]; "
    "t2[w0,w1o,w2,w3,w1i] = min(max(t0[w0,w1o,w2,w3,w1i], 0.0), 6.0); "
    "t4[c0,c1o,c2,c3,c1i] += t2[c0,c4o,c2,c3,c4i] * "
    "in3[c1o,c4i+16*c4o,0,0,c1i]; "
    "t3[e0,e1o,e2,e3,e1i] = t4[e0,e1o,e2,e3,e1i] + in4[e1o,e1i]; "
    "out[f0,f1o,f2,f3,f1i] = in5[f0,f1o,f2,f3,f1i] + t3[f0,f1o,f2,f3,f1i]"
    "|v0=1,v1o=2,v2=6,v3=10,v1i=16,v4=3,v5=3,v6=1,v7o=2,v8=6,v9=10,v7i=16,"
    "w0=1,w1o=2,w2=6,w3=10,w1i=16,c0=1,c1o=1,c2=6,c3=10,c1i=16,c4o=2,c4i=16,"
    "e0=1,e1o=1,e2=6,e3=10,e1i=16,f0=1,f1o=1,f2=6,f3=10,f1i=16";

TEST(ProducerChainOf, FindsTheDepthwiseLayerAndItsEpilogue) {
  RuleFixture f(kFused);
  std::optional<ProducerChain> chain =
      ProducerChainOf(f.initial, *f.initial.FindBlock("t0"));
  ASSERT_TRUE(chain.has_value());
  EXPECT_EQ(chain->epilogue, "d0");
  EXPECT_EQ(chain->reduction, "d1");
  // The depthwise layer reads its input (through the padding), not a chain.
  EXPECT_FALSE(
      ProducerChainOf(f.initial, *f.initial.FindBlock("d1")).has_value());
}

TEST(ProducerChainOf, NoneForKernelsThatReadTheirInputs) {
  for (const auto& [spec, block] :
       {std::pair<std::string, std::string>{
            "conv2d_nchw:N=1,C=4,H=6,W=6,K=8,R=3,S=3,pad=1", "Y"},
        {"dense:M=8,N=16,K=8,bias=1,relu=1", "dense"},
        {"matmul:M=8,N=16,K=8", "C"}}) {
    RuleFixture f(spec);
    EXPECT_FALSE(
        ProducerChainOf(f.initial, *f.initial.FindBlock(block)).has_value())
        << spec;
  }
}

TEST(ProducerChainOf, NoneWhenTheProducerReusesNothing) {
  // A row sum (no operand reused across a spatial variable) and its scale
  // read by a product: nothing to tile the producer with.
  RuleFixture f(
      "custom:input in0[8,12]; input in1[8,16]; s[i] += in0[i,k]; "
      "e[j] = s[j] * 0.5; out[n] += e[r] * in1[r,n]"
      "|i=8,k=12,j=8,n=16,r=8");
  const BlockNode* out = f.initial.FindBlock("out");
  ASSERT_NE(out, nullptr);
  EXPECT_FALSE(ProducerChainOf(f.initial, *out).has_value());
}

TEST(ProducerChainOf, NoneWhenTheProducersLanesShareOperands) {
  // Two layers of an MLP: the first product's columns all read a row of in0,
  // so computing a few rows of it at the second's tile would give up its
  // own tiling; its relu stays for inlining.
  RuleFixture f(
      "custom:input in0[8,12]; input in1[12,32]; input in2[32,16]; "
      "h[i,j] += in0[i,k] * in1[k,j]; r[a,b] = max(h[a,b], 0.0); "
      "out[m,n] += r[m,c] * in2[c,n]|i=8,j=32,k=12,a=8,b=32,m=8,n=16,c=32");
  EXPECT_FALSE(
      ProducerChainOf(f.initial, *f.initial.FindBlock("out")).has_value());
  EXPECT_FALSE(
      IsEpilogueBetweenReductions(f.initial, *f.initial.FindBlock("r")));
}

// Sixty element-wise stages, each reading the two before it, then a product:
// the walk up the producers visits each stage once (a walk along every
// path would take 2^60 steps).
TEST(IsEpilogueBetweenReductions, WalksASharedDagOnce) {
  constexpr int kStages = 60;
  std::string spec =
      "custom:input in0[8]; input in1[8,4]; s0[a0] = in0[a0]; "
      "s1[a1] = s0[a1] + in0[a1]; ";
  std::string dims = "|a0=8,a1=8";
  for (int k = 2; k < kStages; ++k) {
    spec += absl::StrCat("s", k, "[a", k, "] = s", k - 1, "[a", k, "] + s",
                         k - 2, "[a", k, "]; ");
    dims += absl::StrCat(",a", k, "=8");
  }
  spec += absl::StrCat("out[j] += s", kStages - 1, "[r] * in1[r,j]");
  RuleFixture f(spec + dims + ",j=4,r=8");
  const BlockNode* last = f.initial.FindBlock(absl::StrCat("s", kStages - 1));
  ASSERT_NE(last, nullptr);
  EXPECT_FALSE(IsEpilogueBetweenReductions(f.initial, *last));
}

TEST(IsEpilogueBetweenReductions, OnlyTheStageTheProjectionReads) {
  RuleFixture f(kEmitted);
  auto is_epilogue = [&](const std::string& name) {
    const BlockNode* block = f.initial.FindBlock(name);
    EXPECT_NE(block, nullptr) << name;
    return block != nullptr && IsEpilogueBetweenReductions(f.initial, *block);
  };
  EXPECT_TRUE(is_epilogue("t2"));   // clip: read by the projection
  EXPECT_FALSE(is_epilogue("t0"));  // bias: read by the clip
  EXPECT_FALSE(is_epilogue("t3"));  // the projection's own bias
  EXPECT_FALSE(is_epilogue("out"));
  EXPECT_FALSE(is_epilogue("t1"));  // a reduction
}

// The branches of the tiling rule whose parallel loop runs over the pixels
// compute d1 and d0 under the projection's tile, with their lanes
// vectorized; the branch parallel over the output channels would compute
// them again in each of its iterations, and leaves them at the root.
TEST(ComputeProducerAtTile, BranchesParallelOverPixelsMoveTheChain) {
  RuleFixture f(kFused, HostTarget(2));
  MultiLevelTiling rule;
  auto branches = rule.Apply(f.Fresh(), "t0", f.context);
  ASSERT_TRUE(branches.ok()) << branches.status();
  const std::vector<TilePlan> plans =
      rule.PlanTilings(f.initial, *f.initial.FindBlock("t0"), f.context.target);
  ASSERT_EQ(branches->size(), plans.size());
  int fused = 0;
  for (size_t b = 0; b < plans.size(); ++b) {
    const Program& p = (*branches)[b]->program();
    const std::string outer =
        f.initial.FindBlock("t0")->iter_vars[plans[b].outer_iter].var->name;
    const bool over_pixels = outer == "vc2" || outer == "vc3";
    const Trace& trace = (*branches)[b]->trace();
    EXPECT_EQ(testing::CountInstructions(trace, "compute_at"),
              over_pixels ? 2 : 0)
        << outer << "\n"
        << trace.ToText();
    for (const char* name : {"d0", "d1"}) {
      const BlockNode* block = p.FindBlock(name);
      ASSERT_NE(block, nullptr) << name << "\n" << PrintProgram(p);
      EXPECT_EQ(AloneAtRoot(p, *block), !over_pixels)
          << name << ", parallel over " << outer << "\n"
          << PrintProgram(p);
      if (!over_pixels) continue;
      EXPECT_TRUE(IsPlaced(*block)) << name;
      ASSERT_FALSE(p.LoopsAbove(block).empty());
      EXPECT_EQ(p.LoopsAbove(block).back()->for_kind, ForKind::kVectorized)
          << name << "\n"
          << PrintProgram(p);
    }
    if (!over_pixels) continue;
    ++fused;
    // d1's positions are unrolled inside the window's taps.
    const std::vector<ForNode*> d1_loops = p.LoopsAbove(p.FindBlock("d1"));
    ASSERT_GE(d1_loops.size(), 2u);
    EXPECT_EQ(d1_loops[d1_loops.size() - 2]->for_kind, ForKind::kUnrolled);
    EXPECT_EQ(d1_loops[d1_loops.size() - 2]->extent, kFusedPositions);
  }
  EXPECT_EQ(fused, 2);
}

TEST(ComputeProducerAtTile, SampledPointsMatchTheReference) {
  RuleFixture f(kFused, HostTarget(2));
  MultiLevelTiling rule;
  auto branches = rule.Apply(f.Fresh(), "t0", f.context);
  ASSERT_TRUE(branches.ok()) << branches.status();
  for (size_t s = 0; s < branches->size(); ++s) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      absl::Status st = CheckSpacePoint(f.workload, (*branches)[s]->trace(),
                                        f.context.target, 100 * s + seed);
      ASSERT_TRUE(st.ok()) << "branch " << s << ", seed " << seed << ": " << st;
    }
  }
}

// With every CPU rule: the bias folds into the clip, which stays a block
// (not inlined into the projection) and, in the spaces parallel over the
// pixels, moves with the depthwise layer under the projection's tile;
// sampled points of every space are correct.
TEST(ComputeProducerAtTile, DesignSpacesOfTheEmittedBlockFuseIt) {
  RuleFixture f(kEmitted, HostTarget(2));
  absl::StatusOr<std::vector<Trace>> spaces =
      GenerateDesignSpaces(f.workload, f.context.target, DefaultCpuRules());
  ASSERT_TRUE(spaces.ok()) << spaces.status();
  ASSERT_FALSE(spaces->empty());
  int fused = 0;
  for (size_t s = 0; s < spaces->size(); ++s) {
    absl::StatusOr<std::unique_ptr<TracedSchedule>> point =
        ReplayTrace((*spaces)[s], f.initial, Decisions{}, s + 1);
    ASSERT_TRUE(point.ok()) << point.status();
    const Program& p = (*point)->program();
    EXPECT_EQ(p.FindBlock("t0"), nullptr) << PrintProgram(p);
    const BlockNode* t1 = p.FindBlock("t1");
    const BlockNode* t2 = p.FindBlock("t2");
    if (t1 != nullptr && t2 != nullptr && !AloneAtRoot(p, *t1) &&
        !AloneAtRoot(p, *t2) && IsPlaced(*t1) && IsPlaced(*t2)) {
      ++fused;
    }
    for (uint64_t seed = 1; seed <= 2; ++seed) {
      absl::Status st = CheckSpacePoint(f.workload, (*spaces)[s],
                                        f.context.target, 10 * s + seed);
      ASSERT_TRUE(st.ok()) << "space " << s << ", seed " << seed << ": " << st;
    }
  }
  EXPECT_GE(fused, 2) << spaces->size() << " spaces";
}

// GPUs have no step computing a producer at a tile: the epilogue is inlined
// there, as before, rather than left a kernel of its own.
TEST(ComputeProducerAtTile, GpuSpacesInlineTheEpilogue) {
  RuleFixture f(kEmitted, cuda::ArchTarget("sm_80").value());
  absl::StatusOr<std::vector<Trace>> spaces =
      GenerateDesignSpaces(f.workload, f.context.target, DefaultGpuRules());
  ASSERT_TRUE(spaces.ok()) << spaces.status();
  ASSERT_FALSE(spaces->empty());
  for (const Trace& space : *spaces) {
    absl::StatusOr<std::unique_ptr<TracedSchedule>> point =
        ReplayTrace(space, f.initial, Decisions{}, 1);
    ASSERT_TRUE(point.ok()) << point.status();
    EXPECT_EQ((*point)->program().FindBlock("t2"), nullptr)
        << PrintProgram((*point)->program());
  }
}

}  // namespace
}  // namespace lathe::tuner

// Tests of design space generation (tuner/space/design_space.h).
//
// 1. The generator: blocks visited last to first, rule after rule, every
//    branch continuing, identical spaces merged, errors naming the rule; and
//    DefaultCpuRules: the rules keep out of each other's way.
// 2. The property that makes the spaces usable by a search: for every
//    operator (small and odd shapes), every sampled point of every design
//    space of DefaultCpuRules replays, lowers, compiles and computes what the
//    reference computes (at 2 threads, so parallel loops run in the pool);
//    at the shapes of real layers, every sampled point replays and lowers.
#include "tuner/space/design_space.h"

#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <map>

#include "compiler/codegen/cpu_target.h"
#include "compiler/ir/printer.h"
#include "compiler/ir/structural_equal.h"
#include "tests/tuner/space/space_test_util.h"
#include "tuner/space/block_nest.h"

namespace lathe::tuner {
namespace {

using testing::CheckSpacePoint;
using testing::CountInstructions;

// Annotates each block it visits, with `branches` branches per block
// (annotation values 0 .. branches - 1), or fails on `fail_on`.
class MarkRule : public ScheduleRule {
 public:
  MarkRule(std::string key, int branches, std::string fail_on = "")
      : key_(std::move(key)),
        branches_(branches),
        fail_on_(std::move(fail_on)) {}
  std::string Name() const override { return "mark_" + key_; }
  absl::StatusOr<std::vector<std::unique_ptr<TracedSchedule>>> Apply(
      std::unique_ptr<TracedSchedule> schedule, const std::string& block,
      const SpaceContext& context) const override {
    if (block == fail_on_) return absl::InternalError("told to fail");
    std::vector<std::unique_ptr<TracedSchedule>> out;
    for (int i = 1; i < branches_; ++i) {
      std::unique_ptr<TracedSchedule> fork =
          ForkSchedule(*schedule, *context.initial).value();
      EXPECT_TRUE(
          fork->AnnotateBlock(fork->GetBlock(block).value(), key_, int64_t{i})
              .ok());
      out.push_back(std::move(fork));
    }
    EXPECT_TRUE(
        schedule
            ->AnnotateBlock(schedule->GetBlock(block).value(), key_, int64_t{0})
            .ok());
    out.insert(out.begin(), std::move(schedule));
    return out;
  }

 private:
  std::string key_;
  int branches_;
  std::string fail_on_;
};

// Two branches that record the same instructions (the same space).
class TwinRule : public ScheduleRule {
 public:
  std::string Name() const override { return "twin"; }
  absl::StatusOr<std::vector<std::unique_ptr<TracedSchedule>>> Apply(
      std::unique_ptr<TracedSchedule> schedule, const std::string& /*block*/,
      const SpaceContext& context) const override {
    std::vector<std::unique_ptr<TracedSchedule>> out;
    out.push_back(ForkSchedule(*schedule, *context.initial).value());
    out.push_back(std::move(schedule));
    return out;
  }
};

// The blocks named by the annotate_block instructions, in trace order.
std::vector<std::string> AnnotatedBlocks(const Trace& trace,
                                         const Program& initial) {
  auto sch = ReplayTrace(trace, initial).value();
  std::vector<std::string> names;
  for (const Instruction& inst : trace.instructions) {
    if (inst.kind != "annotate_block") continue;
    names.push_back(sch->BlockName(BlockRV{inst.inputs[0].value}).value());
  }
  return names;
}

// softmax:M=2,N=4, three blocks: Y, row_sum, row_max.
Workload Softmax() { return ParseWorkloadSpec("softmax:M=2,N=4").value(); }

// Its design spaces under MarkRule "a" with `a` branches, then MarkRule "b"
// with `b` branches.
absl::StatusOr<std::vector<Trace>> MarkedSoftmaxSpaces(int a, int b) {
  std::vector<std::unique_ptr<ScheduleRule>> rules;
  rules.push_back(std::make_unique<MarkRule>("a", a));
  rules.push_back(std::make_unique<MarkRule>("b", b));
  return GenerateDesignSpaces(Softmax(), HostTarget(1), rules);
}

TEST(GenerateDesignSpaces, VisitsBlocksLastToFirstRuleAfterRule) {
  Workload w = Softmax();
  auto spaces = MarkedSoftmaxSpaces(1, 1);
  ASSERT_TRUE(spaces.ok()) << spaces.status();
  ASSERT_EQ(spaces->size(), 1u);
  EXPECT_EQ((*spaces)[0].workload, w.CanonicalForm());
  EXPECT_EQ(AnnotatedBlocks((*spaces)[0], w.InitialProgram().value()),
            (std::vector<std::string>{"Y", "row_sum", "row_max", "Y", "row_sum",
                                      "row_max"}));
}

TEST(GenerateDesignSpaces, EveryBranchContinues) {
  Workload w = Softmax();
  auto spaces = MarkedSoftmaxSpaces(2, 1);
  ASSERT_TRUE(spaces.ok()) << spaces.status();
  ASSERT_EQ(spaces->size(), 8u);  // 2 x 2 x 2
  for (const Trace& t : *spaces)
    EXPECT_EQ(CountInstructions(t, "annotate_block"), 6);
  // Distinct spaces, first branches first: the first is all zeros.
  auto first = ReplayTrace((*spaces)[0], w.InitialProgram().value()).value();
  for (const BlockNode* b : first->program().Blocks()) {
    EXPECT_EQ(std::get<int64_t>(b->annotations.at("a")), 0);
  }
}

TEST(GenerateDesignSpaces, BranchesStopMultiplyingAtTheBound) {
  // 3 blocks, 8 branches each under rule a, then 2 under rule b: 8^3 * 2^3
  // spaces unbounded; the first kMaxDesignSpaces come out, every block of
  // each visited by both rules.
  Workload w = Softmax();
  auto spaces = MarkedSoftmaxSpaces(8, 2);
  ASSERT_TRUE(spaces.ok()) << spaces.status();
  ASSERT_EQ(spaces->size(), static_cast<size_t>(kMaxDesignSpaces));
  for (const Trace& t : *spaces)
    EXPECT_EQ(CountInstructions(t, "annotate_block"), 6);
  auto first = ReplayTrace((*spaces)[0], w.InitialProgram().value()).value();
  for (const BlockNode* b : first->program().Blocks()) {
    EXPECT_EQ(std::get<int64_t>(b->annotations.at("a")), 0);
    EXPECT_EQ(std::get<int64_t>(b->annotations.at("b")), 0);
  }
}

TEST(DefaultCpuRules, AChainOfReductionsGetsBoundedSpacesAtOnce) {
  // Five chained reductions (a Winograd convolution's transforms and
  // products): unbounded, the rules' branches multiplied into thousands of
  // schedules before the first trial.
  Workload w = ParseWorkloadSpec(
                   "custom:input in0[8,12,12]; input U[8,8,4,4] const; "
                   "input BT[4,4] const; input AT[2,4] const; "
                   "T1[c,p,q,e,b] += BT[e,a] * in0?[c,2*p+a-1,2*q+b-1]; "
                   "V[c,p,q,e,n] += T1[c,p,q,e,b] * BT[n,b]; "
                   "M[k,p,q,e,n] += U[k,c,e,n] * V[c,p,q,e,n]; "
                   "Y1[k,p,q,i,n] += AT[i,e] * M[k,p,q,e,n]; "
                   "out[k,p,i,q,j] += Y1[k,p,q,i,n] * AT[j,n]"
                   "|c=8,p=6,q=6,e=4,b=4,a=4,n=4,k=8,i=2,j=2")
                   .value();
  auto spaces = GenerateDesignSpaces(w, HostTarget(1), DefaultCpuRules());
  ASSERT_TRUE(spaces.ok()) << spaces.status();
  EXPECT_GE(spaces->size(), 2u);
  EXPECT_LE(spaces->size(), static_cast<size_t>(kMaxDesignSpaces));
  // The first and the last space still sample programs that compute what
  // the reference does.
  for (const Trace* space : {&spaces->front(), &spaces->back()}) {
    absl::Status checked = CheckSpacePoint(w, *space, HostTarget(1), 7);
    EXPECT_TRUE(checked.ok()) << checked;
  }
}

TEST(GenerateDesignSpaces, MergesIdenticalSpaces) {
  Workload w = Softmax();
  std::vector<std::unique_ptr<ScheduleRule>> rules;
  rules.push_back(std::make_unique<TwinRule>());
  rules.push_back(std::make_unique<MarkRule>("b", 1));
  auto spaces = GenerateDesignSpaces(w, HostTarget(1), rules);
  ASSERT_TRUE(spaces.ok()) << spaces.status();
  EXPECT_EQ(spaces->size(), 1u);
}

TEST(GenerateDesignSpaces, ARuleErrorNamesTheRuleAndTheBlock) {
  Workload w = Softmax();
  std::vector<std::unique_ptr<ScheduleRule>> rules;
  rules.push_back(std::make_unique<MarkRule>("a", 1, "row_sum"));
  auto spaces = GenerateDesignSpaces(w, HostTarget(1), rules);
  ASSERT_FALSE(spaces.ok());
  EXPECT_EQ(spaces.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(spaces.status().message().find("mark_a"), std::string::npos)
      << spaces.status();
  EXPECT_NE(spaces.status().message().find("\"row_sum\""), std::string::npos);
  EXPECT_NE(spaces.status().message().find("told to fail"), std::string::npos);
}

TEST(GenerateDesignSpaces, NoRulesGiveTheInitialProgram) {
  Workload w = ParseWorkloadSpec("matmul:M=4,N=4,K=4").value();
  auto spaces = GenerateDesignSpaces(w, HostTarget(1), {});
  ASSERT_TRUE(spaces.ok());
  ASSERT_EQ(spaces->size(), 1u);
  EXPECT_TRUE((*spaces)[0].instructions.empty());
}

TEST(GenerateDesignSpaces, IsDeterministic) {
  Workload w = ParseWorkloadSpec("softmax:M=3,N=100").value();
  auto a = GenerateDesignSpaces(w, HostTarget(2), DefaultCpuRules());
  auto b = GenerateDesignSpaces(w, HostTarget(2), DefaultCpuRules());
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->size(), b->size());
  for (size_t i = 0; i < a->size(); ++i) EXPECT_EQ((*a)[i], (*b)[i]);
}

TEST(DefaultCpuRules, TiledBlocksAreLeftToTheTilingRule) {
  // The tiling rule runs the outer tile in parallel; the rules after it must
  // not add a second parallel loop (refused: one level of parallelism) nor
  // re-tile the block.
  Workload w = ParseWorkloadSpec("matmul:M=64,N=64,K=64").value();
  auto spaces = GenerateDesignSpaces(w, HostTarget(2), DefaultCpuRules());
  ASSERT_TRUE(spaces.ok()) << spaces.status();
  const Program initial = w.InitialProgram().value();
  for (const Trace& space : *spaces) {
    EXPECT_EQ(CountInstructions(space, "parallel"), 1) << space.ToText();
    EXPECT_EQ(CountInstructions(space, "rfactor"), 0);
    auto sampled = ReplayTrace(space, initial, Decisions{}, 3).value();
    EXPECT_TRUE(IsTiled(*sampled->program().FindBlock("C")));
    EXPECT_EQ(
        testing::LoopsOfKind(sampled->program(), ForKind::kParallel).size(),
        1u);
  }
}

TEST(DefaultCpuRules, ConvKeepsItsPaddingAndSearchesWhereItGoes) {
  Workload w =
      ParseWorkloadSpec("conv2d_nchw:N=1,C=3,H=9,W=9,K=4,R=3,S=3,pad=1")
          .value();
  auto spaces = GenerateDesignSpaces(w, HostTarget(2), DefaultCpuRules());
  ASSERT_TRUE(spaces.ok()) << spaces.status();
  for (const Trace& space : *spaces) {
    EXPECT_EQ(CountInstructions(space, "compute_inline"), 0) << space.ToText();
    EXPECT_EQ(CountInstructions(space, "sample_compute_location"), 1)
        << space.ToText();
  }
}

TEST(DefaultCpuRules, SoftmaxGetsRFactorSpacesAndEveryBlockUsesTheThreads) {
  Workload w = ParseWorkloadSpec("softmax:M=3,N=100").value();
  auto spaces = GenerateDesignSpaces(w, HostTarget(2), DefaultCpuRules());
  ASSERT_TRUE(spaces.ok()) << spaces.status();
  int with_rfactor = 0;
  for (const Trace& space : *spaces)
    with_rfactor += CountInstructions(space, "rfactor") > 0;
  EXPECT_GE(with_rfactor, 1);
  EXPECT_LT(with_rfactor,
            static_cast<int>(spaces->size()));  // the unchanged branch too
  // The element-wise output block: parallel rows, vectorized columns.
  const Program initial = w.InitialProgram().value();
  auto sampled = ReplayTrace(spaces->back(), initial, Decisions{}, 5).value();
  bool parallel = false, vector = false;
  for (const ForNode* loop :
       sampled->program().LoopsAbove(sampled->program().FindBlock("Y"))) {
    parallel |= loop->for_kind == ForKind::kParallel;
    vector |= loop->for_kind == ForKind::kVectorized;
  }
  EXPECT_TRUE(parallel && vector) << PrintProgram(sampled->program());
}

TEST(DefaultCpuRules, AModelSoftmaxGetsSpacesThatComputeExpOnceAndRowVectors) {
  // Softmax as an encoder's kernel has it, 512 rows of 128: enough rows for
  // the threads, so only the row-reduction rfactor applies; exp(x - max)
  // has two readers, so a space keeps it and one inlines it.
  Workload w = ParseWorkloadSpec(
                   "custom:input X[512,128]; M[i] max= X[i,k]; "
                   "E[i,j] = exp(X[i,j] - M[i]); S[i] += E[i,k]; "
                   "Y[i,j] = E[i,j] / S[i]|i=512,j=128,k=128")
                   .value();
  auto spaces = GenerateDesignSpaces(w, HostTarget(2), DefaultCpuRules());
  ASSERT_TRUE(spaces.ok()) << spaces.status();
  const Program initial = w.InitialProgram().value();
  int kept_with_both_rfactors = 0, inlined = 0;
  for (const Trace& space : *spaces) {
    auto sampled = ReplayTrace(space, initial, Decisions{}, 1).value();
    const bool kept = sampled->program().FindBlock("E") != nullptr;
    inlined += !kept;
    kept_with_both_rfactors += kept && CountInstructions(space, "rfactor") == 2;
  }
  EXPECT_GE(kept_with_both_rfactors, 1);
  EXPECT_GE(inlined, 1);
}

// ---- The property ---------------------------------------------------------

constexpr int kPointsPerWorkload = 20;

const char* const kSpecs[] = {
    "matmul:M=8,N=8,K=8",
    "matmul:M=7,N=5,K=13",
    "matmul:M=2,N=3,K=200",  // tiny output, long reduction: rfactor branches
    "dense:M=5,N=7,K=9,bias=1,relu=1",
    "batch_matmul:B=2,M=3,N=5,K=7",
    "conv2d_nchw:N=1,C=3,H=9,W=9,K=4,R=3,S=3,stride=2,pad=1",
    "conv2d_nhwc:N=1,C=4,H=6,W=6,K=8,R=3,S=3,pad=1",
    "max_pool2d:N=1,C=2,H=7,W=7,R=3,S=3,stride=2,pad=1",
    "avg_pool2d:N=1,C=3,H=5,W=5,R=5,S=5",  // to 1x1
    "softmax:M=3,N=100",
    "softmax:M=8,N=8",
    "relu:M=5,N=37",
    "add:M=4,N=16",
    "custom:T[i,k] = exp(A[i,k]); C[i,j] += T[i,k] * B[k,j]; D[i,j] = "
    "max(C[i,j], 0)"
    "|i=5,j=6,k=7",
    "custom:y[i] += A[i,k] * x[k]|i=3,k=300",
    // Softmax as a model's kernel has it: a shared exp stage, row
    // reductions along the contiguous axis (rows of 40: tails).
    "custom:input X[6,40]; M[i] max= X[i,k]; E[i,j] = exp(X[i,j] - M[i]); "
    "S[i] += E[i,k]; Y[i,j] = E[i,j] / S[i]|i=6,j=40,k=40",
    // A padding stage from padded reads of a declared input, an epilogue.
    "custom:input X[1,3,7,7]; input W[4,3,3,3]; "
    "Y[n,k,p,q] += X?[n,c,p+r-1,q+s-1] * W[k,c,r,s]; "
    "Z[n,k,p,q] = max(Y[n,k,p,q], 0)|c=3,k=4,n=1,p=7,q=7,r=3,s=3",
};

class DesignSpaceProperty : public ::testing::TestWithParam<const char*> {};

TEST_P(DesignSpaceProperty, EverySampledPointBuildsAndMatchesTheReference) {
  const std::string spec = GetParam();
  absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec);
  ASSERT_TRUE(workload.ok()) << workload.status();
  const Target target = HostTarget(2);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<Trace>> spaces =
      GenerateDesignSpaces(*workload, target, DefaultCpuRules());
  ASSERT_TRUE(spaces.ok()) << spaces.status();
  ASSERT_FALSE(spaces->empty());
  const double generate_ms = std::chrono::duration<double, std::milli>(
                                 std::chrono::steady_clock::now() - start)
                                 .count();

  const Program initial = workload->InitialProgram().value();
  for (const Trace& space : *spaces) {
    // Each space is itself a point (its own decisions) and survives JSON.
    absl::StatusOr<Trace> parsed = Trace::FromJson(space.ToJson());
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    ASSERT_EQ(*parsed, space);
    auto own = ReplayTrace(space, initial);
    ASSERT_TRUE(own.ok()) << own.status() << "\n" << space.ToText();
  }
  // Points drawn round-robin over the spaces, a fresh seed each.
  const int points =
      std::max<int>(kPointsPerWorkload, 2 * static_cast<int>(spaces->size()));
  for (int i = 0; i < points; ++i) {
    const Trace& space = (*spaces)[i % spaces->size()];
    const uint64_t seed = StableHash64(spec) + i;
    absl::Status checked = CheckSpacePoint(*workload, space, target, seed);
    ASSERT_TRUE(checked.ok())
        << spec << ", space " << i % spaces->size() << ": " << checked;
  }
  std::map<std::string, int> kinds;
  for (const Trace& space : *spaces) {
    for (const Instruction& inst : space.instructions) ++kinds[inst.kind];
  }
  std::string summary;
  for (const auto& [kind, n] : kinds)
    absl::StrAppend(&summary, kind, "=", n, " ");
  std::cout << spec << ": " << spaces->size() << " spaces ("
            << static_cast<int>(generate_ms) << " ms), " << points
            << " points checked; " << summary << "\n";
}

INSTANTIATE_TEST_SUITE_P(
    AllOperators, DesignSpaceProperty, ::testing::ValuesIn(kSpecs),
    [](const ::testing::TestParamInfo<const char*>& info) {
      std::string name;
      for (const char* c = info.param; *c && name.size() < 60; ++c) {
        name += std::isalnum(static_cast<unsigned char>(*c)) ? *c : '_';
      }
      return absl::StrCat(info.index, "_", name);
    });

// Shapes of real layers: too slow to compile and run by the dozen here, but
// every sampled point must still replay and lower (sample sizes, divisors
// and packing panels behave differently at these extents).
constexpr int kReplayPointsPerWorkload = 6;

const char* const kRealShapeSpecs[] = {
    "matmul:M=512,N=512,K=512",
    "dense:M=128,N=256,K=512,bias=1,relu=1",
    "conv2d_nchw:N=1,C=64,H=28,W=28,K=64,R=3,S=3,pad=1",
    "softmax:M=64,N=1000",
    "avg_pool2d:N=1,C=64,H=7,W=7,R=7,S=7",
};

class DesignSpaceReplayProperty : public ::testing::TestWithParam<const char*> {
};

TEST_P(DesignSpaceReplayProperty, EverySampledPointReplaysAndLowers) {
  const std::string spec = GetParam();
  const Workload workload = ParseWorkloadSpec(spec).value();
  absl::StatusOr<std::vector<Trace>> spaces =
      GenerateDesignSpaces(workload, HostTarget(2), DefaultCpuRules());
  ASSERT_TRUE(spaces.ok()) << spaces.status();
  const Program initial = workload.InitialProgram().value();
  for (int i = 0; i < kReplayPointsPerWorkload; ++i) {
    const Trace& space = (*spaces)[i % spaces->size()];
    const uint64_t seed = StableHash64(spec) + i;
    auto sampled = ReplayTrace(space, initial, Decisions{}, seed);
    ASSERT_TRUE(sampled.ok())
        << spec << ", space " << i % spaces->size() << ", seed " << seed << ": "
        << sampled.status() << "\nspace:\n"
        << space.ToText();
    absl::StatusOr<Program> lowered = LowerProgram((*sampled)->program());
    ASSERT_TRUE(lowered.ok()) << lowered.status() << "\n"
                              << (*sampled)->trace().ToText();
  }
}

INSTANTIATE_TEST_SUITE_P(
    RealShapes, DesignSpaceReplayProperty, ::testing::ValuesIn(kRealShapeSpecs),
    [](const ::testing::TestParamInfo<const char*>& info) {
      std::string name;
      for (const char* c = info.param; *c && name.size() < 60; ++c) {
        name += std::isalnum(static_cast<unsigned char>(*c)) ? *c : '_';
      }
      return absl::StrCat(info.index, "_", name);
    });

}  // namespace
}  // namespace lathe::tuner

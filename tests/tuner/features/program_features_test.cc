// Tests of the program vector (tuner/features/program_features.h): its
// shape, its aggregation, determinism, finiteness, cost, and that it tells
// schedules apart.
#include "tuner/features/program_features.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>

#include "compiler/schedule/schedule.h"
#include "tests/tuner/features/features_test_util.h"
#include "tuner/features/allocation_features.h"
#include "tuner/features/arithmetic_features.h"
#include "tuner/features/buffer_access_features.h"
#include "tuner/features/loop_features.h"
#include "tuner/features/program_level_features.h"
#include "tuner/features/reuse_features.h"

namespace lathe::tuner {
namespace {

using testing::DefaultLowered;
using testing::FeatureOf;
using testing::InitialProgramOf;
using testing::Lower;

Target TwoThreads() {
  Target t;
  t.num_threads = 2;
  return t;
}

// The names of the features on which two vectors differ.
std::vector<std::string> Differences(const std::vector<float>& a,
                                     const std::vector<float>& b) {
  std::vector<std::string> out;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) out.push_back(FeatureNames()[i]);
  }
  return out;
}

bool AnyDiffersWithPrefix(const std::vector<std::string>& diff,
                          const std::string& prefix) {
  return std::any_of(diff.begin(), diff.end(), [&](const std::string& n) {
    return n.rfind(prefix, 0) == 0;
  });
}

TEST(ProgramFeatures, NamesAreUniqueAndAsManyAsValues) {
  const std::vector<std::string>& names = FeatureNames();
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(),
            names.size());
  EXPECT_GE(names.size(), 150u);
  std::vector<float> f =
      ExtractProgramFeatures(testing::MatmulNest(8).program, TwoThreads());
  EXPECT_EQ(f.size(), names.size());
  EXPECT_EQ(&FeatureNames(), &names);  // built once
}

// Each group writes exactly as many values as it names: no more (the next
// group's slot) and no fewer (a stale value).
TEST(ProgramFeatures, EveryGroupWritesOneValuePerName) {
  Program lowered = testing::TraceLowered("matmul:M=1024,N=1024,K=1024",
                                          "bench/traces/matmul_1024.json");
  ProgramWalk walk = WalkProgram(lowered);
  const StoreContext& store = walk.stores[1];
  const double nan = std::nan("");
  auto check = [](const auto& values, size_t n, const char* group) {
    for (size_t i = 0; i < n; ++i) {
      EXPECT_FALSE(std::isnan(values[i])) << group << " leaves value " << i;
    }
    EXPECT_TRUE(std::isnan(values[n])) << group << " writes past its names";
  };
  auto per_store = [&](const std::vector<StoreFeatureSpec>& specs,
                       const auto& extract, const char* group) {
    std::vector<double> row(specs.size() + 1, nan);
    extract(row.data());
    check(row, specs.size(), group);
  };
  per_store(
      ArithmeticFeatureSpecs(),
      [&](double* out) { ExtractArithmeticFeatures(store, out); }, "arith");
  per_store(
      LoopFeatureSpecs(), [&](double* out) { ExtractLoopFeatures(store, out); },
      "loop");
  per_store(
      BufferAccessFeatureSpecs(),
      [&](double* out) { ExtractBufferAccessFeatures(store, out); }, "buf");
  per_store(
      ReuseFeatureSpecs(),
      [&](double* out) { ExtractReuseFeatures(store, out); }, "reuse");
  per_store(
      AllocationStoreFeatureSpecs(),
      [&](double* out) { ExtractAllocationStoreFeatures(walk, store, out); },
      "alloc");
  std::vector<float> alloc(AllocationProgramFeatureNames().size() + 1, nan);
  ExtractAllocationProgramFeatures(walk, TwoThreads(), alloc.data());
  check(alloc, AllocationProgramFeatureNames().size(), "alloc (program)");
  std::vector<float> prog(ProgramLevelFeatureNames().size() + 1, nan);
  ExtractProgramLevelFeatures(lowered, walk, TwoThreads(), prog.data());
  check(prog, ProgramLevelFeatureNames().size(), "program level");
}

TEST(ProgramFeatures, AggregatesStoresBySumMaxAndExecutionWeightedMean) {
  // Unscheduled matmul 16^3: the init (256 executions, depth 3, guarded)
  // and the update (4096 executions, depth 3).
  Program lowered = Lower(InitialProgramOf("matmul:M=16,N=16,K=16"));
  std::vector<float> f = ExtractProgramFeatures(lowered, TwoThreads());
  EXPECT_FLOAT_EQ(FeatureOf(f, "arith.float_ops.sum"), Log2p1(8192));
  EXPECT_FLOAT_EQ(FeatureOf(f, "arith.float_ops.max"), Log2p1(8192));
  EXPECT_FLOAT_EQ(FeatureOf(f, "loop.executions.sum"), Log2p1(4096 + 256));
  EXPECT_FLOAT_EQ(FeatureOf(f, "loop.executions.max"), Log2p1(4096));
  EXPECT_FLOAT_EQ(FeatureOf(f, "loop.depth.mean"), Log2p1(3));
  // Fractions are weighted means: the guarded init runs 256 of 4352 times.
  const double share = 256.0 / (4096 + 256);
  EXPECT_FLOAT_EQ(FeatureOf(f, "loop.guard_fraction.mean"),
                  share / 16 + (1 - share));
  EXPECT_FLOAT_EQ(FeatureOf(f, "loop.guard_fraction.max"), 1);
  EXPECT_FLOAT_EQ(FeatureOf(f, "loop.guards.max"), Log2p1(1));
  EXPECT_FLOAT_EQ(FeatureOf(f, "loop.guards.mean"), Log2p1(share));
}

TEST(ProgramFeatures, IsDeterministic) {
  Program lowered = DefaultLowered(
      "conv2d_nchw:N=1,C=16,H=14,W=14,K=32,R=3,S=3,stride=1,pad=1");
  std::vector<float> a = ExtractProgramFeatures(lowered, TwoThreads());
  std::vector<float> b = ExtractProgramFeatures(lowered, TwoThreads());
  Program copy = lowered;  // deep copy: new nodes, same structure
  std::vector<float> c = ExtractProgramFeatures(copy, TwoThreads());
  Program again = DefaultLowered(
      "conv2d_nchw:N=1,C=16,H=14,W=14,K=32,R=3,S=3,stride=1,pad=1");
  std::vector<float> d = ExtractProgramFeatures(again, TwoThreads());
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, c);
  EXPECT_EQ(a, d);
}

TEST(ProgramFeatures, AreFiniteAndNonNegativeOnEveryOperator) {
  const std::vector<std::string> specs = {
      "matmul:M=1024,N=1024,K=1024",
      "matmul:M=100,N=37,K=19",
      "batch_matmul:B=4,M=64,N=64,K=32",
      "dense:M=64,N=128,K=256,bias=1,relu=1",
      "conv2d_nchw:N=1,C=128,H=28,W=28,K=128,R=3,S=3,stride=1,pad=1",
      "conv2d_nhwc:N=1,C=32,H=17,W=17,K=64,R=3,S=3,stride=2,pad=1",
      "conv2d_nchw:N=1,C=32,H=14,W=14,K=32,R=3,S=3,pad=1,groups=32",
      "max_pool2d:N=1,C=16,H=15,W=15,R=3,S=3,stride=2,pad=1",
      "avg_pool2d:N=1,C=16,H=16,W=16,R=2,S=2,stride=2",
      "softmax:M=64,N=1000",
      "add:M=7,N=3",
      "relu:M=1,N=1",
  };
  for (const std::string& spec : specs) {
    for (bool scheduled : {false, true}) {
      Program lowered =
          scheduled ? DefaultLowered(spec) : Lower(InitialProgramOf(spec));
      std::vector<float> f = ExtractProgramFeatures(lowered, TwoThreads());
      ASSERT_EQ(f.size(), FeatureNames().size());
      for (size_t i = 0; i < f.size(); ++i) {
        EXPECT_TRUE(std::isfinite(f[i]) && f[i] >= 0)
            << spec << (scheduled ? " (default)" : "") << ": "
            << FeatureNames()[i] << " = " << f[i];
      }
    }
  }
}

TEST(ProgramFeatures, EmptyProgramIsAllZeroButTheTarget) {
  Program p = testing::MakeProgram({}, {}, MakeSeq({}));
  std::vector<float> f = ExtractProgramFeatures(p, TwoThreads());
  for (size_t i = 0; i < f.size(); ++i) {
    const std::string& name = FeatureNames()[i];
    if (name.rfind("target.", 0) == 0) continue;
    EXPECT_EQ(f[i], 0) << name;
  }
}

// Matmul 64^3 under schedules that add one decision at a time.
struct Variants {
  static constexpr char kSpec[] = "matmul:M=64,N=64,K=64";
  enum Step { kNone, kTiled, kVectorized, kParallel, kUnrolled, kPacked };

  static Program Make(Step step) {
    ConcreteSchedule sch(InitialProgramOf(kSpec));
    if (step == kNone) return Lower(sch.program());
    BlockRV c = sch.GetBlock("C").value();
    std::vector<LoopRV> loops = sch.GetLoops(c).value();
    std::vector<LoopRV> i =
        sch.Split(loops[0], {Factor(), Factor(int64_t{4})}).value();
    std::vector<LoopRV> j =
        sch.Split(loops[1], {Factor(), Factor(int64_t{16})}).value();
    EXPECT_TRUE(sch.Reorder({i[0], j[0], loops[2], i[1], j[1]}).ok());
    if (step >= kVectorized) {
      EXPECT_TRUE(sch.Vectorize(j[1]).ok());
    }
    if (step >= kParallel) {
      EXPECT_TRUE(sch.Parallel(i[0]).ok());
    }
    if (step >= kUnrolled) {
      EXPECT_TRUE(sch.Unroll(i[1]).ok());
    }
    if (step >= kPacked) {
      // B[K, N] packed as [N / 16][K][16] panels.
      absl::StatusOr<BlockRV> cache =
          sch.CacheRead(c, 1, "global", Layout{{1, 16}, {1, 0, 2}});
      EXPECT_TRUE(cache.ok()) << cache.status();
    }
    return Lower(sch.program());
  }
};

TEST(ProgramFeatures, TellApartEachScheduleDecision) {
  const Target target = TwoThreads();
  std::vector<std::vector<float>> f;
  std::vector<std::string> text;
  for (int s = Variants::kNone; s <= Variants::kPacked; ++s) {
    Program lowered = Variants::Make(static_cast<Variants::Step>(s));
    text.push_back(PrintProgram(lowered));
    f.push_back(ExtractProgramFeatures(lowered, target));
  }
  std::vector<std::string> tiled = Differences(f[0], f[1]);
  EXPECT_TRUE(AnyDiffersWithPrefix(tiled, "reuse.")) << text[1];
  EXPECT_TRUE(AnyDiffersWithPrefix(tiled, "loop.depth")) << text[1];
  std::vector<std::string> vectorized = Differences(f[1], f[2]);
  EXPECT_NE(FeatureOf(f[1], "loop.vector_length.max"),
            FeatureOf(f[2], "loop.vector_length.max"));
  EXPECT_TRUE(AnyDiffersWithPrefix(vectorized, "vector.")) << text[2];
  EXPECT_NE(FeatureOf(f[2], "loop.parallel_product.max"),
            FeatureOf(f[3], "loop.parallel_product.max"));
  EXPECT_TRUE(AnyDiffersWithPrefix(Differences(f[2], f[3]), "parallel."))
      << text[3];
  EXPECT_NE(FeatureOf(f[3], "loop.unroll_product.max"),
            FeatureOf(f[4], "loop.unroll_product.max"));
  std::vector<std::string> packed = Differences(f[4], f[5]);
  EXPECT_NE(FeatureOf(f[4], "alloc.count"), FeatureOf(f[5], "alloc.count"))
      << text[5];
  EXPECT_TRUE(AnyDiffersWithPrefix(packed, "buf.")) << text[5];
  EXPECT_TRUE(AnyDiffersWithPrefix(packed, "prog.stores")) << text[5];
}

TEST(ProgramFeatures, TellTheDefaultScheduleFromTheTunedOneAt1024) {
  const std::string spec = "matmul:M=1024,N=1024,K=1024";
  std::vector<float> by_default =
      ExtractProgramFeatures(DefaultLowered(spec), TwoThreads());
  std::vector<float> tuned = ExtractProgramFeatures(
      testing::TraceLowered(spec, "bench/traces/matmul_1024.json"),
      TwoThreads());
  std::vector<std::string> diff = Differences(by_default, tuned);
  // The tuned schedule packs B per column panel (an allocation and a store
  // more) and uses 32-wide vectors.
  EXPECT_TRUE(AnyDiffersWithPrefix(diff, "alloc.")) << diff.size();
  EXPECT_TRUE(AnyDiffersWithPrefix(diff, "loop.vector_length")) << diff.size();
  EXPECT_TRUE(AnyDiffersWithPrefix(diff, "reuse.")) << diff.size();
}

TEST(ProgramFeatures,
     SameScheduleOnAnotherTargetDiffersOnlyInTargetRelativeFeatures) {
  Program lowered = DefaultLowered("matmul:M=64,N=64,K=64");
  Target sixteen;
  sixteen.num_threads = 16;
  std::vector<std::string> diff =
      Differences(ExtractProgramFeatures(lowered, TwoThreads()),
                  ExtractProgramFeatures(lowered, sixteen));
  ASSERT_FALSE(diff.empty());
  for (const std::string& name : diff) {
    EXPECT_TRUE(name.rfind("target.", 0) == 0 ||
                name.rfind("parallel.", 0) == 0)
        << name;
  }
}

TEST(ProgramFeatures, ToleratesAProgramNotInLoweredForm) {
  // Blocks with iteration variables, predicates and inits: approximate
  // numbers, but a full, finite vector.
  for (const std::string spec : {"matmul:M=32,N=32,K=32", "softmax:M=8,N=40"}) {
    std::vector<float> f =
        ExtractProgramFeatures(InitialProgramOf(spec), TwoThreads());
    ASSERT_EQ(f.size(), FeatureNames().size());
    for (size_t i = 0; i < f.size(); ++i) {
      EXPECT_TRUE(std::isfinite(f[i]) && f[i] >= 0)
          << spec << ": " << FeatureNames()[i];
    }
    EXPECT_GT(FeatureOf(f, "arith.float_ops.sum"), 0) << spec;
  }
}

// Cost: the budget is under 1 ms for the lowered 1024^3 matmul of
// the tuned trace. Asserted with a wide margin (shared CI machines); the
// median is printed for the record.
TEST(ProgramFeatures, ExtractionIsCheap) {
  Program lowered = testing::TraceLowered("matmul:M=1024,N=1024,K=1024",
                                          "bench/traces/matmul_1024.json");
  const Target target = TwoThreads();
  std::vector<double> micros;
  for (int rep = 0; rep < 201; ++rep) {
    auto start = std::chrono::steady_clock::now();
    std::vector<float> f = ExtractProgramFeatures(lowered, target);
    auto stop = std::chrono::steady_clock::now();
    ASSERT_FALSE(f.empty());
    micros.push_back(
        std::chrono::duration<double, std::micro>(stop - start).count());
  }
  std::sort(micros.begin(), micros.end());
  const double median = micros[micros.size() / 2];
  std::printf(
      "feature extraction, matmul 1024 tuned trace: median %.1f us, min %.1f "
      "us\n",
      median, micros.front());
  EXPECT_LT(median, 10000);
}

}  // namespace
}  // namespace lathe::tuner

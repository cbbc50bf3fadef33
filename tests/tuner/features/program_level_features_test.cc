// Tests of the whole-program feature group
// (tuner/features/program_level_features.h).
#include "tuner/features/program_level_features.h"

#include <gtest/gtest.h>

#include "tests/tuner/features/features_test_util.h"

namespace lathe::tuner {
namespace {

float Feature(const Program& p, const Target& target, const std::string& name) {
  ProgramWalk walk = WalkProgram(p);
  std::vector<float> values(ProgramLevelFeatureNames().size(), -1);
  ExtractProgramLevelFeatures(p, walk, target, values.data());
  const std::vector<std::string>& names = ProgramLevelFeatureNames();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return values[i];
  }
  ADD_FAILURE() << "no feature " << name;
  return -1;
}

float L(double x) { return static_cast<float>(Log2p1(x)); }

// for p in range(6) parallel: for v in range(8) vectorized:
//   Y[p, v] = X[p, v] * 2
Program ParallelVectorCopy() {
  BufferPtr x = MakeBuffer("X", DType::Float32(), {6, 8});
  BufferPtr y = MakeBuffer("Y", DType::Float32(), {6, 8});
  Expr p = Var("p"), v = Var("v");
  return testing::MakeProgram(
      {x}, {y},
      MakeFor(p, 6,
              MakeFor(v, 8, MakeStore(y, {p, v}, Load(x, {p, v}) * Expr(2.0)),
                      ForKind::kVectorized),
              ForKind::kParallel));
}

TEST(ProgramLevelFeatures, ParallelismAgainstTheTargetsThreads) {
  Program p = ParallelVectorCopy();
  Target four;
  four.num_threads = 4;
  EXPECT_FLOAT_EQ(Feature(p, four, "target.num_threads"), L(4));
  EXPECT_FLOAT_EQ(Feature(p, four, "parallel.share"), 1);
  EXPECT_FLOAT_EQ(Feature(p, four, "parallel.thread_use"),
                  1);  // 6 tasks >= 4 threads
  EXPECT_FLOAT_EQ(Feature(p, four, "parallel.balance"), 0.75f);  // 6 of 8 slots
  EXPECT_FLOAT_EQ(Feature(p, four, "parallel.tasks_per_thread"), L(1.5));
  EXPECT_FLOAT_EQ(Feature(p, four, "parallel.launches"), L(1));
  Target eight;
  eight.num_threads = 8;
  EXPECT_FLOAT_EQ(Feature(p, eight, "parallel.thread_use"), 0.75f);
  EXPECT_FLOAT_EQ(Feature(p, eight, "parallel.balance"), 0.75f);
}

TEST(ProgramLevelFeatures, VectorLengthAgainstTheTargetsLanes) {
  Program p = ParallelVectorCopy();
  Target sse;  // generic x86-64: 4 float lanes
  ASSERT_EQ(sse.VectorLanesF32(), 4);
  EXPECT_FLOAT_EQ(Feature(p, sse, "target.vector_lanes"), L(4));
  EXPECT_FLOAT_EQ(Feature(p, sse, "vector.share"), 1);
  EXPECT_FLOAT_EQ(Feature(p, sse, "vector.lane_use"), 1);  // 8 = 2 full vectors
  EXPECT_FLOAT_EQ(Feature(p, sse, "vector.length_over_lanes"), L(2));
  Target avx512;
  avx512.features = {"+avx512f"};
  ASSERT_EQ(avx512.VectorLanesF32(), 16);
  EXPECT_FLOAT_EQ(Feature(p, avx512, "vector.lane_use"),
                  0.5f);  // half a register
  EXPECT_FLOAT_EQ(Feature(p, avx512, "vector.length_over_lanes"), L(0.5));
}

TEST(ProgramLevelFeatures, ScalarSerialProgram) {
  testing::MatmulNest mm(16);
  Target target;
  target.num_threads = 2;
  EXPECT_FLOAT_EQ(Feature(mm.program, target, "parallel.share"), 0);
  EXPECT_FLOAT_EQ(Feature(mm.program, target, "parallel.thread_use"), 0.5f);
  EXPECT_FLOAT_EQ(Feature(mm.program, target, "vector.share"), 0);
  EXPECT_FLOAT_EQ(Feature(mm.program, target, "vector.lane_use"),
                  0.25f);  // 1 of 4 lanes
  EXPECT_FLOAT_EQ(Feature(mm.program, target, "prog.stores"), L(1));
  EXPECT_FLOAT_EQ(Feature(mm.program, target, "prog.loops"), L(3));
  EXPECT_FLOAT_EQ(Feature(mm.program, target, "prog.loop_nests"), L(1));
  EXPECT_FLOAT_EQ(Feature(mm.program, target, "prog.max_depth"), L(3));
  EXPECT_FLOAT_EQ(Feature(mm.program, target, "prog.param_bytes"),
                  L(3 * 256 * 4));
  EXPECT_FLOAT_EQ(Feature(mm.program, target, "prog.float_ops"), L(8192));
  EXPECT_FLOAT_EQ(Feature(mm.program, target, "prog.intensity"),
                  L(8192.0 / 3072));
}

}  // namespace
}  // namespace lathe::tuner

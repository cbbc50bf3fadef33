// Tests of the allocation feature group (tuner/features/allocation_features.h).
#include "tuner/features/allocation_features.h"

#include <gtest/gtest.h>

#include "tests/tuner/features/features_test_util.h"

namespace lathe::tuner {
namespace {

using testing::GroupRow;

// root: alloc T[64] (global)
//   for i in range(64): T[i] = X[i] * 2
//   for p in range(4) parallel:
//     scope: alloc L[8] local
//       for a in range(8): L[a] = T[p * 8 + a] + 1        (store 1)
//       for b in range(8): Y[p * 8 + b] = L[b]            (store 2)
struct StagedProgram {
  StagedProgram() {
    BufferPtr x = MakeBuffer("X", DType::Float32(), {64});
    BufferPtr y = MakeBuffer("Y", DType::Float32(), {32});
    t = MakeBuffer("T", DType::Float32(), {64});
    l = MakeBuffer("L", DType::Float32(), {8}, BufferScope::kLocal);
    Expr i = Var("i"), p = Var("p"), a = Var("a"), b = Var("b");
    std::vector<StmtPtr> scoped;
    scoped.push_back(
        MakeFor(a, 8, MakeStore(l, {a}, Load(t, {p * 8 + a}) + Expr(1.0))));
    scoped.push_back(MakeFor(b, 8, MakeStore(y, {p * 8 + b}, Load(l, {b}))));
    std::vector<StmtPtr> top;
    top.push_back(MakeFor(i, 64, MakeStore(t, {i}, Load(x, {i}) * Expr(2.0))));
    top.push_back(MakeFor(
        p, 4, testing::AllocScope("p_alloc", {l}, MakeSeq(std::move(scoped))),
        ForKind::kParallel));
    program = testing::MakeProgram({x}, {y}, MakeSeq(std::move(top)), {t});
  }
  BufferPtr t, l;
  Program program;
};

GroupRow AllocRow(const ProgramWalk& walk, const StoreContext& store) {
  std::vector<double> values(AllocationStoreFeatureSpecs().size(), -1);
  ExtractAllocationStoreFeatures(walk, store, values.data());
  return GroupRow(AllocationStoreFeatureSpecs(), std::move(values));
}

float ProgramFeature(const std::vector<float>& values,
                     const std::string& name) {
  const std::vector<std::string>& names = AllocationProgramFeatureNames();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return values[i];
  }
  ADD_FAILURE() << "no feature " << name;
  return -1;
}

TEST(AllocationFeatures, PerStoreSizesAndAllocationCounts) {
  StagedProgram staged;
  ProgramWalk walk = WalkProgram(staged.program);
  ASSERT_EQ(walk.stores.size(), 3u);
  GroupRow produce_t = AllocRow(walk, walk.stores[0]);
  EXPECT_EQ(produce_t["alloc.write_bytes"], 256);
  EXPECT_EQ(produce_t["alloc.write_allocations"], 1);
  EXPECT_EQ(produce_t["alloc.stores_per_allocation"], 64);
  EXPECT_EQ(produce_t["alloc.read_bytes"], 0);  // X is a parameter
  GroupRow fill_l = AllocRow(walk, walk.stores[1]);
  EXPECT_EQ(fill_l["alloc.write_bytes"], 32);
  EXPECT_EQ(fill_l["alloc.write_allocations"], 4);  // once per p
  EXPECT_EQ(fill_l["alloc.stores_per_allocation"], 8);
  EXPECT_EQ(fill_l["alloc.read_bytes"], 256);  // reads T
  GroupRow write_y = AllocRow(walk, walk.stores[2]);
  EXPECT_EQ(write_y["alloc.write_bytes"], 0);
  EXPECT_EQ(write_y["alloc.write_allocations"], 0);
  EXPECT_EQ(write_y["alloc.read_bytes"], 32);  // reads L
}

TEST(AllocationFeatures, WholeProgramTotals) {
  StagedProgram staged;
  ProgramWalk walk = WalkProgram(staged.program);
  Target target;  // generic: 4 float lanes, 16 vector registers = 256 bytes
  std::vector<float> values(AllocationProgramFeatureNames().size(), -1);
  ExtractAllocationProgramFeatures(walk, target, values.data());
  auto log2p1 = [](double x) { return static_cast<float>(Log2p1(x)); };
  EXPECT_FLOAT_EQ(ProgramFeature(values, "alloc.count"), log2p1(2));
  EXPECT_FLOAT_EQ(ProgramFeature(values, "alloc.total_bytes"),
                  log2p1(256 + 32));
  EXPECT_FLOAT_EQ(ProgramFeature(values, "alloc.max_bytes"), log2p1(256));
  EXPECT_FLOAT_EQ(ProgramFeature(values, "alloc.local_bytes"), log2p1(32));
  EXPECT_FLOAT_EQ(ProgramFeature(values, "alloc.global_bytes"), log2p1(256));
  EXPECT_FLOAT_EQ(ProgramFeature(values, "alloc.shared_bytes"), 0);
  EXPECT_FLOAT_EQ(ProgramFeature(values, "alloc.executions"), log2p1(1 + 4));
  EXPECT_FLOAT_EQ(ProgramFeature(values, "alloc.bytes_allocated"),
                  log2p1(256 + 4 * 32));
  EXPECT_FLOAT_EQ(ProgramFeature(values, "alloc.in_parallel"), log2p1(1));
  EXPECT_FLOAT_EQ(ProgramFeature(values, "alloc.local_over_registers"),
                  log2p1(32.0 / 256));
}

TEST(AllocationFeatures, ProgramWithoutAllocationsIsAllZero) {
  testing::MatmulNest mm(8);
  ProgramWalk walk = WalkProgram(mm.program);
  std::vector<float> values(AllocationProgramFeatureNames().size(), -1);
  ExtractAllocationProgramFeatures(walk, Target(), values.data());
  for (float v : values) EXPECT_EQ(v, 0);
  GroupRow row = AllocRow(walk, walk.stores[0]);
  EXPECT_EQ(row["alloc.write_bytes"], 0);
}

}  // namespace
}  // namespace lathe::tuner

// Helpers of the feature tests: hand-built loop nests, scheduled and lowered
// workloads, and lookups of features by name.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/printer.h"
#include "compiler/lower/pipeline.h"
#include "compiler/schedule/default_schedule.h"
#include "compiler/schedule/replay.h"
#include "compiler/workload/spec.h"
#include "tuner/features/feature_group.h"
#include "tuner/features/program_features.h"
#include "tuner/features/store_context.h"

namespace lathe::tuner::testing {

inline Program InitialProgramOf(const std::string& spec) {
  absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec);
  EXPECT_TRUE(workload.ok()) << workload.status();
  absl::StatusOr<Program> program = workload->InitialProgram();
  EXPECT_TRUE(program.ok()) << program.status();
  return *std::move(program);
}

inline Program Lower(const Program& scheduled) {
  absl::StatusOr<Program> lowered = LowerProgram(scheduled);
  EXPECT_TRUE(lowered.ok()) << lowered.status();
  return lowered.ok() ? *std::move(lowered) : Program();
}

// The workload lowered after its default schedule (`lathe lower --default`).
inline Program DefaultLowered(const std::string& spec,
                              int64_t vector_width = 16,
                              int64_t num_threads = 0) {
  Program initial = InitialProgramOf(spec);
  DefaultScheduleOptions options;
  options.vector_width = vector_width;
  options.num_threads = num_threads;
  absl::StatusOr<Trace> trace = DefaultSchedule(initial, options);
  EXPECT_TRUE(trace.ok()) << trace.status();
  auto scheduled = ReplayTrace(*trace, initial);
  EXPECT_TRUE(scheduled.ok()) << scheduled.status();
  return Lower((*scheduled)->program());
}

// The workload lowered after a trace file of the source tree.
inline Program TraceLowered(const std::string& spec,
                            const std::string& trace_path) {
  Program initial = InitialProgramOf(spec);
  absl::StatusOr<Trace> trace =
      Trace::Load(std::string(LATHE_SOURCE_DIR) + "/" + trace_path);
  EXPECT_TRUE(trace.ok()) << trace.status();
  auto scheduled = ReplayTrace(*trace, initial);
  EXPECT_TRUE(scheduled.ok()) << scheduled.status();
  return Lower((*scheduled)->program());
}

// A program with `body` under a root block that allocates `root_allocs`.
inline Program MakeProgram(std::vector<BufferPtr> inputs,
                           std::vector<BufferPtr> outputs, StmtPtr body,
                           std::vector<BufferPtr> root_allocs = {}) {
  Program p;
  p.name = "hand_built";
  p.inputs = std::move(inputs);
  p.outputs = std::move(outputs);
  p.root = std::make_unique<BlockNode>();
  p.root->name = "root";
  p.root->alloc_buffers = std::move(root_allocs);
  p.root->body = std::move(body);
  return p;
}

inline StmtPtr AllocScope(const std::string& name,
                          std::vector<BufferPtr> allocs, StmtPtr body) {
  auto block = std::make_unique<BlockNode>();
  block->name = name;
  block->alloc_buffers = std::move(allocs);
  block->body = std::move(body);
  return block;
}

// C[i, j] += A[i, k] * B[k, j] over i, j, k in [0, n), loops i, j, k.
struct MatmulNest {
  explicit MatmulNest(int64_t n) {
    a = MakeBuffer("A", DType::Float32(), {n, n});
    b = MakeBuffer("B", DType::Float32(), {n, n});
    c = MakeBuffer("C", DType::Float32(), {n, n});
    Expr i = Var("i"), j = Var("j"), k = Var("k");
    StmtPtr store = MakeStore(
        c, {i, j}, Load(c, {i, j}) + Load(a, {i, k}) * Load(b, {k, j}));
    program = MakeProgram(
        {a, b}, {c},
        MakeFor(i, n, MakeFor(j, n, MakeFor(k, n, std::move(store)))));
  }
  BufferPtr a, b, c;
  Program program;
};

// The raw per-store values of one group, by feature name.
class GroupRow {
 public:
  GroupRow(const std::vector<StoreFeatureSpec>& specs,
           std::vector<double> values)
      : specs_(specs), values_(std::move(values)) {}
  double operator[](const std::string& name) const {
    for (size_t i = 0; i < specs_.size(); ++i) {
      if (specs_[i].name == name) return values_[i];
    }
    ADD_FAILURE() << "no feature " << name;
    return -1;
  }

 private:
  const std::vector<StoreFeatureSpec>& specs_;
  std::vector<double> values_;
};

template <typename Extract>
GroupRow RowOf(const std::vector<StoreFeatureSpec>& specs,
               const StoreContext& store, Extract extract) {
  std::vector<double> values(specs.size(), -1);
  extract(store, values.data());
  return GroupRow(specs, std::move(values));
}

// A feature of the program vector, by name.
inline float FeatureOf(const std::vector<float>& features,
                       const std::string& name) {
  const std::vector<std::string>& names = FeatureNames();
  auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) {
    ADD_FAILURE() << "no feature " << name;
    return -1;
  }
  return features[it - names.begin()];
}

inline double Log2p1Of(double x) { return Log2p1(x); }

}  // namespace lathe::tuner::testing

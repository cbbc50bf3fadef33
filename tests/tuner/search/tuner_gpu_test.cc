// The tuning loop on a cuda target, without a GPU: the tasks get the GPU
// design space, every candidate the search hands to the measurer builds
// (replay, lowering and the CUDA code generator's limits were checked when
// the candidate was made), and the best record replays to a bound program.
// The measurement is a stand-in (the time a function of the program); a
// device measures in scripts/gpu-check.sh.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "compiler/codegen/cuda/cuda_program.h"
#include "compiler/codegen/cuda/cuda_target.h"
#include "tests/tuner/search/tuner_fixture.h"

namespace lathe::tuner {
namespace {

using tuner_testing::TunerTest;

// The one task of `spec` on `target`, with its one GPU design space.
std::vector<Task> GpuTasks(const std::string& spec, const Target& target) {
  std::vector<Task> tasks = {
      MakeTask(ParseWorkloadSpec(spec).value(), target, 1).value()};
  EXPECT_EQ(tasks.front().spaces.size(), 1u);
  return tasks;
}

// The CUDA program of the database's best record of `task` on `target`.
absl::StatusOr<cuda::CudaProgram> BestProgram(db::Database& db,
                                              const Task& task,
                                              const Target& target) {
  absl::StatusOr<std::optional<db::Match>> best =
      db.Best(task.key, TargetInfoOf(target));
  if (!best.ok()) return best.status();
  if (!best->has_value()) return absl::NotFoundError("no best record");
  absl::StatusOr<Trace> trace = Trace::FromProto((*best)->record.trace());
  if (!trace.ok()) return trace.status();
  return cuda::MakeCudaProgram(task.workload, &*trace, target);
}

TEST_F(TunerTest, TunesACudaTaskInItsGpuDesignSpace) {
  const Target target = cuda::ArchTarget("sm_90").value();
  std::vector<Task> tasks = GpuTasks("matmul:M=128,N=128,K=64", target);
  ASSERT_FALSE(tasks.front().spaces.empty());
  int sampling = 0;
  for (const Instruction& inst : tasks.front().spaces.front().instructions)
    sampling += inst.kind.rfind("sample_", 0) == 0;
  // Two spatial loops (tile and register groups each), the reduction, the
  // width.
  EXPECT_EQ(sampling, 6);

  std::atomic<int> measured{0}, not_built{0};
  MeasureFn measure = [&](const proto::MeasureRequest& request)
      -> absl::StatusOr<proto::MeasureResult> {
    ++measured;
    EXPECT_EQ(request.target(), target.ToString());
    Workload workload = ParseWorkloadSpec(request.workload()).value();
    Trace trace = Trace::FromProto(request.trace()).value();
    absl::StatusOr<cuda::CudaProgram> program =
        cuda::MakeCudaProgram(workload, &trace, target);
    if (!program.ok()) {
      ++not_built;
      ADD_FAILURE() << program.status() << "\n" << trace.ToText();
      proto::MeasureResult result;
      result.set_status(proto::MEASURE_BUILD_ERROR);
      return result;
    }
    return tuner_testing::FakeMeasure(request);
  };
  auto db = OpenDb("gpu.db");
  TuneOptions options = FastOptions();
  absl::StatusOr<TuneReport> report = Tune(tasks, *db, measure, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->trials, 24);
  EXPECT_GE(measured.load(), 24);  // later rounds measure again
  EXPECT_EQ(not_built.load(), 0);
  EXPECT_EQ(report->tasks.front().errors, 0);
  absl::StatusOr<cuda::CudaProgram> program =
      BestProgram(*db, tasks.front(), target);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_NE(program->module.source.find("__shared__"), std::string::npos);
}

TEST_F(TunerTest, TunesTheThreadCountsOfASoftmax) {
  // Two cross-thread reductions and an element-wise division: the space's
  // only decisions are their thread counts, which the search explores and
  // steers to the fastest (here, 256 threads a block take the least time).
  const Target target = cuda::ArchTarget("sm_90").value();
  std::vector<Task> tasks = GpuTasks("softmax:M=4,N=1024", target);
  absl::Mutex mutex;
  std::set<std::vector<int64_t>> measured;  // each candidate's block sizes
  MeasureFn measure = [&](const proto::MeasureRequest& request)
      -> absl::StatusOr<proto::MeasureResult> {
    Workload workload = ParseWorkloadSpec(request.workload()).value();
    Trace trace = Trace::FromProto(request.trace()).value();
    absl::StatusOr<cuda::CudaProgram> program =
        cuda::MakeCudaProgram(workload, &trace, target);
    proto::MeasureResult result;
    if (!program.ok()) {
      ADD_FAILURE() << program.status() << "\n" << trace.ToText();
      result.set_status(proto::MEASURE_BUILD_ERROR);
      return result;
    }
    std::vector<int64_t> blocks;
    double t = 1e-5;
    for (const cuda::CudaKernel& k : program->module.kernels) {
      blocks.push_back(k.block.x);
      t += 1e-6 * std::abs(std::log2(static_cast<double>(k.block.x) / 256));
    }
    {
      absl::MutexLock lock(&mutex);
      measured.insert(blocks);
    }
    result.set_status(proto::MEASURE_OK);
    result.set_structural_hash(absl::StrJoin(blocks, "x"));
    for (int i = 0; i < 3; ++i) result.add_times_s(t);
    return result;
  };
  auto db = OpenDb("softmax.db");
  TuneOptions options = FastOptions();
  options.max_trials = 48;
  absl::StatusOr<TuneReport> report = Tune(tasks, *db, measure, options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->tasks.front().errors, 0);
  EXPECT_GE(measured.size(), 10u);
  absl::StatusOr<cuda::CudaProgram> program =
      BestProgram(*db, tasks.front(), target);
  ASSERT_TRUE(program.ok()) << program.status();
  // The best has 256 threads in at least two of its kernels: better than
  // most of the 216 points, whose draws are uniform over 6 counts each.
  int at_256 = 0;
  for (const cuda::CudaKernel& k : program->module.kernels)
    at_256 += k.block.x == 256;
  EXPECT_GE(at_256, 2) << program->module.source;
}

}  // namespace
}  // namespace lathe::tuner

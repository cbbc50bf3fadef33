// Tests of report/report_data.h (CollectReport) and report/report_file.h:
// a small database built here, with records of every status, batches, a
// default schedule's record and a re-measurement, gives the curve, the
// counts, the default line, the provenance and a model's latency the
// records say.
#include "report/report_data.h"

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "compiler/codegen/cpu_target.h"
#include "compiler/codegen/kernel_program.h"
#include "compiler/target/target_info.h"
#include "compiler/workload/spec.h"
#include "database/database.h"
#include "gtest/gtest.h"
#include "report/report_file.h"
#include "tests/support/temp_folder.h"
#include "tuner/search/measurement_record.h"

namespace lathe::report {
namespace {

using ::lathe::test_support::TempFolder;

constexpr char kSpec[] = "matmul:M=32,N=32,K=32";  // 2 * 32^3 flops
constexpr char kOther[] = "matmul:M=16,N=16,K=16";

Target TestTarget() { return ParseTarget("llvm -num-threads=1").value(); }

// A record of `spec` measured with `status` at `median_s` (OK only), at
// `at_ms`, claiming program `hash` ("" for the default schedule's).
proto::Record Record(const std::string& spec, proto::MeasureStatus status,
                     double median_s, int64_t at_ms, const std::string& hash,
                     const std::string& runner = "local@test",
                     const std::string& job = "job-1") {
  const Workload workload = ParseWorkloadSpec(spec).value();
  const KernelProgram program =
      MakeKernelProgram(workload, nullptr, TestTarget()).value();
  proto::MeasureResult result;
  result.set_status(status);
  if (status == proto::MEASURE_OK) {
    for (int i = 0; i < 3; ++i) result.add_times_s(median_s);
  } else {
    result.set_error("failed");
  }
  const std::string claimed = hash.empty() ? program.structural_hash : hash;
  result.set_structural_hash(claimed);
  proto::Record record = tuner::MeasurementRecord(
      workload, TargetInfoOf(TestTarget()), program.trace, claimed, result,
      {runner, "0.test", job});
  record.set_measured_at_unix_ms(at_ms);
  return record;
}

std::string Hash(int i) { return absl::StrFormat("%016x", 0xabc000 + i); }

class ReportDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = folder_.File("tuned.db");
    db::OpenOptions open;
    open.mode = db::OpenOptions::Mode::kCreate;
    open.durable = false;
    db_ = db::Database::Open(path_, open).value();
    // The default schedule (0.5 ms), then trials: ok 0.4 ms, wrong, ok
    // 0.2 ms, crashed, timed out, ok 0.3 ms, build error, ok 0.1 ms; then a
    // re-measurement of the 0.1 ms program at 0.15 ms.
    const int64_t t0 = 1700000000000;
    std::vector<proto::Record> records = {
        Record(kSpec, proto::MEASURE_OK, 5e-4, t0, "",
               "local (default schedule)"),
        Record(kSpec, proto::MEASURE_OK, 4e-4, t0 + 1000, Hash(1)),
        Record(kSpec, proto::MEASURE_WRONG_RESULT, 0, t0 + 2000, Hash(2)),
        Record(kSpec, proto::MEASURE_OK, 2e-4, t0 + 3000, Hash(3)),
        Record(kSpec, proto::MEASURE_RUN_ERROR, 0, t0 + 4000, Hash(4)),
        Record(kSpec, proto::MEASURE_TIMEOUT, 0, t0 + 5000, Hash(5)),
        Record(kSpec, proto::MEASURE_OK, 3e-4, t0 + 6000, Hash(6)),
        Record(kSpec, proto::MEASURE_BUILD_ERROR, 0, t0 + 7000, Hash(7)),
        Record(kSpec, proto::MEASURE_OK, 1e-4, t0 + 8000, Hash(8),
               "remote@box"),
        Record(kSpec, proto::MEASURE_OK, 1.5e-4, t0 + 9000, Hash(8),
               "local@test (re-measure)"),
        // Another task, of another job: one trial.
        Record(kOther, proto::MEASURE_OK, 1e-5, t0 + 500, Hash(20),
               "local@test", "job-2"),
    };
    ASSERT_TRUE(db_->Commit(records).ok());
    const std::string target = TargetInfoOf(TestTarget()).canonical();
    key_ = ParseWorkloadSpec(kSpec).value().Key();
    db::TuningBatch batch;
    batch.job = "job-1";
    batch.workload_key = key_;
    batch.target = target;
    batch.trials = 4;
    batch.finished_ms = t0 + 4500;
    ASSERT_TRUE(db_->Commit({}, &batch).ok());  // untrained
    batch.accuracy = 0.75;
    batch.trained_on = 4;
    batch.finished_ms = t0 + 8500;
    ASSERT_TRUE(db_->Commit({}, &batch).ok());
  }

  TempFolder folder_;
  std::string path_;
  std::string key_;
  std::unique_ptr<db::Database> db_;
};

TEST_F(ReportDataTest, CountsCurveDefaultLineBatchesAndProvenance) {
  ReportData data = CollectReport(*db_, ReportOptions{}).value();
  ASSERT_EQ(data.tasks.size(), 2u);  // by workload form: K=16 before K=32
  const TaskData& task = data.tasks[1];
  EXPECT_EQ(task.workload, ParseWorkloadSpec(kSpec).value().CanonicalForm());
  EXPECT_EQ(task.flops, 2 * 32 * 32 * 32);
  EXPECT_EQ(task.records.size(), 10u);
  EXPECT_EQ(task.records_total, 10);
  // The default's record and the re-measurement are not trials.
  EXPECT_EQ(task.records[0].kind, RecordKind::kDefault);
  EXPECT_EQ(task.records[9].kind, RecordKind::kRemeasure);
  EXPECT_EQ(task.trials, 8);
  EXPECT_EQ(task.drawn, 8);
  EXPECT_EQ(task.records[1].trial, 1);
  EXPECT_EQ(task.records[8].trial, 8);
  EXPECT_EQ(task.by_status[proto::MEASURE_OK], 6);  // default, remeasure too
  EXPECT_EQ(task.by_status[proto::MEASURE_WRONG_RESULT], 1);
  EXPECT_EQ(task.by_status[proto::MEASURE_RUN_ERROR], 1);
  EXPECT_EQ(task.by_status[proto::MEASURE_TIMEOUT], 1);
  EXPECT_EQ(task.by_status[proto::MEASURE_BUILD_ERROR], 1);
  // Steps at trials 1 (0.4 ms), 3 (0.2 ms) and 8 (0.1 ms).
  ASSERT_EQ(task.best_curve.size(), 3u);
  EXPECT_EQ(task.best_curve[0].trial, 1);
  EXPECT_DOUBLE_EQ(task.best_curve[0].median_s, 4e-4);
  EXPECT_EQ(task.best_curve[1].trial, 3);
  EXPECT_DOUBLE_EQ(task.best_curve[1].median_s, 2e-4);
  EXPECT_EQ(task.best_curve[2].trial, 8);
  EXPECT_EQ(task.best_curve[2].measured_ms - task.first_ms, 8000);
  EXPECT_NEAR(task.Gflops(1e-4), 65536 / 1e-4 * 1e-9, 1e-9);
  ASSERT_TRUE(task.default_median_s.has_value());
  EXPECT_DOUBLE_EQ(*task.default_median_s, 5e-4);
  ASSERT_EQ(task.batches.size(), 2u);
  EXPECT_FALSE(task.batches[0].accuracy.has_value());
  EXPECT_DOUBLE_EQ(task.batches[1].accuracy.value_or(0), 0.75);
  // The best by the database's rule: program 8 counts by its
  // re-measurement (0.15 ms), which beats 0.2 ms.
  ASSERT_TRUE(task.best.has_value());
  EXPECT_EQ(task.best->structural_hash, Hash(8));
  EXPECT_DOUBLE_EQ(task.best->median_s.value_or(0), 1.5e-4);
  EXPECT_EQ(task.best->runner, "local@test (re-measure)");
  EXPECT_EQ(task.best->lathe_version, "0.test");
  EXPECT_EQ(task.best->job, "job-1");
}

TEST_F(ReportDataTest, AJobSeesItsOwnRecordsAndTheDefaultOfAny) {
  // The default's record belongs to job-3 here; job-1's report still draws
  // its line.
  ASSERT_TRUE(
      db_->Commit({Record(kOther, proto::MEASURE_OK, 2e-5, 1700000000100, "",
                          "local (default schedule)", "job-3")})
          .ok());
  ReportOptions options;
  options.job = "job-2";
  ReportData data = CollectReport(*db_, options).value();
  ASSERT_EQ(data.tasks.size(), 1u);
  EXPECT_EQ(data.tasks[0].trials, 1);
  EXPECT_EQ(data.tasks[0].records.size(), 1u);
  EXPECT_DOUBLE_EQ(data.tasks[0].default_median_s.value_or(0), 2e-5);
  EXPECT_TRUE(data.tasks[0].batches.empty());
  // A job the database does not know is an error, naming it.
  options.job = "job-none";
  absl::StatusOr<ReportData> none = CollectReport(*db_, options);
  EXPECT_TRUE(absl::IsNotFound(none.status())) << none.status();
  EXPECT_NE(none.status().message().find("job-none"), std::string::npos);
}

TEST_F(ReportDataTest, BoundsTasksReadAndDrawn) {
  ReportOptions options;
  options.max_tasks = 1;
  options.max_records_read = 6;
  options.max_records_drawn = 2;
  ReportData data = CollectReport(*db_, options).value();
  EXPECT_EQ(data.tasks_total, 2);
  ASSERT_EQ(data.tasks.size(), 1u);
  options.max_tasks = 2;
  data = CollectReport(*db_, options).value();
  const TaskData& task = data.tasks[1];
  EXPECT_EQ(task.records.size(), 6u);
  EXPECT_EQ(task.records_total, 10);
  EXPECT_EQ(task.trials, 5);
  EXPECT_EQ(task.drawn, 2);  // of 5, spread: trials 3 and 5
  EXPECT_TRUE(task.records[3].drawn);
  EXPECT_TRUE(task.records[5].drawn);
}

TEST_F(ReportDataTest, TheTotalBoundsShareOutAmongTheTasks) {
  // 300 more trials of the other task: 301 in all.
  std::vector<proto::Record> more;
  for (int i = 0; i < 300; ++i) {
    more.push_back(Record(kOther, proto::MEASURE_OK, 2e-5, 1700000001000 + i,
                          Hash(1000 + i), "local@test", "job-2"));
  }
  ASSERT_TRUE(db_->Commit(more).ok());
  ReportOptions options;
  options.max_total_drawn = 400;  // 2 tasks: 200 each
  ReportData data = CollectReport(*db_, options).value();
  EXPECT_EQ(data.tasks[0].trials, 301);
  EXPECT_EQ(data.tasks[0].drawn, 200);
  EXPECT_EQ(data.tasks[1].drawn, 8);
  options.max_total_drawn = 2;  // below the floor of 100 per task
  EXPECT_EQ(CollectReport(*db_, options).value().tasks[0].drawn, 100);
  options.max_records_drawn = 3;  // the per-task bound still holds
  EXPECT_EQ(CollectReport(*db_, options).value().tasks[0].drawn, 3);
}

TEST_F(ReportDataTest, ModelLatencyOverTimeAndShares) {
  ReportOptions options;
  options.model =
      ModelInput{"net.onnx",
                 {{ParseWorkloadSpec(kSpec).value().CanonicalForm(), 2},
                  {ParseWorkloadSpec(kOther).value().CanonicalForm(), 10}}};
  ReportData data = CollectReport(*db_, options).value();
  ASSERT_EQ(data.models.size(), 1u);
  const ModelData& model = data.models[0];
  ASSERT_EQ(model.shares.size(), 2u);
  EXPECT_EQ(model.shares[0].task, 1);
  EXPECT_EQ(model.shares[1].task, 0);
  // No default for the second task: the latency is known from its first
  // trial (t0 + 500: 2 x 0.5 ms + 10 x 10 µs), then at each step of the
  // first task's curve.
  EXPECT_FALSE(model.default_latency_s.has_value());
  ASSERT_EQ(model.latency.size(), 4u);
  EXPECT_EQ(model.latency[0].at_ms, 1700000000500);
  EXPECT_NEAR(model.latency[0].latency_s, 2 * 5e-4 + 10 * 1e-5, 1e-12);
  EXPECT_NEAR(model.latency[1].latency_s, 2 * 4e-4 + 10 * 1e-5, 1e-12);
  EXPECT_NEAR(model.latency[3].latency_s, 2 * 1e-4 + 10 * 1e-5, 1e-12);
  EXPECT_NEAR(model.latency_s.value_or(0), 2 * 1e-4 + 10 * 1e-5, 1e-12);
}

TEST_F(ReportDataTest, WriteReportWritesBesideTheDatabaseAndNamesFailures) {
  EXPECT_EQ(DefaultReportPath("runs/tuned.db"), "runs/tuned.report.html");
  EXPECT_EQ(DefaultReportPath("tuned"), "tuned.report.html");
  EXPECT_EQ(JobReportPath("runs/tuned.db", "j/../x y"),
            "runs/tuned.j_.._x_y.report.html");
  const std::string out = folder_.File("out.html");
  ASSERT_TRUE(WriteReport(path_, ReportOptions{}, out).ok());
  std::ifstream file(out);
  std::stringstream text;
  text << file.rdbuf();
  EXPECT_NE(text.str().find("data-points=\"8\""), std::string::npos);
  absl::Status missing =
      WriteReport(folder_.File("absent.db"), ReportOptions{}, out);
  EXPECT_TRUE(absl::IsNotFound(missing)) << missing;
  EXPECT_NE(missing.message().find("absent.db"), std::string::npos);
  absl::Status unwritable =
      WriteReport(path_, ReportOptions{}, folder_.File("no/such/dir/r.html"));
  EXPECT_FALSE(unwritable.ok());
  EXPECT_NE(unwritable.message().find("no/such/dir/r.html"), std::string::npos);
}

}  // namespace
}  // namespace lathe::report

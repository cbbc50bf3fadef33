#include "tuner/service/daemon_metrics.h"

#include <gtest/gtest.h>

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "compiler/codegen/cpu_target.h"
#include "database/job_state.h"
#include "tests/support/temp_folder.h"
#include "tests/tuner/service/fake_runner.h"
#include "tuner/service/compiler_hooks.h"
#include "tuner/service/state_names.h"

namespace lathe::service {
namespace {

// The value of one series (`name` or `name{labels}`) on the page; NaN when
// it is not there.
double Value(const std::string& page, const std::string& series) {
  const std::string prefix = absl::StrCat("\n", series, " ");
  const size_t at = page.find(prefix);
  if (at == std::string::npos) return std::nan("");
  const size_t start = at + prefix.size();
  double value = 0;
  if (!absl::SimpleAtod(page.substr(start, page.find('\n', start) - start),
                        &value))
    return std::nan("");
  return value;
}

const std::string& TestTarget() {
  static const std::string target =
      ParseTarget("llvm -mcpu=haswell -num-threads=1")->ToString();
  return target;
}

class DaemonMetricsTest : public ::testing::Test {
 protected:
  DaemonOptions Options() const {
    DaemonOptions options;
    options.compiler = CompilerHooks();
    options.db_path = folder_.path() + "/t.db";
    options.scratch_dir = folder_.path();
    options.log = false;
    return options;
  }
  test_support::TempFolder folder_;
};

TEST_F(DaemonMetricsTest, AFreshDaemonShowsEveryMetricAndEveryStateAtZero) {
  const absl::Time before = absl::Now();
  std::unique_ptr<Daemon> daemon = Daemon::Start(Options()).value();
  const std::string page = DaemonMetricsText(*daemon);
  for (const char* family :
       {"lathe_jobs gauge", "lathe_trials_measured_total counter",
        "lathe_work_queued gauge", "lathe_work_leased gauge",
        "lathe_leases_granted_total counter",
        "lathe_leases_expired_total counter",
        "lathe_results_dropped_total counter", "lathe_runners gauge",
        "lathe_commit_seconds histogram",
        "lathe_process_start_time_seconds gauge"}) {
    EXPECT_TRUE(absl::StrContains(page, absl::StrCat("\n# TYPE ", family)))
        << family << " in\n"
        << page;
  }
  for (const char* state :
       {"queued", "running", "done", "failed", "cancelled"}) {
    EXPECT_EQ(Value(page, absl::StrCat("lathe_jobs{state=\"", state, "\"}")), 0)
        << state;
  }
  for (const char* state : {"idle", "busy", "lost", "quarantined"}) {
    EXPECT_EQ(Value(page, absl::StrCat("lathe_runners{state=\"", state, "\"}")),
              0)
        << state;
  }
  EXPECT_EQ(Value(page, "lathe_trials_measured_total"), 0);
  EXPECT_EQ(Value(page, "lathe_commit_seconds_bucket{le=\"+Inf\"}"), 0);
  EXPECT_EQ(Value(page, "lathe_commit_seconds_count"), 0);
  const double started = Value(page, "lathe_process_start_time_seconds");
  EXPECT_GE(started, absl::ToDoubleSeconds(before - absl::UnixEpoch()) - 1);
  EXPECT_LE(started, absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()));
}

TEST_F(DaemonMetricsTest, AJobsTrialsCommitsAndRunnerAreCounted) {
  std::unique_ptr<Daemon> daemon = Daemon::Start(Options()).value();
  test_support::FakeRunner runner(*daemon, TestTarget());
  proto::JobSpec spec;
  spec.add_workloads("matmul:M=32,N=32,K=16");
  spec.set_target(TestTarget());
  spec.set_max_trials(8);
  spec.set_batch_size(4);
  spec.set_min_time_s(0.001);
  spec.set_remeasure_top(-1);  // no second measurements: 2 commits
  const std::string id = daemon->Submit(spec).value().id();
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  int64_t version = -1;
  while (absl::Now() < deadline) {
    auto snapshot = daemon->jobs().WaitForChange(id, version, absl::Seconds(1));
    ASSERT_TRUE(snapshot.ok());
    version = snapshot->version;
    if (IsFinal(snapshot->job.state())) break;
  }
  ASSERT_EQ(daemon->GetJob(id)->state(), proto::JOB_DONE);

  const std::string page = DaemonMetricsText(*daemon);
  EXPECT_EQ(Value(page, "lathe_jobs{state=\"done\"}"), 1) << page;
  EXPECT_EQ(Value(page, "lathe_jobs{state=\"running\"}"), 0) << page;
  EXPECT_EQ(Value(page, "lathe_trials_measured_total"), 8) << page;
  // Every trial at least one lease (later rounds measure some again).
  EXPECT_GE(Value(page, "lathe_leases_granted_total"), 8) << page;
  EXPECT_EQ(Value(page, "lathe_work_queued"), 0) << page;
  EXPECT_EQ(Value(page, "lathe_runners{state=\"idle\"}") +
                Value(page, "lathe_runners{state=\"busy\"}"),
            1)
      << page;
  EXPECT_EQ(Value(page, "lathe_commit_seconds_count"), 2) << page;
  EXPECT_EQ(Value(page, "lathe_commit_seconds_bucket{le=\"+Inf\"}"), 2) << page;
  EXPECT_GT(Value(page, "lathe_commit_seconds_sum"), 0) << page;
}

TEST(StateNames, NameEveryState) {
  EXPECT_STREQ(JobStateName(proto::JOB_QUEUED), "queued");
  EXPECT_STREQ(JobStateName(proto::JOB_RUNNING), "running");
  EXPECT_STREQ(JobStateName(proto::JOB_DONE), "done");
  EXPECT_STREQ(JobStateName(proto::JOB_FAILED), "failed");
  EXPECT_STREQ(JobStateName(proto::JOB_CANCELLED), "cancelled");
  EXPECT_STREQ(JobStateName(static_cast<proto::JobState>(99)), "unspecified");
  // The job states' names are the database's (job_state.h).
  EXPECT_EQ(JobStateName(proto::JOB_CANCELLED),
            db::JobStateName(db::JobState::kCancelled));
  EXPECT_STREQ(RunnerStateName(proto::RUNNER_IDLE), "idle");
  EXPECT_STREQ(RunnerStateName(proto::RUNNER_BUSY), "busy");
  EXPECT_STREQ(RunnerStateName(proto::RUNNER_LOST), "lost");
  EXPECT_STREQ(RunnerStateName(proto::RUNNER_QUARANTINED), "quarantined");
}

}  // namespace
}  // namespace lathe::service

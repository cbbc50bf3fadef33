#include "tuner/service/daemon.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <thread>

#include <sqlite3.h>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/cpu_target.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/schedule/replay.h"
#include "compiler/workload/spec.h"
#include "database/sqlite_connection.h"
#include "report/report_file.h"
#include "rpc/channel.h"
#include "tests/support/temp_folder.h"
#include "tests/tuner/service/fake_runner.h"
#include "tuner/service/compiler_hooks.h"

namespace lathe::service {
namespace {

const std::string& TestTarget() {
  static const std::string target =
      ParseTarget("llvm -mcpu=haswell -num-threads=1")->ToString();
  return target;
}

proto::JobSpec SmallSpec(int64_t trials) {
  proto::JobSpec spec;
  spec.add_workloads("matmul:M=32,N=32,K=16");
  spec.set_target(TestTarget());
  spec.set_max_trials(trials);
  spec.set_batch_size(4);
  spec.set_min_time_s(0.001);
  spec.set_remeasure_top(-1);
  return spec;
}

using test_support::FakeRunner;

class DaemonTest : public ::testing::Test {
 protected:
  DaemonOptions Options() const {
    DaemonOptions options;
    options.compiler = CompilerHooks();
    options.db_path = dir_ + "/t.db";
    options.scratch_dir = dir_;
    options.log = false;
    options.max_trials_per_job = 100;
    options.max_workloads_per_job = 2;
    return options;
  }

  // What simulated jobs left in the scratch folder.
  std::vector<std::string> ScratchEntries() const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("lathe-simulated-", 0) == 0) names.push_back(name);
    }
    return names;
  }

  // Polls the job until it ends or 60 s pass.
  static proto::JobStatus WaitForEnd(Daemon& daemon, const std::string& id) {
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    int64_t version = -1;
    while (absl::Now() < deadline) {
      auto snapshot =
          daemon.jobs().WaitForChange(id, version, absl::Seconds(1));
      if (!snapshot.ok()) break;
      version = snapshot->version;
      if (IsFinal(snapshot->job.state())) return snapshot->job;
    }
    return daemon.GetJob(id).value();
  }

  test_support::TempFolder folder_;
  const std::string dir_ = folder_.path();
};

TEST_F(DaemonTest, MalformedSpecsNameTheFieldAtFault) {
  std::unique_ptr<Daemon> daemon = Daemon::Start(Options()).value();
  struct Case {
    std::function<void(proto::JobSpec&)> change;
    std::string field;
  };
  const std::vector<Case> cases = {
      {[](proto::JobSpec& s) { s.clear_workloads(); }, "spec.workloads: empty"},
      {[](proto::JobSpec& s) { s.set_workloads(0, "nosuchop:M=1"); },
       "spec.workloads[0]"},
      {[](proto::JobSpec& s) { s.add_workloads("matmul:M=8"); },
       "spec.workloads[1]"},
      {[](proto::JobSpec& s) {
         for (int i = 0; i < 3; ++i) s.add_workloads("matmul:M=8,N=8,K=8");
       },
       "spec.workloads: 4 workloads; the limit is 2"},
      {[](proto::JobSpec& s) { s.set_target(""); }, "spec.target: empty"},
      {[](proto::JobSpec& s) { s.set_target("fpga -x"); }, "spec.target"},
      {[](proto::JobSpec& s) { s.set_max_trials(0); }, "spec.max_trials"},
      {[](proto::JobSpec& s) { s.set_max_trials(101); },
       "spec.max_trials: 101 exceeds the limit"},
      {[](proto::JobSpec& s) {
         s.add_weights(1);
         s.add_weights(2);
       },
       "spec.weights"},
      {[](proto::JobSpec& s) {
         s.add_weights(std::numeric_limits<double>::infinity());
       },
       "spec.weights[0]: inf: must be positive and finite"},
      {[](proto::JobSpec& s) {
         s.add_weights(std::numeric_limits<double>::quiet_NaN());
       },
       "spec.weights[0]: nan"},
      {[](proto::JobSpec& s) { s.set_min_time_s(-1); }, "spec.min_time_s"},
      {[](proto::JobSpec& s) { s.set_measure_rounds(9); },
       "spec.measure_rounds: must be in [1, 8]"},
      {[](proto::JobSpec& s) { s.set_measure_rounds(-1); },
       "spec.measure_rounds"},
  };
  for (const Case& c : cases) {
    proto::JobSpec spec = SmallSpec(8);
    c.change(spec);
    absl::StatusOr<proto::JobStatus> job = daemon->Submit(spec);
    ASSERT_FALSE(job.ok()) << c.field;
    EXPECT_EQ(job.status().code(), absl::StatusCode::kInvalidArgument)
        << job.status();
    EXPECT_NE(job.status().message().find(c.field), std::string::npos)
        << job.status();
  }
  EXPECT_TRUE(daemon->ListJobs().empty());
  proto::RegisterRunnerRequest runner;
  runner.set_name("r");
  runner.set_target("bogus");
  EXPECT_NE(
      daemon->RegisterRunner(runner, "").status().message().find("target"),
      std::string::npos);
  // Names are shown by `lathe runners` and in the log: no terminal control.
  runner.set_target(TestTarget());
  for (const std::string& name :
       {std::string("a\nb"), std::string("\x1b[2J"), std::string(300, 'r')}) {
    runner.set_name(name);
    absl::StatusOr<proto::RegisterRunnerResponse> refused =
        daemon->RegisterRunner(runner, "");
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(refused.status().message().find("name"), std::string::npos)
        << refused.status();
  }
  // An unknown job id of kilobytes is not echoed whole.
  absl::Status unknown = daemon->GetJob(std::string(9000, 'j')).status();
  EXPECT_EQ(unknown.code(), absl::StatusCode::kNotFound);
  EXPECT_LT(unknown.message().size(), 200u) << unknown.message().size();
}

TEST_F(DaemonTest,
       JobCompletesWithEveryTrialRecordedOnceAndOnlyMatchingRunnersWork) {
  std::unique_ptr<Daemon> daemon = Daemon::Start(Options()).value();
  auto other = std::make_unique<FakeRunner>(
      *daemon, ParseTarget("llvm -mcpu=haswell -num-threads=2")->ToString());
  proto::JobStatus job = daemon->Submit(SmallSpec(10)).value();
  {
    FakeRunner a(*daemon, TestTarget()), b(*daemon, TestTarget());
    job = WaitForEnd(*daemon, job.id());
  }
  EXPECT_EQ(job.state(), proto::JOB_DONE) << job.error();
  EXPECT_EQ(job.trials_done(), 10);
  EXPECT_EQ(other->results(), 0);
  // The job's report, beside the database, and its status says where.
  EXPECT_EQ(job.report_path(), report::JobReportPath(dir_ + "/t.db", job.id()));
  EXPECT_GT(std::filesystem::file_size(job.report_path()), 0u);
  other.reset();
  daemon.reset();
  // The next daemon on the database finds the ended job's report again.
  daemon = Daemon::Start(Options()).value();
  EXPECT_EQ(daemon->GetJob(job.id()).value().report_path(), job.report_path());
  daemon.reset();
  std::filesystem::remove(job.report_path());
  daemon = Daemon::Start(Options()).value();
  EXPECT_EQ(daemon->GetJob(job.id()).value().report_path(), "");
  daemon.reset();
  auto db = db::Database::Open(dir_ + "/t.db", {}).value();
  std::vector<proto::Record> records = db->RecordsOfJob(job.id()).value();
  ASSERT_EQ(records.size(), 10u);
  std::set<std::string> hashes;
  for (const proto::Record& r : records) {
    hashes.insert(r.structural_hash());
    EXPECT_EQ(r.runner(), "fake");
    // The runner's machine, not the daemon's, measured it.
    EXPECT_EQ(r.target().device(), "fake box, 2 cores");
  }
  EXPECT_EQ(hashes.size(), 10u);
  EXPECT_EQ(db::Database::Open(dir_ + "/t.db", {})
                .value()
                ->Jobs()
                .value()
                .back()
                .state(),
            "done");
}

// A second daemon on the same database would resume the first one's jobs
// and overwrite their states: it is refused until the first one ends.
TEST_F(DaemonTest, OneDaemonPerDatabase) {
  std::unique_ptr<Daemon> first = Daemon::Start(Options()).value();
  absl::StatusOr<std::unique_ptr<Daemon>> second = Daemon::Start(Options());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(
      second.status().message().find(absl::StrCat(
          "another lathe serve (pid ", getpid(), ") runs on this database")),
      std::string::npos)
      << second.status();
  DaemonOptions elsewhere = Options();
  elsewhere.db_path = dir_ + "/other.db";
  EXPECT_TRUE(Daemon::Start(elsewhere).ok());
  first.reset();
  EXPECT_TRUE(Daemon::Start(Options()).ok());
}

TEST_F(DaemonTest, ReadsTargetsWithItsCompilerHooks) {
  // No target parser: nothing would read a job's or a runner's target.
  DaemonOptions none = Options();
  none.compiler = DaemonCompilerHooks{};
  absl::StatusOr<std::unique_ptr<Daemon>> refused = Daemon::Start(none);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("no target parser"),
            std::string::npos)
      << refused.status();
  // A parser of one kind of target: the daemon refuses the others, naming
  // the field and the parser's reason.
  DaemonOptions cuda_only = Options();
  cuda_only.compiler.parse_target =
      [](const std::string& text) -> absl::StatusOr<Target> {
    if (text.rfind("cuda", 0) == 0) return ParseTarget(text);
    return absl::InvalidArgumentError("only cuda targets here");
  };
  std::unique_ptr<Daemon> daemon = Daemon::Start(cuda_only).value();
  absl::StatusOr<proto::JobStatus> job = daemon->Submit(SmallSpec(4));
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().message(), "spec.target: only cuda targets here");
}

TEST_F(DaemonTest, UnfinishedJobResumesInTheNextDaemonWithoutRemeasuring) {
  std::string id;
  {
    std::unique_ptr<Daemon> daemon = Daemon::Start(Options()).value();
    // One round per batch: 4 results are one whole batch of 4.
    proto::JobSpec spec = SmallSpec(12);
    spec.set_measure_rounds(1);
    id = daemon->Submit(spec).value().id();
    // Only 4 results (one batch) come back before the daemon stops.
    FakeRunner partial(*daemon, TestTarget(), /*max_results=*/4);
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (partial.results() < 4 && absl::Now() < deadline)
      absl::SleepFor(absl::Milliseconds(5));
    // ...and are committed by the job's loop.
    while (db::Database::Open(dir_ + "/t.db", {})
                   .value()
                   ->RecordsOfJob(id)
                   .value()
                   .size() < 4 &&
           absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(5));
    }
    ASSERT_LT(absl::Now(), deadline) << "the first batch was not committed";
    daemon->Shutdown();
    EXPECT_EQ(daemon->GetJob(id).value().state(), proto::JOB_RUNNING);
  }
  std::unique_ptr<Daemon> daemon = Daemon::Start(Options()).value();
  proto::JobStatus job = daemon->GetJob(id).value();
  EXPECT_EQ(job.resumed(), 1);
  EXPECT_EQ(job.trials_done(), 4);
  // Its task as its records left it, before any new result.
  ASSERT_EQ(job.tasks_size(), 1);
  EXPECT_EQ(job.tasks(0).trials(), job.trials_done());
  EXPECT_GT(job.tasks(0).best_s(), 0);
  {
    FakeRunner runner(*daemon, TestTarget());
    job = WaitForEnd(*daemon, id);
  }
  EXPECT_EQ(job.state(), proto::JOB_DONE) << job.error();
  EXPECT_EQ(job.trials_done(), 12);
  // The trials of both daemons, not only the second one's.
  ASSERT_EQ(job.tasks_size(), 1);
  EXPECT_EQ(job.tasks(0).trials(), 12);
  EXPECT_EQ(job.tasks(0).errors(), 0);
  const double best_s = job.tasks(0).best_s();
  daemon.reset();
  // A daemon started after the job ended still shows its task.
  daemon = Daemon::Start(Options()).value();
  job = daemon->GetJob(id).value();
  ASSERT_EQ(job.tasks_size(), 1);
  EXPECT_EQ(job.tasks(0).trials(), 12);
  EXPECT_GT(job.tasks(0).best_s(), 0);
  EXPECT_LE(job.tasks(0).best_s(), best_s);
  EXPECT_GT(job.tasks(0).best_gflops(), 0);
  daemon.reset();
  std::vector<proto::Record> records =
      db::Database::Open(dir_ + "/t.db", {}).value()->RecordsOfJob(id).value();
  std::set<std::string> hashes;
  for (const proto::Record& r : records) hashes.insert(r.structural_hash());
  EXPECT_EQ(records.size(), 12u);
  EXPECT_EQ(hashes.size(), 12u);
}

// Two jobs on one workload at once, both with a batch dispatched before any
// runner measures anything: no program is measured by both (the near-ties
// each measures again at its end are second looks, marked as such), both
// spend their budgets, and the cost model saved last learned every record
// of both.
TEST_F(DaemonTest, TwoJobsOnOneWorkloadNeverMeasureAProgramTwice) {
  std::unique_ptr<Daemon> daemon = Daemon::Start(Options()).value();
  proto::JobSpec spec = SmallSpec(12);
  spec.set_remeasure_top(3);
  spec.set_measure_rounds(1);
  const std::string a = daemon->Submit(spec).value().id();
  const std::string b = daemon->Submit(spec).value().id();
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while ((daemon->GetJob(a)->work_queued() == 0 ||
          daemon->GetJob(b)->work_queued() == 0) &&
         absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  ASSERT_GT(daemon->GetJob(a)->work_queued(), 0);
  ASSERT_GT(daemon->GetJob(b)->work_queued(), 0);
  proto::JobStatus job_a, job_b;
  {
    FakeRunner one(*daemon, TestTarget()), two(*daemon, TestTarget());
    job_a = WaitForEnd(*daemon, a);
    job_b = WaitForEnd(*daemon, b);
  }
  for (const proto::JobStatus& job : {job_a, job_b}) {
    EXPECT_EQ(job.state(), proto::JOB_DONE) << job.error();
    EXPECT_EQ(job.trials_done(), 12);
  }
  daemon.reset();
  std::unique_ptr<db::Database> db =
      db::Database::Open(dir_ + "/t.db", {}).value();
  std::map<std::string, int> trials;  // structural hash -> trials of it
  std::vector<std::string> remeasured;
  for (const std::string& id : {a, b}) {
    const std::vector<proto::Record> records = db->RecordsOfJob(id).value();
    for (const proto::Record& r : records) {
      if (r.runner().find("(re-measure)") != std::string::npos) {
        remeasured.push_back(r.structural_hash());
      } else {
        ++trials[r.structural_hash()];
      }
    }
  }
  EXPECT_EQ(trials.size(), 24u);
  for (const auto& [hash, n] : trials)
    EXPECT_EQ(n, 1) << "program " << hash << " measured in " << n << " trials";
  // A second look (when the fake times make near-ties) is at a program
  // one of the jobs measured.
  for (const std::string& hash : remeasured) EXPECT_EQ(trials.count(hash), 1u);
  db.reset();
  auto raw = db::Connection::Open(dir_ + "/t.db", SQLITE_OPEN_READONLY).value();
  EXPECT_EQ(raw->QueryInt("SELECT records FROM cost_models").value(), 24);
}

// A runner that cannot measure gives its candidates back; after
// quarantine_after failures in a row it gets no more work, and a healthy
// runner measures everything.
TEST_F(DaemonTest, FailingRunnerIsQuarantinedAndItsWorkGoesElsewhere) {
  DaemonOptions options = Options();
  options.quarantine_after = 3;
  std::unique_ptr<Daemon> daemon = Daemon::Start(options).value();
  proto::JobStatus job = daemon->Submit(SmallSpec(6)).value();
  proto::RegisterRunnerRequest request;
  request.set_name("broken");
  request.set_target(TestTarget());
  const std::string broken =
      daemon->RegisterRunner(request, "").value().runner_id();
  int failures = 0;
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (failures < 3 && absl::Now() < deadline) {
    proto::AcquireWorkRequest acquire;
    acquire.set_runner_id(broken);
    acquire.set_wait_s(0.05);
    proto::AcquireWorkResponse work = daemon->AcquireWork(acquire).value();
    if (work.lease_id().empty()) continue;
    proto::ReportResultRequest report;
    report.set_runner_id(broken);
    report.set_lease_id(work.lease_id());
    report.set_infrastructure_error("worker does not start");
    EXPECT_FALSE(daemon->ReportResult(report).value().accepted());
    ++failures;
  }
  proto::AcquireWorkRequest acquire;
  acquire.set_runner_id(broken);
  EXPECT_EQ(daemon->AcquireWork(acquire).status().code(),
            absl::StatusCode::kFailedPrecondition);
  std::vector<proto::RunnerInfo> runners = daemon->ListRunners();
  ASSERT_EQ(runners.size(), 1u);
  EXPECT_EQ(runners[0].state(), proto::RUNNER_QUARANTINED);
  {
    FakeRunner good(*daemon, TestTarget());
    job = WaitForEnd(*daemon, job.id());
  }
  EXPECT_EQ(job.state(), proto::JOB_DONE) << job.error();
  EXPECT_EQ(job.trials_done(), 6);
}

// A stopping runner gives back the lease it fetched ahead: the candidate
// is queued again at once (not after the lease expires) and the runner is
// not blamed for it; a report that asks to prefetch brings the next lease.
TEST_F(DaemonTest, ReleasedLeasesAreQueuedAgainWithoutBlame) {
  DaemonOptions options = Options();
  options.quarantine_after = 2;
  std::unique_ptr<Daemon> daemon = Daemon::Start(options).value();
  std::vector<int64_t> items;
  for (int i = 0; i < 8; ++i) {
    WorkItem item;
    item.job = "j";
    item.request.set_target(TestTarget());
    items.push_back(daemon->leases().Enqueue(std::move(item)));
  }
  proto::RegisterRunnerRequest request;
  request.set_name("leaving");
  request.set_target(TestTarget());
  const std::string leaving =
      daemon->RegisterRunner(request, "").value().runner_id();
  for (int i = 0; i < 4; ++i) {
    proto::AcquireWorkRequest acquire;
    acquire.set_runner_id(leaving);
    proto::AcquireWorkResponse work = daemon->AcquireWork(acquire).value();
    ASSERT_FALSE(work.lease_id().empty());
    // Measured: the report asks for the next lease ahead of time.
    proto::ReportResultRequest report;
    report.set_runner_id(leaving);
    report.set_lease_id(work.lease_id());
    report.mutable_result()->set_status(proto::MEASURE_OK);
    report.mutable_result()->add_times_s(0.001);
    report.set_prefetch(true);
    proto::ReportResultResponse answer = daemon->ReportResult(report).value();
    EXPECT_TRUE(answer.accepted());
    ASSERT_FALSE(answer.next().lease_id().empty());
    proto::ReportResultRequest release;
    release.set_runner_id(leaving);
    release.set_lease_id(answer.next().lease_id());
    release.set_release(true);
    EXPECT_TRUE(daemon->ReportResult(release).value().accepted());
    // A lease given back is no longer this runner's.
    EXPECT_FALSE(daemon->ReportResult(release).value().accepted());
  }
  // Four releases, quarantine after two failures: still trusted.
  EXPECT_NE(daemon->ListRunners()[0].state(), proto::RUNNER_QUARANTINED);
  const LeaseStats stats = daemon->leases().Stats();
  EXPECT_EQ(stats.queued, 4);  // the released one of each round among them
  EXPECT_EQ(stats.leased, 0);
  EXPECT_EQ(stats.expired, 0);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(daemon->leases().Wait(items[i]).ok());
}

// A candidate over the worker's memory limit is a verdict on the candidate:
// charged to its job, never to the runner, however many a client submits.
TEST_F(DaemonTest, OverLimitFailuresAreChargedToTheJobNotTheRunner) {
  DaemonOptions options = Options();
  options.quarantine_after = 2;
  std::unique_ptr<Daemon> daemon = Daemon::Start(options).value();
  std::vector<int64_t> items;
  for (int i = 0; i < 5; ++i) {
    WorkItem item;
    item.job = "j";
    item.request.set_target(TestTarget());
    items.push_back(daemon->leases().Enqueue(std::move(item)));
  }
  proto::RegisterRunnerRequest request;
  request.set_name("healthy");
  request.set_target(TestTarget());
  const std::string runner =
      daemon->RegisterRunner(request, "").value().runner_id();
  for (int i = 0; i < 5; ++i) {
    proto::AcquireWorkRequest acquire;
    acquire.set_runner_id(runner);
    proto::AcquireWorkResponse work = daemon->AcquireWork(acquire).value();
    ASSERT_FALSE(work.lease_id().empty());
    proto::ReportResultRequest report;
    report.set_runner_id(runner);
    report.set_lease_id(work.lease_id());
    report.mutable_result()->set_status(proto::MEASURE_RUN_ERROR);
    report.mutable_result()->set_error("exceeded the memory limit of 512 MiB");
    report.mutable_result()->set_over_limit(true);
    EXPECT_TRUE(daemon->ReportResult(report).value().accepted());
  }
  const proto::RunnerInfo info = daemon->ListRunners().at(0);
  EXPECT_NE(info.state(), proto::RUNNER_QUARANTINED);
  EXPECT_EQ(info.failures(), 0);
  for (int64_t item : items) {
    absl::StatusOr<proto::MeasureResult> result = daemon->leases().Wait(item);
    ASSERT_TRUE(result.ok());
    EXPECT_EQ(result->status(), proto::MEASURE_RUN_ERROR);  // the job's
  }
}

// A workload whose tensors cannot fit the target's runners (the largest
// worker memory limit they report) or the daemon's own limit is refused at
// submit, naming the limit, before any runner tries it.
TEST_F(DaemonTest, WorkloadsBeyondTheRunnersMemoryAreRefusedAtSubmit) {
  DaemonOptions options = Options();
  options.max_workload_bytes = int64_t{64} << 20;
  std::unique_ptr<Daemon> daemon = Daemon::Start(options).value();
  proto::JobSpec spec = SmallSpec(4);
  spec.set_workloads(0, "relu:M=2,N=1073741824");
  absl::StatusOr<proto::JobStatus> refused = daemon->Submit(spec);
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("spec.workloads[0]"),
            std::string::npos);
  EXPECT_NE(refused.status().message().find("limit of 67108864 bytes"),
            std::string::npos)
      << refused.status();

  proto::RegisterRunnerRequest request;
  request.set_name("small");
  request.set_target(TestTarget());
  request.set_memory_limit_bytes(int64_t{1} << 20);
  ASSERT_TRUE(daemon->RegisterRunner(request, "").ok());
  spec.set_workloads(0, "relu:M=1024,N=1024");  // 8 MiB of tensors
  refused = daemon->Submit(spec);
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("worker memory limit"),
            std::string::npos)
      << refused.status();
  EXPECT_NE(refused.status().message().find("1048576 bytes"),
            std::string::npos);
  // A larger runner of the target: the workload fits one of them.
  request.set_name("large");
  request.set_memory_limit_bytes(int64_t{1} << 30);
  ASSERT_TRUE(daemon->RegisterRunner(request, "").ok());
  absl::StatusOr<proto::JobStatus> job = daemon->Submit(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  daemon->CancelJob(job->id()).IgnoreError();
}

// An ill-formed report (a NaN time, a runner-chosen hash with escape codes)
// is refused before anything is committed: its candidate is measured again
// by another runner and the rest of the batch is kept.
TEST_F(DaemonTest, InvalidReportsAreRefusedAndTheBatchIsKept) {
  std::unique_ptr<Daemon> daemon = Daemon::Start(Options()).value();
  proto::JobStatus job = daemon->Submit(SmallSpec(8)).value();
  proto::RegisterRunnerRequest request;
  request.set_name("lying");
  request.set_target(TestTarget());
  const std::string liar =
      daemon->RegisterRunner(request, "").value().runner_id();
  std::vector<proto::MeasureResult> lies(3);
  lies[0].set_status(proto::MEASURE_OK);
  lies[0].add_times_s(std::numeric_limits<double>::quiet_NaN());
  lies[1].set_status(proto::MEASURE_OK);
  lies[1].add_times_s(1e-300);
  lies[2].set_status(proto::MEASURE_OK);
  lies[2].add_times_s(1e-3);
  lies[2].set_structural_hash("\x1b]0;owned\x07");
  for (const proto::MeasureResult& lie : lies) {
    proto::AcquireWorkRequest acquire;
    acquire.set_runner_id(liar);
    acquire.set_wait_s(5);
    proto::AcquireWorkResponse work = daemon->AcquireWork(acquire).value();
    ASSERT_FALSE(work.lease_id().empty());
    proto::ReportResultRequest report;
    report.set_runner_id(liar);
    report.set_lease_id(work.lease_id());
    *report.mutable_result() = lie;
    EXPECT_EQ(daemon->ReportResult(report).status().code(),
              absl::StatusCode::kInvalidArgument);
  }
  {
    FakeRunner good(*daemon, TestTarget());
    job = WaitForEnd(*daemon, job.id());
  }
  EXPECT_EQ(job.state(), proto::JOB_DONE) << job.error();
  EXPECT_EQ(job.trials_done(), 8);
  daemon.reset();
  std::vector<proto::Record> records = db::Database::Open(dir_ + "/t.db", {})
                                           .value()
                                           ->RecordsOfJob(job.id())
                                           .value();
  ASSERT_EQ(records.size(), 8u);
  for (const proto::Record& r : records) {
    EXPECT_GE(r.median_s(), 1e-6);
    EXPECT_EQ(r.structural_hash().size(), 16u);
  }
}

// What a runner says of itself and of its failures reaches the daemon's
// log and `lathe runners` escaped and bounded: no forged log line, no
// terminal escape, no megabyte line.
TEST_F(DaemonTest, RunnerTextIsEscapedAndBoundedInTheLogAndTheRunnerList) {
  DaemonOptions options = Options();
  options.log = true;
  std::unique_ptr<Daemon> daemon = Daemon::Start(options).value();
  WorkItem item;
  item.job = "j";
  item.request.set_target(TestTarget());
  daemon->leases().Enqueue(std::move(item));
  proto::RegisterRunnerRequest request;
  request.set_name("noisy");
  request.set_target(TestTarget());
  request.set_device("\x1b[31mred\nlathe serve: forged");
  request.set_lathe_version(std::string(100000, 'v'));
  testing::internal::CaptureStderr();
  const std::string id =
      daemon->RegisterRunner(request, "test").value().runner_id();
  proto::AcquireWorkRequest acquire;
  acquire.set_runner_id(id);
  proto::AcquireWorkResponse work = daemon->AcquireWork(acquire).value();
  ASSERT_FALSE(work.lease_id().empty());
  proto::ReportResultRequest report;
  report.set_runner_id(id);
  report.set_lease_id(work.lease_id());
  report.set_infrastructure_error(
      "boom\n12:00:00 lathe serve: job x done\x1b]0;title\x07" +
      std::string(1 << 20, 'e'));
  ASSERT_TRUE(daemon->ReportResult(report).ok());
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(log.find('\x1b'), std::string::npos);
  EXPECT_EQ(log.find("\n12:00:00"), std::string::npos) << log.substr(0, 500);
  EXPECT_NE(log.find("boom\\x0a12:00:00"), std::string::npos);
  EXPECT_LT(log.size(), 8000u);
  for (char c : log) EXPECT_TRUE(c == '\n' || c >= 0x20) << int(c);
  const proto::RunnerInfo info = daemon->ListRunners().at(0);
  EXPECT_EQ(info.device(), "\\x1b[31mred\\x0alathe serve: forged");
  EXPECT_LE(info.lathe_version().size(), 300u);
  // Names are shown as given: one that would need escaping is refused.
  request.set_name(
      "\xc2\x9b"
      "2J");
  EXPECT_EQ(daemon->RegisterRunner(request, "test").status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Watches are bounded (each holds a server thread); a runner list at the
// limit of runners, every text at its bound, stays below the message size.
TEST_F(DaemonTest, WatchesAndRunnersAreBounded) {
  DaemonOptions options = Options();
  options.max_watchers = 2;
  options.max_runners = 1000;
  std::unique_ptr<Daemon> daemon = Daemon::Start(options).value();
  auto first = daemon->StartWatch();
  auto second = daemon->StartWatch();
  ASSERT_TRUE(first.ok() && second.ok());
  absl::StatusOr<std::unique_ptr<Daemon::WatchSlot>> third =
      daemon->StartWatch();
  EXPECT_EQ(third.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(third.status().message().find("--max-watchers"), std::string::npos);
  first->reset();
  EXPECT_TRUE(daemon->StartWatch().ok());

  proto::RegisterRunnerRequest request;
  request.set_name(std::string(256, 'n'));
  request.set_target(std::string(1025, 't'));
  EXPECT_NE(daemon->RegisterRunner(request, "")
                .status()
                .message()
                .find("target: longer than 1024 bytes"),
            std::string::npos);
  request.set_target(TestTarget());
  request.set_device(std::string(100000, '\x01'));
  request.set_lathe_version(std::string(100000, '\xff'));
  for (int i = 0; i < options.max_runners; ++i) {
    ASSERT_TRUE(daemon->RegisterRunner(request, "ipv6:[::1]:65535").ok());
  }
  absl::StatusOr<proto::RegisterRunnerResponse> refused =
      daemon->RegisterRunner(request, "ipv6:[::1]:65535");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(refused.status().message().find("limit of 1000 runners"),
            std::string::npos)
      << refused.status();
  proto::ListRunnersResponse list;
  for (proto::RunnerInfo& info : daemon->ListRunners()) {
    info.set_target(std::string(1024, 't'));  // the longest accepted
    *list.add_runners() = std::move(info);
  }
  EXPECT_EQ(list.runners_size(), 1000);
  EXPECT_LT(list.ByteSizeLong(), size_t{rpc::kMaxServiceMessageBytes});
}

// A submission's parsing and design spaces run off the caller's thread:
// the caller is answered at the preparation deadline, or at once when its
// client went away, and the daemon stops without waiting for either.
TEST_F(DaemonTest, SubmitAnswersAtTheDeadlineOrWhenTheClientLeaves) {
  DaemonOptions options = Options();
  options.prepare_deadline = absl::ZeroDuration();
  std::unique_ptr<Daemon> daemon = Daemon::Start(options).value();
  absl::Status late = daemon->Submit(SmallSpec(4)).status();
  EXPECT_EQ(late.code(), absl::StatusCode::kDeadlineExceeded) << late;
  EXPECT_NE(late.message().find("limit of 0"), std::string::npos) << late;
  daemon.reset();

  options.prepare_deadline = absl::Seconds(600);
  daemon = Daemon::Start(options).value();
  absl::Status gone =
      daemon->Submit(SmallSpec(4), [] { return true; }).status();
  EXPECT_EQ(gone.code(), absl::StatusCode::kCancelled) << gone;
  EXPECT_TRUE(daemon->ListJobs().empty());
  // A caller waiting for its preparation is answered when the daemon stops.
  std::atomic<bool> stop_now{false};
  std::thread stopper([&] {
    while (daemon->preparing() == 0 && !stop_now) std::this_thread::yield();
    daemon->Shutdown();
  });
  const absl::Time start = absl::Now();
  absl::StatusOr<proto::JobStatus> job = daemon->Submit(SmallSpec(4));
  stop_now = true;
  stopper.join();
  EXPECT_TRUE(job.ok() || absl::IsCancelled(job.status()) ||
              absl::IsUnavailable(job.status()))
      << job.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(30));
  daemon.reset();
}

TEST_F(DaemonTest, CancelEndsTheJobAndKeepsWhatWasMeasured) {
  std::unique_ptr<Daemon> daemon = Daemon::Start(Options()).value();
  proto::JobStatus job = daemon->Submit(SmallSpec(50)).value();
  // No runner: the job waits for one; cancelling ends it.
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (daemon->GetJob(job.id()).value().work_queued() == 0 &&
         absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  // The answer is the job as it ended, not as it was when asked.
  absl::StatusOr<proto::JobStatus> answer = daemon->CancelJob(job.id());
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->state(), proto::JOB_CANCELLED);
  job = WaitForEnd(*daemon, job.id());
  EXPECT_EQ(job.state(), proto::JOB_CANCELLED);
  EXPECT_EQ(daemon->GetJob(job.id()).value().work_queued(), 0);
  EXPECT_EQ(daemon->CancelJob("job-none").status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(DaemonTest, SimulatedJobsGoOnlyToSimulatedRunnersAndNeverToTheDatabase) {
  std::unique_ptr<Daemon> daemon = Daemon::Start(Options()).value();
  auto real = std::make_unique<FakeRunner>(*daemon, TestTarget());
  proto::JobSpec spec = SmallSpec(6);
  spec.set_simulated(true);
  spec.set_measure_rounds(2);  // each round of a trial is a lease of its own
  proto::JobStatus job = daemon->Submit(spec).value();
  proto::RegisterRunnerRequest request;
  request.set_name("sim");
  request.set_target(TestTarget());
  request.set_simulated(true);
  const std::string sim =
      daemon->RegisterRunner(request, "").value().runner_id();
  int reported = 0;
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (!IsFinal(daemon->GetJob(job.id()).value().state()) &&
         absl::Now() < deadline) {
    proto::AcquireWorkRequest acquire;
    acquire.set_runner_id(sim);
    acquire.set_wait_s(0.05);
    proto::AcquireWorkResponse work = daemon->AcquireWork(acquire).value();
    if (work.lease_id().empty()) continue;
    if (reported == 0) {
      // The job's scratch database: in a private folder of a random name,
      // never at a path another user could predict and plant a link at.
      std::vector<std::string> scratch = ScratchEntries();
      ASSERT_EQ(scratch.size(), 1u);
      struct stat info;
      ASSERT_EQ(lstat((dir_ + "/" + scratch[0]).c_str(), &info), 0);
      EXPECT_TRUE(S_ISDIR(info.st_mode)) << scratch[0];
      EXPECT_EQ(info.st_mode & 0777, 0700u) << scratch[0];
    }
    proto::ReportResultRequest report;
    report.set_runner_id(sim);
    report.set_lease_id(work.lease_id());
    report.mutable_result()->set_status(proto::MEASURE_OK);
    report.mutable_result()->add_times_s(0.001);
    reported += daemon->ReportResult(report).value().accepted() ? 1 : 0;
  }
  EXPECT_EQ(WaitForEnd(*daemon, job.id()).state(), proto::JOB_DONE);
  EXPECT_EQ(reported, 12);
  EXPECT_TRUE(ScratchEntries().empty()) << "the scratch database is left";
  EXPECT_EQ(real->results(), 0);
  real.reset();
  daemon.reset();
  auto db = db::Database::Open(dir_ + "/t.db", {}).value();
  EXPECT_EQ(db->GetStats().value().records, 0);
  EXPECT_TRUE(db->Jobs().value().empty());
}

}  // namespace
}  // namespace lathe::service

#include "tuner/service/job_table.h"

#include <gtest/gtest.h>

#include <map>
#include <thread>

#include "absl/strings/str_cat.h"

namespace lathe::service {
namespace {

TEST(JobTable, RowRoundTripsTheSpecAndState) {
  proto::JobStatus job;
  job.set_id("job-1");
  job.mutable_spec()->add_workloads("matmul:K=64,M=64,N=64,dtype=float32");
  job.mutable_spec()->set_target("llvm -num-threads=1");
  job.mutable_spec()->set_max_trials(12);
  job.set_state(proto::JOB_RUNNING);
  job.set_created_at_unix_ms(5);
  proto::Job row = JobRow(job);
  EXPECT_EQ(row.state(), "running");
  absl::StatusOr<std::optional<proto::JobSpec>> spec = SpecOfRow(row);
  ASSERT_TRUE(spec.ok() && spec->has_value());
  EXPECT_EQ((*spec)->SerializeAsString(), job.spec().SerializeAsString());
  for (proto::JobState state : {proto::JOB_DONE, proto::JOB_FAILED,
                                proto::JOB_CANCELLED, proto::JOB_RUNNING}) {
    job.set_state(state);
    EXPECT_EQ(StateOfRow(JobRow(job)), state);
  }
}

TEST(JobTable, RowsOfOtherJobsAreNotServiceJobs) {
  proto::Job row;
  row.set_id("tune-1");
  row.set_description("lathe tune matmul:M=8,N=8,K=8 on host");
  row.set_state("running");
  absl::StatusOr<std::optional<proto::JobSpec>> spec = SpecOfRow(row);
  ASSERT_TRUE(spec.ok());
  EXPECT_FALSE(spec->has_value());
  row.set_description("lathe-service-job {not json");
  EXPECT_EQ(SpecOfRow(row).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(JobTable, CountsJobsByStateWithEveryStatePresent) {
  JobTable table;
  const std::map<proto::JobState, int64_t> empty = table.CountByState();
  EXPECT_EQ(empty,
            (std::map<proto::JobState, int64_t>{{proto::JOB_QUEUED, 0},
                                                {proto::JOB_RUNNING, 0},
                                                {proto::JOB_DONE, 0},
                                                {proto::JOB_FAILED, 0},
                                                {proto::JOB_CANCELLED, 0}}));
  int n = 0;
  for (proto::JobState state :
       {proto::JOB_RUNNING, proto::JOB_DONE, proto::JOB_DONE}) {
    proto::JobStatus job;
    job.set_id(absl::StrCat("j", n++));
    job.set_state(state);
    ASSERT_TRUE(table.Add(job).ok());
  }
  table.Update("j0",
               [](proto::JobStatus& j) { j.set_state(proto::JOB_FAILED); });
  const std::map<proto::JobState, int64_t> counts = table.CountByState();
  EXPECT_EQ(counts.at(proto::JOB_RUNNING), 0);
  EXPECT_EQ(counts.at(proto::JOB_DONE), 2);
  EXPECT_EQ(counts.at(proto::JOB_FAILED), 1);
  EXPECT_EQ(counts.at(proto::JOB_CANCELLED), 0);
}

TEST(JobTable, WatchersSeeEveryChange) {
  JobTable table;
  proto::JobStatus job;
  job.set_id("j");
  ASSERT_TRUE(table.Add(job).ok());
  EXPECT_FALSE(table.Add(job).ok());
  absl::StatusOr<JobTable::Snapshot> first =
      table.WaitForChange("j", -1, absl::Seconds(5));
  ASSERT_TRUE(first.ok());
  std::thread writer([&] {
    table.Update(
        "j", [](proto::JobStatus& j) { j.set_trials_done(3); }, "3 trials");
  });
  absl::StatusOr<JobTable::Snapshot> next =
      table.WaitForChange("j", first->version, absl::Seconds(30));
  writer.join();
  ASSERT_TRUE(next.ok());
  EXPECT_GT(next->version, first->version);
  EXPECT_EQ(next->job.trials_done(), 3);
  EXPECT_EQ(next->message, "3 trials");
  EXPECT_EQ(table.WaitForChange("nope", 0, absl::Seconds(1)).status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace lathe::service

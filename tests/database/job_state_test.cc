// Tests of database/job_state.h: the stored words stay what old databases
// hold, and every name parses back.
#include "database/job_state.h"

#include "gtest/gtest.h"

namespace lathe::db {
namespace {

TEST(JobStateTest, NamesAreTheStoredWords) {
  EXPECT_STREQ(JobStateName(JobState::kQueued), "queued");
  EXPECT_STREQ(JobStateName(JobState::kRunning), "running");
  EXPECT_STREQ(JobStateName(JobState::kStopped), "stopped");
  EXPECT_STREQ(JobStateName(JobState::kDone), "done");
  EXPECT_STREQ(JobStateName(JobState::kFailed), "failed");
  EXPECT_STREQ(JobStateName(JobState::kCancelled), "cancelled");
}

TEST(JobStateTest, EveryNameParsesBack) {
  for (JobState state :
       {JobState::kQueued, JobState::kRunning, JobState::kStopped,
        JobState::kDone, JobState::kFailed, JobState::kCancelled}) {
    EXPECT_EQ(ParseJobState(JobStateName(state)), state);
  }
}

TEST(JobStateTest, OtherTextDoesNotParse) {
  EXPECT_EQ(ParseJobState(""), std::nullopt);
  EXPECT_EQ(ParseJobState("Running"), std::nullopt);
  EXPECT_EQ(ParseJobState("canceled"), std::nullopt);
  EXPECT_EQ(ParseJobState("done "), std::nullopt);
}

}  // namespace
}  // namespace lathe::db

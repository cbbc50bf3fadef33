#include "database/job_state.h"

namespace lathe::db {

const char* JobStateName(JobState state) {
  switch (state) {
    case JobState::kQueued:
      return "queued";
    case JobState::kRunning:
      return "running";
    case JobState::kStopped:
      return "stopped";
    case JobState::kDone:
      return "done";
    case JobState::kFailed:
      return "failed";
    case JobState::kCancelled:
      return "cancelled";
  }
  return "running";
}

std::optional<JobState> ParseJobState(absl::string_view name) {
  for (JobState state :
       {JobState::kQueued, JobState::kRunning, JobState::kStopped,
        JobState::kDone, JobState::kFailed, JobState::kCancelled}) {
    if (name == JobStateName(state)) return state;
  }
  return std::nullopt;
}

}  // namespace lathe::db

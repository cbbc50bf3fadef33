#include "tuner/service/state_names.h"

namespace lathe::service {

const char* JobStateName(proto::JobState state) {
  switch (state) {
    case proto::JOB_QUEUED:
      return "queued";
    case proto::JOB_RUNNING:
      return "running";
    case proto::JOB_DONE:
      return "done";
    case proto::JOB_FAILED:
      return "failed";
    case proto::JOB_CANCELLED:
      return "cancelled";
    default:
      return "unspecified";
  }
}

const char* RunnerStateName(proto::RunnerState state) {
  switch (state) {
    case proto::RUNNER_IDLE:
      return "idle";
    case proto::RUNNER_BUSY:
      return "busy";
    case proto::RUNNER_LOST:
      return "lost";
    case proto::RUNNER_QUARANTINED:
      return "quarantined";
    default:
      return "unspecified";
  }
}

}  // namespace lathe::service

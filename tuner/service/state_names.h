// The names of job and runner states, one word each, as `lathe jobs`,
// `lathe watch` and `lathe runners` print them and the metrics page
// (daemon_metrics.h) labels them: a job "queued", "running", "done",
// "failed" or "cancelled" (database/job_state.h's names), a runner "idle",
// "busy", "lost" or "quarantined"; "unspecified" for a value outside them.
// Tests: tests/tuner/service/daemon_metrics_test.cc.
#pragma once

#include "proto/service.pb.h"

namespace lathe::service {

const char* JobStateName(proto::JobState state);
const char* RunnerStateName(proto::RunnerState state);

}  // namespace lathe::service

// The daemon's metrics for operators, as a page of Prometheus's text format
// (prometheus_text.h) that `lathe serve --metrics-listen` serves on
// /metrics. Every metric, its type and labels are listed in
// docs/service.md, "Metrics": counts of jobs and runners by state, trials
// measured, the work queue, leases, and the latency of the database commits
// of jobs' measured records. Only counts and times: no job's workloads,
// targets, ids or results, and no runner's name or address.
// Tests: tests/tuner/service/daemon_metrics_test.cc.
#pragma once

#include <string>

#include "tuner/service/daemon.h"

namespace lathe::service {

// The page, read from the daemon now.
std::string DaemonMetricsText(Daemon& daemon);

}  // namespace lathe::service

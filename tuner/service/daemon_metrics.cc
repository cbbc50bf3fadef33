#include "tuner/service/daemon_metrics.h"

#include <map>

#include "tuner/service/prometheus_text.h"
#include "tuner/service/state_names.h"

namespace lathe::service {

std::string DaemonMetricsText(Daemon& daemon) {
  PrometheusText page;

  page.Family("lathe_jobs", MetricType::kGauge,
              "Jobs the daemon knows (those of earlier daemons on its "
              "database included), by state.");
  for (const auto& [state, count] : daemon.jobs().CountByState()) {
    page.Sample("lathe_jobs", {{"state", JobStateName(state)}},
                static_cast<double>(count));
  }

  page.Family("lathe_trials_measured_total", MetricType::kCounter,
              "Trials (candidates measured) of the daemon's jobs since it "
              "started, simulated jobs' included; second measurements of "
              "near-ties are not trials.");
  page.Sample("lathe_trials_measured_total", {},
              static_cast<double>(daemon.trials_measured()));

  const LeaseStats leases = daemon.leases().Stats();
  page.Family("lathe_work_queued", MetricType::kGauge,
              "Candidates waiting for a runner (the work queue's depth).");
  page.Sample("lathe_work_queued", {}, static_cast<double>(leases.queued));
  page.Family("lathe_work_leased", MetricType::kGauge,
              "Candidates a runner holds under a live lease.");
  page.Sample("lathe_work_leased", {}, static_cast<double>(leases.leased));
  page.Family("lathe_leases_granted_total", MetricType::kCounter,
              "Leases handed to runners since the daemon started.");
  page.Sample("lathe_leases_granted_total", {},
              static_cast<double>(leases.granted));
  page.Family("lathe_leases_expired_total", MetricType::kCounter,
              "Leases that expired without a result (their runner missed "
              "its heartbeats); each candidate was queued again.");
  page.Sample("lathe_leases_expired_total", {},
              static_cast<double>(leases.expired));
  page.Family("lathe_results_dropped_total", MetricType::kCounter,
              "Results refused for a lease that was not live (late, "
              "unknown or already reported).");
  page.Sample("lathe_results_dropped_total", {},
              static_cast<double>(leases.dropped_results));

  std::map<proto::RunnerState, int64_t> runners;
  for (proto::RunnerState state :
       {proto::RUNNER_IDLE, proto::RUNNER_BUSY, proto::RUNNER_LOST,
        proto::RUNNER_QUARANTINED}) {
    runners[state] = 0;
  }
  for (const proto::RunnerInfo& runner : daemon.ListRunners())
    ++runners[runner.state()];
  page.Family("lathe_runners", MetricType::kGauge,
              "Runners the daemon knows, by state.");
  for (const auto& [state, count] : runners) {
    page.Sample("lathe_runners", {{"state", RunnerStateName(state)}},
                static_cast<double>(count));
  }

  page.Family("lathe_commit_seconds", MetricType::kHistogram,
              "Seconds of each database commit of a job's measured records "
              "(a batch, or the second measurements of near-ties).");
  page.Histogram("lathe_commit_seconds", {}, daemon.commit_seconds());

  page.Family("lathe_process_start_time_seconds", MetricType::kGauge,
              "When the daemon started, in seconds since the Unix epoch.");
  page.Sample("lathe_process_start_time_seconds", {},
              absl::ToDoubleSeconds(daemon.started_at() - absl::UnixEpoch()));
  return page.text();
}

}  // namespace lathe::service

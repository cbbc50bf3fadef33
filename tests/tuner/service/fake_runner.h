// A runner in a thread for the daemon's tests: registers with the daemon
// and pulls work through its runner protocol (no gRPC, no measuring: each
// lease is answered at once, OK, with a fake time derived from the
// program's structural hash, so that candidates differ and the same
// program always gets the same time) until destroyed, or until it has had
// `max_results` results accepted.
#pragma once

#include <atomic>
#include <string>
#include <thread>

#include "compiler/ir/structural_equal.h"
#include "compiler/schedule/replay.h"
#include "compiler/workload/spec.h"
#include "tuner/service/daemon.h"

namespace lathe::test_support {

class FakeRunner {
 public:
  FakeRunner(service::Daemon& daemon, const std::string& target,
             int max_results = -1)
      : daemon_(daemon) {
    proto::RegisterRunnerRequest request;
    request.set_name("fake");
    request.set_target(target);
    request.set_device("fake box, 2 cores");
    id_ = daemon.RegisterRunner(request, "test").value().runner_id();
    thread_ = std::thread([this, max_results] { Loop(max_results); });
  }
  ~FakeRunner() {
    stop_ = true;
    thread_.join();
  }
  FakeRunner(const FakeRunner&) = delete;
  FakeRunner& operator=(const FakeRunner&) = delete;

  // Results the daemon accepted so far.
  int results() const { return results_.load(); }

 private:
  void Loop(int max_results) {
    while (!stop_ && (max_results < 0 || results_ < max_results)) {
      proto::AcquireWorkRequest acquire;
      acquire.set_runner_id(id_);
      acquire.set_wait_s(0.05);
      absl::StatusOr<proto::AcquireWorkResponse> work =
          daemon_.AcquireWork(acquire);
      if (!work.ok() || work->lease_id().empty()) continue;
      const proto::MeasureRequest& request = work->request();
      Workload workload = ParseWorkloadSpec(request.workload()).value();
      Trace trace = Trace::FromProto(request.trace()).value();
      auto scheduled = ReplayTrace(trace, workload.InitialProgram().value());
      proto::ReportResultRequest report;
      report.set_runner_id(id_);
      report.set_lease_id(work->lease_id());
      proto::MeasureResult& result = *report.mutable_result();
      result.set_status(proto::MEASURE_OK);
      result.set_structural_hash(StructuralHashHex((*scheduled)->program()));
      result.add_times_s(
          1e-4 * (1 + static_cast<double>(
                          StructuralHash((*scheduled)->program()) % 97)));
      if (daemon_.ReportResult(report).value().accepted()) ++results_;
    }
  }

  service::Daemon& daemon_;
  std::string id_;
  std::atomic<bool> stop_{false};
  std::atomic<int> results_{0};
  std::thread thread_;
};

}  // namespace lathe::test_support

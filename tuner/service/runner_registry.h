// The runners the daemon knows: who they are (name, target, device), how
// they fare, and which are quarantined.
//
// A runner registers and gets an id; every later call names it. Each result
// it reports counts toward its record: an infrastructure failure (it could
// not measure at all) or a build or run error that is not the candidate's
// is a failure, anything else (an OK time, a wrong result, a timeout or a
// candidate over the worker's memory limit: verdicts on the candidate,
// charged to its job) resets the count. After `quarantine_after` consecutive
// failures the runner is quarantined: it gets no more work until it registers
// again as a new runner (e.g. after its operator fixed it). A runner not heard
// from for `lost_after` is listed as lost (its leases expire on their own); one
// not heard from for `forget_after` is forgotten (a daemon that runs for months
// sees runners come and go; if one comes back, it is told it is unknown and
// registers again).
// Thread-safe. Tests: tests/tuner/service/runner_registry_test.cc.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "proto/service.pb.h"

namespace lathe::service {

class RunnerRegistry {
 public:
  using Clock = std::function<absl::Time()>;
  // `forget_after` must be longer than a lease, so that a forgotten runner
  // holds no live lease.
  // Known runners at most, by default: their list (`lathe runners`, every
  // RunnerInfo bounded, kMaxRunnerTextBytes and the daemon's limits) stays far
  // below the service's message size limit.
  static constexpr int kDefaultMaxRunners = 1000;
  RunnerRegistry(
      int quarantine_after, absl::Duration lost_after,
      absl::Duration forget_after = absl::InfiniteDuration(),
      Clock now = [] { return absl::Now(); },
      int max_runners = kDefaultMaxRunners);

  // A new runner id for the registration (name, target, device, version,
  // simulated) from `peer`. ResourceExhausted, naming the limit, when
  // max_runners runners are known (silent ones are forgotten first).
  absl::StatusOr<std::string> Register(
      const proto::RegisterRunnerRequest& request, const std::string& peer);

  // The runner may take work: NotFound for an unknown id (e.g. one given by
  // an earlier daemon: register again), FailedPrecondition when
  // quarantined. Marks it seen.
  absl::Status CheckActive(const std::string& id);
  absl::StatusOr<proto::RunnerInfo> Get(const std::string& id);

  // Counts a result; true when this result put the runner in quarantine.
  // `why` (a failure's message, the runner's own text) is what the
  // quarantine then names as the last failure, so that the runner's
  // operator sees the cause: escaped and cut to kMaxFailureBytes
  // (base/untrusted_text.h). Device and version strings are kept escaped
  // and bounded the same way, at most kMaxRunnerTextBytes of each shown.
  static constexpr size_t kMaxFailureBytes = 200;
  static constexpr size_t kMaxRunnerTextBytes = 128;
  bool RecordResult(const std::string& id, bool failure,
                    const std::string& why = "");
  // The message of a runner's last failure that had one ("" if none).
  std::string LastFailure(const std::string& id);

  // The largest worker memory limit among the registered runners of
  // (target, simulated) that are not quarantined; 0 when there is none or
  // one of them reports no limit (a workload's tensors may then be any size
  // the daemon's own limit allows).
  int64_t LargestMemoryLimit(const std::string& target, bool simulated);

  // Every runner, in registration order, with the leases each holds.
  std::vector<proto::RunnerInfo> List(const std::map<std::string, int>& leases);

 private:
  void ForgetSilentLocked();

  const int quarantine_after_;
  const absl::Duration lost_after_;
  const absl::Duration forget_after_;
  const Clock now_;
  const int max_runners_;
  std::mutex mutex_;
  int64_t next_ = 1;
  std::map<std::string, proto::RunnerInfo> runners_;
  std::map<std::string, std::string> last_failure_;  // by runner id
  std::vector<std::string> order_;
};

}  // namespace lathe::service

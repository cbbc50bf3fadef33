#include "tuner/service/runner_registry.h"

#include <algorithm>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/untrusted_text.h"

namespace lathe::service {

RunnerRegistry::RunnerRegistry(int quarantine_after, absl::Duration lost_after,
                               absl::Duration forget_after, Clock now,
                               int max_runners)
    : quarantine_after_(quarantine_after),
      lost_after_(lost_after),
      forget_after_(forget_after),
      now_(std::move(now)),
      max_runners_(max_runners) {}

void RunnerRegistry::ForgetSilentLocked() {
  if (forget_after_ == absl::InfiniteDuration()) return;
  const int64_t cutoff_ms = absl::ToUnixMillis(now_() - forget_after_);
  std::vector<std::string> kept;
  for (const std::string& id : order_) {
    if (runners_[id].last_seen_unix_ms() < cutoff_ms) {
      runners_.erase(id);
      last_failure_.erase(id);
    } else {
      kept.push_back(id);
    }
  }
  order_.swap(kept);
}

absl::StatusOr<std::string> RunnerRegistry::Register(
    const proto::RegisterRunnerRequest& request, const std::string& peer) {
  std::lock_guard<std::mutex> lock(mutex_);
  ForgetSilentLocked();
  if (static_cast<int64_t>(runners_.size()) >= max_runners_) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the daemon knows ", runners_.size(), " runners, its limit of ",
        max_runners_,
        " runners (--max-runners); a silent runner is forgotten after ",
        absl::FormatDuration(forget_after_)));
  }
  // A random part: an id of an earlier daemon never names a runner of this
  // one (the runner registers again instead).
  std::random_device device;
  const std::string id = absl::StrFormat("r%d-%08x", next_++, device());
  proto::RunnerInfo& info = runners_[id];
  info.set_id(id);
  info.set_name(request.name());
  info.set_target(request.target());
  // Shown by `lathe runners` and in the daemon's log: escaped and bounded.
  info.set_device(EscapedPrefix(request.device(), kMaxRunnerTextBytes));
  info.set_lathe_version(
      EscapedPrefix(request.lathe_version(), kMaxRunnerTextBytes));
  info.set_simulated(request.simulated());
  info.set_memory_limit_bytes(
      std::max<int64_t>(0, request.memory_limit_bytes()));
  info.set_state(proto::RUNNER_IDLE);
  info.set_peer(peer);
  info.set_last_seen_unix_ms(absl::ToUnixMillis(now_()));
  order_.push_back(id);
  return id;
}

absl::Status RunnerRegistry::CheckActive(const std::string& id) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = runners_.find(id);
  if (it == runners_.end()) {
    return absl::NotFoundError(
        absl::StrCat("runner \"", id, "\" is not registered"));
  }
  it->second.set_last_seen_unix_ms(absl::ToUnixMillis(now_()));
  if (it->second.state() == proto::RUNNER_QUARANTINED) {
    auto last = last_failure_.find(id);
    return absl::FailedPreconditionError(
        absl::StrCat("runner \"", id, "\" is quarantined after ",
                     it->second.consecutive_failures(), " consecutive failures",
                     last == last_failure_.end()
                         ? ""
                         : absl::StrCat(" (the last: ", last->second, ")")));
  }
  return absl::OkStatus();
}

absl::StatusOr<proto::RunnerInfo> RunnerRegistry::Get(const std::string& id) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = runners_.find(id);
  if (it == runners_.end()) {
    return absl::NotFoundError(
        absl::StrCat("runner \"", id, "\" is not registered"));
  }
  return it->second;
}

bool RunnerRegistry::RecordResult(const std::string& id, bool failure,
                                  const std::string& why) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = runners_.find(id);
  if (it == runners_.end()) return false;
  proto::RunnerInfo& info = it->second;
  info.set_results(info.results() + 1);
  if (!failure) {
    info.set_consecutive_failures(0);
    return false;
  }
  info.set_failures(info.failures() + 1);
  // At most a line of it, escaped: the message travels in a gRPC status
  // and the daemon's log.
  if (!why.empty()) last_failure_[id] = EscapedPrefix(why, kMaxFailureBytes);
  info.set_consecutive_failures(info.consecutive_failures() + 1);
  if (info.state() != proto::RUNNER_QUARANTINED && quarantine_after_ > 0 &&
      info.consecutive_failures() >= quarantine_after_) {
    info.set_state(proto::RUNNER_QUARANTINED);
    return true;
  }
  return false;
}

std::string RunnerRegistry::LastFailure(const std::string& id) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = last_failure_.find(id);
  return it == last_failure_.end() ? std::string() : it->second;
}

int64_t RunnerRegistry::LargestMemoryLimit(const std::string& target,
                                           bool simulated) {
  std::lock_guard<std::mutex> lock(mutex_);
  int64_t largest = 0;
  for (const auto& [id, info] : runners_) {
    if (info.target() != target || info.simulated() != simulated ||
        info.state() == proto::RUNNER_QUARANTINED) {
      continue;
    }
    if (info.memory_limit_bytes() <= 0) return 0;  // one without a limit
    largest = std::max(largest, info.memory_limit_bytes());
  }
  return largest;
}

std::vector<proto::RunnerInfo> RunnerRegistry::List(
    const std::map<std::string, int>& leases) {
  std::lock_guard<std::mutex> lock(mutex_);
  ForgetSilentLocked();
  std::vector<proto::RunnerInfo> list;
  const int64_t now_ms = absl::ToUnixMillis(now_());
  for (const std::string& id : order_) {
    proto::RunnerInfo info = runners_[id];
    auto held = leases.find(id);
    info.set_leases(held == leases.end() ? 0 : held->second);
    if (info.state() != proto::RUNNER_QUARANTINED) {
      if (now_ms - info.last_seen_unix_ms() >
          absl::ToInt64Milliseconds(lost_after_)) {
        info.set_state(proto::RUNNER_LOST);
      } else {
        info.set_state(info.leases() > 0 ? proto::RUNNER_BUSY
                                         : proto::RUNNER_IDLE);
      }
    }
    list.push_back(info);
  }
  return list;
}

}  // namespace lathe::service

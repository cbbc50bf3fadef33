// A remote runner's heartbeats: every lease it holds (the one it measures
// and the one it fetched ahead) is renewed every lease_s / 3, so neither
// expires while the runner is alive. Leases the daemon reports as gone
// (expired, cancelled) are dropped from the set and passed to `on_expired`.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "runner/remote/runner_connection.h"

namespace lathe::runner {

class Heartbeats {
 public:
  using ExpiredFn = std::function<void(const std::string& lease_id)>;
  Heartbeats(RunnerConnection& connection, ExpiredFn on_expired);
  ~Heartbeats();

  void Hold(const std::string& lease_id);
  void Drop(const std::string& lease_id);

 private:
  void Loop();

  RunnerConnection& connection_;
  const ExpiredFn on_expired_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::set<std::string> leases_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace lathe::runner

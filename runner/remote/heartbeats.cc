#include "runner/remote/heartbeats.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "absl/strings/str_cat.h"
#include "rpc/channel.h"

namespace lathe::runner {

Heartbeats::Heartbeats(RunnerConnection& connection, ExpiredFn on_expired)
    : connection_(connection), on_expired_(std::move(on_expired)) {
  thread_ = std::thread([this] { Loop(); });
}

Heartbeats::~Heartbeats() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Heartbeats::Hold(const std::string& lease_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  leases_.insert(lease_id);
}

void Heartbeats::Drop(const std::string& lease_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  leases_.erase(lease_id);
}

void Heartbeats::Loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!done_) {
    const auto period = std::chrono::milliseconds(
        static_cast<int64_t>(std::max(0.05, connection_.lease_s() / 3) * 1000));
    wake_.wait_for(lock, period, [this] { return done_; });
    if (done_ || leases_.empty()) continue;
    proto::HeartbeatRequest request;
    request.set_runner_id(connection_.runner_id());
    for (const std::string& id : leases_) request.add_lease_ids(id);
    lock.unlock();
    grpc::ClientContext context;
    rpc::PrepareContext(context, connection_.options().channel.token, 5);
    proto::HeartbeatResponse response;
    const grpc::Status status =
        connection_.stub().Heartbeat(&context, request, &response);
    lock.lock();
    if (!status.ok()) continue;
    // A lease reported while the heartbeat was on its way is gone for a
    // good reason: only those still held expired.
    std::vector<std::string> expired;
    for (const std::string& id : response.expired_lease_ids()) {
      if (leases_.erase(id) > 0) expired.push_back(id);
    }
    lock.unlock();
    for (const std::string& id : expired) {
      connection_.Log(
          absl::StrCat("lease ", id, " expired; its result will be dropped"));
      if (on_expired_) on_expired_(id);
    }
    lock.lock();
  }
}

}  // namespace lathe::runner

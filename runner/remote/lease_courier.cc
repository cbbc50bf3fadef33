#include "runner/remote/lease_courier.h"

#include <grpcpp/grpcpp.h>

#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "rpc/channel.h"

namespace lathe::runner {
namespace {

// How often blocked threads look at the runner's stop flag, which is set
// without a notification (a signal handler sets it).
constexpr auto kStopPoll = std::chrono::milliseconds(50);

}  // namespace

LeaseCourier::LeaseCourier(RunnerConnection& connection, bool prefetch)
    : connection_(connection),
      prefetch_(prefetch),
      heartbeats_(connection, [this](const std::string& lease_id) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (in_hand_ && in_hand_->lease_id() == lease_id) in_hand_.reset();
        changed_.notify_all();
      }) {
  thread_ = std::thread([this] { Loop(); });
}

LeaseCourier::~LeaseCourier() { (void)Finish(); }

absl::StatusOr<std::optional<proto::AcquireWorkResponse>> LeaseCourier::Next() {
  std::unique_lock<std::mutex> lock(mutex_);
  busy_ = false;
  waiting_ = true;
  changed_.notify_all();
  while (true) {
    // Stopping: a lease in hand is given back by the courier, not measured.
    if (!fatal_.ok() || done_ || connection_.Stopping()) break;
    if (in_hand_) {
      std::optional<proto::AcquireWorkResponse> work = std::move(in_hand_);
      in_hand_.reset();
      waiting_ = false;
      busy_ = true;
      prefetch_tried_ = false;
      changed_.notify_all();  // the courier may fetch the next one now
      return work;
    }
    changed_.wait_for(lock, kStopPoll);
  }
  waiting_ = false;
  if (!fatal_.ok()) return fatal_;
  return std::nullopt;
}

void LeaseCourier::Report(proto::ReportResultRequest report) {
  std::lock_guard<std::mutex> lock(mutex_);
  reports_.push_back(std::move(report));
  busy_ = false;
  changed_.notify_all();
}

absl::Status LeaseCourier::Finish() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finishing_ = true;
    changed_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  return fatal_;
}

bool LeaseCourier::WantsWorkLocked() const {
  return !in_hand_ && (waiting_ || (prefetch_ && busy_ && !prefetch_tried_));
}

void LeaseCourier::AcceptLocked(proto::AcquireWorkResponse work) {
  if (work.lease_id().empty()) return;
  heartbeats_.Hold(work.lease_id());
  in_hand_ = std::move(work);
  changed_.notify_all();
}

void LeaseCourier::Loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (fatal_.ok()) {
    const bool stopping = finishing_ || connection_.Stopping();
    // Only Finish ends the courier: until then the runner may still report
    // the candidate it measures.
    if (reports_.empty() && finishing_) break;
    if (!reports_.empty()) {
      proto::ReportResultRequest report = std::move(reports_.front());
      reports_.pop_front();
      // Only the newest report asks for work, and only when none is in hand.
      const bool wants = !stopping && reports_.empty() && !in_hand_;
      bool prefetching = false;
      if (wants && prefetch_ && !waiting_) {
        report.set_prefetch(true);  // it measures, or is about to wait in Next
        prefetching = true;
      } else if (wants) {
        report.set_acquire_wait_s(connection_.options().acquire_wait_s);
      }
      lock.unlock();
      proto::AcquireWorkResponse next;
      const absl::Status sent = SendReport(report, &next);
      heartbeats_.Drop(report.lease_id());
      lock.lock();
      if (!sent.ok()) fatal_ = sent;
      if (prefetching && next.lease_id().empty()) prefetch_tried_ = true;
      AcceptLocked(std::move(next));
      continue;
    }
    if (stopping || !WantsWorkLocked()) {
      changed_.wait_for(lock, kStopPoll);
      continue;
    }
    const bool prefetching = !waiting_;
    lock.unlock();
    proto::AcquireWorkResponse work;
    const absl::Status acquired = Acquire(prefetching, &work);
    lock.lock();
    if (!acquired.ok()) fatal_ = acquired;
    if (prefetching) prefetch_tried_ = true;
    AcceptLocked(std::move(work));
  }
  std::optional<proto::AcquireWorkResponse> unused = std::move(in_hand_);
  in_hand_.reset();
  lock.unlock();
  if (unused && fatal_.ok()) Release(*unused);
  lock.lock();
  done_ = true;
  changed_.notify_all();
}

absl::Status LeaseCourier::SendReport(const proto::ReportResultRequest& report,
                                      proto::AcquireWorkResponse* next) {
  const RemoteRunnerOptions& options = connection_.options();
  const absl::Time give_up = absl::Now() + absl::Seconds(connection_.lease_s());
  double delay_s = 0.1;
  while (true) {
    grpc::ClientContext context;
    rpc::PrepareContext(context, options.channel.token,
                        report.acquire_wait_s() + 10);
    proto::ReportResultResponse response;
    const grpc::Status sent =
        connection_.stub().ReportResult(&context, report, &response);
    if (sent.ok()) {
      if (!response.accepted() && !report.release()) {
        connection_.Log("the tuner dropped a result (its lease had expired)");
      }
      *next = std::move(*response.mutable_next());
      return absl::OkStatus();
    }
    if (rpc::IsTransient(sent) && absl::Now() < give_up) {
      if (!connection_.Backoff(delay_s)) return absl::OkStatus();
      continue;
    }
    if (sent.error_code() == grpc::StatusCode::INVALID_ARGUMENT &&
        !report.release()) {
      // The daemon refused this result (result_validation.h) and queued its
      // candidate again; the next ones may be fine. Repeated refusals get
      // this runner quarantined, which ends it.
      connection_.Log(
          absl::StrCat("the tuner refused a result: ", sent.error_message()));
      return absl::OkStatus();
    }
    if (rpc::IsTransient(sent) ||
        sent.error_code() == grpc::StatusCode::NOT_FOUND) {
      return absl::OkStatus();  // the lease is gone with the daemon that gave
                                // it
    }
    return rpc::FromGrpc(sent, options.channel.address);
  }
}

absl::Status LeaseCourier::Acquire(bool prefetching,
                                   proto::AcquireWorkResponse* work) {
  const RemoteRunnerOptions& options = connection_.options();
  proto::AcquireWorkRequest acquire;
  acquire.set_runner_id(connection_.runner_id());
  if (prefetching) {
    acquire.set_prefetch(true);
  } else {
    acquire.set_wait_s(options.acquire_wait_s);
  }
  grpc::ClientContext context;
  rpc::PrepareContext(context, options.channel.token, acquire.wait_s() + 10);
  const grpc::Status status =
      connection_.stub().AcquireWork(&context, acquire, work);
  if (status.ok()) {
    if (unreachable_) connection_.Log("the tuner is back");
    unreachable_ = false;
    retry_delay_s_ = 0.1;
    return absl::OkStatus();
  }
  work->Clear();
  const absl::Status error = rpc::FromGrpc(status, options.channel.address);
  if (rpc::IsTransient(status)) {
    if (!unreachable_)
      connection_.Log(absl::StrCat(error.message(), "; retrying"));
    unreachable_ = true;
    connection_.Backoff(retry_delay_s_);
    return absl::OkStatus();
  }
  switch (status.error_code()) {
    case grpc::StatusCode::NOT_FOUND: {
      // A new daemon: it does not know this runner, nor a lease in hand.
      connection_.Log(
          "the tuner does not know this runner (restarted?); registering "
          "again");
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (in_hand_) heartbeats_.Drop(in_hand_->lease_id());
        in_hand_.reset();
      }
      return connection_.Register();
    }
    default:
      return error;
  }
}

void LeaseCourier::Release(const proto::AcquireWorkResponse& work) {
  proto::ReportResultRequest release;
  release.set_runner_id(connection_.runner_id());
  release.set_lease_id(work.lease_id());
  release.set_release(true);
  grpc::ClientContext context;
  rpc::PrepareContext(context, connection_.options().channel.token, 5);
  proto::ReportResultResponse response;
  // Best effort: unanswered, the lease expires and the item is queued again.
  (void)connection_.stub().ReportResult(&context, release, &response);
  heartbeats_.Drop(work.lease_id());
}

}  // namespace lathe::runner

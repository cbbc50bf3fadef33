#include "tuner/service/job_preparation.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"

namespace lathe::service {
namespace {

// What the preparation's thread and the waiting handler share; the thread
// keeps it alive after the handler has gone.
struct Outcome {
  std::mutex mutex;
  std::condition_variable done;
  std::optional<absl::StatusOr<PreparedJob>> result;
};

}  // namespace

JobPreparer::JobPreparer(int max_running, absl::Duration deadline)
    : max_running_(max_running),
      deadline_(deadline),
      running_(std::make_shared<std::atomic<int>>(0)) {}

absl::StatusOr<PreparedJob> JobPreparer::Run(
    std::function<absl::StatusOr<PreparedJob>()> work,
    const std::function<bool()>& stop_waiting) {
  if (running_->fetch_add(1) >= max_running_) {
    running_->fetch_sub(1);
    return absl::ResourceExhaustedError(absl::StrCat(
        "the daemon is already preparing ", max_running_,
        " submitted jobs (parsing, design spaces), its limit; submit again "
        "later"));
  }
  auto outcome = std::make_shared<Outcome>();
  try {
    std::thread([outcome, running = running_, work = std::move(work)] {
      absl::StatusOr<PreparedJob> result = work();
      {
        std::lock_guard<std::mutex> lock(outcome->mutex);
        outcome->result = std::move(result);
      }
      outcome->done.notify_all();
      running->fetch_sub(1);
    }).detach();
  } catch (const std::system_error& e) {
    running_->fetch_sub(1);
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot start a thread to prepare the job: ", e.what()));
  }
  const absl::Time give_up = absl::Now() + deadline_;
  std::unique_lock<std::mutex> lock(outcome->mutex);
  // Whether anyone still waits is asked first: a result nobody takes is
  // thrown away.
  while (true) {
    if (stop_waiting && stop_waiting()) {
      return absl::CancelledError(
          "the job's preparation was abandoned (the client went away or the "
          "daemon is stopping)");
    }
    const absl::Time now = absl::Now();
    if (now >= give_up) {
      return absl::DeadlineExceededError(absl::StrCat(
          "preparing the job (parsing its workloads, generating their design "
          "spaces) took longer than the daemon's limit of ",
          absl::FormatDuration(deadline_)));
    }
    if (outcome->result.has_value()) break;
    outcome->done.wait_for(lock, absl::ToChronoNanoseconds(std::min(
                                     give_up - now, absl::Milliseconds(20))));
  }
  return *std::move(outcome->result);
}

}  // namespace lathe::service

#include "runner/worker_loop.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "runner/worker_protocol.h"

namespace lathe::runner {
namespace {

// Ends this process when the one that started it is gone: a worker stuck in
// a hung kernel would otherwise outlive its tuner forever.
void WatchParent() {
  const pid_t parent = getppid();
  std::thread([parent] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      if (getppid() != parent) _exit(3);
    }
  }).detach();
}

}  // namespace

int ServeMeasureRequests(
    int in_fd, int out_fd, const WorkerConfinement& confinement,
    const std::function<absl::StatusOr<MeasureFunction>()>& start) {
  signal(SIGPIPE, SIG_IGN);
  if (out_fd == STDOUT_FILENO) {
    out_fd = dup(STDOUT_FILENO);
    if (out_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
      return kWorkerChannelBroken;
  }
  if (confinement.before_threads) confinement.before_threads();
  WatchParent();
  absl::StatusOr<MeasureFunction> measure = start();
  if (!measure.ok()) {
    std::fprintf(stderr, "lathe worker: %s\n",
                 std::string(measure.status().message()).c_str());
    return kWorkerCannotStart;
  }
  if (confinement.before_requests) {
    if (absl::Status confined = confinement.before_requests(); !confined.ok()) {
      std::fprintf(stderr, "lathe worker: %s\n",
                   std::string(confined.message()).c_str());
      return kWorkerNotConfined;
    }
  }
  if (!WriteFrame(out_fd, kWorkerHello).ok()) return kWorkerChannelBroken;
  for (;;) {
    absl::StatusOr<std::optional<std::string>> frame = ReadFrame(in_fd);
    if (!frame.ok()) return kWorkerChannelBroken;
    if (!frame->has_value()) return 0;
    // The acknowledgement: the worker has the request.
    if (!WriteFrame(out_fd, "").ok()) return kWorkerChannelBroken;
    proto::MeasureRequest request;
    proto::MeasureResult result;
    if (!request.ParseFromString(**frame)) {
      result.set_status(proto::MEASURE_RUN_ERROR);
      result.set_error("worker: the request is not a MeasureRequest");
    } else {
      result = (*measure)(request);
    }
    if (result.status() != proto::MEASURE_OK && confinement.refused_calls) {
      if (const std::string refused = confinement.refused_calls();
          !refused.empty()) {
        result.set_error(absl::StrCat(
            result.error(), " (the worker's sandbox refused: ", refused, ")"));
      }
    }
    if (!WriteFrame(out_fd, result.SerializeAsString()).ok())
      return kWorkerChannelBroken;
  }
}

}  // namespace lathe::runner

// A worker process: a program started with fork and exec, under a memory
// limit and a CPU set, talking frames (worker_protocol.h) over a socket that
// is its stdin and stdout; its stderr is kept (the last lines explain a
// crash). The child runs nothing of this process between fork and exec but
// async-signal-safe system calls, so spawning from a multi-threaded tuner
// (XGBoost, LLVM) is safe.
//
// Every wait has a deadline, and every way the child can end is told apart:
// a frame, a timeout (the child is killed), a death ("killed by signal 11
// (SIGSEGV)", "exited with status 1"), garbage on the channel. Nothing the
// child does raises a signal in this process (the channel is written with
// MSG_NOSIGNAL) or leaves a zombie.
// Not thread-safe: one caller at a time.
// Tests: tests/runner/worker_process_test.cc.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runner/worker_protocol.h"

namespace lathe::runner {

struct WorkerProcessOptions {
  // The command line; argv[0] is the program's path (not searched in PATH).
  std::vector<std::string> argv;
  // The child's address-space limit (RLIMIT_AS); <= 0: none.
  int64_t memory_limit_bytes = 0;
  // The CPUs the child may run on; empty: those of this process.
  std::vector<int> cpus;
};

class WorkerProcess {
 public:
  // Starts the program and returns once it has been exec'd.
  // Errors: InvalidArgument for an empty argv or a CPU id out of range;
  // Unavailable when the program cannot be started, naming it and the
  // reason ("cannot start worker /x/y: No such file or directory"), or when
  // the CPU set or memory limit cannot be applied.
  static absl::StatusOr<std::unique_ptr<WorkerProcess>> Spawn(
      const WorkerProcessOptions& options);
  // Closes the channel, gives the child a second to exit, then kills it.
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Sends one frame, waiting at most timeout_s for room in the channel.
  // Errors: Unavailable when the child is gone or its end is closed;
  // DeadlineExceeded when it does not read in time (it is then killed).
  absl::Status Send(absl::string_view payload, double timeout_s);
  // Waits at most timeout_s for the next frame. Errors:
  //  DeadlineExceeded: none in time; the child has been killed
  //    ("timed out after 2.0 s").
  //  Unavailable: the child ended first; the message says how ("killed by
  //    signal 11 (SIGSEGV)", "exited with status 1") and ends with the last
  //    lines of its stderr, if any ("...; stderr: ...").
  //  DataLoss: the child wrote something that is not a frame; it has been
  //    killed.
  //  Cancelled: `cancel` was set while waiting (looked at every
  //    kCancelPollMs); the child has been killed.
  absl::StatusOr<std::string> Receive(
      double timeout_s, const std::atomic<bool>* cancel = nullptr);
  static constexpr int kCancelPollMs = 50;

  // False once the child is known to have ended (checked without waiting).
  bool Running();
  pid_t pid() const { return pid_; }
  // The last few KiB the child wrote to stderr (what has been read so far).
  const std::string& stderr_tail() const { return stderr_tail_; }
  void ClearStderrTail() { stderr_tail_.clear(); }

 private:
  WorkerProcess(pid_t pid, int channel_fd, int stderr_fd, std::string program);

  // Reads what is available on stderr without blocking; false at its end.
  bool DrainStderr();
  // Reaps the child, waiting up to timeout_s, then kills it; describes how
  // it ended.
  std::string WaitForExit(double timeout_s);
  // Kills and reaps the child.
  void Kill();
  void Reaped(std::string how);
  // "how it ended; stderr: last lines".
  std::string WithStderr(const std::string& how) const;
  void CloseFds();

  pid_t pid_;
  bool reaped_ = false;
  std::string how_ended_;  // once reaped: DescribeExitStatus, or why not
  int channel_fd_;
  int stderr_fd_;
  std::string program_;
  FrameDecoder decoder_;
  std::string stderr_tail_;
};

// How a waitpid status reads in an error: "exited with status 3",
// "killed by signal 11 (SIGSEGV)".
std::string DescribeExitStatus(int wait_status);

}  // namespace lathe::runner

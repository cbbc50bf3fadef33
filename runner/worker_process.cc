#include "runner/worker_process.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/clock_duration.h"

namespace lathe::runner {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kStderrTailBytes = 8 << 10;
// Lines and characters of stderr quoted in an error.
constexpr size_t kQuotedLines = 3;
constexpr size_t kQuotedChars = 600;

// What the child reports through the exec pipe when it fails before exec.
struct ChildFailure {
  int stage;  // one of the kStage* below
  int error;  // errno
};
constexpr int kStageExec = 0;
constexpr int kStageAffinity = 1;
constexpr int kStageMemoryLimit = 2;
constexpr int kStageChannel = 3;

int RemainingMs(Clock::time_point deadline) {
  auto left = std::chrono::duration<double, std::milli>(deadline - Clock::now())
                  .count();
  if (left <= 0) return 0;
  return static_cast<int>(std::min(std::ceil(left), 1e9));
}

Clock::time_point DeadlineAfter(double seconds) {
  return Clock::now() + ClockDuration(seconds);
}

void CloseIfOpen(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

// The child between fork and exec: async-signal-safe calls only (no
// allocation, no locks; the parent may be multi-threaded).
[[noreturn]] void RunChild(char* const* argv, int channel_fd, int stderr_fd,
                           int report_fd, const rlimit* memory_limit,
                           const cpu_set_t* cpus) {
  auto fail = [report_fd](int stage) {
    ChildFailure failure{stage, errno};
    ssize_t ignored = write(report_fd, &failure, sizeof failure);
    (void)ignored;
    _exit(127);
  };
  // Its own process group: a Ctrl-C at the terminal is the tuner's to
  // handle (it stops cleanly, then ends the worker), not the worker's.
  setpgid(0, 0);
  // Signals blocked by the forking thread would stay blocked in the worker.
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  // Above 2 first, so that no dup2 below overwrites a source.
  int channel = fcntl(channel_fd, F_DUPFD_CLOEXEC, 3);
  int err = fcntl(stderr_fd, F_DUPFD_CLOEXEC, 3);
  if (channel < 0 || err < 0) fail(kStageChannel);
  if (dup2(channel, STDIN_FILENO) < 0 || dup2(channel, STDOUT_FILENO) < 0 ||
      dup2(err, STDERR_FILENO) < 0) {
    fail(kStageChannel);
  }
  if (cpus != nullptr && sched_setaffinity(0, sizeof(cpu_set_t), cpus) != 0)
    fail(kStageAffinity);
  if (memory_limit != nullptr && setrlimit(RLIMIT_AS, memory_limit) != 0)
    fail(kStageMemoryLimit);
  // Nothing else of the parent's (a database file, other workers' channels)
  // may stay open in the worker; those without O_CLOEXEC close at exec.
  // The report pipe is O_CLOEXEC: its end at exec tells the parent so.
  close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
  execv(argv[0], argv);
  fail(kStageExec);
  _exit(127);  // not reached
}

const char* SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev;
}

}  // namespace

std::string DescribeExitStatus(int wait_status) {
  if (WIFEXITED(wait_status))
    return absl::StrCat("exited with status ", WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) {
    const int sig = WTERMSIG(wait_status);
    const char* name = SignalName(sig);
    return name != nullptr
               ? absl::StrCat("killed by signal ", sig, " (SIG", name, ")")
               : absl::StrCat("killed by signal ", sig);
  }
  return absl::StrCat("ended with wait status ", wait_status);
}

absl::StatusOr<std::unique_ptr<WorkerProcess>> WorkerProcess::Spawn(
    const WorkerProcessOptions& options) {
  if (options.argv.empty() || options.argv[0].empty()) {
    return absl::InvalidArgumentError("worker: empty command line");
  }
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  for (int cpu : options.cpus) {
    if (cpu < 0 || cpu >= CPU_SETSIZE) {
      return absl::InvalidArgumentError(
          absl::StrCat("worker: CPU ", cpu, " out of range"));
    }
    CPU_SET(cpu, &cpus);
  }
  rlimit memory_limit{};
  memory_limit.rlim_cur = memory_limit.rlim_max =
      static_cast<rlim_t>(options.memory_limit_bytes);
  // Everything the child touches is prepared before fork.
  std::vector<std::string> args = options.argv;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  // O_CLOEXEC everywhere: another thread of this process forking at the same
  // time must not carry our ends into its child (the worker would then never
  // see its channel close).
  int channel[2], err[2], report[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, channel) != 0) {
    return absl::UnavailableError(
        absl::StrCat("worker: socketpair: ", std::strerror(errno)));
  }
  if (pipe2(err, O_CLOEXEC) != 0) {
    int e = errno;
    close(channel[0]);
    close(channel[1]);
    return absl::UnavailableError(
        absl::StrCat("worker: pipe: ", std::strerror(e)));
  }
  if (pipe2(report, O_CLOEXEC) != 0) {
    int e = errno;
    for (int fd : {channel[0], channel[1], err[0], err[1]}) close(fd);
    return absl::UnavailableError(
        absl::StrCat("worker: pipe: ", std::strerror(e)));
  }
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    for (int fd :
         {channel[0], channel[1], err[0], err[1], report[0], report[1]})
      close(fd);
    return absl::UnavailableError(
        absl::StrCat("worker: fork: ", std::strerror(e)));
  }
  if (pid == 0) {
    RunChild(argv.data(), channel[1], err[1], report[1],
             options.memory_limit_bytes > 0 ? &memory_limit : nullptr,
             options.cpus.empty() ? nullptr : &cpus);
  }
  close(channel[1]);
  close(err[1]);
  close(report[1]);
  // Blocks until exec (the pipe closes) or a report of failure.
  ChildFailure failure{};
  ssize_t n;
  do {
    n = read(report[0], &failure, sizeof failure);
  } while (n < 0 && errno == EINTR);
  close(report[0]);
  auto process = std::unique_ptr<WorkerProcess>(
      new WorkerProcess(pid, channel[0], err[0], options.argv[0]));
  if (n == static_cast<ssize_t>(sizeof failure)) {
    process->WaitForExit(/*timeout_s=*/5);
    const char* what = failure.stage == kStageExec ? "cannot start worker "
                       : failure.stage == kStageAffinity
                           ? "cannot set the CPUs of worker "
                       : failure.stage == kStageMemoryLimit
                           ? "cannot set the memory limit of worker "
                           : "cannot connect worker ";
    return absl::UnavailableError(absl::StrCat(what, options.argv[0], ": ",
                                               std::strerror(failure.error)));
  }
  // Reads are polled under deadlines and must never block.
  fcntl(channel[0], F_SETFL, fcntl(channel[0], F_GETFL) | O_NONBLOCK);
  fcntl(err[0], F_SETFL, fcntl(err[0], F_GETFL) | O_NONBLOCK);
  return process;
}

WorkerProcess::WorkerProcess(pid_t pid, int channel_fd, int stderr_fd,
                             std::string program)
    : pid_(pid),
      channel_fd_(channel_fd),
      stderr_fd_(stderr_fd),
      program_(std::move(program)) {}

WorkerProcess::~WorkerProcess() {
  // A worker exits when its input ends; one that is stuck is killed.
  CloseIfOpen(channel_fd_);
  if (!reaped_) WaitForExit(/*timeout_s=*/1);
  CloseFds();
}

void WorkerProcess::CloseFds() {
  CloseIfOpen(channel_fd_);
  CloseIfOpen(stderr_fd_);
}

bool WorkerProcess::Running() {
  if (reaped_) return false;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    Reaped(DescribeExitStatus(status));
    return false;
  }
  if (r < 0 && errno == ECHILD) {
    Reaped("ended (exit status unknown)");
    return false;
  }
  return true;
}

bool WorkerProcess::DrainStderr() {
  if (stderr_fd_ < 0) return false;
  char buf[4096];
  for (;;) {
    ssize_t n = read(stderr_fd_, buf, sizeof buf);
    if (n > 0) {
      stderr_tail_.append(buf, static_cast<size_t>(n));
      if (stderr_tail_.size() > kStderrTailBytes) {
        stderr_tail_.erase(0, stderr_tail_.size() - kStderrTailBytes);
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    CloseIfOpen(
        stderr_fd_);  // end of stream, or an error: nothing more to read
    return false;
  }
}

void WorkerProcess::Reaped(std::string how) {
  reaped_ = true;
  how_ended_ = std::move(how);
}

std::string WorkerProcess::WaitForExit(double timeout_s) {
  Clock::time_point deadline = DeadlineAfter(timeout_s);
  while (!reaped_) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      Reaped(DescribeExitStatus(status));
      break;
    }
    if (r < 0 && errno != EINTR) {
      // ECHILD: reaped elsewhere (SIGCHLD ignored by the application).
      Reaped("ended (exit status unknown)");
      break;
    }
    if (Clock::now() >= deadline) {
      Kill();
      how_ended_ = absl::StrFormat(
          "closed its output but did not exit within %.1f s (killed)",
          timeout_s);
      break;
    }
    // The stderr pipe closes when the child ends: a cheap way to wait.
    if (stderr_fd_ >= 0) {
      pollfd p{stderr_fd_, POLLIN, 0};
      poll(&p, 1, std::min(RemainingMs(deadline), 10));
      DrainStderr();
    } else {
      timespec ts{0, 1000 * 1000};
      nanosleep(&ts, nullptr);
    }
  }
  return how_ended_;
}

void WorkerProcess::Kill() {
  if (reaped_) return;
  kill(pid_, SIGKILL);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  Reaped("killed by this process");
}

std::string WorkerProcess::WithStderr(const std::string& how) const {
  std::vector<absl::string_view> lines;
  for (absl::string_view line : absl::StrSplit(stderr_tail_, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty()) lines.push_back(line);
  }
  if (lines.empty()) return how;
  if (lines.size() > kQuotedLines)
    lines.erase(lines.begin(), lines.end() - kQuotedLines);
  std::string quoted = absl::StrJoin(lines, " / ");
  if (quoted.size() > kQuotedChars)
    quoted = "..." + quoted.substr(quoted.size() - kQuotedChars);
  return absl::StrCat(how, "; stderr: ", quoted);
}

absl::Status WorkerProcess::Send(absl::string_view payload, double timeout_s) {
  if (payload.size() > kMaxFrameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("worker: a message of ", payload.size(),
                     " bytes exceeds the limit of ", kMaxFrameBytes));
  }
  if (channel_fd_ < 0 || !Running()) {
    return absl::UnavailableError(
        absl::StrCat("worker ", program_, " is not running"));
  }
  const std::string frame = EncodeFrame(payload);
  Clock::time_point deadline = DeadlineAfter(timeout_s);
  size_t sent = 0;
  while (sent < frame.size()) {
    ssize_t n = send(channel_fd_, frame.data() + sent, frame.size() - sent,
                     MSG_NOSIGNAL);
    if (n >= 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      return absl::UnavailableError(absl::StrCat(
          "worker ", program_, ": send failed: ", std::strerror(errno)));
    }
    pollfd p{channel_fd_, POLLOUT, 0};
    int ready = poll(&p, 1, RemainingMs(deadline));
    if (ready == 0 && Clock::now() >= deadline) {
      Kill();
      return absl::DeadlineExceededError(
          absl::StrFormat("timed out after %.1f s", timeout_s));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> WorkerProcess::Receive(
    double timeout_s, const std::atomic<bool>* cancel) {
  Clock::time_point deadline = DeadlineAfter(timeout_s);
  char buf[64 << 10];
  for (;;) {
    absl::StatusOr<std::optional<std::string>> frame = decoder_.Next();
    if (!frame.ok()) {
      Kill();
      return absl::DataLossError(WithStderr(
          absl::StrCat("worker ", program_, ": ", frame.status().message())));
    }
    if (frame->has_value()) return **frame;
    if (channel_fd_ < 0) {
      return absl::UnavailableError(
          absl::StrCat("worker ", program_, " is not running"));
    }
    if (cancel != nullptr && cancel->load()) {
      Kill();
      return absl::CancelledError(
          absl::StrCat("worker ", program_, ": abandoned (stopping)"));
    }
    pollfd fds[2] = {{channel_fd_, POLLIN, 0}, {stderr_fd_, POLLIN, 0}};
    const int wait_ms = cancel != nullptr
                            ? std::min(RemainingMs(deadline), kCancelPollMs)
                            : RemainingMs(deadline);
    int ready = poll(fds, stderr_fd_ >= 0 ? 2 : 1, wait_ms);
    if (ready < 0 && errno != EINTR) {
      Kill();
      return absl::UnavailableError(
          absl::StrCat("worker: poll: ", std::strerror(errno)));
    }
    if (ready <= 0) {
      if (Clock::now() < deadline) continue;
      DrainStderr();
      Kill();
      return absl::DeadlineExceededError(
          absl::StrFormat("timed out after %.1f s", timeout_s));
    }
    if (stderr_fd_ >= 0 && fds[1].revents != 0) DrainStderr();
    if (fds[0].revents == 0) continue;
    ssize_t n = recv(channel_fd_, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) {
      decoder_.Append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
      continue;
    // The channel ended: the child died or closed it. Its exit says which,
    // and its stderr (read to the end) often why.
    CloseIfOpen(channel_fd_);
    std::string how = WaitForExit(/*timeout_s=*/2);
    while (DrainStderr()) {
      pollfd p{stderr_fd_, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) break;
    }
    return absl::UnavailableError(WithStderr(how));
  }
}

}  // namespace lathe::runner

// A CUDA compilation in a child process (child_compile.h).
#include "runner/cuda/child_compile.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

extern char** environ;

namespace lathe::runner {
namespace {

// A pipe whose ends close with it.
struct Pipe {
  int fd[2] = {-1, -1};
  ~Pipe() {
    for (int f : fd)
      if (f >= 0) close(f);
  }
  void Close(int end) {
    if (fd[end] >= 0) close(fd[end]);
    fd[end] = -1;
  }
};

}  // namespace

absl::StatusOr<std::string> CompileInChild(const std::vector<std::string>& argv,
                                           const std::string& source,
                                           double timeout_s) {
  if (argv.empty()) return absl::InvalidArgumentError("compile: no command");
  Pipe in, out, err;
  for (Pipe* p : {&in, &out, &err}) {
    if (pipe2(p->fd, O_CLOEXEC) != 0) {
      return absl::InternalError(
          absl::StrCat("compile: pipe: ", std::strerror(errno)));
    }
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.fd[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out.fd[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err.fd[1], 2);
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned =
      posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    return absl::InternalError(absl::StrCat("compile: cannot start ", argv[0],
                                            ": ", std::strerror(spawned)));
  }
  in.Close(0);
  out.Close(1);
  err.Close(1);
  fcntl(in.fd[1], F_SETFL, O_NONBLOCK);

  // A child that exits before reading all its input must not kill this
  // process with SIGPIPE: blocked on this thread while it runs, and one
  // left pending is consumed before the mask is restored.
  sigset_t sigpipe, previous;
  sigemptyset(&sigpipe);
  sigaddset(&sigpipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &sigpipe, &previous);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration<double>(timeout_s);
  std::string stdout_bytes, stderr_bytes;
  size_t written = 0;
  bool too_large = false, timed_out = false;
  if (source.empty()) in.Close(1);
  while (out.fd[0] >= 0 || err.fd[0] >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    // Roles: 0 the child's stdout, 1 its stderr, 2 its stdin.
    pollfd fds[3];
    int roles[3];
    int n = 0;
    if (out.fd[0] >= 0) fds[n] = {out.fd[0], POLLIN, 0}, roles[n++] = 0;
    if (err.fd[0] >= 0) fds[n] = {err.fd[0], POLLIN, 0}, roles[n++] = 1;
    if (in.fd[1] >= 0) fds[n] = {in.fd[1], POLLOUT, 0}, roles[n++] = 2;
    if (poll(fds, n, static_cast<int>(left)) < 0 && errno != EINTR) break;
    for (int i = 0; i < n && !too_large; ++i) {
      if (fds[i].revents == 0) continue;
      if (roles[i] == 2) {
        const ssize_t w =
            write(in.fd[1], source.data() + written, source.size() - written);
        if (w > 0) written += static_cast<size_t>(w);
        if ((w < 0 && errno != EAGAIN && errno != EINTR) ||
            written == source.size()) {
          in.Close(1);
        }
        continue;
      }
      Pipe& pipe_end = roles[i] == 0 ? out : err;
      char buffer[65536];
      const ssize_t r = read(pipe_end.fd[0], buffer, sizeof buffer);
      if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (r <= 0) {
        pipe_end.Close(0);
        continue;
      }
      std::string& sink = roles[i] == 0 ? stdout_bytes : stderr_bytes;
      const size_t limit = roles[i] == 0 ? kMaxCubinBytes : kMaxErrorBytes;
      sink.append(buffer,
                  std::min(static_cast<size_t>(r), limit - sink.size()));
      too_large = roles[i] == 0 && sink.size() >= kMaxCubinBytes;
    }
    if (too_large) break;
  }
  if (timed_out || too_large) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  in.Close(1);
  const timespec zero = {0, 0};
  while (sigtimedwait(&sigpipe, nullptr, &zero) == SIGPIPE) {
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (timed_out) {
    return absl::DeadlineExceededError(
        absl::StrCat("compile: ", argv[0], " ran past its deadline of ",
                     timeout_s, " s (killed)"));
  }
  if (too_large) {
    return absl::InternalError(absl::StrCat(
        "compile: ", argv[0], " wrote more than ", kMaxCubinBytes, " bytes"));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string message(absl::StripAsciiWhitespace(stderr_bytes));
    if (const size_t nl = message.find('\n'); nl != std::string::npos)
      message = message.substr(0, nl);
    return absl::InternalError(
        absl::StrCat("compile: ", argv[0],
                     WIFEXITED(status)
                         ? absl::StrCat(" exited ", WEXITSTATUS(status))
                         : absl::StrCat(" killed by signal ", WTERMSIG(status)),
                     message.empty() ? "" : ": ", message));
  }
  return stdout_bytes;
}

}  // namespace lathe::runner

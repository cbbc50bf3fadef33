// Helpers shared by the runtime tests: counting this process's threads, and
// running a check in a fork()ed child.
#pragma once

#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace lathe::runtime::testing {

// The number of threads of this process (entries of /proc/self/task).
inline int ThreadCount() {
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return -1;
  int count = 0;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  return count;
}

// Polls until the process has `expected` threads (a joined thread can linger
// in /proc for a moment after pthread_join returns), for at most 5 s.
// Returns the last count seen.
inline int WaitForThreadCount(int expected) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(5);
  int count = ThreadCount();
  while (count != expected && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    count = ThreadCount();
  }
  return count;
}

// Runs body() in a child process that then calls exit() with its result (so
// the runtime's exit path runs too). Returns the raw wait status; a child
// that takes over 20 s is killed by SIGALRM.
template <typename Body>
int RunInChild(Body body) {
  const pid_t pid = fork();
  if (pid == 0) {
    alarm(20);
    exit(body());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

inline bool ExitedWith(int status, int code) {
  return WIFEXITED(status) && WEXITSTATUS(status) == code;
}

}  // namespace lathe::runtime::testing
